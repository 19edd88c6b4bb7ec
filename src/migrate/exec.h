/* SPDX-License-Identifier: MIT */
/*
 * A migration plan executed on real storage (issue 18): compute is emulated by waiting each
 * kernel's duration, every SSD transfer goes through the tensor store (evict = put, fetch = get
 * into the tensor's fast-tier buffer), host transfers copy into memory the executor holds, and a
 * transfer not complete by its deadline stalls the next kernel, which is recorded with the
 * tensor it waited for.  Also the calibration that measures the SSD tier through the store.
 */
#ifndef LLMIO_STORE_EXEC_H
#define LLMIO_STORE_EXEC_H

#include <stdint.h>

#include "llmio/store.h"
#include "migrate/plan.h"

struct plan_exec {
	struct plan_sim m; /* measured: the fields plan_simulate() fills (peak_fast: the plan's) */
	double *stall_s;   /* per kernel (nkernels + 1: the last is the step's end) */
	uint32_t *stall_tensor; /* per kernel: the tensor it waited for last, or UINT32_MAX */
	uint32_t stalled_kernels;
	double late_s; /* step - stall - compute: emulated kernels that woke up late (timers) */
};

/* Run one step of plan p on store st (which holds nothing of the step's yet).  The tensors
 * that start the step offloaded are put there first, untimed.  r is released with
 * plan_exec_release(), also after a failure. */
int plan_execute(const struct plan *p, const struct lt_step *s, struct llmio_store *st,
                 struct plan_exec *r, struct llmio_error *e);
void plan_exec_release(struct plan_exec *r);

/* plan_execute() that ends early with -EINTR (no message) once *stop is set (SIGINT/SIGTERM):
 * its waits for transfers and emulated kernels look at it at least every 50 ms.  What is in
 * flight lands before it returns. */
int plan_execute_stop(const struct plan *p, const struct lt_step *s, struct llmio_store *st,
                      volatile int *stop, struct plan_exec *r, struct llmio_error *e);

/* Measure the SSD tier through st: latency per transfer (the median of nine 4 KiB puts and
 * gets) and bandwidth, the slower way.  With a step s, the bandwidth of the load the step puts
 * on the store: its tensors in its order, those at least as large as the byte-weighted median
 * size (the ones that carry its bytes), as many as fit in `bytes`, put back to back (one put
 * each) and got back the same way: bytes / (time - n x latency), the latencies counted for
 * at most half of the time.  Without (s NULL): one put and one get of `bytes`, less the
 * latency. */
int plan_calibrate(struct llmio_store *st, const struct lt_step *s, uint64_t bytes,
                   struct plan_tier_spec *ssd, struct llmio_error *e);

/* How late the executor's timer wakes up after a sleep of sleep_ns (the median of 15, with
 * the executor's timer slack): what each emulated kernel runs long, for the simulation
 * (plan_cfg.kernel_late_ns). */
uint64_t plan_timer_late_ns(uint64_t sleep_ns);

#endif
