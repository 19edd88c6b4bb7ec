/* SPDX-License-Identifier: MIT */
/*
 * fio's steadystate (ss, ss_dur, ss_ramp; docs/fio.md), as fio 3.33's steadystate.c judges it:
 * once a second the job's IOPS and bandwidth since the previous check (whole numbers, over the
 * milliseconds between the checks), recorded from ss_ramp + 1 s into the measured window on, in
 * a window of ss_dur seconds; once the window is full, each check computes fio's criterion over
 * it (the largest deviation from the window's mean, or the least-squares slope with the
 * seconds 0 .. dur-1 as x, either as a percentage of the mean with '%') and the job ends when
 * it is below the limit.  Only the control thread runs this, once a second.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "base/error.h"
#include "job/job_internal.h"

int job_ss_init(struct job *j, struct llmio_error *e)
{
	/* fio's window is whole seconds; below one there is no steady state */
	const uint64_t dur = j->o.ss_dur_ns / 1000000000u;

	if (!dur)
		return 0;
	if (dur > 86400)
		return llmio_err(e, -EINVAL, "ss_dur=%llus: at most a day (86400 s)",
		                 (unsigned long long)dur);
	j->ss.iops = calloc(dur, sizeof(*j->ss.iops));
	j->ss.bw = calloc(dur, sizeof(*j->ss.bw));
	if (!j->ss.iops || !j->ss.bw)
		return llmio_err(e, -ENOMEM, "no memory for ss_dur=%llus", (unsigned long long)dur);
	j->ss.dur = (unsigned)dur;
	return 0;
}

/* fio's criterion over the full window, from the oldest sample (at head) to the newest. */
static double criterion(struct job_ss *ss, uint8_t state)
{
	const uint64_t *y = state & LLMIO_SS_IOPS ? ss->iops : ss->bw;
	const double n = ss->dur;
	double sum = 0, sum_xy = 0, mean, v;

	for (unsigned i = 0; i < ss->dur; i++) {
		const double yi = (double)y[(ss->head + i) % ss->dur];

		sum += yi;
		sum_xy += i * yi;
	}
	mean = sum / n;
	if (state & LLMIO_SS_SLOPE) {
		const double sum_x = n * (n - 1) / 2, sum_x2 = (n - 1) * n * (2 * n - 1) / 6;

		v = ss->slope = (sum_xy - sum_x * sum / n) / (sum_x2 - sum_x * sum_x / n);
	} else {
		v = 0;
		for (unsigned i = 0; i < ss->dur; i++)
			v = fmax(v, fabs((double)y[i] - mean));
		ss->deviation = v;
	}
	return state & LLMIO_SS_PCT ? 100.0 * v / mean : v;
}

void job_ss_check(struct job *j, uint64_t now, uint64_t ios, uint64_t bytes)
{
	struct job_ss *ss = &j->ss;
	const uint64_t ms = (now - ss->t) / 1000000u;
	unsigned at;

	/* fio's: samples from ss_ramp + 1 s on, each the rate since the previous check */
	if (ss->attained || !ms)
		return;
	if (now - j->t_measure >= j->o.ss_ramp_ns + 1000000000u || !j->o.ss_ramp_ns) {
		if (ss->n < ss->dur) {
			at = ss->n++;
		} else { /* the oldest goes; the next oldest is the head */
			at = ss->head;
			ss->head = (ss->head + 1) % ss->dur;
		}
		ss->iops[at] = 1000 * (ios - ss->ios) / ms;
		ss->bw[at] = 1000 * (bytes - ss->bytes) / ms;
		if (ss->n == ss->dur) {
			ss->criterion = criterion(ss, j->o.ss_state);
			/* a slope's sign does not matter; a mean of 0 gives no criterion (NaN) */
			if (fabs(ss->criterion) < j->o.ss_limit) {
				ss->attained = true;
				atomic_store(&j->stop, 1);
			}
		}
	}
	ss->t = now;
	ss->ios = ios;
	ss->bytes = bytes;
}

static void reverse(uint64_t *v, unsigned from, unsigned to)
{
	while (from + 1 < to) {
		const uint64_t x = v[from];

		v[from++] = v[--to];
		v[to] = x;
	}
}

void job_ss_result(struct job *j, struct llmio_result *r)
{
	struct job_ss *ss = &j->ss;

	if (!ss->dur)
		return;
	r->ss = (struct llmio_steadystate){
	        .on = true,
	        .attained = ss->attained,
	        .dur = ss->dur,
	        .n = ss->n,
	        .criterion = ss->criterion,
	        .max_deviation = ss->deviation,
	        .slope = ss->slope,
	        .iops = ss->iops,
	        .bw = ss->bw,
	};
	/* oldest first: the ring turned so that head is 0 (three reversals) */
	reverse(ss->iops, 0, ss->head);
	reverse(ss->iops, ss->head, ss->dur);
	reverse(ss->iops, 0, ss->dur);
	reverse(ss->bw, 0, ss->head);
	reverse(ss->bw, ss->head, ss->dur);
	reverse(ss->bw, 0, ss->dur);
	ss->iops = ss->bw = NULL; /* the result's now */
}

void job_ss_release(struct job *j)
{
	free(j->ss.iops);
	free(j->ss.bw);
	j->ss.iops = j->ss.bw = NULL;
}
