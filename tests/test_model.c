/* SPDX-License-Identifier: MIT */
/*
 * Model arithmetic against published numbers (model cards, papers, MLPerf Storage, PEFT) and
 * the config.json loader against fixtures in tests/data.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "llmio/llmio.h"
#include "base/error.h"

static struct llmio_model get(const char *name)
{
	struct llmio_model m;

	if (llmio_model_find(name, &m))
		fail_msg("model %s not in the catalog", name);
	return m;
}

static void near(const char *what, double got, double want, double rel)
{
	if (got < want * (1 - rel) || got > want * (1 + rel))
		fail_msg("%s: %.6g, expected %.6g within %.2f %%", what, got, want, rel * 100);
}

/* Published parameter counts (model cards / papers; docs/models.md lists each source). */
static void published_counts(void **state)
{
	static const struct {
		const char *name;
		double total, active;
	} pub[] = {
	        {"Llama-3.2-1B", 1.24e9, 0},
	        {"Llama-3.2-3B", 3.21e9, 0},
	        {"Llama-3.1-8B", 8.03e9, 0},
	        {"Llama-3.1-70B", 70.6e9, 0},
	        {"Llama-3.1-405B", 405.9e9, 0},
	        {"Mistral-7B", 7.24e9, 0},
	        {"Mixtral-8x7B", 46.7e9, 12.9e9},
	        {"Qwen2.5-7B", 7.62e9, 0},
	        {"Qwen3-8B", 8.19e9, 0},
	        {"Gemma-2-9B", 9.24e9, 0},
	        {"GPT-2", 124e6, 0},
	        /* "1.3B" is the rounded name; the tensors hold 1,315,758,080 (HF model card
	         * of facebook/opt-1.3b lists 1.32B) */
	        {"OPT-1.3B", 1.316e9, 0},
	};
	struct llmio_model m;

	(void)state;
	assert_int_equal(llmio_model_catalog_count(), sizeof(pub) / sizeof(pub[0]));
	for (size_t i = 0; i < sizeof(pub) / sizeof(pub[0]); i++) {
		m = get(pub[i].name);
		assert_int_equal(llmio_model_validate(&m, NULL), 0);
		near(pub[i].name, (double)llmio_model_params_total(&m), pub[i].total, 0.01);
		near(pub[i].name, (double)llmio_model_params_active(&m),
		     pub[i].active ? pub[i].active : pub[i].total, 0.01);
	}
	/* exact: Llama-3.1-8B's model.safetensors.index.json says total_size 16060522496 */
	m = get("Llama-3.1-8B");
	assert_int_equal(llmio_model_params_total(&m), 8030261248ull);
	assert_int_equal(llmio_model_weight_bytes(&m, LLMIO_DTYPE_BF16), 16060522496ull);
	/* GPT-2 small: 124,439,808 (the count nanoGPT / HF print) */
	m = get("gpt2");
	assert_int_equal(llmio_model_params_total(&m), 124439808ull);
}

static void find_names(void **state)
{
	struct llmio_model m;

	(void)state;
	assert_int_equal(llmio_model_find("llama-3.1-8b", &m), 0);
	assert_string_equal(m.name, "Llama-3.1-8B");
	assert_int_equal(llmio_model_find("META-LLAMA/LLAMA-3.1-70B", &m), 0);
	assert_string_equal(m.name, "Llama-3.1-70B");
	assert_int_equal(llmio_model_find("mistralai/Mistral-7B-v0.3", &m), 0);
	assert_int_equal(m.vocab, 32768);
	assert_int_equal(llmio_model_find("gpt2", &m), 0);
	assert_int_equal(m.pos, LLMIO_POS_LEARNED);
	assert_int_equal(llmio_model_find("facebook/opt-1.3b", &m), 0);
	assert_int_equal(m.pos_offset, 2);
	assert_int_equal(llmio_model_find("Llama-3.1", &m), -ENOENT);
	assert_int_equal(llmio_model_find("", &m), -ENOENT);
	assert_int_equal(llmio_model_catalog(llmio_model_catalog_count(), &m), -ENOENT);
}

