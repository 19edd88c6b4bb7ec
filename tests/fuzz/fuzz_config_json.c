/* SPDX-License-Identifier: MIT */
/*
 * A model's Hugging Face config.json (src/workload/model_config.c), as --model FILE reads it,
 * and, for a config that loads, the sizes the recipes derive from it (src/workload/model.c):
 * parameters, weights, checkpoint shards, per-rank bytes, KV cache and activations.
 */
#include "fuzz_common.h"

#include "llmio/model.h"

static void sizes(const struct llmio_model *m)
{
	struct llmio_shard_layout *l = NULL;
	struct llmio_rank_size rs[8];
	struct llmio_ckpt_opts o;
	size_t n;

	llmio_model_params_total(m);
	llmio_model_params_active(m);
	llmio_model_weight_bytes(m, m->dtype);
	llmio_model_kv_bytes_per_token(m, m->dtype);
	llmio_model_kv_block_bytes(m, m->dtype, LLMIO_KV_BLOCK_TOKENS, true, 8);
	llmio_model_activation_bytes(m, 1, 4096, 1, false);
	llmio_model_activation_bytes(m, 8, 8192, 8, true);
	llmio_model_activation_bytes_per_token(m, 1, 2048);
	llmio_ckpt_opts_init(&o, m);
	llmio_model_checkpoint_bytes(m, &o);
	o.tp = 8;
	o.pp = 4;
	o.dp = 2;
	o.zero_stage = 3;
	llmio_model_rank_sizes(m, &o, rs, sizeof(rs) / sizeof(rs[0]), &n);
	if (llmio_model_shard_layout(m, m->dtype, 0, &l) == 0)
		llmio_shard_layout_destroy(l);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct llmio_model m;
	struct llmio_error err = {0};
	char path[64];
	int fd = fuzz_file(data, size, path, sizeof(path));

	if (llmio_model_load_config(path, &m, &err) == 0)
		sizes(&m);
	fuzz_file_close(fd);
	return 0;
}
