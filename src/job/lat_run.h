/* SPDX-License-Identifier: MIT */
/*
 * Runs of completions with equal timestamps, counted into the clat and lat histograms with one
 * add each per run.
 *
 * The worker reads the clock once per batch of I/Os that move together (docs/metrics.md), so
 * the I/Os of one batch carry equal latencies: a round of 32 cached reads submitted by one
 * commit and reaped by one reap has one clat and one lat.  Adding each I/O alone was a third
 * of llmio's user-space instructions per I/O; adding a run of n equal values with
 * llmio_hist_add_n() gives the same histograms (buckets, count, sum, min, max) bit for bit,
 * which tests/test_lat_run.c checks against one add per I/O.
 */
#ifndef LLMIO_LAT_RUN_H
#define LLMIO_LAT_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "llmio/result.h"

struct lat_run {
	struct llmio_op_result *st; /* whose histograms the pending run goes to; NULL: none */
	uint64_t t_submit, t_queue; /* the run's timestamps */
	uint64_t n;
};

/* Count the pending run, completed at t, if any, and forget it. */
static inline void lat_run_flush(struct lat_run *r, uint64_t t)
{
	if (!r->st)
		return;
	llmio_hist_add_n(&r->st->clat, t - r->t_submit, r->n);
	llmio_hist_add_n(&r->st->lat, t - r->t_queue, r->n);
	r->st = NULL;
}

/*
 * Count one I/O completed at t (the same t for every I/O between two flushes) that was queued
 * at t_queue and submitted at t_submit, into st's histograms.
 */
static inline void lat_run_add(struct lat_run *r, struct llmio_op_result *st, uint64_t t,
                               uint64_t t_submit, uint64_t t_queue)
{
	if (r->st == st && r->t_submit == t_submit && r->t_queue == t_queue) {
		r->n++;
		return;
	}
	lat_run_flush(r, t);
	*r = (struct lat_run){st, t_submit, t_queue, 1};
}

#endif
