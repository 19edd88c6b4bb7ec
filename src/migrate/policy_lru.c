/* SPDX-License-Identifier: MIT */
/*
 * Policy `lru`: what unified memory does on its own.  A tensor is fetched when a kernel needs it
 * and is not resident: the kernel faults on it and waits while unified memory migrates it at
 * its fault-handling rate (plan_xfer.fault; G10's Base UVM); when the fast tier lacks room, the
 * least recently used resident tensors that the kernel does not need are evicted, to the host while
 * it has room and else to the SSD, and the kernel waits for those writes too.
 *
 * The step is planned twice in a row and the second pass is the plan: the first one only leaves
 * the fast tier as a step in a loop finds it.  Tensors that live across steps and end the second
 * pass elsewhere than where it started are put back at the end of the step, so the plan repeats.
 * plan_lru() with lookahead > 0 also fetches what the next kernels need (policy_prefetch_lru.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "migrate/plan.h"

struct lru {
	const struct lt_step *s;
	const struct plan_cfg *c;
	struct plan *p;
	bool record;
	uint64_t mem, host;
	uint8_t *where; /* PLAN_FAST (also on its way in), PLAN_HOST, PLAN_SSD; 0xff: not alive */
	uint64_t *last; /* virtual kernel of the last touch */
	int64_t *need;  /* virtual kernel up to which a tensor must stay (protected); -1: none */
	uint32_t **by_kernel; /* tensors each kernel uses or creates */
	uint32_t *nby;
};

#define NOT_ALIVE 0xff

static int build_index(struct lru *l, struct llmio_error *e)
{
	const struct lt_step *s = l->s;

	l->by_kernel = calloc(s->nkernels, sizeof(*l->by_kernel));
	l->nby = calloc(s->nkernels, sizeof(*l->nby));
	if (!l->by_kernel || !l->nby)
		return llmio_err(e, -ENOMEM, "out of memory");
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t k = 0; k < s->nkernels && pass; k++) {
			l->by_kernel[k] = calloc(l->nby[k] ? l->nby[k] : 1, sizeof(uint32_t));
			if (!l->by_kernel[k])
				return llmio_err(e, -ENOMEM, "out of memory");
			l->nby[k] = 0;
		}
		for (uint32_t i = 0; i < s->ntensors; i++) {
			const struct lt_tensor *t = &s->tensors[i];
			const uint32_t *u = lt_uses(s, t);

			for (uint32_t j = 0; j <= t->nuses; j++) {
				uint32_t k = j < t->nuses ? u[j] : t->created;

				/* the creating kernel once, also when it reads it too */
				if (k == LT_PERSISTENT || (j == t->nuses && t->nuses && u[0] == k))
					continue;
				if (pass)
					l->by_kernel[k][l->nby[k]] = i;
				l->nby[k]++;
			}
		}
	}
	return 0;
}

static int move(struct lru *l, uint32_t i, enum plan_dir d, enum plan_tier t, uint32_t issue,
                uint32_t deadline, struct llmio_error *e)
{
	uint64_t b = l->s->tensors[i].bytes;

	if (d == PLAN_OUT) {
		l->mem -= b;
		l->host += t == PLAN_HOST ? b : 0;
		l->where[i] = (uint8_t)t;
	} else {
		l->mem += b;
		l->host -= t == PLAN_HOST ? b : 0;
		l->where[i] = PLAN_FAST;
	}
	return l->record ? plan_add(l->p, l->s, i, d, t, issue, deadline, e) : 0;
}

/* Make room for `want` more bytes at kernel k (virtual v) by evicting LRU tensors not needed
 * before v + protect.  dry: only say whether it is possible. */
static int make_room(struct lru *l, uint64_t want, uint32_t k, uint64_t v, bool dry,
                     struct llmio_error *e)
{
	const struct plan_tier_spec *h = &l->c->tier[PLAN_HOST];
	uint64_t freeable = 0;

