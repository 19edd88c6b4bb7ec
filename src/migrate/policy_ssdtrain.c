/* SPDX-License-Identifier: MIT */
/*
 * Policy `ssdtrain` (SSDTrain, arXiv 2408.10013): every activation saved for backward goes to
 * the SSD once the forward pass has used it and comes back early enough, at the SSD's bandwidth
 * left, to land before the backward kernel that reads it, so in reverse order.  It moves
 * activations only, whatever the budget (it does not look at it): it
 * fits when weights, gradients and optimizer state fit beside the activations it keeps in
 * flight, and otherwise plan_check() says which tensor and kernel break the budget.
 */
#include "migrate/plan.h"

static int build(struct plan *p, const struct lt_step *s, const struct plan_cfg *c,
                 struct llmio_error *e)
{
	struct plan_ctx x;
	int ret = plan_ctx_init(&x, s, c, p, e);

	for (uint32_t i = 0; i < s->ntensors && !ret; i++) {
		const struct lt_interval *best;

		if (s->tensors[i].kind != LT_ACTIVATION || s->tensors[i].created == LT_PERSISTENT)
			continue;
		best = plan_longest_interval(&x, i); /* the forward-to-backward gap */
		if (best)
			ret = plan_try_interval(&x, best, PLAN_SSD, 0, e);
		ret = ret > 0 ? 0 : ret;
	}
	plan_ctx_release(&x);
	return ret;
}

const struct plan_policy policy_ssdtrain = {
        .name = "ssdtrain",
        .summary = "all activations to the SSD after forward, back in reverse order",
        .build = build,
};
