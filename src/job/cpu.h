/* SPDX-License-Identifier: MIT */
/*
 * CPU accounting.  The process figure comes from getrusage(RUSAGE_SELF), which sums every task
 * of the thread group, live or exited: worker threads and also io_uring's SQPOLL thread
 * (iou-sqp-PID) and io-wq workers (iou-wrk-PID), which the kernel creates as threads of the
 * process.  fio reports getrusage(RUSAGE_THREAD) per job and so leaves those out.  The
 * system-wide figure is busy time of all CPUs from /proc/stat, which also catches interrupt
 * and softirq work done on behalf of the job on other CPUs.
 */
#ifndef LLMIO_CPU_H
#define LLMIO_CPU_H

#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include "base/error.h"

struct cpu_snap {
	double usr_s, sys_s; /* process, all tasks */
	uint64_t nvcsw, nivcsw;
	double sys_busy_s; /* all CPUs, non-idle non-iowait */
	double softirq_s;  /* all CPUs' softirq time (network receive among it), /proc/stat */
};

int cpu_snap_take(struct cpu_snap *s);

/* Seconds of CPU of one thread (RUSAGE_THREAD), for tests and per-thread figures. */
double cpu_thread_seconds(void);

/*
 * Parse a CPU list ("1", "0-3,6") into set; every CPU must be one this process may run on.
 * 0, or -EINVAL with a message that names the problem and the CPUs there are.
 */
int cpu_list_parse(const char *list, cpu_set_t *set, struct llmio_error *e);

/* The CPUs of set as a list ("0-3,6") into buf. */
void cpu_list_format(const cpu_set_t *set, char *buf, size_t len);

/*
 * The CPUs of the NUMA nodes listed (fio's numa_cpu_nodes: "0", "0-1,3", "all"), from
 * /sys/devices/system/node; 0, or -EINVAL naming a node that is not here.
 */
int cpu_numa_nodes(const char *nodes, cpu_set_t *set, struct llmio_error *e);

/* fio's numa_mem_policy: an MPOL_* mode (MPOL_DEFAULT: leave the policy) and its nodes */
struct cpu_mempolicy {
	int mode;
	unsigned long nodes[CPU_SETSIZE / (8 * sizeof(unsigned long))];
};

/* Parses fio's MODE[:NODES] (nodes checked online); 0, or -EINVAL naming the problem. */
int cpu_mempolicy_parse(const char *text, struct cpu_mempolicy *p, struct llmio_error *e);

/* Sets the calling thread's memory policy (set_mempolicy(2)); 0 or -errno. */
int cpu_mempolicy_apply(const struct cpu_mempolicy *p);

/* The n-th CPU (from 0) of set, wrapping around; -1 when set is empty. */
int cpu_set_nth(const cpu_set_t *set, unsigned n);

#endif
