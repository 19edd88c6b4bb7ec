/* SPDX-License-Identifier: MIT */
/*
 * Policy `g10` (G10, arXiv 2310.09443, the smart migration of its src/analysis.cc): inactive
 * intervals of every tensor, including the loop-around of tensors that live across steps, are
 * taken largest "area" (bytes x idle time) first; while the fast tier's projected curve exceeds
 * the budget somewhere inside an interval, the tensor is evicted at the interval's start and
 * fetched back to land before its next use, when the interval is longer than the round trip
 * (latencies + 2 x bytes / bandwidth) times (1 + margin), and when the tier's bandwidth left
 * during the kernels in between can carry both transfers.  The host tier is tried first while it
 * has room, then the SSD.  What still does not fit is offloaded where the bandwidth allows
 * although the interval is shorter than the rule wants; then evicted without either check
 * (the kernel after it may wait for the write), fetched as early as the bandwidth left allows;
 * then, where that window is still too narrow, fetched at its use (which waits).  What does not
 * fit even so, plan_check() names.
 */
#include <errno.h>
#include <stdlib.h>

#include "core/error.h"
#include "store/plan.h"

struct cand {
	double area; /* bytes x idle time: the memory-time an eviction can save */
	uint32_t tensor, after;
	size_t iv;
};

static int by_area(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->area != y->area)
		return x->area > y->area ? -1 : 1;
	if (x->tensor != y->tensor)
		return x->tensor < y->tensor ? -1 : 1;
	return x->after < y->after ? -1 : x->after > y->after;
}

static int build(struct plan *p, const struct lt_step *s, const struct plan_cfg *c,
                 struct llmio_error *e)
{
	static const unsigned passes[] = {PLAN_TRY_RULE | PLAN_TRY_BANDWIDTH, PLAN_TRY_BANDWIDTH, 0,
	                                  PLAN_TRY_AT_USE};
	struct plan_ctx x;
	struct cand *order = NULL;

	uint32_t at;
	int ret = plan_ctx_init(&x, s, c, p, e);

	if (ret)
		return ret;
	order = calloc(x.niv ? x.niv : 1, sizeof(*order));
	if (!order) {
		ret = llmio_err(e, -ENOMEM, "out of memory");
		goto out;
	}
	for (size_t j = 0; j < x.niv; j++)
		order[j] = (struct cand){.area = (double)s->tensors[x.iv[j].tensor].bytes *
		                                 (double)x.iv[j].idle_ns,
		                         .tensor = x.iv[j].tensor,
		                         .after = x.iv[j].after,
		                         .iv = j};
	qsort(order, x.niv, sizeof(*order), by_area);
	for (size_t pass = 0; pass < sizeof(passes) / sizeof(passes[0]) && !ret; pass++)
		for (size_t o = 0; o < x.niv && !ret && plan_ctx_peak(&x, &at) > c->budget; o++) {
			const struct lt_interval *iv = &x.iv[order[o].iv];

			if ((pass == 0 && x.win[order[o].iv].done) || !plan_interval_helps(&x, iv))
				continue;
			/* later passes widen the window an earlier one gave the interval */
			plan_undo_interval(&x, iv);
			ret = plan_try_interval(&x, iv, PLAN_HOST, passes[pass], e);
			if (ret > 0)
				ret = plan_try_interval(&x, iv, PLAN_SSD, passes[pass], e);
			ret = ret > 0 ? 0 : ret;
		}
out:
	plan_ctx_release(&x);
	free(order);
	return ret;
}

const struct plan_policy policy_g10 = {
        .name = "g10",
        .summary = "G10: evict in long inactive intervals, prefetch just in time, host first",
        .build = build,
};
