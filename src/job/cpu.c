/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "job/cpu.h"
#include "base/error.h"

static double tv_s(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

static int system_busy(double *busy_s, double *softirq_s)
{
	unsigned long long v[8] = {0};
	long hz = sysconf(_SC_CLK_TCK);
	FILE *f = fopen("/proc/stat", "re");
	int n;

	if (!f)
		return -errno;
	/* cpu  user nice system idle iowait irq softirq steal (guest is inside user) */
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
	           &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	if (n < 4 || hz <= 0)
		return -EIO;
	*busy_s = (double)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / (double)hz;
	*softirq_s = (double)v[6] / (double)hz;
	return 0;
}

int cpu_snap_take(struct cpu_snap *s)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return -errno;
	s->usr_s = tv_s(ru.ru_utime);
	s->sys_s = tv_s(ru.ru_stime);
	s->nvcsw = (uint64_t)ru.ru_nvcsw;
	s->nivcsw = (uint64_t)ru.ru_nivcsw;
	s->sys_busy_s = 0;
	s->softirq_s = 0;
	return system_busy(&s->sys_busy_s, &s->softirq_s);
}

double cpu_thread_seconds(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru))
		return 0;
	return tv_s(ru.ru_utime) + tv_s(ru.ru_stime);
}

void cpu_list_format(const cpu_set_t *set, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int c = 0; c < CPU_SETSIZE && used < len; c++) {
		int last = c;

		if (!CPU_ISSET(c, set))
			continue;
		while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, set))
			last++;
		used += (size_t)snprintf(buf + used, len - used, last > c ? "%s%d-%d" : "%s%d",
		                         used ? "," : "", c, last);
		c = last;
	}
}

int cpu_set_nth(const cpu_set_t *set, unsigned n)
{
	unsigned count = (unsigned)CPU_COUNT(set), seen = 0;

	if (!count)
		return -1;
	n %= count;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, set) && seen++ == n)
			return c;
	return -1;
}

/* One whole number at *p, at most CPU_SETSIZE - 1; advances *p.  -1 when there is none. */
static long cpu_number(const char **p)
{
	char *end;
	long v;

	if (**p < '0' || **p > '9')
		return -1;
	errno = 0;
	v = strtol(*p, &end, 10);
	if (errno || v >= CPU_SETSIZE)
		return -1;
	*p = end;
	return v;
}

/* A list of numbers and ranges ("1", "0-3,6") into set; -1 when it is not one. */
static int range_list(const char *list, cpu_set_t *set)
{
	const char *p = list;

	CPU_ZERO(set);
	for (;;) {
		long lo = cpu_number(&p), hi = lo;

		if (lo >= 0 && *p == '-') {
			p++;
			hi = cpu_number(&p);
		}
		if (lo < 0 || hi < lo || (*p && *p != ','))
			return -1;
		for (long c = lo; c <= hi; c++)
			CPU_SET((int)c, set);
		if (!*p)
			return 0;
		p++;
	}
}

int cpu_list_parse(const char *list, cpu_set_t *set, struct llmio_error *e)
{
	char avail[256];
	cpu_set_t may;

	CPU_ZERO(set);
	if (sched_getaffinity(0, sizeof(may), &may))
		return llmio_err(e, -EINVAL, "cannot read this process's CPU affinity: %s",
		                 strerror(errno));
	cpu_list_format(&may, avail, sizeof(avail));
	if (range_list(list, set))
		return llmio_err(e, -EINVAL,
		                 "cpus_allowed=%s is not a CPU list: expected numbers and ranges "
		                 "such "
		                 "as 1 or 0-3,6 (this process may run on CPUs %s)",
		                 list, avail);
	for (int c = 0; c < CPU_SETSIZE; c++) {
		if (CPU_ISSET(c, set) && !CPU_ISSET(c, &may)) {
			return llmio_err(e, -EINVAL,
			                 "cpus_allowed=%s: CPU %d is not one this process may run "
			                 "on "
			                 "(offline, or outside its cpuset); the CPUs here are %s",
			                 list, c, avail);
		}
	}
	return 0;
}

/*
 * fio's numa_cpu_nodes: the CPUs of the listed nodes ("all": every node), as the kernel lists
 * them in /sys/devices/system/node/nodeN/cpulist.  A node that is not on this machine is an
 * error, as in fio (libnuma's numa_parse_nodestring fails on it).
 */
int cpu_numa_nodes(const char *nodes, cpu_set_t *set, struct llmio_error *e)
{
	char path[64], line[1024], here[256] = "none";
	cpu_set_t want, cpus;
	FILE *f;

	CPU_ZERO(set);
	f = fopen("/sys/devices/system/node/online", "re");
	if (f) {
		if (fgets(here, sizeof(here), f))
			here[strcspn(here, "\n")] = '\0';
		fclose(f);
	}
	if (!strcmp(nodes, "all")) {
		if (range_list(here, &want))
			return llmio_err(e, -ENOENT,
			                 "numa_cpu_nodes=all: this machine lists no NUMA nodes "
			                 "(/sys/devices/system/node/online); give cpus_allowed");
	} else if (range_list(nodes, &want)) {
		return llmio_err(
		        e, -EINVAL,
		        "numa_cpu_nodes=%s is not a node list: expected numbers and ranges "
		        "such as 0 or 0-1,3, or all (the nodes here: %s)",
		        nodes, here);
	}
	for (int n = 0; n < CPU_SETSIZE; n++) {
		if (!CPU_ISSET(n, &want))
			continue;
		snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/cpulist", n);
		f = fopen(path, "re");
		line[0] = '\0';
		if (f) {
			if (!fgets(line, sizeof(line), f))
				line[0] = '\0';
			fclose(f);
		}
		line[strcspn(line, "\n")] = '\0';
		if (!f || (line[0] && range_list(line, &cpus)))
			return llmio_err(e, -EINVAL,
			                 "numa_cpu_nodes=%s: node %d is not on this machine (the "
			                 "nodes here: %s)",
			                 nodes, n, here);
		if (line[0]) /* a node of memory alone lists no CPUs */
			CPU_OR(set, set, &cpus);
	}
	if (!CPU_COUNT(set))
		return llmio_err(
		        e, -EINVAL,
		        "numa_cpu_nodes=%s: these nodes have no CPUs; give nodes with CPUs "
		        "(the nodes here: %s)",
		        nodes, here);
	return 0;
}
