/* SPDX-License-Identifier: MIT */
/*
 * Recipe `finetune`: load the base model, train on a small-sample dataset (the pretrain data
 * loop with its own defaults), and save either a LoRA adapter (size from rank and target
 * modules: llmio_model_lora_bytes()) or a full training checkpoint every ckpt_every steps.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workload/phases.h"
#include "base/error.h"

static const struct llmio_optdesc params[] = {
        WL_ENUM("save", "lora|full", "lora",
                "lora (adapter saves) | full (full training checkpoints)"),
        WL_PARAM("lora_rank", OPTD_UINT, 1, 4096, "16", "LoRA rank r"),
        WL_PARAM("lora_targets", OPTD_STRING, 0, 0, "q,v",
                 "modules with adapters: q,k,v,o,gate,up,down or all"),
        WL_PARAM("strategy", OPTD_STRING, 0, 0, "sequential",
                 "base model load strategy: sequential | tensor | mmap | parallel"),
        {.name = NULL},
};

static int run(struct wl *w, struct llmio_error *e)
{
	const char *save, *strat = wl_str(w, "strategy");
	uint64_t *sizes = NULL, rank, adapter;
	struct train_cfg c;
	uint32_t targets;
	unsigned n = 0, s;
	int ret;

	for (s = 0; s < LOAD_NSTRAT; s++)
		if (!strcmp(strat, load_strategy_names[s]))
			break;
	if (s == LOAD_NSTRAT)
		return llmio_err(e, -EINVAL,
		                 "--strategy=%s: use sequential, tensor, mmap or parallel", strat);
	if ((ret = wl_u64(w, "lora_rank", &rank, e)) || (ret = wl_enum(w, "save", &save, e)))
		return ret;
	if (llmio_lora_targets_parse(wl_str(w, "lora_targets"), &targets))
		return llmio_err(e, -EINVAL,
		                 "--lora_targets=%s: use a list of q,k,v,o,gate,up,down or all",
		                 wl_str(w, "lora_targets"));
	ret = train_cfg_from_params(w, &c, e);
	if (ret)
		return ret;
	if (!strcmp(save, "lora")) {
		adapter =
		        llmio_model_lora_bytes(&w->model, (uint32_t)rank, targets, w->model.dtype);
		sizes = calloc(1, sizeof(*sizes));
		if (!sizes)
			return -ENOMEM;
		/* adapters are small: --scale does not shrink them below their real size */
		sizes[0] = (adapter + wl_align(w) - 1) / wl_align(w) * wl_align(w);
		n = 1;
	} else { /* full */
		ret = ckpt_rank_sizes(w, &sizes, &n, e);
		if (ret)
			return ret;
	}
	ret = load_phase(w, "load", (enum load_strategy)s, true, 4, 4u << 20, e);
	if (!ret) {
		c.ckpt_sizes = sizes;
		c.ckpt_ranks = n;
		c.ckpt_prefix = !strcmp(save, "lora") ? "adapter" : "finetune-ckpt";
		ret = train_phases(w, "train", &c, e);
	}
	free(sizes);
	return ret;
}

const struct recipe recipe_finetune = {
        .name = "finetune",
        .summary = "base model load, small-sample dataset reads, LoRA adapter or full "
                   "checkpoint saves",
        .params = params,
        .shared = train_params,
        .needs_model = true,
        .run = run,
};
