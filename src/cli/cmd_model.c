/* SPDX-License-Identifier: MIT */
/*
 * llmio model: the built-in model catalog (`list`) and everything llmio derives from a model
 * (`show NAME|config.json`): parameter counts, weight and checkpoint bytes, per-rank
 * checkpoint shards, KV cache, activations, LoRA adapters.  All of it comes from
 * include/llmio/model.h; this file only parses flags and prints.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "stats/result_json.h"
#include "cli/cli.h"
#include "base/fmt.h"
#include "workload/model_facts.h"

#define MAX_DEGREE 65536

struct show {
	const char *model_arg;
	bool dtype_given, json;
	struct model_facts f;
};

static void help_list(FILE *f)
{
	fprintf(f,
	        "usage: llmio model list [--json]\n\n"
	        "The built-in models: layers, hidden size, FFN size, heads, KV heads, head dim,\n"
	        "vocabulary, experts, default dtype and parameter count.  Every number comes from\n"
	        "the config.json of the model's official Hugging Face repository (see\n"
	        "docs/models.md).  Names match case-insensitively; HF ids work too.\n");
}

static void help_show(FILE *f)
{
	fprintf(f,
	        "usage: llmio model show NAME|CONFIG.JSON [OPTIONS]\n\n"
	        "What llmio derives from a model: parameters (total and active), weight bytes per\n"
	        "dtype, the safetensors shard files, the full training checkpoint, what each rank\n"
	        "writes for TP x PP x DP and a ZeRO stage, KV-cache bytes per token and per "
	        "block,\n"
	        "activation bytes per layer, and LoRA adapter bytes.  NAME is a catalog name or "
	        "HF\n"
	        "id (`llmio model list`); anything else is read as a Hugging Face config.json (or "
	        "a\n"
	        "directory holding one).\n\n"
	        "options:\n"
	        "  --dtype D          weights and KV cache at D: fp32 bf16 fp16 fp8 int8 int4\n"
	        "                     (default: the model's)\n"
	        "  --tp N, --pp N, --dp N\n"
	        "                     tensor, pipeline and data parallel degrees (default 1)\n"
	        "  --zero S           ZeRO stage 0..3 (default 0)\n"
	        "  --grad-bytes N     bytes of gradients per parameter the checkpoint holds\n"
	        "                     (default 0; 4 for those who count fp32 gradients)\n"
	        "  --micro-batch B    sequences per micro-batch for activations (default 1)\n"
	        "  --seq-len S        tokens per sequence (default 4096, or the model's context\n"
	        "                     when shorter)\n"
	        "  --global-batch G   sequences per optimizer step (default micro-batch x dp)\n"
	        "  --block-tokens T   tokens per KV-cache block (default 16, vLLM's)\n"
	        "  --lora-rank R      LoRA rank (default 16)\n"
	        "  --lora-targets L   modules: q,k,v,o,gate,up,down or all (default q,v)\n"
	        "  --max-shard SIZE   largest safetensors shard (default 5GB = 5*10^9 bytes, "
	        "HF's)\n"
	        "  --tensors          also list every tensor with its file and offset\n"
	        "  --json             print one JSON object instead of text\n\n"
	        "Checkpoint convention (Megatron-LM / DeepSpeed mixed precision): weights at the\n"
	        "model dtype + fp32 master weights (none when the weights are fp32) + Adam m and "
	        "v\n"
	        "in fp32: 2 + 4 + 8 = 14 bytes per parameter for bf16.  Per-rank rules and all\n"
	        "formulas with their sources: docs/models.md.\n\n"
	        "Exit status: 0, 2 for a bad option, an unknown model or a bad config.json.\n");
}

static void help(FILE *f)
{
	fprintf(f, "usage: llmio model list [--json]\n"
	           "       llmio model show NAME|CONFIG.JSON [OPTIONS]\n\n"
	           "`llmio model list --help` and `llmio model show --help` describe each.\n");
}

/* "14.96 GiB (16.06 GB)" */
static const char *fmt_bytes2(char *buf, size_t len, uint64_t bytes)
{
	char b[32];

	llmio_format_bytes(bytes, b, sizeof(b));
	if (bytes >= 1000000)
		snprintf(buf, len, "%s (%.2f GB)", b, (double)bytes / 1e9);
	else
		snprintf(buf, len, "%s", b);
	return buf;
}

