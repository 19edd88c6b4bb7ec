/* SPDX-License-Identifier: MIT */
/*
 * The adaptive sweep (adaptive.h): seed each phase class with one point, then, round after
 * round, ask the scorer for the answers so far and measure only what could change them:
 *  - climb: the unmeasured neighbours (next iodepth and numjobs up and down, same bs) of each
 *    answer's point, and for a latency class of its point of most IOPS too (A2);
 *  - once the answer's point is a local best: every other datapath at the answer's settings
 *    (A3), and the neighbours of every datapath that ties with the answer.
 * It ends when a round has nothing left to measure.  Points are never measured twice.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "sweep/adaptive.h"

struct apt {
	uint64_t group; /* every key but bs, iodepth, numjobs: the same datapath, rw, target */
	uint64_t bs, qd, nj;
	unsigned cls, lat; /* phase classes, and those ranked by latency */
	bool done, queued;
};

struct hidx {
	uint64_t hash;
	size_t idx;
};

struct search {
	const struct adapt_opts *o;
	const struct adapt_ops *ops;
	struct apt *p;
	size_t n;
	struct hidx *h; /* every repeat's hash, sorted */
	size_t nh;
	size_t *todo;
	size_t ntodo;
	struct adapt_stats *st;
};

static bool is_axis(const char *key)
{
	return !strcmp(key, "bs") || !strcmp(key, "iodepth") || !strcmp(key, "numjobs");
}

/*
 * The hash of every key and value but the ordered axes: points of one group share it.  Only
 * compared within this search (never kept), so hash64; a key and its value are two parts.
 */
static uint64_t group_of(const struct sweep_config *c)
{
	uint64_t h = 0;

	for (size_t i = 0; i < c->n; i++)
		if (!is_axis(c->kv[i].key))
			h = hash64_str(hash64_str(h, c->kv[i].key), c->kv[i].canon);
	return h;
}

static uint64_t num(const struct sweep_config *c, const char *key)
{
	const char *v = sweep_config_get(c, key);

	return v ? strtoull(v, NULL, 10) : 0;
}

static int cmp_hidx(const void *a, const void *b)
{
	const struct hidx *x = a, *y = b;

	return x->hash < y->hash ? -1 : x->hash > y->hash;
}

static int build(struct search *s, const struct sweep_file *f, const struct sweep_plan *plan,
                 struct llmio_error *e)
{
	struct sweep_point *pt = malloc(sizeof(*pt));
	unsigned reps = s->o->repeats ? s->o->repeats : 1;
	int ret = 0;