	for (uint32_t i = 0; dry && i < l->s->ntensors; i++)
		if (l->where[i] == PLAN_FAST && l->need[i] < (int64_t)v)
			freeable += l->s->tensors[i].bytes;
	if (dry)
		return l->mem + want - freeable <= l->c->budget || l->mem + want <= l->c->budget;
	while (l->mem + want > l->c->budget) {
		uint32_t victim = UINT32_MAX;
		enum plan_tier t;
		uint64_t b;
		int ret;

		for (uint32_t i = 0; i < l->s->ntensors; i++)
			if (l->where[i] == PLAN_FAST && l->need[i] < (int64_t)v &&
			    (victim == UINT32_MAX || l->last[i] < l->last[victim]))
				victim = i;
		if (victim == UINT32_MAX)
			return 1;
		b = l->s->tensors[victim].bytes;
		t = l->host + b <= h->capacity ? PLAN_HOST : PLAN_SSD; /* capacity 0: no host */
		ret = move(l, victim, PLAN_OUT, t, k, k, e);
		if (ret)
			return ret;
	}
	return 0;
}

static int kernel(struct lru *l, uint32_t k, uint64_t v, uint32_t lookahead, struct llmio_error *e)
{
	const struct lt_step *s = l->s;
	uint64_t want = 0;
	int ret;

	/* what the next kernels read and is here stays: evicting it now would fetch it again */
	for (uint32_t a = lookahead; a >= 1; a--)
		for (uint32_t j = 0; k + a < s->nkernels && j < l->nby[k + a]; j++)
			if (l->where[l->by_kernel[k + a][j]] == PLAN_FAST)
				l->need[l->by_kernel[k + a][j]] = (int64_t)(v + a);
	/* what this kernel touches is protected, and must be here */
	for (uint32_t j = 0; j < l->nby[k]; j++) {
		uint32_t i = l->by_kernel[k][j];

		if (l->need[i] < (int64_t)v)
			l->need[i] = (int64_t)v;
		if (l->where[i] != PLAN_FAST)
			want += s->tensors[i].bytes;
	}
	ret = make_room(l, want, k, v, false, e);
	if (ret > 0) {
		uint32_t big = l->by_kernel[k][0];

		for (uint32_t j = 1; j < l->nby[k]; j++)
			if (s->tensors[l->by_kernel[k][j]].bytes > s->tensors[big].bytes)
				big = l->by_kernel[k][j];
		return llmio_err(
		        e, -ENOSPC,
		        "kernel %u (%s) needs its tensors resident together, more than the "
		        "budget of %llu bytes; the largest is '%s' (%llu bytes)",
		        k, s->kernels[k].name, (unsigned long long)l->c->budget,
		        s->tensors[big].name, (unsigned long long)s->tensors[big].bytes);
	}
	for (uint32_t j = 0; j < l->nby[k] && !ret; j++) {
		uint32_t i = l->by_kernel[k][j];

		if (l->where[i] == NOT_ALIVE) {
			l->where[i] = PLAN_FAST;
			l->mem += s->tensors[i].bytes;
		} else if (l->where[i] != PLAN_FAST) {
			/* a miss: unified memory faults it in (the kernel waits, at the fault rate)
			 */
			ret = move(l, i, PLAN_IN, l->where[i], k, k, e);
			if (!ret && l->record)
				l->p->x[l->p->n - 1].fault = 1;
		}
		l->last[i] = v;
	}
	/* prefetch what the next kernels read, where it fits without evicting what is needed */
	for (uint32_t a = 1; a <= lookahead && k + a < s->nkernels && !ret; a++)
		for (uint32_t j = 0; j < l->nby[k + a] && !ret; j++) {
			uint32_t i = l->by_kernel[k + a][j];
			uint64_t b = s->tensors[i].bytes;

			if (l->where[i] == NOT_ALIVE || l->where[i] == PLAN_FAST)
				continue;
			l->need[i] = (int64_t)(v + a);
			if (make_room(l, b, k, v, true, e) != 1)
				continue;
			ret = make_room(l, b, k, v, false, e);
			if (!ret)
				ret = move(l, i, PLAN_IN, l->where[i], k, k + a, e);
			l->last[i] = v + a;
		}
	if (ret)
		return ret < 0 ? ret : 0;
	/* tensors whose last touch this was die */
	for (uint32_t j = 0; j < l->nby[k]; j++) {
		uint32_t i = l->by_kernel[k][j];
		const struct lt_tensor *t = &s->tensors[i];

		if (t->created != LT_PERSISTENT && lt_last_event(s, t) == k &&
		    l->where[i] == PLAN_FAST) {
			l->where[i] = NOT_ALIVE;
			l->mem -= t->bytes;
		}
	}
	return 0;
}