static int list_json(FILE *f, void *arg)
{
	cJSON *arr = cJSON_CreateArray();
	struct llmio_model m;

	(void)arg;
	if (!arr)
		return -ENOMEM;
	for (size_t i = 0; llmio_model_catalog(i, &m) == 0; i++) {
		cJSON *o = cJSON_CreateObject();

		if (!o || !cJSON_AddItemToArray(arr, o)) {
			cJSON_Delete(o);
			cJSON_Delete(arr);
			return -ENOMEM;
		}
		cJSON_AddStringToObject(o, "name", m.name);
		cJSON_AddStringToObject(o, "hf_id", m.hf_id);
		cJSON_AddStringToObject(o, "arch", llmio_arch_name(m.arch));
		cJSON_AddNumberToObject(o, "layers", m.layers);
		cJSON_AddNumberToObject(o, "hidden", m.hidden);
		cJSON_AddNumberToObject(o, "ffn", m.ffn);
		cJSON_AddNumberToObject(o, "heads", m.heads);
		cJSON_AddNumberToObject(o, "kv_heads", m.kv_heads);
		cJSON_AddNumberToObject(o, "head_dim", m.head_dim);
		cJSON_AddNumberToObject(o, "vocab", m.vocab);
		cJSON_AddNumberToObject(o, "experts", m.experts);
		cJSON_AddNumberToObject(o, "experts_active", m.experts_active);
		cJSON_AddStringToObject(o, "dtype", llmio_dtype_name(m.dtype));
		cJSON_AddNumberToObject(o, "params_total", (double)llmio_model_params_total(&m));
		cJSON_AddNumberToObject(o, "params_active", (double)llmio_model_params_active(&m));
	}
	return json_write_doc(f, arr);
}

static int cmd_list(int argc, char **argv)
{
	struct llmio_model m;
	bool json = false;
	char p[32], a[32];

	static const struct option longopts[] = {
	        {"json", no_argument, NULL, 'j'},
	        {"help", no_argument, NULL, 'h'},
	        {NULL, 0, NULL, 0},
	};
	struct cli_getopt g = CLI_GETOPT_QUIET("model list", argc, argv, "-:h", longopts);
	int c;

	while ((c = cli_getopt_next(&g)) != -1) {
		switch (c) {
		case 'h':
			help_list(stdout);
			return 0;
		case 'j':
			json = true;
			break;
		default: /* an unknown option, or an operand (1): list takes none */
			fprintf(stderr, "llmio model list: unknown argument '%s' (see --help)\n",
			        cli_getopt_word(&g, c));
			return EXIT_USAGE;
		}
	}
	if (json)
		return cli_write_file("-", list_json, NULL) ? EXIT_RUNTIME : 0;
	printf("%-15s %6s %6s %6s %5s %4s %4s %7s %7s %5s %9s %9s\n", "model", "layers", "hidden",
	       "ffn", "heads", "kv", "hdim", "vocab", "experts", "dtype", "params", "active");
	for (size_t i = 0; llmio_model_catalog(i, &m) == 0; i++) {
		char ex[16];

		fmt_params(p, sizeof(p), llmio_model_params_total(&m));
		fmt_params(a, sizeof(a), llmio_model_params_active(&m));
		if (m.experts)
			snprintf(ex, sizeof(ex), "%u/%u", m.experts_active, m.experts);
		else
			snprintf(ex, sizeof(ex), "-");
		printf("%-15s %6u %6u %6u %5u %4u %4u %7u %7s %5s %9s %9s\n", m.name, m.layers,
		       m.hidden, m.ffn, m.heads, m.kv_heads, m.head_dim, m.vocab, ex,
		       llmio_dtype_name(m.dtype), p, a);
	}
	printf("\nexperts: active/total per token.  `llmio model show NAME` for the sizes; HF ids\n"
	       "(meta-llama/Llama-3.1-8B) and config.json files work too.\n");
	return 0;
}