static void validate_limits(void **state)
{
	struct llmio_model m = get("Llama-3.1-8B");
	struct llmio_error err = {0};

	(void)state;
	m.layers = 1u << 20; /* beyond any model: products would overflow */
	assert_int_equal(llmio_model_validate(&m, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "layers"));
	m = get("Llama-3.1-8B");
	m.kv_heads = 5;
	assert_int_equal(llmio_model_validate(&m, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "kv_heads"));
	m = get("Mixtral-8x7B");
	m.experts_active = 9;
	assert_int_equal(llmio_model_validate(&m, &err), -EINVAL);
}

static void dtypes(void **state)
{
	enum llmio_dtype dt;

	(void)state;
	assert_int_equal(llmio_dtype_parse("bfloat16", &dt), 0);
	assert_int_equal(dt, LLMIO_DTYPE_BF16);
	assert_int_equal(llmio_dtype_parse("FP8", &dt), 0);
	assert_int_equal(dt, LLMIO_DTYPE_FP8);
	assert_int_equal(llmio_dtype_parse("float64", &dt), -EINVAL);
	assert_int_equal(llmio_dtype_bytes(LLMIO_DTYPE_INT4, 3), 2);
	assert_int_equal(llmio_dtype_bytes(LLMIO_DTYPE_FP32, 3), 12);
}

/* The tensor list: sums to the parameter count, unique names, HF names at both ends. */
static void tensor_list(void **state)
{
	struct llmio_model m;
	struct llmio_tensor t;

	(void)state;
	for (size_t i = 0; llmio_model_catalog(i, &m) == 0; i++) {
		size_t n = llmio_model_tensor_count(&m);
		uint64_t sum = 0;

		for (size_t k = 0; k < n; k++) {
			assert_int_equal(llmio_model_tensor(&m, k, &t), 0);
			assert_true(t.numel > 0);
			sum += t.numel;
		}
		assert_int_equal(llmio_model_tensor(&m, n, &t), -ENOENT);
		assert_int_equal(sum, llmio_model_params_total(&m));
	}
	m = get("Llama-3.1-8B");
	assert_int_equal(llmio_model_tensor_count(&m), 291); /* the index.json's weight_map */
	llmio_model_tensor(&m, 0, &t);
	assert_string_equal(t.name, "model.embed_tokens.weight");
	assert_int_equal(t.shape[0], 128256);
	llmio_model_tensor(&m, 290, &t);
	assert_string_equal(t.name, "lm_head.weight");
	llmio_model_tensor(&m, 3, &t);
	assert_string_equal(t.name, "model.layers.0.self_attn.v_proj.weight");
	assert_int_equal(t.shape[0], 1024);
	m = get("Llama-3.2-1B"); /* tied: no lm_head */
	llmio_model_tensor(&m, llmio_model_tensor_count(&m) - 1, &t);
	assert_string_equal(t.name, "model.norm.weight");
	m = get("Mixtral-8x7B");
	llmio_model_tensor(&m, 1 + 4 + 1 + 3 * 7 + 1, &t);
	assert_string_equal(t.name, "model.layers.0.block_sparse_moe.experts.7.w2.weight");
	assert_int_equal(t.expert, 7);
	assert_int_equal(t.shape[0], 4096);
	assert_int_equal(t.shape[1], 14336);
	m = get("OPT-1.3B");
	llmio_model_tensor(&m, 1, &t);
	assert_string_equal(t.name, "model.decoder.embed_positions.weight");
	assert_int_equal(t.shape[0], 2050);
	m = get("Qwen2.5-7B");
	llmio_model_tensor(&m, 2, &t);
	assert_string_equal(t.name, "model.layers.0.self_attn.q_proj.bias");
}