int plan_lru(struct plan *p, const struct lt_step *s, const struct plan_cfg *c, uint32_t lookahead,
             struct llmio_error *e)
{
	const uint32_t N = s->nkernels, T = s->ntensors;
	struct lru l = {.s = s, .c = c, .p = p};
	int ret = 0;

	l.where = malloc(T ? T : 1);
	l.last = calloc(T ? T : 1, sizeof(*l.last));
	l.need = malloc((T ? T : 1) * sizeof(*l.need));
	if (!l.where || !l.last || !l.need) {
		ret = llmio_err(e, -ENOMEM, "out of memory");
		goto out;
	}
	ret = build_index(&l, e);
	if (ret)
		goto out;
	/* a cold start: what lives across steps is resident, as far as the budget goes */
	for (uint32_t i = 0; i < T; i++) {
		bool pers = s->tensors[i].created == LT_PERSISTENT;

		l.where[i] = NOT_ALIVE;
		l.need[i] = -1; /* a cold start protects nothing: kernel 0 may evict */
		if (pers && l.mem + s->tensors[i].bytes <= c->budget) {
			l.where[i] = PLAN_FAST;
			l.mem += s->tensors[i].bytes;
		} else if (pers) {
			l.where[i] = PLAN_SSD;
		}
	}
	for (uint64_t v = 0; v < 2ull * N && !ret; v++) {
		if (v == N) {
			l.record = true;
			for (uint32_t i = 0; i < T; i++)
				if (s->tensors[i].created == LT_PERSISTENT)
					p->start_tier[i] = l.where[i];
		}
		ret = kernel(&l, (uint32_t)(v % N), v, lookahead, e);
	}
	/* put back what moved, so that the next step starts as this one did */
	for (uint32_t i = 0; i < T && !ret; i++) {
		if (s->tensors[i].created != LT_PERSISTENT)
			continue;
		if (l.where[i] == PLAN_FAST && p->start_tier[i] != PLAN_FAST)
			ret = move(&l, i, PLAN_OUT, p->start_tier[i], N, N, e);
	}
	for (uint32_t i = 0; i < T && !ret; i++)
		if (s->tensors[i].created == LT_PERSISTENT && l.where[i] != PLAN_FAST &&
		    p->start_tier[i] == PLAN_FAST)
			ret = move(&l, i, PLAN_IN, l.where[i], N, N, e);
out:
	for (uint32_t k = 0; l.by_kernel && k < N; k++)
		free(l.by_kernel[k]);
	free(l.by_kernel);
	free(l.nby);
	free(l.where);
	free(l.last);
	free(l.need);
	return ret;
}

static int build(struct plan *p, const struct lt_step *s, const struct plan_cfg *c,
                 struct llmio_error *e)
{
	return plan_lru(p, s, c, 0, e);
}

const struct plan_policy policy_lru = {
        .name = "lru",
        .summary = "on demand: fetch when a kernel needs it, evict the least recently used",
        .build = build,
};
