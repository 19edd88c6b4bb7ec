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

#endif
