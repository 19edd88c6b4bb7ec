/* SPDX-License-Identifier: MIT */
/*
 * fio's averaged logs (write_bw_log, write_lat_log, write_iops_log with log_avg_msec), kept
 * per thread without a cost per I/O beyond a few additions: completions add to the current
 * interval; when a completion falls past its end, the interval is appended to a buffer sized
 * before the run (runtime / log_avg_msec, or IOLOG_DEFAULT_CAP intervals without a runtime).
 * Nothing allocates, locks or writes on the hot path; a full buffer drops the later
 * intervals and says so (log_truncated).  Intervals are aligned on the measured window's
 * start, so interval k holds exactly the I/Os that completed in [k, k+1) x log_avg_msec.
 */
#ifndef LLMIO_STATS_IOLOG_H
#define LLMIO_STATS_IOLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "llmio/job.h"
#include "llmio/result.h"

/* intervals kept by a job without a runtime: 4.5 hours at 1 s */
#define IOLOG_DEFAULT_CAP 16384u

struct iolog {
	struct llmio_log_sample *buf;
	size_t n, cap;
	bool truncated;
	uint64_t t0, step, next; /* ns; next == 0: no completion yet in this window */
	struct llmio_log_sample cur;
};

/* Does o ask for a log?  Its interval in ns (log_avg_msec, 0 = 1000). */
bool iolog_wanted(const struct llmio_job_opts *o);
uint64_t iolog_step_ns(const struct llmio_job_opts *o);

/* The buffer of one thread, for o's runtime.  0 or -ENOMEM. */
int iolog_init(struct iolog *l, const struct llmio_job_opts *o);
void iolog_release(struct iolog *l);

/* A new measured window (the ramp ended): start over. */
void iolog_reset(struct iolog *l);

/* Close the intervals that ended before t (t0: the window's start). */
void iolog_roll(struct iolog *l, uint64_t t, uint64_t t0);

/* One completion at t (ns) of op (0 read, 1 write). */
static inline void iolog_add(struct iolog *l, uint64_t t0, int op, uint64_t t, uint64_t bytes,
                             uint64_t slat, uint64_t clat, uint64_t lat)
{
	if (t >= l->next)
		iolog_roll(l, t, t0);
	l->cur.ios[op]++;
	l->cur.bytes[op] += bytes;
	l->cur.slat_ns[op] += slat;
	l->cur.clat_ns[op] += clat;
	l->cur.lat_ns[op] += lat;
}

/* The thread ended at t_end: its last, partial interval. */
void iolog_finish(struct iolog *l, uint64_t t_end);

#endif
