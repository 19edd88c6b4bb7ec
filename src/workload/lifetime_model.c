/* SPDX-License-Identifier: MIT */
/*
 * A training step synthesised from a catalog model.  All sizes come from the catalog code
 * (src/workload/model*.c): the checkpoint's tensor list for the weights (summed per block,
 * divided by tp where the tensor is split), llmio_model_activation_bytes() for what a block
 * saves for backward (Korthikanti et al.), llmio_ckpt_opts_init() for the optimizer state per
 * parameter (fp32 master weights + Adam m and v).  Gradients are at the weights' dtype.
 *
 * Kernels, in order: embed, block 0 .. L-1 forward, head, head backward, block L-1 .. 0
 * backward, embed backward, then one optimizer kernel per block (and one for embed + head).
 * Tensors: w.X (weights of X, across steps) read by X's forward, backward and optimizer
 * kernels; opt.X (optimizer state, across steps) read by X's optimizer kernel; act.X (saved
 * activations) written by X's forward and read by its backward; grad.X written by X's backward
 * and read by its optimizer kernel.
 *
 * Kernel time: 2 x params x tokens FLOPs (+ 4 x b x s^2 x h for attention scores and values)
 * forward, twice that backward, at `tflops`; the optimizer reads weights, gradients and state
 * and writes weights and state at `hbm_gbps` (memory-bound).  These are ideal times, the step
 * with no memory limit; they set how long each tensor is idle, which is what the planner needs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "migrate/lifetime.h"
#include "workload/lifetime_model.h"

struct part {
	char name[24];
	uint64_t params; /* this rank's */
	bool block;
};

static int add(struct lt_step *s, const char *name, uint64_t bytes, enum lt_kind kind,
               uint32_t created, const uint32_t *uses, uint32_t n, struct llmio_error *e)
{
	return bytes ? lt_add_tensor(s, name, bytes, kind, created, uses, n, e) : 0;
}

int lt_from_model(struct lt_step *s, const struct llmio_model *m, const struct lt_model_opts *o,
                  struct llmio_error *e)
{
	const uint32_t L = m->layers, tp = o->tp ? o->tp : 1;
	const uint32_t np = L + 2; /* embed, blocks, head */
	struct llmio_ckpt_opts co;
	struct llmio_tensor t;
	struct part *parts;
	char name[LT_NAME_MAX];
	uint64_t tokens = (uint64_t)o->micro_batch * o->seq, act, state_per_param;
	double flop_s = o->tflops * 1e12, attn;
	int ret = 0;

	if (!o->micro_batch || !o->seq || !(o->tflops > 0) || !(o->hbm_gbps > 0))
		return llmio_err(e, -EINVAL,
		                 "a model step needs micro_batch, seq, tflops and hbm_gbps > 0");
	parts = calloc(np, sizeof(*parts));
	if (!parts)
		return llmio_err(e, -ENOMEM, "out of memory");
	snprintf(parts[0].name, sizeof(parts[0].name), "embed");
	snprintf(parts[np - 1].name, sizeof(parts[0].name), "head");
	for (uint32_t l = 0; l < L; l++) {
		snprintf(parts[l + 1].name, sizeof(parts[0].name), "block%u", l);
		parts[l + 1].block = true;
	}
	for (size_t i = 0; llmio_model_tensor(m, i, &t) == 0; i++) {
		uint32_t p = t.layer >= 0 ? (uint32_t)t.layer + 1 : t.layer == -1 ? 0 : np - 1;

		parts[p].params += t.tp_split ? t.numel / tp : t.numel;
	}
	llmio_ckpt_opts_init(&co, m);
	state_per_param = co.master_bytes + co.optim_bytes;
	act = llmio_model_activation_bytes(m, o->micro_batch, o->seq, tp, false);
	attn = 4.0 * (double)tokens * o->seq * m->hidden / tp;
	snprintf(s->origin, sizeof(s->origin),
	         "model %s, micro-batch %u, sequence %u, tp %u, %s, %.0f TFLOP/s, %.0f GB/s",
	         m->name, o->micro_batch, o->seq, tp, llmio_dtype_name(o->dtype), o->tflops,
	         o->hbm_gbps);
	/* kernels: forward 0..np-1, backward np..2np-1 (part np-1 first), optimizer 2np..3np-1 */
	for (uint32_t k = 0; k < 3 * np && !ret; k++) {
		uint32_t p = k < np ? k : k < 2 * np ? 2 * np - 1 - k : k - 2 * np;
		double fwd = 2.0 * (double)parts[p].params * (double)tokens +
		             (parts[p].block ? attn : 0),
		       sec;

		if (k < 2 * np)
			sec = (k < np ? fwd : 2 * fwd) / flop_s;
		else
			sec = (double)parts[p].params *
			      (2.0 * llmio_dtype_bytes(o->dtype, 1) * 2 + 2.0 * state_per_param) /
			      (o->hbm_gbps * 1e9);
		snprintf(name, sizeof(name), "%s.%s",
		         k < np       ? "fwd"
		         : k < 2 * np ? "bwd"
		                      : "adam",
		         parts[p].name);
		ret = lt_add_kernel(s, name, sec, e);
	}
	for (uint32_t p = 0; p < np && !ret; p++) {
		uint32_t fk = p, bk = 2 * np - 1 - p, ok = 2 * np + p;
		uint32_t wuses[3] = {fk, bk, ok}, one[1];
		uint64_t wb = llmio_dtype_bytes(o->dtype, parts[p].params);

		snprintf(name, sizeof(name), "w.%s", parts[p].name);
		ret = add(s, name, wb, LT_WEIGHT, LT_PERSISTENT, wuses, 3, e);
		snprintf(name, sizeof(name), "opt.%s", parts[p].name);
		one[0] = ok;
		if (!ret)
			ret = add(s, name, parts[p].params * state_per_param, LT_OPTIMIZER,
			          LT_PERSISTENT, one, 1, e);
		snprintf(name, sizeof(name), "act.%s", parts[p].name);
		one[0] = bk;
		if (!ret && parts[p].block)
			ret = add(s, name, act, LT_ACTIVATION, fk, one, 1, e);
		snprintf(name, sizeof(name), "grad.%s", parts[p].name);
		one[0] = ok;
		if (!ret)
			ret = add(s, name, wb, LT_GRADIENT, bk, one, 1, e);
	}
	free(parts);
	return ret ? ret : lt_finish(s, e);
}