/* Shard files: the counts of the official repositories (5 GB shards), exact file structure. */
static void shard_layout(void **state)
{
	static const struct {
		const char *name;
		size_t shards;
	} official[] = {
	        {"Llama-3.2-1B", 1},   {"Llama-3.2-3B", 2},     {"Llama-3.1-8B", 4},
	        {"Llama-3.1-70B", 30}, {"Llama-3.1-405B", 191}, {"Mistral-7B", 3},
	        {"Mixtral-8x7B", 19},  {"Gemma-2-9B", 8},
	};
	struct llmio_shard_layout *l;
	struct llmio_model m;

	(void)state;
	for (size_t i = 0; i < sizeof(official) / sizeof(official[0]); i++) {
		uint64_t data = 0;

		m = get(official[i].name);
		assert_int_equal(llmio_model_shard_layout(&m, m.dtype, 0, &l), 0);
		if (l->nshards != official[i].shards)
			fail_msg("%s: %zu shards, the repository has %zu", m.name, l->nshards,
			         official[i].shards);
		assert_int_equal(l->nentries, llmio_model_tensor_count(&m));
		for (size_t s = 0; s < l->nshards; s++) {
			const struct llmio_shard *sh = &l->shards[s];
			uint64_t off = 0;

			assert_int_equal(sh->header_len % 8, 0);
			assert_int_equal(strlen(sh->header), sh->header_len);
			assert_true(
			        !strncmp(sh->header, "{\"__metadata__\":{\"format\":\"pt\"},", 32));
			assert_true(sh->data_bytes <= LLMIO_HF_MAX_SHARD_BYTES);
			assert_int_equal(sh->file_bytes, 8 + sh->header_len + sh->data_bytes);
			for (size_t k = 0; k < sh->count; k++) {
				const struct llmio_shard_entry *e = &l->entries[sh->first + k];

				assert_int_equal(e->data_offset, off);
				assert_int_equal(e->file_offset, 8 + sh->header_len + off);
				off += e->bytes;
			}
			assert_int_equal(off, sh->data_bytes);
			data += sh->data_bytes;
		}
		assert_int_equal(data, llmio_model_weight_bytes(&m, m.dtype));
		if (l->nshards > 1) {
			char want[64];

			snprintf(want, sizeof(want), "model-%05zu-of-%05zu.safetensors", l->nshards,
			         l->nshards);
			assert_string_equal(l->shards[l->nshards - 1].filename, want);
		} else {
			assert_string_equal(l->shards[0].filename, "model.safetensors");
		}
		llmio_shard_layout_destroy(l);
	}

	/* GPT-2 at fp32: one file; names sorted inside it (c_attn.bias first, h.10 before h.2) */
	m = get("GPT-2");
	assert_int_equal(llmio_model_shard_layout(&m, LLMIO_DTYPE_FP32, 0, &l), 0);
	assert_int_equal(l->nshards, 1);
	assert_non_null(strstr(l->shards[0].header,
	                       "\"transformer.h.0.attn.c_attn.weight\":{\"dtype\":\"F32\","
	                       "\"shape\":[768,2304],\"data_offsets\":[9216,7087104]}"));
	assert_true(strstr(l->shards[0].header, "transformer.h.10.") <
	            strstr(l->shards[0].header, "transformer.h.2."));
	llmio_shard_layout_destroy(l);

	/*
	 * A tensor over the limit gets a shard of its own, ahead of the open shard (as in
	 * huggingface_hub): GPT-2's 154 MB wte with 100 MB shards.
	 */
	assert_int_equal(llmio_model_shard_layout(&m, LLMIO_DTYPE_FP32, 100000000, &l), 0);
	assert_int_equal(l->shards[0].count, 1);
	assert_int_equal(l->entries[0].tensor, 0);
	assert_int_equal(l->shards[0].data_bytes, 50257ull * 768 * 4);
	llmio_shard_layout_destroy(l);
}

