/* SPDX-License-Identifier: MIT */
/*
 * fio's latency_target: the search for the highest queue depth whose I/Os meet a latency
 * target (docs/fio.md).  Each window of latency_window, the share of I/Os whose total latency
 * stayed at or under the target decides: at least latency_percentile, and the depth rises
 * (doubling until a window first fails, then bisecting towards the lowest failing depth);
 * below it, the depth falls half way to the highest passing one.  With latency_percentile 100
 * a single late I/O lowers the depth at once, and at depth 1 fails the job (ETIMEDOUT), as
 * fio's.  Without latency_run, a window that leaves the depth where it was starts one final
 * window at that depth (its statistics are the job's), and the next one ends the job.
 *
 * Pure state, fed clock readings and I/O counts, so tests/test_lat_target.c can drive it
 * with a made-up latency series.
 */
#ifndef LLMIO_LAT_TARGET_H
#define LLMIO_LAT_TARGET_H

#include <stdbool.h>
#include <stdint.h>

struct lat_target {
	uint64_t target_ns, window_ns;
	double pct;       /* latency_percentile, 0..100 */
	uint32_t iodepth; /* the job's: the search's ceiling */
	bool run;         /* latency_run: keep adjusting, never end the job */
	uint32_t qd;      /* the depth allowed now */
	uint32_t low, high, stable;
	uint64_t t_cycle, ios_cycle, missed;
	bool end_run; /* the final window at the found depth is running */
};

enum lat_target_step {
	LAT_TARGET_GO,    /* keep going at lt->qd */
	LAT_TARGET_RESET, /* the final window starts: the caller restarts its statistics */
	LAT_TARGET_DONE,  /* the final window is over: the job ends */
};

/* Start the search at depth 1, at time t with ios I/Os completed so far. */
void lat_target_init(struct lat_target *lt, uint64_t target_ns, uint64_t window_ns, double pct,
                     uint32_t iodepth, bool run, uint64_t t, uint64_t ios);

/* One I/O took longer than the target.  \return true when the job must fail (ETIMEDOUT). */
bool lat_target_miss(struct lat_target *lt, uint64_t t, uint64_t ios);

/* After completions, at time t with ios I/Os completed: judge the window once it is over. */
enum lat_target_step lat_target_check(struct lat_target *lt, uint64_t t, uint64_t ios);

#endif
