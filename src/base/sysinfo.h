/* SPDX-License-Identifier: MIT */
/*
 * Facts of the host a result was measured on, so that results from different machines can be
 * told apart and compared.
 */
#ifndef LLMIO_SYSINFO_H
#define LLMIO_SYSINFO_H

#include "llmio/result.h"

/*
 * Fill r->hostname, r->kernel (uname release) and r->cpu_model (/proc/cpuinfo "model name",
 * or what the architecture offers instead).  A fact that cannot be read is left "" rather
 * than failing: a result without a hostname is still a result.  Thread-safe.
 */
void sysinfo_host(struct llmio_result *r);

/* CPUs online now (at least 1). Thread-safe. */
unsigned sysinfo_online_cpus(void);

/*
 * This process's storage bytes so far from /proc/self/io (read_bytes, write_bytes: every
 * thread of the process, io_uring io-wq and SQPOLL threads included, exited ones too).
 * \return 0, or -errno when the file cannot be read (no per-task I/O accounting).
 * Thread-safe.
 */
int sysinfo_proc_io(uint64_t *read_bytes, uint64_t *write_bytes);

#endif