static void checkpoints(void **state)
{
	struct llmio_model m = get("Llama-3.1-8B");
	struct llmio_ckpt_opts o;
	uint64_t p = llmio_model_params_total(&m);

	(void)state;
	llmio_ckpt_opts_init(&o, &m);
	assert_int_equal(llmio_model_checkpoint_bytes(&m, &o), 14 * p);
	o.grad_bytes = 4;
	assert_int_equal(llmio_model_checkpoint_bytes(&m, &o), 18 * p);
	/* MLPerf Storage llama3-8b: 105 GB (GiB) in all */
	llmio_ckpt_opts_init(&o, &m);
	near("8B checkpoint GiB", (double)llmio_model_checkpoint_bytes(&m, &o) / (1 << 30), 105,
	     0.01);
	m = get("GPT-2"); /* fp32 weights: no separate master copy */
	llmio_ckpt_opts_init(&o, &m);
	assert_int_equal(llmio_model_checkpoint_bytes(&m, &o), 12 * llmio_model_params_total(&m));
}

static uint64_t sum_ranks(const struct llmio_model *m, const struct llmio_ckpt_opts *o,
                          uint64_t *weights)
{
	struct llmio_rank_bytes rb;
	uint64_t world = (uint64_t)o->tp * o->pp * o->dp, sum = 0;

	*weights = 0;
	for (uint32_t r = 0; r < world; r++) {
		assert_int_equal(llmio_model_rank_bytes(m, o, r, &rb), 0);
		sum += rb.total_bytes;
		*weights += rb.weight_bytes;
	}
	return sum;
}

static void per_rank(void **state)
{
	struct llmio_model m = get("Llama-3.1-8B");
	struct llmio_ckpt_opts o;
	struct llmio_rank_bytes rb;
	struct llmio_rank_size sizes[16];
	uint64_t w, total;
	size_t n, ranks;

	(void)state;
	llmio_ckpt_opts_init(&o, &m);
	total = llmio_model_checkpoint_bytes(&m, &o);
	/* without model parallelism every stage writes exactly one checkpoint in all */
	o.dp = 8;
	for (o.zero_stage = 0; o.zero_stage <= 3; o.zero_stage++) {
		assert_int_equal(sum_ranks(&m, &o, &w), total);
		assert_int_equal(w, llmio_model_weight_bytes(&m, LLMIO_DTYPE_BF16));
	}
	/* ZeRO 0: only DP rank 0 writes */
	o.zero_stage = 0;
	assert_int_equal(llmio_model_rank_bytes(&m, &o, 1, &rb), 0);
	assert_int_equal(rb.total_bytes, 0);
	/* ZeRO 1: all write optimizer state, DP rank 0 the weights as well */
	o.zero_stage = 1;
	assert_int_equal(llmio_model_rank_bytes(&m, &o, 7, &rb), 0);
	assert_int_equal(rb.weight_bytes, 0);
	near("zero1 optimizer share", (double)rb.optim_bytes, 12.0 * 8030261248 / 8, 1e-6);
	/* ZeRO 3 over 8: MLPerf Storage llama3-8b, 13.1 GB (GiB) per rank */
	o.zero_stage = 3;
	assert_int_equal(llmio_model_rank_bytes(&m, &o, 5, &rb), 0);
	near("8B ZeRO-3 rank GiB", (double)rb.total_bytes / (1 << 30), 13.1, 0.01);
	assert_int_equal(llmio_model_rank_bytes(&m, &o, 8, &rb), -EINVAL);

	/* TP: every linear split, norms replicated: more than one copy in all, by the norms */
	o.tp = 4;
	o.dp = 1;
	o.zero_stage = 0;
	assert_int_equal(sum_ranks(&m, &o, &w) - total,
	                 3ull * 14 * (65ull * 4096)); /* 2 norms x 32 layers + final, 3 extra */
	/* PP: 32 layers over 3 stages: 11, 11, 10; embeddings first, head last */
	o.tp = 1;
	o.pp = 3;
	assert_int_equal(sum_ranks(&m, &o, &w), total);
	assert_int_equal(llmio_model_rank_bytes(&m, &o, 2, &rb), 0);
	assert_int_equal(rb.pp_rank, 2);
	assert_int_equal(rb.params, 10ull * 218112000 + 4096 + 128256ull * 4096);

	/* rank_sizes: counts add up to the world; 405B TP8 x PP32 x DP2 ZeRO 1 (MLPerf) */
	m = get("Llama-3.1-405B");
	llmio_ckpt_opts_init(&o, &m);
	o.tp = 8;
	o.pp = 32;
	o.dp = 2;
	o.zero_stage = 1;
	assert_int_equal(llmio_model_rank_sizes(&m, &o, sizes, 16, &n), 0);
	ranks = 0;
	total = 0;
	for (size_t i = 0; i < n; i++) {
		ranks += sizes[i].ranks;
		total += sizes[i].bytes * sizes[i].ranks;
		if (i)
			assert_true(sizes[i].bytes < sizes[i - 1].bytes);
	}
	assert_int_equal(ranks, 512);
	assert_int_equal(total, sum_ranks(&m, &o, &w));
	/* MLPerf Storage's 5.29 TB in all (with DLIO's own accounting): within 5 % */
	near("405B checkpoint TiB", (double)total / (1ull << 40), 5.29, 0.05);
	assert_int_equal(llmio_model_rank_sizes(&m, &o, sizes, 1, &n), -ENOSPC);
	assert_true(n > 1);
}