/* ---- show ---- */

static int parse_u32(const char *opt, const char *text, uint64_t min, uint64_t max, uint32_t *out)
{
	uint64_t v;

	if (llmio_parse_uint(text, min, max, &v)) {
		fprintf(stderr,
		        "llmio model show: --%s: '%s' is not a whole number from %llu to %llu\n",
		        opt, text, (unsigned long long)min, (unsigned long long)max);
		return EXIT_USAGE;
	}
	*out = (uint32_t)v;
	return 0;
}

enum {
	OPT_DTYPE = 256,
	OPT_TP,
	OPT_PP,
	OPT_DP,
	OPT_ZERO,
	OPT_GRAD,
	OPT_MB,
	OPT_SEQ,
	OPT_GB,
	OPT_BLOCK,
	OPT_LRANK,
	OPT_LTARGETS,
	OPT_SHARD,
	OPT_TENSORS,
	OPT_JSON,
	OPT_HELP,
};

static const struct option show_opts[] = {
        {"dtype", required_argument, NULL, OPT_DTYPE},
        {"tp", required_argument, NULL, OPT_TP},
        {"pp", required_argument, NULL, OPT_PP},
        {"dp", required_argument, NULL, OPT_DP},
        {"zero", required_argument, NULL, OPT_ZERO},
        {"grad-bytes", required_argument, NULL, OPT_GRAD},
        {"micro-batch", required_argument, NULL, OPT_MB},
        {"seq-len", required_argument, NULL, OPT_SEQ},
        {"global-batch", required_argument, NULL, OPT_GB},
        {"block-tokens", required_argument, NULL, OPT_BLOCK},
        {"lora-rank", required_argument, NULL, OPT_LRANK},
        {"lora-targets", required_argument, NULL, OPT_LTARGETS},
        {"max-shard", required_argument, NULL, OPT_SHARD},
        {"tensors", no_argument, NULL, OPT_TENSORS},
        {"json", no_argument, NULL, OPT_JSON},
        {"help", no_argument, NULL, OPT_HELP},
        {NULL, 0, NULL, 0},
};

