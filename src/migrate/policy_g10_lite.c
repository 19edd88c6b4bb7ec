/* SPDX-License-Identifier: MIT */
/*
 * Policy `g10-lite`: llmio's first, simplified reading of G10 (arXiv 2310.09443), kept beside
 * policy `g10` (policy_g10.c, G10's algorithm) where it stalls less (docs/migration.md).  Inactive
 * intervals of every tensor, including the loop-around of tensors that live across steps, are
 * offloaded while the fast tier's projected curve exceeds the budget somewhere inside them: the
 * tensor is evicted at the interval's start and fetched back to land before its next use, when
 * the interval is longer than the round trip (latencies + 2 x bytes / bandwidth) times
 * (1 + margin), and when the tier's bandwidth left during the kernels in between can carry
 * both transfers.  The host tier is tried first while it has room, then the SSD.  What still
 * does not fit is offloaded where the bandwidth allows although the interval is shorter than the
 * rule wants; then evicted without either check, sized to the deficit (away only over the
 * kernels over the budget, the write due before the first of them, the fetch as late as the
 * bandwidth left allows after the last, else right after it); then, where that is not enough,
 * fetched at its use (which waits).  What does not fit even so, plan_check() names.
 *
 * Which intervals go first decides the plan.  Two orders are planned: one sort, largest bytes x
 * idle time first (not G10's over-budget area, scored again after each choice: policy g10), and
 * Belady's, kernel by kernel over the curve, the interval whose next use is farthest first; each
 * with and without the deficit-sized forced evictions.  The four plans run through the bandwidth
 * model (plan_simulate()) and the one that stalls least is the plan (ties: fewer bytes moved, then
 * the order above).
 *
 * In place of G10's run-time guide, the on-demand plans (lru and prefetch-lru, which react
 * kernel by kernel) are simulated too, and where one of them stalls less than every plan of
 * g10-lite's own, that plan is g10-lite's (plan.origin says so, and the phase's note).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "migrate/plan.h"

struct cand {
	double key; /* larger first */
	uint32_t tensor, after;
	size_t iv;
};

static int by_key(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->key != y->key)
		return x->key > y->key ? -1 : 1;
	if (x->tensor != y->tensor)
		return x->tensor < y->tensor ? -1 : 1;
	return x->after < y->after ? -1 : x->after > y->after;
}

static const unsigned passes[] = {PLAN_TRY_RULE | PLAN_TRY_BANDWIDTH, PLAN_TRY_BANDWIDTH, 0,
                                  PLAN_TRY_AT_USE};

/* Offload interval j with the flags of pass `pass`: host first, then SSD; 0 or -errno. */
static int offload(struct plan_ctx *x, size_t j, size_t pass, unsigned extra, struct llmio_error *e)
{
	const struct lt_interval *iv = &x->iv[j];
	unsigned fl = passes[pass] | (passes[pass] ? 0 : extra);
	int ret;

	if ((pass == 0 && x->win[j].done) || !plan_interval_helps(x, iv))
		return 0;
	/* later passes widen the window an earlier one gave the interval */
	plan_undo_interval(x, iv);
	ret = plan_try_interval(x, iv, PLAN_HOST, fl, e);
	if (ret > 0)
		ret = plan_try_interval(x, iv, PLAN_SSD, fl, e);
	return ret > 0 ? 0 : ret;
}

/* G10's order: every interval, largest area first, while the curve is over the budget. */
static int by_area_order(struct plan_ctx *x, unsigned extra, struct llmio_error *e)
{
	const struct lt_step *s = x->s;
	struct cand *order = calloc(x->niv ? x->niv : 1, sizeof(*order));
	uint32_t at;
	int ret = 0;

	if (!order)
		return llmio_err(e, -ENOMEM, "out of memory");
	for (size_t j = 0; j < x->niv; j++)
		order[j] = (struct cand){.key = (double)s->tensors[x->iv[j].tensor].bytes *
		                                (double)x->iv[j].idle_ns,
		                         .tensor = x->iv[j].tensor,
		                         .after = x->iv[j].after,
		                         .iv = j};
	qsort(order, x->niv, sizeof(*order), by_key);
	for (size_t pass = 0; pass < sizeof(passes) / sizeof(passes[0]) && !ret; pass++)
		for (size_t o = 0; o < x->niv && !ret && plan_ctx_peak(x, &at) > x->c->budget; o++)
			ret = offload(x, order[o].iv, pass, extra, e);
	free(order);
	return ret;
}