/* KV cache: the table in the reference notes (BF16, all layers). */
static void kv_cache(void **state)
{
	struct llmio_model m;

	(void)state;
	m = get("Llama-3.1-8B");
	assert_int_equal(llmio_model_kv_bytes_per_token(&m, LLMIO_DTYPE_BF16), 128 << 10);
	assert_int_equal(llmio_model_kv_block_bytes(&m, LLMIO_DTYPE_BF16, 16, false, 1), 2 << 20);
	assert_int_equal(llmio_model_kv_block_bytes(&m, LLMIO_DTYPE_BF16, 16, true, 1), 64 << 10);
	assert_int_equal(llmio_model_kv_block_bytes(&m, LLMIO_DTYPE_FP8, 256, false, 1), 16 << 20);
	m = get("Llama-3.1-70B");
	assert_int_equal(llmio_model_kv_bytes_per_token(&m, LLMIO_DTYPE_BF16), 320 << 10);
	/* TP8: one KV head per rank, one layer, one token: K+V = 512 B */
	assert_int_equal(llmio_model_kv_block_bytes(&m, LLMIO_DTYPE_BF16, 1, true, 8), 512);
	/* TP16 > 8 KV heads: each rank still holds a whole head */
	assert_int_equal(llmio_model_kv_block_bytes(&m, LLMIO_DTYPE_BF16, 1, true, 16), 512);
	m = get("Llama-3.1-405B");
	assert_int_equal(llmio_model_kv_bytes_per_token(&m, LLMIO_DTYPE_BF16), 504 << 10);
	m = get("Gemma-2-9B"); /* head_dim 256, not hidden/heads */
	assert_int_equal(llmio_model_kv_bytes_per_token(&m, LLMIO_DTYPE_BF16),
	                 2ull * 42 * 8 * 256 * 2);
}

/* Korthikanti et al. 2022, eq. 1-4, by hand. */
static void activations(void **state)
{
	struct llmio_model m = get("Llama-3.1-8B");
	uint64_t sbh = 4096ull * 2 * 4096;

	(void)state;
	/* s=4096, b=2, h=4096, a=32: sbh(34 + 5*32*4096/4096) = sbh * 194 */
	assert_int_equal(llmio_model_activation_bytes(&m, 2, 4096, 1, false), sbh * 194);
	/* t=8: sbh(10 + 24/8 + 160/8) = sbh * 33 */
	assert_int_equal(llmio_model_activation_bytes(&m, 2, 4096, 8, false), sbh * 33);
	/* t=8 with sequence parallelism: sbh * 194 / 8 */
	assert_int_equal(llmio_model_activation_bytes(&m, 2, 4096, 8, true), sbh * 194 / 8);
	assert_int_equal(llmio_model_activation_bytes_per_token(&m, 2, 4096), 4096 * 194);
}

