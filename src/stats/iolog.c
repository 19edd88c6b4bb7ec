/* SPDX-License-Identifier: MIT */
/* fio's averaged logs per thread (iolog.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stats/iolog.h"

bool iolog_wanted(const struct llmio_job_opts *o)
{
	return o->write_bw_log[0] || o->write_lat_log[0] || o->write_iops_log[0];
}

uint64_t iolog_step_ns(const struct llmio_job_opts *o)
{
	return (o->log_avg_msec ? o->log_avg_msec : 1000) * 1000000ull;
}

int iolog_init(struct iolog *l, const struct llmio_job_opts *o)
{
	memset(l, 0, sizeof(*l));
	l->step = iolog_step_ns(o);
	/* a runtime bounds the window: its intervals, the partial last one and one spare */
	l->cap = o->runtime_ns ? (size_t)(o->runtime_ns / l->step) + 2 : IOLOG_DEFAULT_CAP;
	if (l->cap > IOLOG_DEFAULT_CAP * 16)
		l->cap = IOLOG_DEFAULT_CAP * 16;
	l->buf = calloc(l->cap, sizeof(*l->buf));
	return l->buf ? 0 : -ENOMEM;
}

void iolog_release(struct iolog *l)
{
	free(l->buf);
	l->buf = NULL;
}

void iolog_reset(struct iolog *l)
{
	l->n = 0;
	l->next = 0;
	l->truncated = false;
	memset(&l->cur, 0, sizeof(l->cur));
}

static void push(struct iolog *l, uint64_t t_ms)
{
	if (l->n < l->cap) {
		l->cur.t_ms = t_ms;
		l->buf[l->n++] = l->cur;
	} else {
		l->truncated = true;
	}
	memset(&l->cur, 0, sizeof(l->cur));
}

void iolog_roll(struct iolog *l, uint64_t t, uint64_t t0)
{
	if (!l->next) {
		l->t0 = t0;
		l->next = t0 + l->step;
	}
	while (t >= l->next) {
		push(l, (l->next - l->t0) / 1000000u);
		l->next += l->step;
		if (l->truncated) {
			/* nothing more is kept: skip the empty intervals at once */
			l->next = l->t0 + ((t - l->t0) / l->step + 1) * l->step;
			break;
		}
	}
}

void iolog_finish(struct iolog *l, uint64_t t_end)
{
	if (!l->next || !(l->cur.ios[0] || l->cur.ios[1]))
		return;
	/* rounded up: after the last whole interval, never on it */
	push(l, t_end > l->t0 ? (t_end - l->t0 + 999999u) / 1000000u : 0);
}
