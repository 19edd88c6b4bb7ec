/* SPDX-License-Identifier: MIT */
/*
 * Policy `flashneuron` (FlashNeuron, FAST'21), as G10 defines it for its comparison
 * (scheduling_offload_flashneuron() and FlashNeuron_simulator in src/analysis.cc of
 * platformxlab/G10).  The candidates are the tensors that forward creates and backward needs
 * again, in the order forward creates them; the first ones are offloaded straight to the SSD
 * until the rest fit in the budget less the tensors that live across steps and the largest
 * kernel's tensors.  Each goes out after its last forward use (due before the first kernel that
 * would be over the budget with it, and before backward starts: FlashNeuron's backward waits
 * for every offload), and comes back in backward as early as the fast tier has room for it, in
 * the order backward needs them, each no earlier than the one needed before it.  No host
 * memory; weights, gradients and optimizer state stay.  A budget that cannot hold what stays is
 * an error (G10's figure marks FlashNeuron "inf" there).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "migrate/plan.h"

struct cand {
	uint32_t key; /* forward: the creating kernel; backward: the first use after forward */
	uint32_t tensor;
	const struct lt_interval *iv;
	long f, pv;
};

static int by_key(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->tensor < y->tensor ? -1 : x->tensor > y->tensor;
}

/* Backward's first kernel: the first named bwd* (every step llmio builds or records names its
 * kernels so), else the kernel where the step's memory peaks (the end of forward). */
static uint32_t backward_start(const struct plan_ctx *x)
{
	uint32_t at;

	for (uint32_t k = 0; k < x->s->nkernels; k++)
		if (!strncmp(x->s->kernels[k].name, "bwd", 3))
			return k;
	plan_ctx_peak(x, &at);
	return at < x->s->nkernels ? at : x->s->nkernels - 1;
}

/* What stays in the fast tier whatever FlashNeuron offloads: the tensors that live across
 * steps and, at the kernel touching the most, that kernel's tensors (G10 counts the weights
 * among those too).  FlashNeuron needs room beside them: else -ENOSPC naming the first kernel
 * that leaves none and its largest tensor. */
static int fixed_bytes(const struct lt_step *s, uint64_t budget, uint64_t *fixed,
                       struct llmio_error *e)
{
	uint64_t *k_bytes = calloc(s->nkernels, sizeof(*k_bytes)), pers = 0, ws = 0;
	uint32_t *big = calloc(s->nkernels, sizeof(*big));
	int ret = 0;

	if (!k_bytes || !big) {
		ret = llmio_err(e, -ENOMEM, "out of memory");
		goto out;
	}
	for (uint32_t i = 0; i < s->ntensors; i++) {
		const struct lt_tensor *t = &s->tensors[i];
		const uint32_t *u = lt_uses(s, t);

		if (t->created == LT_PERSISTENT)
			pers += t->bytes;
		for (uint32_t j = 0; j <= t->nuses; j++) {
			uint32_t k = j < t->nuses ? u[j] : t->created;

			if (k == LT_PERSISTENT || (j == t->nuses && t->nuses && u[0] == k))
				continue; /* the creating kernel once, also when it reads it */
			if (!k_bytes[k] || t->bytes > s->tensors[big[k]].bytes)
				big[k] = i;
			k_bytes[k] += t->bytes;
		}
	}
	for (uint32_t k = 0; k < s->nkernels; k++)
		ws = k_bytes[k] > ws ? k_bytes[k] : ws;
	/* the kernel touching the most is one of these */
	for (uint32_t k = 0; k < s->nkernels && pers + ws >= budget; k++)
		if (pers + k_bytes[k] >= budget) {
			ret = llmio_err(
			        e, -ENOSPC,
			        "kernel %u (%s) touches %llu bytes, which beside the %llu "
			        "that live across steps (FlashNeuron keeps both in the fast "
			        "tier) leave no room for what backward needs; its largest "
			        "tensor is '%s' (%llu bytes)",
			        k, s->kernels[k].name, (unsigned long long)k_bytes[k],
			        (unsigned long long)pers, s->tensors[big[k]].name,
			        (unsigned long long)s->tensors[big[k]].bytes);
			goto out;
		}
	*fixed = pers + ws;
out:
	free(k_bytes);
	free(big);
	return ret;
}

/* The tensor's interval from its last forward touch to its first backward use, or NULL. */
static const struct lt_interval *across(const struct plan_ctx *x, uint32_t tensor, uint32_t b)
{
	for (size_t j = 0; j < x->niv; j++)
		if (x->iv[j].tensor == tensor && !x->iv[j].wraps && x->iv[j].after < b &&
		    x->iv[j].before >= b)
			return &x->iv[j];
	return NULL;
}

/* Choose the set: candidates in forward order until the rest fit in `room`. */
static int choose(const struct plan_ctx *x, uint32_t b, uint64_t room, struct cand *c, uint32_t *nc,
                  struct llmio_error *e)
{
	const struct lt_step *s = x->s;
	uint64_t rest = 0;
	uint32_t n = 0, kept = 0;