static void lora(void **state)
{
	struct llmio_model m = get("Llama-3.1-8B");
	uint32_t t;

	(void)state;
	/* PEFT on Llama-3-8B, r=16, q_proj + v_proj: "trainable params: 6,815,744" */
	assert_int_equal(llmio_model_lora_params(&m, 16, LLMIO_LORA_DEFAULT), 6815744);
	assert_int_equal(llmio_model_lora_bytes(&m, 16, LLMIO_LORA_DEFAULT, LLMIO_DTYPE_BF16),
	                 2 * 6815744);
	/* all seven: r*(q 8192 + k 5120 + v 5120 + o 8192 + 3 * 18432) per layer */
	assert_int_equal(llmio_model_lora_params(&m, 8, LLMIO_LORA_ALL),
	                 8ull * 32 * (8192 + 5120 + 5120 + 8192 + 3 * 18432));
	assert_int_equal(llmio_lora_targets_parse("q_proj,v_proj", &t), 0);
	assert_int_equal(t, LLMIO_LORA_DEFAULT);
	assert_int_equal(llmio_lora_targets_parse("all", &t), 0);
	assert_int_equal(t, LLMIO_LORA_ALL);
	assert_int_equal(llmio_lora_targets_parse("q,x", &t), -EINVAL);
	assert_int_equal(llmio_lora_targets_parse("q,", &t), -EINVAL);
	assert_int_equal(llmio_tokens_per_step(1024, 4096), 4194304);
}

/* ---- config.json ---- */

static char data_dir[4096];

static void set_data_dir(void)
{
	const char *slash;

	snprintf(data_dir, sizeof(data_dir), "%s", __FILE__);
	slash = strrchr(data_dir, '/');
	if (slash)
		snprintf(data_dir + (slash - data_dir),
		         sizeof(data_dir) - (size_t)(slash - data_dir), "/data");
	else
		snprintf(data_dir, sizeof(data_dir), "data");
}

static int load(const char *file, struct llmio_model *m, struct llmio_error *e)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s/%s", data_dir, file);
	return llmio_model_load_config(path, m, e);
}

