/* SPDX-License-Identifier: MIT */
/*
 * Policy `flashneuron` (FlashNeuron, FAST'21, as G10 compares with it): a fixed set of
 * activations is offloaded straight to the SSD, chosen before the step, largest first, until the
 * projected peak fits the budget; each transfer is booked against the SSD's bandwidth where the
 * SSD can move it during the kernels in between, and else is issued anyway (the kernel that
 * needs the memory or the tensor waits for it).  No host memory, and
 * weights, gradients and optimizer state stay.
 */
#include <errno.h>
#include <stdlib.h>

#include "core/error.h"
#include "store/plan.h"

struct cand {
	uint64_t bytes;
	uint32_t tensor;
};

static int by_size(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return x->tensor < y->tensor ? -1 : x->tensor > y->tensor;
}

static int build(struct plan *p, const struct lt_step *s, const struct plan_cfg *c,
                 struct llmio_error *e)
{
	struct cand *order = calloc(s->ntensors ? s->ntensors : 1, sizeof(*order));
	uint32_t n = 0, at;
	struct plan_ctx x;
	int ret;

	if (!order)
		return llmio_err(e, -ENOMEM, "out of memory");
	ret = plan_ctx_init(&x, s, c, p, e);
	for (uint32_t i = 0; i < s->ntensors; i++)
		if (s->tensors[i].kind == LT_ACTIVATION && s->tensors[i].created != LT_PERSISTENT)
			order[n++] = (struct cand){s->tensors[i].bytes, i};
	qsort(order, n, sizeof(*order), by_size);
	for (uint32_t o = 0; o < n && !ret && plan_ctx_peak(&x, &at) > c->budget; o++) {
		const struct lt_interval *best = plan_longest_interval(&x, order[o].tensor);

		if (best && plan_interval_helps(&x, best)) {
			ret = plan_try_interval(&x, best, PLAN_SSD, PLAN_TRY_BANDWIDTH, e);
			/* in the set even when the SSD cannot keep up: the kernels wait */
			if (ret > 0)
				ret = plan_try_interval(&x, best, PLAN_SSD, 0, e);
			if (ret == 0 && plan_interval_helps(&x, best)) {
				/* fetched too early to help: fetch it at its use instead */
				plan_undo_interval(&x, best);
				ret = plan_try_interval(&x, best, PLAN_SSD, PLAN_TRY_AT_USE, e);
			}
		}
		ret = ret > 0 ? 0 : ret;
	}
	plan_ctx_release(&x);
	free(order);
	return ret;
}

const struct plan_policy policy_flashneuron = {
        .name = "flashneuron",
        .summary = "a fixed set of activations, largest first, straight to the SSD",
        .build = build,
};
