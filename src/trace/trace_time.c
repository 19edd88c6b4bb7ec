/* SPDX-License-Identifier: MIT */
/* A trace over time: the time series and each phase's I/O and compute (trace_time.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace_time.h"

/* The smallest of 1, 2, 5 x 10^k ns that cuts span into at most TIME_MAX_BINS bins. */
static uint64_t bin_width(uint64_t span)
{
	static const uint64_t steps[] = {1, 2, 5};

	for (uint64_t p = 1; p <= UINT64_MAX / 10; p *= 10)
		for (unsigned i = 0; i < 3; i++)
			if (span / (steps[i] * p) < TIME_MAX_BINS)
				return steps[i] * p;
	return UINT64_MAX;
}

static void add(struct time_cell *c, const struct trace_rec *r)
{
	const uint64_t n = r->result > 0 ? (uint64_t)r->result : 0;

	if (trace_type_is_read(r->type)) {
		c->rbytes += n;
		c->rcalls++;
	} else if (trace_type_is_write(r->type)) {
		c->wbytes += n;
		c->wcalls++;
	}
}

int trace_timeseries_build(struct trace *t, struct trace_timeseries *ts)
{
	uint64_t t0 = UINT64_MAX, t1 = 0;

	memset(ts, 0, sizeof(*ts));
	for (size_t i = 0; i < t->nrec; i++) {
		const struct trace_rec *r = &t->rec[i];

		t0 = r->ts < t0 ? r->ts : t0;
		t1 = r->ts > t1 ? r->ts : t1;
	}
	ts->nphase = t->nphase;
	ts->nproc = t->nproc;
	if (!t->nrec)
		return 0;
	ts->t0 = t0;
	ts->bin_ns = bin_width(t1 - t0);
	ts->nbins = (unsigned)((t1 - t0) / ts->bin_ns) + 1;
	ts->by_phase =
	        calloc((size_t)ts->nbins * (t->nphase ? t->nphase : 1), sizeof(*ts->by_phase));
	ts->by_proc = calloc((size_t)ts->nbins * (t->nproc ? t->nproc : 1), sizeof(*ts->by_proc));
	if (!ts->by_phase || !ts->by_proc) {
		trace_timeseries_release(ts);
		return -ENOMEM;
	}
	for (size_t i = 0; i < t->nrec; i++) {
		const struct trace_rec *r = &t->rec[i];
		const size_t b = (size_t)((r->ts - t0) / ts->bin_ns);

		if (r->phase < t->nphase)
			add(&ts->by_phase[b * t->nphase + r->phase], r);
		for (size_t k = 0; k < t->nproc; k++)
			if (t->proc[k].pid == r->pid) {
				add(&ts->by_proc[b * t->nproc + k], r);
				break;
			}
	}
	return 0;
}

void trace_timeseries_release(struct trace_timeseries *ts)
{
	free(ts->by_phase);
	free(ts->by_proc);
	memset(ts, 0, sizeof(*ts));
}

int trace_phase_times(struct trace *t, struct phase_time *pt)
{
	const struct trace_thread *th;
	size_t nth;
	uint64_t *first, *last, *io;

	memset(pt, 0, t->nphase * sizeof(*pt));
	th = trace_threads(t, &nth);
	if (!th && t->nrec)
		return -ENOMEM;
	first = malloc((t->nphase + 1) * sizeof(*first));
	last = malloc((t->nphase + 1) * sizeof(*last));
	io = malloc((t->nphase + 1) * sizeof(*io));
	if (!first || !last || !io) {
		free(first);
		free(last);
		free(io);
		return -ENOMEM;
	}
	for (size_t k = 0; k < nth; k++) {
		for (size_t p = 0; p < t->nphase; p++) {
			first[p] = UINT64_MAX;
			last[p] = io[p] = 0;
		}
		for (size_t i = 0; i < th[k].n; i++) {
			const struct trace_rec *r = &t->rec[th[k].idx[i]];
			const uint64_t end = r->ts + r->dur;

			if (r->phase >= t->nphase)
				continue;
			first[r->phase] = r->ts < first[r->phase] ? r->ts : first[r->phase];
			last[r->phase] = end > last[r->phase] ? end : last[r->phase];
			io[r->phase] += r->dur;
		}
		for (size_t p = 0; p < t->nphase; p++) {
			if (first[p] == UINT64_MAX)
				continue;
			pt[p].threads++;
			pt[p].span_ns += last[p] - first[p];
			/* a thread's calls do not overlap (one at a time): io never exceeds span,
			 * unless clocks disagree by a tick, which is then clamped */
			pt[p].io_ns += io[p] < last[p] - first[p] ? io[p] : last[p] - first[p];
		}
	}
	free(first);
	free(last);
	free(io);
	return 0;
}

const char *trace_phase_verdict(const struct phase_time *p)
{
	if (!p->threads)
		return "no calls";
	return 2 * p->io_ns >= p->span_ns ? "I/O-bound" : "compute-bound";
}