	for (uint32_t i = 0; i < s->ntensors; i++) {
		const struct lt_tensor *t = &s->tensors[i];

		if (t->created != LT_PERSISTENT && t->created < b && lt_last_event(s, t) >= b) {
			c[n++] = (struct cand){.key = t->created, .tensor = i};
			rest += t->bytes;
		}
	}
	qsort(c, n, sizeof(*c), by_key);
	for (uint32_t o = 0; o < n && rest >= room; o++) {
		c[o].iv = across(x, c[o].tensor, b);
		if (c[o].iv)
			rest -= s->tensors[c[o].tensor].bytes;
	}
	if (rest > room) {
		uint32_t big = UINT32_MAX;

		for (uint32_t o = 0; o < n; o++)
			if (!c[o].iv && (big == UINT32_MAX ||
			                 s->tensors[c[o].tensor].bytes > s->tensors[big].bytes))
				big = c[o].tensor;
		big = big == UINT32_MAX ? c[0].tensor : big; /* (rest > 0: some stayed) */
		return llmio_err(
		        e, -ENOSPC,
		        "at kernel %u (%s), backward's first, %llu bytes of forward's "
		        "tensors stay that FlashNeuron cannot offload, over the %llu beside "
		        "the tensors that live across steps and the largest kernel's; the "
		        "largest is '%s' (%llu bytes)",
		        b, s->kernels[b].name, (unsigned long long)rest, (unsigned long long)room,
		        s->tensors[big].name, (unsigned long long)s->tensors[big].bytes);
	}
	for (uint32_t o = 0; o < n; o++)
		if (c[o].iv)
			c[kept++] = c[o];
	*nc = kept;
	return 0;
}

/* The windows, on a copy m of the fast-tier curve: each eviction due before the first kernel
 * over the budget with it (at the latest backward's first), then each fetch as early as the
 * curve has room for it from there to its use, in the order backward needs them. */
static void windows(const struct plan_ctx *x, uint32_t b, struct cand *c, uint32_t nc, uint64_t *m)
{
	const uint64_t budget = x->c->budget;
	long lo = b;

	for (uint32_t o = 0; o < nc; o++) {
		const uint64_t sz = x->s->tensors[c[o].tensor].bytes;
		long v0 = (long)c[o].iv->after + 1, vb = c[o].iv->before;

		c[o].f = b;
		for (long v = v0; v < (long)b; v++)
			if (m[v] > budget) {
				c[o].f = v;
				break;
			}
		for (long v = c[o].f; v < vb; v++)
			m[v] -= sz;
	}
	for (uint32_t o = 0; o < nc; o++)
		c[o].key = c[o].iv->before;
	qsort(c, nc, sizeof(*c), by_key);
	for (uint32_t o = 0; o < nc; o++) {
		const uint64_t sz = x->s->tensors[c[o].tensor].bytes;
		long vb = c[o].iv->before, from = c[o].f + 1 > lo ? c[o].f + 1 : lo;

		c[o].pv = vb;
		while (c[o].pv > from && m[c[o].pv - 1] + sz <= budget)
			c[o].pv--;
		for (long v = c[o].pv; v < vb; v++)
			m[v] += sz;
		lo = c[o].pv > lo ? c[o].pv : lo;
	}
}

static int build(struct plan *p, const struct lt_step *s, const struct plan_cfg *c,
                 struct llmio_error *e)
{
	struct cand *order = calloc(s->ntensors ? s->ntensors : 1, sizeof(*order));
	uint64_t *m = calloc((size_t)s->nkernels + 1, sizeof(*m));
	uint64_t fixed = 0;
	uint32_t nc = 0, b;
	struct plan_ctx x;
	int ret;

	if (!order || !m) {
		free(order);
		free(m);
		return llmio_err(e, -ENOMEM, "out of memory");
	}
	ret = plan_ctx_init(&x, s, c, p, e);
	if (!ret)
		ret = fixed_bytes(s, c->budget, &fixed, e);
	if (ret)
		goto out;
	b = backward_start(&x);
	ret = choose(&x, b, c->budget - fixed, order, &nc, e);
	if (ret)
		goto out;
	memcpy(m, x.mem, ((size_t)s->nkernels + 1) * sizeof(*m));
	windows(&x, b, order, nc, m);
	for (uint32_t o = 0; o < nc && !ret; o++)
		if (order[o].f < order[o].pv)
			ret = plan_place_interval(&x, order[o].iv, PLAN_SSD, order[o].f,
			                          order[o].pv, e);
out:
	plan_ctx_release(&x);
	free(order);
	free(m);
	return ret;
}

const struct plan_policy policy_flashneuron = {
        .name = "flashneuron",
        .summary = "forward's tensors backward needs, first created first, straight to the SSD",
        .build = build,
};
