/* SPDX-License-Identifier: MIT */
/* The JSON of a model's derived facts: workload/model_facts.h. */
#include <errno.h>
#include <stdio.h>

#include "stats/result_json.h"
#include "workload/model_facts.h"

static void add_u64(cJSON *o, const char *key, uint64_t v)
{
	cJSON_AddNumberToObject(o, key, (double)v);
}

static int tensors_json(const struct model_facts *s, cJSON *o)
{
	cJSON *arr = cJSON_AddArrayToObject(o, "tensor_list");
	const struct llmio_shard_layout *l = s->layout;
	struct llmio_tensor t;

	if (!arr)
		return -ENOMEM;
	for (size_t sh = 0; sh < l->nshards; sh++) {
		for (size_t k = 0; k < l->shards[sh].count; k++) {
			const struct llmio_shard_entry *e = &l->entries[l->shards[sh].first + k];
			cJSON *r = cJSON_CreateObject(), *shape;

			if (!r || !cJSON_AddItemToArray(arr, r))
				return -ENOMEM;
			llmio_model_tensor(&s->m, e->tensor, &t);
			cJSON_AddStringToObject(r, "name", t.name);
			shape = cJSON_AddArrayToObject(r, "shape");
			for (uint32_t d = 0; shape && d < t.ndims; d++)
				cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)t.shape[d]));
			cJSON_AddStringToObject(r, "file", l->shards[sh].filename);
			add_u64(r, "offset", e->file_offset);
			add_u64(r, "bytes", e->bytes);
		}
	}
	return 0;
}

static cJSON *facts_obj(const struct model_facts *s)
{
	const struct llmio_model *m = &s->m;
	cJSON *o = cJSON_CreateObject(), *x, *arr;

	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "name", m->name);
	cJSON_AddStringToObject(o, "hf_id", m->hf_id);
	cJSON_AddStringToObject(o, "source", m->source);
	cJSON_AddStringToObject(o, "arch", llmio_arch_name(m->arch));
	add_u64(o, "layers", m->layers);
	add_u64(o, "hidden", m->hidden);
	add_u64(o, "ffn", m->ffn);
	add_u64(o, "heads", m->heads);
	add_u64(o, "kv_heads", m->kv_heads);
	add_u64(o, "head_dim", m->head_dim);
	add_u64(o, "vocab", m->vocab);
	add_u64(o, "max_positions", m->max_positions);
	add_u64(o, "experts", m->experts);
	add_u64(o, "experts_active", m->experts_active);
	cJSON_AddBoolToObject(o, "tied_embeddings", m->tied_embeddings);
	cJSON_AddBoolToObject(o, "qkv_bias", m->qkv_bias);
	cJSON_AddBoolToObject(o, "out_bias", m->out_bias);
	cJSON_AddBoolToObject(o, "mlp_bias", m->mlp_bias);
	cJSON_AddStringToObject(o, "norm", m->norm == LLMIO_NORM_RMS ? "rmsnorm" : "layernorm");
	cJSON_AddStringToObject(o, "position_embeddings",
	                        m->pos == LLMIO_POS_ROPE ? "rope" : "learned");
	cJSON_AddStringToObject(o, "model_dtype", llmio_dtype_name(m->dtype));
	cJSON_AddStringToObject(o, "dtype", llmio_dtype_name(s->dt));
	add_u64(o, "params_total", s->params_total);
	add_u64(o, "params_active", s->params_active);
	add_u64(o, "weight_bytes", s->weight_bytes);
	x = cJSON_AddObjectToObject(o, "weight_bytes_by_dtype");
	for (int d = 0; x && d < LLMIO_DTYPE_COUNT; d++)
		add_u64(x, llmio_dtype_name((enum llmio_dtype)d),
		        llmio_model_weight_bytes(m, (enum llmio_dtype)d));
	add_u64(o, "tensors", s->layout->nentries);
	add_u64(o, "max_shard_bytes", s->layout->max_shard_bytes);
	add_u64(o, "shards", s->layout->nshards);
	add_u64(o, "safetensors_bytes", s->layout->total_file_bytes);
	add_u64(o, "checkpoint_bytes", s->ckpt_bytes);
	x = cJSON_AddObjectToObject(o, "checkpoint_convention");
	if (x) {
		cJSON_AddStringToObject(x, "weights", llmio_dtype_name(s->ck.weight_dtype));
		add_u64(x, "weight_bytes_per_param", llmio_dtype_bits(s->ck.weight_dtype) / 8);
		add_u64(x, "master_bytes_per_param", s->ck.master_bytes);
		add_u64(x, "optimizer_bytes_per_param", s->ck.optim_bytes);
		add_u64(x, "grad_bytes_per_param", s->ck.grad_bytes);
		cJSON_AddStringToObject(x, "convention", "Megatron-LM / DeepSpeed mixed precision");
	}
	add_u64(o, "tp", s->ck.tp);
	add_u64(o, "pp", s->ck.pp);
	add_u64(o, "dp", s->ck.dp);
	add_u64(o, "zero_stage", s->ck.zero_stage);
	add_u64(o, "ranks", (uint64_t)s->ck.tp * s->ck.pp * s->ck.dp);
	arr = cJSON_AddArrayToObject(o, "rank_sizes");
	for (size_t i = 0; arr && i < s->nsizes; i++) {
		cJSON *r = cJSON_CreateObject();

		if (!r || !cJSON_AddItemToArray(arr, r))
			break;
		add_u64(r, "bytes", s->sizes[i].bytes);
		add_u64(r, "ranks", s->sizes[i].ranks);
	}
	add_u64(o, "rank_bytes_max", s->nsizes ? s->sizes[0].bytes : 0);
	add_u64(o, "kv_bytes_per_token", llmio_model_kv_bytes_per_token(m, s->dt));
	add_u64(o, "kv_block_tokens", s->block_tokens);
	add_u64(o, "kv_bytes_per_block",
	        llmio_model_kv_block_bytes(m, s->dt, s->block_tokens, false, 1));
	add_u64(o, "kv_bytes_per_block_per_layer",
	        llmio_model_kv_block_bytes(m, s->dt, s->block_tokens, true, 1));
	add_u64(o, "kv_bytes_per_block_per_tp_rank",
	        llmio_model_kv_block_bytes(m, s->dt, s->block_tokens, false, s->ck.tp));
	add_u64(o, "micro_batch", s->micro_batch);
	add_u64(o, "seq_len", s->seq_len);
	add_u64(o, "activation_bytes_per_layer",
	        llmio_model_activation_bytes(m, s->micro_batch, s->seq_len, 1, false));
	add_u64(o, "activation_bytes_per_layer_per_tp_rank",
	        llmio_model_activation_bytes(m, s->micro_batch, s->seq_len, s->ck.tp, false));
	add_u64(o, "activation_bytes_per_token_per_layer",
	        llmio_model_activation_bytes_per_token(m, s->micro_batch, s->seq_len));
	add_u64(o, "lora_rank", s->lora_rank);
	cJSON_AddStringToObject(o, "lora_targets", s->lora_text);
	add_u64(o, "lora_params", llmio_model_lora_params(m, s->lora_rank, s->lora_targets));
	add_u64(o, "lora_bytes", llmio_model_lora_bytes(m, s->lora_rank, s->lora_targets, s->dt));
	add_u64(o, "global_batch", s->global_batch);
	add_u64(o, "tokens_per_step", llmio_tokens_per_step(s->global_batch, s->seq_len));
	return o;
}

cJSON *model_facts_json(const struct model_facts *s)
{
	cJSON *o = facts_obj(s);

	if (o && s->tensors && tensors_json(s, o)) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}