/* Part of an interval on the step's kernels [a, b): a wrapping one is two (the end of the
 * step, and the start of the next one seen as this one's). */
struct piece {
	uint32_t a, b;
	size_t iv;
};

static int by_start(const void *x, const void *y)
{
	const struct piece *p = x, *q = y;

	if (p->a != q->a)
		return p->a < q->a ? -1 : 1;
	return p->iv < q->iv ? -1 : p->iv > q->iv;
}

/* Belady's order: at each kernel over the budget, in time order, the intervals that hold it,
 * the one whose next use is farthest from it first, until the kernel fits.  The intervals
 * holding kernel k come from a sweep over their pieces sorted by start. */
static int belady_order(struct plan_ctx *x, unsigned extra, struct llmio_error *e)
{
	const uint32_t N = x->s->nkernels;
	struct piece *pc = calloc(2 * x->niv + 1, sizeof(*pc));
	size_t *act = calloc(2 * x->niv + 1, sizeof(*act)), npc = 0;
	struct cand *c = calloc(2 * x->niv + 1, sizeof(*c));
	uint8_t *tried = calloc(x->niv + 1, 1);
	int ret = 0;

	if (!pc || !act || !c || !tried) {
		ret = llmio_err(e, -ENOMEM, "out of memory");
		goto out;
	}
	for (size_t j = 0; j < x->niv; j++) {
		const struct lt_interval *iv = &x->iv[j];
		uint32_t v0 = iv->after + 1, vb = iv->before + (iv->wraps ? N : 0);

		if (!iv->wraps) {
			pc[npc++] = (struct piece){v0, vb, j};
			continue;
		}
		pc[npc++] = (struct piece){0, iv->before, j};
		pc[npc++] = (struct piece){v0, vb < N + 1 ? vb : N + 1, j};
	}
	qsort(pc, npc, sizeof(*pc), by_start);
	for (size_t pass = 0; pass < sizeof(passes) / sizeof(passes[0]) && !ret; pass++) {
		size_t next = 0, nact = 0;

		/* each interval once a pass, as in G10's order: at the first kernel it could help
		 * (a retry would only undo and redo it, and leak the bandwidth it booked) */
		memset(tried, 0, x->niv);
		for (uint32_t k = 0; k <= N && !ret; k++) {
			size_t n = 0, keep = 0;

			while (next < npc && pc[next].a <= k)
				act[nact++] = next++;
			for (size_t q = 0; q < nact; q++) /* what ended before k leaves */
				if (pc[act[q]].b > k)
					act[keep++] = act[q];
			nact = keep;
			if (x->mem[k] <= x->c->budget)
				continue;
			for (size_t q = 0; q < nact; q++) {
				const struct lt_interval *iv = &x->iv[pc[act[q]].iv];

				if (tried[pc[act[q]].iv])
					continue;
				uint32_t v0 = iv->after + 1, vb = iv->before + (iv->wraps ? N : 0);
				/* kernel k, or k of the next step for an interval that wraps */
				uint32_t v = k >= v0 ? k : k + N;

				c[n++] = (struct cand){.key = (double)(vb - v),
				                       .tensor = iv->tensor,
				                       .after = iv->after,
				                       .iv = pc[act[q]].iv};
			}
			qsort(c, n, sizeof(*c), by_key);
			for (size_t o = 0; o < n && !ret && x->mem[k] > x->c->budget; o++) {
				tried[c[o].iv] = 1;
				ret = offload(x, c[o].iv, pass, extra, e);
			}
		}
	}
out:
	free(tried);
	free(pc);
	free(act);
	free(c);
	return ret;
}