/* One option of `show`; returns 0, EXIT_USAGE after printing, or -1 for --help. */
static int show_opt(struct show *s, int c, const char *arg, uint32_t *gb32)
{
	uint32_t v;
	int ret;

	switch (c) {
	case OPT_DTYPE:
		if (llmio_dtype_parse(arg, &s->f.dt)) {
			fprintf(stderr,
			        "llmio model show: --dtype: unknown dtype '%s' (fp32, bf16, fp16, "
			        "fp8, int8, int4)\n",
			        arg);
			return EXIT_USAGE;
		}
		s->dtype_given = true;
		return 0;
	case OPT_TP:
		return parse_u32("tp", arg, 1, MAX_DEGREE, &s->f.ck.tp);
	case OPT_PP:
		return parse_u32("pp", arg, 1, MAX_DEGREE, &s->f.ck.pp);
	case OPT_DP:
		return parse_u32("dp", arg, 1, MAX_DEGREE, &s->f.ck.dp);
	case OPT_ZERO:
		return parse_u32("zero", arg, 0, 3, &s->f.ck.zero_stage);
	case OPT_GRAD:
		return parse_u32("grad-bytes", arg, 0, 8, &s->f.ck.grad_bytes);
	case OPT_MB:
		return parse_u32("micro-batch", arg, 1, 1u << 20, &s->f.micro_batch);
	case OPT_SEQ:
		return parse_u32("seq-len", arg, 1, 1u << 24, &s->f.seq_len);
	case OPT_GB:
		ret = parse_u32("global-batch", arg, 1, UINT32_MAX, &v);
		*gb32 = v;
		return ret;
	case OPT_BLOCK:
		return parse_u32("block-tokens", arg, 1, 1u << 20, &s->f.block_tokens);
	case OPT_LRANK:
		return parse_u32("lora-rank", arg, 1, 65536, &s->f.lora_rank);
	case OPT_LTARGETS:
		if (llmio_lora_targets_parse(arg, &s->f.lora_targets)) {
			fprintf(stderr,
			        "llmio model show: --lora-targets: '%s' is not a list of q, k, v, "
			        "o, "
			        "gate, up, down (or all), e.g. q,v\n",
			        arg);
			return EXIT_USAGE;
		}
		snprintf(s->f.lora_text, sizeof(s->f.lora_text), "%s", arg);
		return 0;
	case OPT_SHARD:
		if (llmio_parse_size(arg, &s->f.max_shard) || !s->f.max_shard) {
			fprintf(stderr,
			        "llmio model show: --max-shard: '%s' is not a size above 0 (e.g. "
			        "5GB "
			        "is written 5000000000, or 4GiB)\n",
			        arg);
			return EXIT_USAGE;
		}
		return 0;
	case OPT_TENSORS:
		s->f.tensors = true;
		return 0;
	case OPT_JSON:
		s->json = true;
		return 0;
	case OPT_HELP:
		return -1;
	}
	return EXIT_USAGE;
}

static int show_parse(struct show *s, int argc, char **argv)
{
	struct cli_getopt g = CLI_GETOPT_QUIET("model show", argc, argv, ":h", show_opts);
	uint32_t gb = 0;
	int c, ret;

	while ((c = cli_getopt_next(&g)) != -1) {
		if (c == 'h')
			c = OPT_HELP;
		if (c == CLI_OPT_BAD) {
			fprintf(stderr, "llmio model show: %s '%s' (see llmio model show --help)\n",
			        g.noval ? "missing value for" : "unknown option", g.bad);
			return EXIT_USAGE;
		}
		ret = show_opt(s, c, optarg, &gb);
		if (ret < 0) {
			help_show(stdout);
			return -1;
		}
		if (ret)
			return ret;
	}
	if (g.next >= argc) {
		fprintf(stderr, "llmio model show: which model? (a name from `llmio model list` "
		                "or a config.json)\n");
		return EXIT_USAGE;
	}
	if (g.next + 1 < argc) {
		fprintf(stderr, "llmio model show: one model at a time ('%s' is extra)\n",
		        argv[g.next + 1]);
		return EXIT_USAGE;
	}
	s->model_arg = argv[g.next];
	s->f.global_batch = gb;
	return 0;
}