/* Each family's real config.json gives exactly the catalog's model (and its numbers). */
static void config_valid(void **state)
{
	static const struct {
		const char *file, *catalog;
		enum llmio_arch arch;
	} cases[] = {
	        {"llama-3.1-8b.json", "Llama-3.1-8B", LLMIO_ARCH_LLAMA},
	        {"mistral-7b-v0.3.json", "Mistral-7B", LLMIO_ARCH_MISTRAL},
	        {"mixtral-8x7b.json", "Mixtral-8x7B", LLMIO_ARCH_MIXTRAL},
	        {"qwen2.5-7b.json", "Qwen2.5-7B", LLMIO_ARCH_QWEN2},
	        {"qwen3-8b.json", "Qwen3-8B", LLMIO_ARCH_QWEN3},
	        {"gemma-2-9b.json", "Gemma-2-9B", LLMIO_ARCH_GEMMA2},
	        {"gpt2.json", "GPT-2", LLMIO_ARCH_GPT2},
	        {"opt-1.3b.json", "OPT-1.3B", LLMIO_ARCH_OPT},
	};
	struct llmio_model m, c;
	struct llmio_error err = {0};
	char path[4200];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int ret = load(cases[i].file, &m, &err);

		if (ret)
			fail_msg("%s: %d %s", cases[i].file, ret, err.msg);
		c = get(cases[i].catalog);
		assert_int_equal(m.arch, cases[i].arch);
		assert_int_equal(m.layers, c.layers);
		assert_int_equal(m.hidden, c.hidden);
		assert_int_equal(m.ffn, c.ffn);
		assert_int_equal(m.heads, c.heads);
		assert_int_equal(m.kv_heads, c.kv_heads);
		assert_int_equal(m.head_dim, c.head_dim);
		assert_int_equal(m.vocab, c.vocab);
		assert_int_equal(m.tied_embeddings, c.tied_embeddings);
		assert_int_equal(m.qkv_bias, c.qkv_bias);
		assert_int_equal(m.dtype, c.dtype);
		assert_int_equal(m.experts, c.experts);
		assert_int_equal(llmio_model_params_total(&m), llmio_model_params_total(&c));
		assert_int_equal(llmio_model_params_active(&m), llmio_model_params_active(&c));
	}
	/* OPT-350m: 512-wide embeddings with projections, no final norm (post-LN): 331 M */
	assert_int_equal(load("opt-350m.json", &m, &err), 0);
	assert_string_equal(m.name, "opt-350m");
	assert_string_equal(m.hf_id, "facebook/opt-350m");
	assert_int_equal(m.embed_dim, 512);
	assert_false(m.final_norm);
	near("opt-350m", (double)llmio_model_params_total(&m), 331.2e6, 0.01);
	/* resolve(): not a catalog name, so a file (directories: tests/cli_model.sh) */
	snprintf(path, sizeof(path), "%s/gpt2.json", data_dir);
	assert_int_equal(llmio_model_resolve(path, &m, NULL), 0);
	assert_int_equal(m.arch, LLMIO_ARCH_GPT2);
}

static void config_error(const char *file, int want, const char *const *words)
{
	struct llmio_model m;
	struct llmio_error err = {0};
	int ret = load(file, &m, &err);

	if (ret != want)
		fail_msg("%s: returned %d, expected %d (%s)", file, ret, want, err.msg);
	if (!strstr(err.msg, file))
		fail_msg("%s: error does not name the file: %s", file, err.msg);
	for (; *words; words++)
		if (!strstr(err.msg, *words))
			fail_msg("%s: error lacks '%s': %s", file, *words, err.msg);
}

static void config_invalid(void **state)
{
	static const char *const missing[] = {"missing key", "\"num_hidden_layers\"", NULL};
	static const char *const type[] = {"\"hidden_size\"", "positive integer", "\"4096\"", NULL};
	static const char *const arch[] = {"unsupported architecture", "\"MambaForCausalLM\"",
	                                   "LlamaForCausalLM", NULL};
	static const char *const json[] = {"not valid JSON", NULL};
	static const char *const kv[] = {"\"num_key_value_heads\"", "5", NULL};
	static const char *const dtype[] = {"\"torch_dtype\"", "\"float64\"", NULL};
	static const char *const none[] = {"cannot read", NULL};

	(void)state;
	config_error("bad-missing-key.json", -EINVAL, missing);
	config_error("bad-wrong-type.json", -EINVAL, type);
	config_error("bad-unknown-arch.json", -EINVAL, arch);
	config_error("bad-not-json.json", -EINVAL, json);
	config_error("bad-kv-heads.json", -EINVAL, kv);
	config_error("bad-dtype.json", -EINVAL, dtype);
	config_error("no-such-file.json", -ENOENT, none);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(published_counts),
	        cmocka_unit_test(find_names),
	        cmocka_unit_test(validate_limits),
	        cmocka_unit_test(dtypes),
	        cmocka_unit_test(tensor_list),
	        cmocka_unit_test(shard_layout),
	        cmocka_unit_test(checkpoints),
	        cmocka_unit_test(per_rank),
	        cmocka_unit_test(kv_cache),
	        cmocka_unit_test(activations),
	        cmocka_unit_test(lora),
	        cmocka_unit_test(config_valid),
	        cmocka_unit_test(config_invalid),
	};

	set_data_dir();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
