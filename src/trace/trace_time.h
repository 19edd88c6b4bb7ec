/* SPDX-License-Identifier: MIT */
/*
 * A trace over time (docs/tracing.md):
 *
 * - the time series: the trace's wall time cut into bins of one width (1, 2 or 5 x 10^k ns, the
 *   smallest that makes at most TIME_MAX_BINS bins); a call counts in the bin where it
 *   started, with the bytes it transferred; per bin, the bytes and calls read and written,
 *   per phase and per process, so checkpoint bursts and a data loader's steady state show;
 * - per phase, where its threads' time went: for each thread that made calls in the phase,
 *   the time inside its calls (io) and the rest of its span there, from its first call's
 *   start to its last call's end (between: computing, or waiting on anything but file I/O);
 *   summed over the threads.  The phase is "I/O-bound" when io is at least half of the
 *   threads' spans, else "compute-bound".
 */
#ifndef LLMIO_TRACE_TIME_H
#define LLMIO_TRACE_TIME_H

#include <stdint.h>

#include "trace/trace_read.h"

#define TIME_MAX_BINS 200

struct time_cell {
	uint64_t rbytes, wbytes, rcalls, wcalls;
};

struct trace_timeseries {
	uint64_t t0, bin_ns; /* the first call, and the width of a bin */
	unsigned nbins;
	size_t nphase, nproc;       /* as in the trace */
	struct time_cell *by_phase; /* nbins x nphase, bin-major */
	struct time_cell *by_proc;  /* nbins x nproc, bin-major (t->proc's order) */
};

struct phase_time {
	uint64_t io_ns, span_ns; /* summed over the phase's threads */
	unsigned threads;        /* threads that made calls in the phase */
};

/* Fill ts from t.  0 or -ENOMEM. */
int trace_timeseries_build(struct trace *t, struct trace_timeseries *ts);
void trace_timeseries_release(struct trace_timeseries *ts);

/* pt[t->nphase]: where each phase's threads' time went.  0 or -ENOMEM. */
int trace_phase_times(struct trace *t, struct phase_time *pt);

/* "I/O-bound", "compute-bound", or "no calls". */
const char *trace_phase_verdict(const struct phase_time *p);

#endif