static int show_compute(struct show *s)
{
	uint64_t world = (uint64_t)s->f.ck.tp * s->f.ck.pp * s->f.ck.dp;
	int ret;

	if (!s->dtype_given)
		s->f.dt = s->f.m.dtype;
	/* the checkpoint's weights follow --dtype; master copy and moments stay fp32 */
	s->f.ck.weight_dtype = s->f.dt;
	s->f.ck.master_bytes = s->f.dt == LLMIO_DTYPE_FP32 ? 0 : 4;
	if (!s->f.seq_len)
		s->f.seq_len = s->f.m.max_positions && s->f.m.max_positions < 4096
		                       ? s->f.m.max_positions
		                       : 4096;
	if (!s->f.global_batch)
		s->f.global_batch = (uint64_t)s->f.micro_batch * s->f.ck.dp;
	if (world > (1u << 24)) {
		fprintf(stderr,
		        "llmio model show: tp x pp x dp = %llu ranks is more than 16777216\n",
		        (unsigned long long)world);
		return EXIT_USAGE;
	}
	s->f.params_total = llmio_model_params_total(&s->f.m);
	s->f.params_active = llmio_model_params_active(&s->f.m);
	s->f.weight_bytes = llmio_model_weight_bytes(&s->f.m, s->f.dt);
	s->f.ckpt_bytes = llmio_model_checkpoint_bytes(&s->f.m, &s->f.ck);
	ret = llmio_model_shard_layout(&s->f.m, s->f.dt, s->f.max_shard, &s->f.layout);
	if (!ret)
		ret = llmio_model_rank_sizes(&s->f.m, &s->f.ck, s->f.sizes, MODEL_FACTS_MAX_SIZES,
		                             &s->f.nsizes);
	if (ret == -ENOSPC) {
		s->f.nsizes = MODEL_FACTS_MAX_SIZES; /* the largest MODEL_FACTS_MAX_SIZES are enough
		                                        to show */
		ret = 0;
	}
	if (ret) {
		fprintf(stderr, "llmio model show: %s\n", strerror(-ret));
		return EXIT_RUNTIME;
	}
	return 0;
}

static int show_json(FILE *f, void *arg)
{
	const struct show *s = arg;
	cJSON *o = model_facts_json(&s->f);

	return o ? json_write_doc(f, o) : -ENOMEM;
}