static const char *const variant_names[PLAN_G10_VARIANTS] = {
        "g10-lite, area order",
        "g10-lite, area order, deficit-sized",
        "g10-lite, Belady order",
        "g10-lite, Belady order, deficit-sized",
};

int plan_g10_lite(struct plan *p, const struct lt_step *s, const struct plan_cfg *c,
                  unsigned variant, struct llmio_error *e)
{
	unsigned extra = variant & PLAN_G10_DEFICIT ? PLAN_TRY_DEFICIT : 0;
	struct plan_ctx x;
	int ret;

	if (variant >= PLAN_G10_VARIANTS)
		return llmio_err(e, -EINVAL, "no g10-lite variant %u", variant);
	snprintf(p->origin, sizeof(p->origin), "%s", variant_names[variant]);
	ret = plan_ctx_init(&x, s, c, p, e);
	if (ret)
		return ret;
	ret = variant & PLAN_G10_BELADY ? belady_order(&x, extra, e) : by_area_order(&x, extra, e);
	plan_ctx_release(&x);
	return ret;
}

/* Candidate v into q (initialised here), finished and checked: g10's own plans, then the
 * on-demand ones. */
static int candidate(struct plan *q, unsigned v, const struct lt_step *s, const struct plan_cfg *c,
                     struct llmio_error *e)
{
	int ret = plan_init(q, "g10-lite", s, c->budget, e);

	if (ret)
		return ret;
	if (v < PLAN_G10_VARIANTS) {
		ret = plan_g10_lite(q, s, c, v, e);
	} else {
		/* the run-time fallback's stand-in: the on-demand plans */
		bool pre = v > PLAN_G10_VARIANTS;

		snprintf(q->origin, sizeof(q->origin), "%s's plan (g10-lite's own stalled more)",
		         pre ? "prefetch-lru" : "lru");
		ret = plan_lru(q, s, c, pre ? (c->lookahead ? c->lookahead : 1) : 0, e);
	}
	return ret ? ret : plan_finish(q, s, c, e);
}

static uint64_t moved(const struct plan_sim *r)
{
	uint64_t b = 0;

	for (int t = PLAN_HOST; t < PLAN_NTIERS; t++)
		b += r->bytes[t][PLAN_OUT] + r->bytes[t][PLAN_IN];
	return b;
}

static int build(struct plan *p, const struct lt_step *s, const struct plan_cfg *c,
                 struct llmio_error *e)
{
	struct llmio_error first = {0}; /* why g10's own first plan failed, when none fits */
	struct plan best = {0};
	struct plan_sim rb = {0};
	bool have = false;
	int ret = 0;

	for (unsigned v = 0; v < PLAN_G10_VARIANTS + 2; v++) {
		struct llmio_error le = {0};
		struct plan q;
		struct plan_sim r;

		ret = candidate(&q, v, s, c, &le);
		if (!ret)
			ret = plan_simulate(&q, s, c, &r, &le);
		if (ret == -ENOMEM) {
			plan_release(&q);
			plan_release(&best);
			return llmio_err(e, ret, "%s", llmio_err_msg(&le));
		}
		if (ret && v == 0)
			first = le;
		/* strictly better: ties go to the earlier plan, g10's own before the fallback */
		if (!ret && (!have || r.stall_s < rb.stall_s ||
		             (r.stall_s == rb.stall_s && moved(&r) < moved(&rb)))) {
			plan_release(&best);
			best = q;
			rb = r;
			have = true;
		} else {
			plan_release(&q);
		}
	}
	if (!have) /* G10's own reason, the one the plan_check() messages name */
		return llmio_err(e, first.code ? first.code : -ENOSPC, "%s", llmio_err_msg(&first));
	/* p was initialised by plan_build(): hand it best's transfers and start tiers */
	plan_release(p);
	*p = best;
	return 0;
}

const struct plan_policy policy_g10_lite = {
        .name = "g10-lite",
        .summary = "G10 simplified: one sort by bytes x idle, host first, best of six plans",
        .build = build,
};
