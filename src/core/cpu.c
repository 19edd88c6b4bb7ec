/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

#include "core/cpu.h"

static double tv_s(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

static int system_busy(double *busy_s)
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
	return system_busy(&s->sys_busy_s);
}

double cpu_thread_seconds(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru))
		return 0;
	return tv_s(ru.ru_utime) + tv_s(ru.ru_stime);
}