static void show_text(const struct show *s)
{
	const struct llmio_model *m = &s->f.m;
	const struct llmio_shard_layout *l = s->f.layout;
	char b1[64], b2[64], p1[32], p2[32], text[512];
	const char *dt = llmio_dtype_name(s->f.dt);
	uint64_t world = (uint64_t)s->f.ck.tp * s->f.ck.pp * s->f.ck.dp;

	printf("%s  (%s%s%s)\n", m->name, llmio_arch_name(m->arch), *m->hf_id ? ", " : "",
	       m->hf_id);
	printf("source: %s\n\n", m->source);
	printf("architecture   %u layers, hidden %u, FFN %u, %u heads, %u KV heads, head dim %u,\n"
	       "               vocabulary %u, context %u\n",
	       m->layers, m->hidden, m->ffn, m->heads, m->kv_heads, m->head_dim, m->vocab,
	       m->max_positions);
	snprintf(text, sizeof(text),
	         "%s, %s positions%s, %s embeddings, biases: qkv %s, out %s, mlp %s",
	         m->norm == LLMIO_NORM_RMS ? "RMSNorm" : "LayerNorm (with bias)",
	         m->pos == LLMIO_POS_ROPE ? "rotary" : "learned",
	         m->pos_offset ? " (+2 offset rows)" : "", m->tied_embeddings ? "tied" : "untied",
	         m->qkv_bias ? "yes" : "no", m->out_bias ? "yes" : "no",
	         m->mlp_bias ? "yes" : "no");
	fmt_wrapped(stdout, "               ", 15, text); /* 100 columns */
	if (m->experts)
		printf("               MoE: %u experts, %u active per token\n", m->experts,
		       m->experts_active);
	printf("               dtype %s%s\n\n", llmio_dtype_name(m->dtype),
	       s->dtype_given ? "" : " (used below)");

	fmt_params(p1, sizeof(p1), s->f.params_total);
	fmt_params(p2, sizeof(p2), s->f.params_active);
	printf("parameters     total %s (%llu), active %s (%llu)\n", p1,
	       (unsigned long long)s->f.params_total, p2, (unsigned long long)s->f.params_active);
	for (int d = 0, used = 0; d < LLMIO_DTYPE_COUNT && used < (int)sizeof(text); d++) {
		llmio_format_bytes(llmio_model_weight_bytes(m, (enum llmio_dtype)d), b1,
		                   sizeof(b1));
		used += snprintf(text + used, sizeof(text) - (size_t)used, "%s%s %s", d ? ", " : "",
		                 llmio_dtype_name((enum llmio_dtype)d), b1);
	}
	fmt_wrapped(stdout, "weights        ", 15, text);
	printf("safetensors    %zu tensors in %zu file%s of at most %s data: %s\n", l->nentries,
	       l->nshards, l->nshards == 1 ? "" : "s",
	       fmt_bytes2(b1, sizeof(b1), l->max_shard_bytes),
	       fmt_bytes2(b2, sizeof(b2), l->total_file_bytes));
	printf("checkpoint     %s: %s weights %u + master %u + Adam m,v %u + grads %u = %llu "
	       "B/param\n",
	       fmt_bytes2(b1, sizeof(b1), s->f.ckpt_bytes), dt, llmio_dtype_bits(s->f.dt) / 8,
	       s->f.ck.master_bytes, s->f.ck.optim_bytes, s->f.ck.grad_bytes,
	       (unsigned long long)(llmio_dtype_bits(s->f.dt) / 8 + s->f.ck.master_bytes +
	                            s->f.ck.optim_bytes + s->f.ck.grad_bytes));
	printf("               (Megatron-LM / DeepSpeed mixed precision)\n");
	printf("per rank       TP %u x PP %u x DP %u = %llu ranks, ZeRO %u:\n", s->f.ck.tp,
	       s->f.ck.pp, s->f.ck.dp, (unsigned long long)world, s->f.ck.zero_stage);
	for (size_t i = 0; i < s->f.nsizes; i++)
		printf("               %8u rank%s %s\n", s->f.sizes[i].ranks,
		       s->f.sizes[i].ranks == 1 ? " writes" : "s write",
		       fmt_bytes2(b1, sizeof(b1), s->f.sizes[i].bytes));
	printf("KV cache       %s: %s per token; %u-token block %s", dt,
	       llmio_format_bytes(llmio_model_kv_bytes_per_token(m, s->f.dt), b1, sizeof(b1)),
	       s->f.block_tokens,
	       llmio_format_bytes(
	               llmio_model_kv_block_bytes(m, s->f.dt, s->f.block_tokens, false, 1), b2,
	               sizeof(b2)));
	printf(", per layer %s", llmio_format_bytes(llmio_model_kv_block_bytes(
	                                                    m, s->f.dt, s->f.block_tokens, true, 1),
	                                            b1, sizeof(b1)));
	if (s->f.ck.tp > 1)
		printf(", per TP rank %s",
		       llmio_format_bytes(llmio_model_kv_block_bytes(m, s->f.dt, s->f.block_tokens,
		                                                     false, s->f.ck.tp),
		                          b1, sizeof(b1)));
	printf("\nactivations    micro-batch %u x %u tokens: %s per layer,\n               ",
	       s->f.micro_batch, s->f.seq_len,
	       fmt_bytes2(
	               b1, sizeof(b1),
	               llmio_model_activation_bytes(m, s->f.micro_batch, s->f.seq_len, 1, false)));
	printf("%s per token per layer\n",
	       llmio_format_bytes(
	               llmio_model_activation_bytes_per_token(m, s->f.micro_batch, s->f.seq_len),
	               b1, sizeof(b1)));
	printf("               (Korthikanti et al. 2022: sbh(34 + 5as/h), 16-bit, no "
	       "recomputation)\n");
	printf("LoRA           rank %u on %s: %llu parameters, %s\n", s->f.lora_rank,
	       s->f.lora_text,
	       (unsigned long long)llmio_model_lora_params(m, s->f.lora_rank, s->f.lora_targets),
	       llmio_format_bytes(
	               llmio_model_lora_bytes(m, s->f.lora_rank, s->f.lora_targets, s->f.dt), b1,
	               sizeof(b1)));
	printf("tokens/step    %llu (global batch %llu x %u)\n",
	       (unsigned long long)llmio_tokens_per_step(s->f.global_batch, s->f.seq_len),
	       (unsigned long long)s->f.global_batch, s->f.seq_len);
}

