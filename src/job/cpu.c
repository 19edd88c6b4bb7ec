/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/mempolicy.h>
#include <sys/resource.h>
#include <sys/syscall.h>
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
 * A node list of fio's (libnuma's): numbers and ranges, or "all"; every node online, as libnuma
 * insists.  label is the option as given, for the messages.
 */
static int node_list(const char *label, const char *nodes, cpu_set_t *want, struct llmio_error *e)
{
	char here[256] = "";
	cpu_set_t online;
	FILE *f = fopen("/sys/devices/system/node/online", "re");

	if (f) {
		if (!fgets(here, sizeof(here), f))
			here[0] = '\0';
		fclose(f);
	}
	here[strcspn(here, "\n")] = '\0';
	if (!here[0] || range_list(here, &online))
		return llmio_err(e, -ENOENT,
		                 "%s: this machine lists no NUMA nodes "
		                 "(/sys/devices/system/node/online); leave it out",
		                 label);
	if (!strcmp(nodes, "all")) {
		*want = online;
		return 0;
	}
	if (range_list(nodes, want))
		return llmio_err(e, -EINVAL,
		                 "%s: %s is not a node list: expected numbers and ranges such as 0 "
		                 "or 0-1,3, or all (the nodes here: %s)",
		                 label, nodes, here);
	for (int n = 0; n < CPU_SETSIZE; n++)
		if (CPU_ISSET(n, want) && !CPU_ISSET(n, &online))
			return llmio_err(e, -EINVAL,
			                 "%s: node %d is not on this machine (the nodes here: %s)",
			                 label, n, here);
	return 0;
}

/*
 * fio's numa_cpu_nodes: the CPUs of the listed nodes, as the kernel lists them in
 * /sys/devices/system/node/nodeN/cpulist.  A node that is not on this machine is an error, as
 * in fio (libnuma's numa_parse_nodestring fails on it).
 */
int cpu_numa_nodes(const char *nodes, cpu_set_t *set, struct llmio_error *e)
{
	char label[128], path[64], line[1024];
	cpu_set_t want, cpus;

	CPU_ZERO(set);
	snprintf(label, sizeof(label), "numa_cpu_nodes=%s", nodes);
	if (node_list(label, nodes, &want, e))
		return -EINVAL;
	for (int n = 0; n < CPU_SETSIZE; n++) {
		FILE *f;

		if (!CPU_ISSET(n, &want))
			continue;
		snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/cpulist", n);
		f = fopen(path, "re");
		if (!f)
			return llmio_err(e, -ENOENT, "%s: cannot read %s: %s", label, path,
			                 strerror(errno));
		if (!fgets(line, sizeof(line), f))
			line[0] = '\0';
		fclose(f);
		line[strcspn(line, "\n")] = '\0';
		if (line[0] && range_list(line, &cpus))
			return llmio_err(e, -EINVAL, "%s: %s is not a CPU list: %s", label, path,
			                 line);
		if (line[0]) /* a node of memory alone lists no CPUs */
			CPU_OR(set, set, &cpus);
	}
	if (!CPU_COUNT(set))
		return llmio_err(e, -EINVAL, "%s: these nodes have no CPUs; give nodes with CPUs",
		                 label);
	return 0;
}

/*
 * fio's numa_mem_policy, MODE[:NODES], checked as fio's option does: default and local take no
 * nodes, prefer one node, bind a list, interleave a list or all of them (its default).
 */
int cpu_mempolicy_parse(const char *text, struct cpu_mempolicy *p, struct llmio_error *e)
{
	static const char *const modes[] = {"default", "prefer", "bind", "interleave", "local"};
	static const int mpol[] = {MPOL_DEFAULT, MPOL_PREFERRED, MPOL_BIND, MPOL_INTERLEAVE,
	                           MPOL_LOCAL};
	const char *colon = strchr(text, ':'), *nodes = colon ? colon + 1 : NULL;
	const size_t len = colon ? (size_t)(colon - text) : strlen(text);
	const size_t word = 8 * sizeof(p->nodes[0]);
	char label[128];
	cpu_set_t want;
	size_t i;

	memset(p, 0, sizeof(*p));
	snprintf(label, sizeof(label), "numa_mem_policy=%s", text);
	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (strlen(modes[i]) == len && !strncmp(text, modes[i], len))
			break;
	if (i == sizeof(modes) / sizeof(modes[0]))
		return llmio_err(e, -EINVAL,
		                 "%s: expected default, prefer:NODE, bind:NODES, "
		                 "interleave[:NODES] or local",
		                 label);
	if ((mpol[i] == MPOL_DEFAULT || mpol[i] == MPOL_LOCAL) && nodes)
		return llmio_err(e, -EINVAL, "%s: %s takes no nodes", label, modes[i]);
	if (mpol[i] == MPOL_PREFERRED &&
	    (!nodes || !*nodes || strspn(nodes, "0123456789") != strlen(nodes)))
		return llmio_err(e, -EINVAL, "%s: prefer takes one node (prefer:0)", label);
	if (mpol[i] == MPOL_BIND && !nodes)
		return llmio_err(e, -EINVAL, "%s: bind needs its nodes (bind:0-1)", label);
	if (mpol[i] == MPOL_INTERLEAVE && !nodes)
		nodes = "all";
	if (nodes && node_list(label, nodes, &want, e))
		return -EINVAL;
	for (int n = 0; nodes && n < CPU_SETSIZE; n++)
		if (CPU_ISSET(n, &want))
			p->nodes[n / word] |= 1UL << (n % word);
	p->mode = mpol[i];
	return 0;
}

int cpu_mempolicy_apply(const struct cpu_mempolicy *p)
{
	/* maxnode counts one more than the mask's bits, as libnuma passes it */
	if (p->mode != MPOL_DEFAULT &&
	    syscall(SYS_set_mempolicy, p->mode, p->nodes, (unsigned long)CPU_SETSIZE + 1))
		return -errno;
	return 0;
}