	s->n = plan->n;
	s->p = calloc(s->n ? s->n : 1, sizeof(*s->p));
	s->h = calloc(s->n * reps + 1, sizeof(*s->h));
	s->todo = calloc(s->n + 1, sizeof(*s->todo));
	if (!pt || !s->p || !s->h || !s->todo) {
		free(pt);
		return llmio_err(e, -ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < s->n && !ret; i++) {
		struct apt *a = &s->p[i];

		for (unsigned r = 0; r < reps && !ret; r++) {
			ret = sweep_point_make(f, plan, i, r, pt, e);
			if (!ret)
				s->h[s->nh++] = (struct hidx){pt->hash, i};
		}
		if (ret)
			break;
		a->group = group_of(&pt->cfg);
		a->bs = num(&pt->cfg, "bs");
		a->qd = num(&pt->cfg, "iodepth");
		a->nj = num(&pt->cfg, "numjobs");
		a->cls = s->ops->classes(s->ops->arg, &pt->cfg, &a->lat);
	}
	free(pt);
	if (!ret)
		qsort(s->h, s->nh, sizeof(*s->h), cmp_hidx);
	return ret;
}

static long lookup(const struct search *s, uint64_t hash)
{
	struct hidx key = {hash, 0}, *f;

	if (!hash)
		return -1;
	f = bsearch(&key, s->h, s->nh, sizeof(*s->h), cmp_hidx);
	return f ? (long)f->idx : -1;
}

static void add(struct search *s, long i)
{
	if (i < 0 || s->p[i].done || s->p[i].queued)
		return;
	s->p[i].queued = true;
	s->todo[s->ntodo++] = (size_t)i;
}

/* The point of group g and class bit c at (bs, qd, nj), or -1. */
static long find(const struct search *s, uint64_t g, unsigned c, uint64_t bs, uint64_t qd,
                 uint64_t nj)
{
	for (size_t i = 0; i < s->n; i++) {
		const struct apt *a = &s->p[i];

		if (a->group == g && (a->cls & c) && a->bs == bs && a->qd == qd && a->nj == nj)
			return (long)i;
	}
	return -1;
}

/* The bs at which group g decides class c (A1): the smallest for latency, else the largest. */
static uint64_t decisive_bs(const struct search *s, uint64_t g, unsigned c, bool latency)
{
	uint64_t bs = 0;

	for (size_t i = 0; i < s->n; i++) {
		const struct apt *a = &s->p[i];

		if (a->group == g && (a->cls & c) && (!bs || (latency ? a->bs < bs : a->bs > bs)))
			bs = a->bs;
	}
	return bs;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Group g's seed for class c: at the decisive bs, the lower median iodepth, fewest jobs. */
static long seed_of(const struct search *s, uint64_t g, unsigned c, bool latency)
{
	uint64_t bs = decisive_bs(s, g, c, latency), *qd = calloc(s->n + 1, sizeof(*qd));
	uint64_t nj = UINT64_MAX, mid;
	size_t nq = 0;

	if (!qd)
		return -1;
	for (size_t i = 0; i < s->n; i++)
		if (s->p[i].group == g && (s->p[i].cls & c) && s->p[i].bs == bs)
			qd[nq++] = s->p[i].qd;
	qsort(qd, nq, sizeof(*qd), cmp_u64);
	mid = nq ? qd[(nq - 1) / 2] : 0;
	free(qd);
	for (size_t i = 0; i < s->n; i++)
		if (s->p[i].group == g && (s->p[i].cls & c) && s->p[i].bs == bs &&
		    s->p[i].qd == mid && s->p[i].nj < nj)
			nj = s->p[i].nj;
	return find(s, g, c, bs, mid, nj);
}

/*
 * The neighbours of point i along iodepth and numjobs in its group and class c, at its bs:
 * the nearest value below and above on each axis.  \return how many were not measured yet
 * (and are now queued).
 */
static size_t neighbours(struct search *s, long i, unsigned c)
{
	const struct apt *x;
	size_t before = s->ntodo;

	if (i < 0)
		return 0;
	x = &s->p[i];
	for (int axis = 0; axis < 2; axis++) {
		long lo = -1, hi = -1;

		for (size_t k = 0; k < s->n; k++) {
			const struct apt *a = &s->p[k];
			uint64_t v = axis ? a->nj : a->qd, xv = axis ? x->nj : x->qd;

			if (a->group != x->group || !(a->cls & c) || a->bs != x->bs ||
			    (axis ? a->qd != x->qd : a->nj != x->nj))
				continue;
			if (v < xv && (lo < 0 || v > (axis ? s->p[lo].nj : s->p[lo].qd)))
				lo = (long)k;
			if (v > xv && (hi < 0 || v < (axis ? s->p[hi].nj : s->p[hi].qd)))
				hi = (long)k;
		}
		add(s, lo);
		add(s, hi);
	}
	return s->ntodo - before;
}

/* Every other group of class c at point i's settings (A3): one pass, each group has at most
 * one point there. */
static void transfer(struct search *s, long i, unsigned c)
{
	const struct apt *x;

	if (i < 0)
		return;
	x = &s->p[i];
	for (size_t k = 0; k < s->n; k++) {
		const struct apt *a = &s->p[k];

		if ((a->cls & c) && a->group != x->group && a->bs == x->bs && a->qd == x->qd &&
		    a->nj == x->nj)
			add(s, (long)k);
	}
}

static bool ties(const struct adapt_answer *a, const struct adapt_path *p, double pct)
{
	double best = a->path[0].value, d;

	if (!(best > 0))
		return false;
	d = a->latency ? (p->value - best) / best : (best - p->value) / best;
	return d * 100 <= pct;
}

/* What one answer asks to be measured next. */
static void refine(struct search *s, const struct adapt_answer *a)
{
	const unsigned c = 1u << a->cls;
	long b = lookup(s, a->best), lead = lookup(s, a->lead);

	if (b < 0)
		return;
	/* climb first: the answer's point (and the most IOPS) may still move */
	if (neighbours(s, b, c) + neighbours(s, lead, c))
		return;
	transfer(s, b, c);
	transfer(s, lead, c);
	for (size_t k = 1; k < a->npaths; k++)
		if (ties(a, &a->path[k], s->o->tie_pct))
			neighbours(s, lookup(s, a->path[k].hash), c);
}

static int run_todo(struct search *s, struct llmio_error *e)
{
	int ret = 0;

	for (size_t k = 0; k < s->ntodo && !ret; k++) {
		struct apt *a = &s->p[s->todo[k]];

		ret = s->ops->eval(s->ops->arg, s->todo[k], e);
		a->done = true;
		a->queued = false;
		s->st->evaluated++;
	}
	s->ntodo = 0;
	return ret;
}

int sweep_adaptive(const struct sweep_file *f, const struct sweep_plan *plan,
                   const struct adapt_opts *o, const struct adapt_ops *ops,
                   struct adapt_answers *out, struct adapt_stats *st, struct llmio_error *e)
{
	struct adapt_answers *ans = malloc(sizeof(*ans));
	struct adapt_stats local;
	struct search s = {.o = o, .ops = ops, .st = st ? st : &local};
	int ret;

	memset(s.st, 0, sizeof(*s.st));
	s.st->points = plan->n;
	ret = ans ? build(&s, f, plan, e) : llmio_err(e, -ENOMEM, "out of memory");
	/* seeds: for each phase class, the first group (file order) that has it */
	for (unsigned c = 0; !ret && c < 32; c++) {
		for (size_t i = 0; i < s.n; i++)
			if (s.p[i].cls & (1u << c)) {
				add(&s, seed_of(&s, s.p[i].group, 1u << c, (s.p[i].lat >> c) & 1));
				break;
			}
	}
	if (!ret)
		ret = run_todo(&s, e);
	/* each round measures at least one new point: at most n rounds */
	while (!ret && s.st->rounds <= s.n) {
		s.st->rounds++;
		ret = ops->answers(ops->arg, ans, e);
		for (size_t i = 0; !ret && i < ans->n; i++)
			refine(&s, &ans->a[i]);
		if (ret || !s.ntodo)
			break;
		ret = run_todo(&s, e);
	}
	if (!ret && out)
		*out = *ans;
	free(ans);
	free(s.p);
	free(s.h);
	free(s.todo);
	return ret;
}

size_t adapt_compare(const struct adapt_answers *a, const struct adapt_answers *b, bool *same_paths,
                     bool *same_settings)
{
	size_t n = 0;

	*same_paths = *same_settings = true;
	for (int pass = 0; pass < 2; pass++) {
		const struct adapt_answers *x = pass ? b : a, *y = pass ? a : b;

		for (size_t i = 0; i < x->n; i++) {
			const struct adapt_answer *p = &x->a[i], *q = NULL;

			for (size_t k = 0; k < y->n && !q; k++)
				if (y->a[k].cls == p->cls && y->a[k].svc == p->svc)
					q = &y->a[k];
			if (!p->best && (!q || !q->best))
				continue; /* no answer on either side */
			if (!q || !q->best) {
				*same_paths = *same_settings = false;
				n += !pass;
				continue;
			}
			if (pass)
				continue; /* compared in the first pass */
			n++;
			if (strcmp(p->datapath, q->datapath))
				*same_paths = *same_settings = false;
			else if (strcmp(p->settings, q->settings))
				*same_settings = false;
		}
	}
	return n;
}