/*
 * The tensors, file by file: a line naming the file, then one row per tensor.  The columns
 * fit 100 with a tensor name of up to 54 characters; a longer one is shortened with an
 * ellipsis (the JSON has them whole).
 */
static void tensors_text(const struct show *s)
{
	const struct llmio_shard_layout *l = s->f.layout;
	struct llmio_tensor t;
	char shape[48], name[64];

	for (size_t sh = 0; sh < l->nshards; sh++) {
		printf("\n%s: %zu tensor%s\n", l->shards[sh].filename, l->shards[sh].count,
		       l->shards[sh].count == 1 ? "" : "s");
		printf("  %12s %12s  %-16s %s\n", "offset", "bytes", "shape", "tensor");
		for (size_t k = 0; k < l->shards[sh].count; k++) {
			const struct llmio_shard_entry *e = &l->entries[l->shards[sh].first + k];

			llmio_model_tensor(&s->f.m, e->tensor, &t);
			if (t.ndims == 2)
				snprintf(shape, sizeof(shape), "[%llu, %llu]",
				         (unsigned long long)t.shape[0],
				         (unsigned long long)t.shape[1]);
			else
				snprintf(shape, sizeof(shape), "[%llu]",
				         (unsigned long long)t.shape[0]);
			fmt_path(name, sizeof(name), t.name, 54);
			printf("  %12llu %12llu  %-16s %s\n", (unsigned long long)e->file_offset,
			       (unsigned long long)e->bytes, shape, name);
		}
	}
}

static int cmd_show(int argc, char **argv)
{
	struct show *s;
	struct llmio_error e = {0};
	int ret;

	s = calloc(1, sizeof(*s));
	if (!s) {
		fprintf(stderr, "llmio model show: out of memory\n");
		return EXIT_RUNTIME;
	}
	llmio_ckpt_opts_init(&s->f.ck, NULL);
	s->f.micro_batch = 1;
	s->f.block_tokens = LLMIO_KV_BLOCK_TOKENS;
	s->f.lora_rank = 16;
	s->f.lora_targets = LLMIO_LORA_DEFAULT;
	snprintf(s->f.lora_text, sizeof(s->f.lora_text), "q,v");
	ret = show_parse(s, argc, argv);
	if (ret) {
		ret = ret < 0 ? 0 : ret;
		goto out;
	}
	ret = llmio_model_resolve(s->model_arg, &s->f.m, &e);
	if (ret) {
		fprintf(stderr, "llmio model show: %s\n", e.msg);
		ret = ret == -EINVAL || ret == -ENOENT || ret == -EISDIR || ret == -ENOTDIR
		              ? EXIT_USAGE
		              : EXIT_RUNTIME;
		goto out;
	}
	ret = show_compute(s);
	if (ret)
		goto out;
	if (s->json) {
		ret = cli_write_file("-", show_json, s) ? EXIT_RUNTIME : 0;
		goto out;
	}
	show_text(s);
	if (s->f.tensors)
		tensors_text(s);
out:
	llmio_shard_layout_destroy(s->f.layout);
	free(s);
	return ret;
}

static const struct cmd subcommands[] = {
        {"list", cmd_list, "the built-in models"},
        {"show", cmd_show, "what llmio derives from a model"},
};

int cmd_model(int argc, char **argv)
{
	int code;

	if (argc < 2) {
		fprintf(stderr, "llmio model: list or show? (llmio model --help)\n");
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		help(stdout);
		return 0;
	}
	if (cli_dispatch(subcommands, sizeof(subcommands) / sizeof(subcommands[0]), argc, argv,
	                 &code))
		return code;
	fprintf(stderr, "llmio model: unknown subcommand '%s' (list or show)\n", argv[1]);
	return EXIT_USAGE;
}
