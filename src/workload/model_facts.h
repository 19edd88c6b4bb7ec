/* SPDX-License-Identifier: MIT */
/*
 * What llmio derives from a model for one training or serving setup (`llmio model show`):
 * parameter counts, weight and checkpoint bytes, the checkpoint's per-rank sizes, shards,
 * KV cache, activations and LoRA adapters (docs/models.md), and their JSON.
 */
#ifndef LLMIO_WORKLOAD_MODEL_FACTS_H
#define LLMIO_WORKLOAD_MODEL_FACTS_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

#include "llmio/model.h"

#define MODEL_FACTS_MAX_SIZES 64 /* the largest per-rank sizes kept */

struct model_facts {
	struct llmio_model m;
	enum llmio_dtype dt;
	struct llmio_ckpt_opts ck;
	uint32_t micro_batch, seq_len, block_tokens, lora_rank, lora_targets;
	char lora_text[64]; /* the LoRA targets as given */
	uint64_t global_batch, max_shard;
	bool tensors; /* list every tensor */

	/* results */
	uint64_t params_total, params_active, weight_bytes, ckpt_bytes;
	struct llmio_shard_layout *layout;
	struct llmio_rank_size sizes[MODEL_FACTS_MAX_SIZES];
	size_t nsizes;
};

/* The facts as the JSON object `llmio model show --json` prints, with every tensor when
 * s->tensors; NULL when out of memory. */
cJSON *model_facts_json(const struct model_facts *s);

#endif
