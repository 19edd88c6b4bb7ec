/* SPDX-License-Identifier: MIT */
/*
 * Model arithmetic: tensors, parameter counts, checkpoint and per-rank shard bytes, KV cache,
 * activations, LoRA.
 *
 * DESIGN
 *
 * Everything is derived from one tensor list, so parameter counts, weight bytes, shard files
 * and per-rank shards can never disagree.  The list is built from a per-architecture "plan":
 * the tensors before the blocks, the tensors of one block (the same for every block; MoE
 * expert weights are a group repeated once per expert) and the tensors after the blocks.
 * Names and order are those of the transformers class's state_dict, which is what
 * save_pretrained writes (sources: modeling_llama.py, modeling_mistral.py, modeling_mixtral.py,
 * modeling_qwen2.py, modeling_qwen3.py, modeling_gemma2.py, modeling_gpt2.py, modeling_opt.py).
 * With H = hidden, F = ffn, V = vocab, L = layers, a = heads, k = kv_heads, d = head_dim,
 * E = experts, A = active experts, P = learned position rows:
 *
 *   attention   = H*a*d (q) + 2*H*k*d (k, v) + a*d*H (o)
 *                 [+ a*d + 2*k*d if qkv_bias] [+ H if out_bias] [+ 2*d if qk_norm]
 *   mlp (gated) = 3*H*F [+ 2*F + H if mlp_bias]    mlp (fc1, fc2) = 2*H*F [+ F + H]
 *   moe         = E * 3*H*F (experts) + E*H (router)
 *   norms       = (2, or 4 with sandwich norms) * H, doubled for LayerNorm (weight + bias)
 *   total       = V*H (embedding) [+ P*H learned positions] [+ V*H untied head]
 *                 + L * (attention + mlp + norms) + final norm
 *   active      = total - L * (E - A) * 3*H*F
 *
 * e.g. Llama-3.1-8B: 128256*4096*2 + 32*(4096*4096*2 + 2*4096*1024*2... ) = 8,030,261,248,
 * the count its model card gives as 8.03 B.  The published counts the tests check are in
 * docs/models.md with their sources.
 *
 * Checkpoints (Megatron-LM / DeepSpeed mixed precision, as in MLPerf Storage's checkpointing
 * workload and the ZeRO paper, Rajbhandari et al. 2020, section 3): per parameter the model
 * weight at its dtype, an fp32 master copy (4 B) and Adam's m and v (4 + 4 B): 14 B for bf16.
 * Some count fp32 gradients too (+4 B): that is llmio_ckpt_opts.grad_bytes.
 *
 * Per-rank shards for TP x PP x DP and ZeRO stage z (DeepSpeed's and DLIO's rules):
 *   - PP splits the blocks into contiguous stages as evenly as possible (the first L % PP
 *     stages get one more); the tensors before the blocks live on stage 0, those after on the
 *     last stage; a tied embedding is also held by the last stage when PP > 1 (Megatron keeps
 *     a copy for the output layer).
 *   - TP splits linears and embeddings (tp_split tensors) into TP near-equal parts; norms,
 *     row-parallel biases, routers and position tables are replicated on every TP rank.
 *   - z = 0: data-parallel rank 0 of each model-parallel slice writes its weights and
 *     optimizer state; the other DP ranks write nothing.
 *   - z = 1, 2: every DP rank writes 1/DP of the slice's optimizer state (master + moments
 *     [+ gradients]); DP rank 0 also writes the slice's weights.
 *   - z = 3: weights are partitioned over DP too: every rank writes 1/DP of both.
 *   Near-equal parts: n elements over p parts give part i floor(n/p) + (i < n % p).
 *
 * KV cache per token (vLLM, "Efficient Memory Management for LLM Serving with PagedAttention",
 * Kwon et al. 2023): 2 * L * k * d * bytes; a block holds 16 tokens by default.
 *
 * Activations per layer (Korthikanti et al. 2022, "Reducing Activation Recomputation in Large
 * Transformer Models", section 4.1, 16-bit activations, no recomputation):
 * s*b*H*(34 + 5*a*s/H) bytes; with tensor parallelism t: s*b*H*(10 + 24/t + 5*a*s/(H*t)); with
 * sequence parallelism as well: s*b*H*(34/t + 5*a*s/(H*t)).  The paper derives it for GPT's
 * 4H MLP and multi-head attention; it is the standard estimate for other shapes too.
 *
 * LoRA (Hu et al. 2021): a rank-r adapter on a linear in -> out adds r*(in + out) parameters.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "workload/model_internal.h"
#include "base/error.h"

void model_copy(char *dst, size_t size, const char *src)
{
	size_t n = strnlen(src, size - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* ---- dtypes ---- */

static const struct {
	const char *name;
	const char *torch; /* config.json torch_dtype */
	const char *st;    /* safetensors dtype */
	uint32_t bits;
} dtypes[LLMIO_DTYPE_COUNT] = {
        [LLMIO_DTYPE_FP32] = {"fp32", "float32", "F32", 32},
        [LLMIO_DTYPE_BF16] = {"bf16", "bfloat16", "BF16", 16},
        [LLMIO_DTYPE_FP16] = {"fp16", "float16", "F16", 16},
        [LLMIO_DTYPE_FP8] = {"fp8", "float8_e4m3fn", "F8_E4M3", 8},
        [LLMIO_DTYPE_INT8] = {"int8", "int8", "I8", 8},
        [LLMIO_DTYPE_INT4] = {"int4", "int4", "U8", 4}, /* packed two per byte */
};

const char *llmio_dtype_name(enum llmio_dtype dt)
{
	return (unsigned)dt < LLMIO_DTYPE_COUNT ? dtypes[dt].name : "?";
}

int llmio_dtype_parse(const char *text, enum llmio_dtype *out)
{
	static const struct {
		const char *alias;
		enum llmio_dtype dt;
	} aliases[] = {
	        {"float", LLMIO_DTYPE_FP32},   {"half", LLMIO_DTYPE_FP16},
	        {"f32", LLMIO_DTYPE_FP32},     {"f16", LLMIO_DTYPE_FP16},
	        {"fp8_e4m3", LLMIO_DTYPE_FP8}, {"float8", LLMIO_DTYPE_FP8},
	};

	if (!text)
		return -EINVAL;
	for (int i = 0; i < LLMIO_DTYPE_COUNT; i++) {
		if (!strcasecmp(text, dtypes[i].name) || !strcasecmp(text, dtypes[i].torch)) {
			*out = (enum llmio_dtype)i;
			return 0;
		}
	}
	for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++) {
		if (!strcasecmp(text, aliases[i].alias)) {
			*out = aliases[i].dt;
			return 0;
		}
	}
	return -EINVAL;
}

uint32_t llmio_dtype_bits(enum llmio_dtype dt)
{
	return (unsigned)dt < LLMIO_DTYPE_COUNT ? dtypes[dt].bits : 0;
}

uint64_t llmio_dtype_bytes(enum llmio_dtype dt, uint64_t n)
{
	uint64_t bits = llmio_dtype_bits(dt);

	if (bits % 8 == 0)
		return n * (bits / 8);
	return (n * bits + 7) / 8;
}

const char *llmio_arch_name(enum llmio_arch arch)
{
	static const char *const names[LLMIO_ARCH_COUNT] = {
	        [LLMIO_ARCH_LLAMA] = "LlamaForCausalLM",
	        [LLMIO_ARCH_MISTRAL] = "MistralForCausalLM",
	        [LLMIO_ARCH_MIXTRAL] = "MixtralForCausalLM",
	        [LLMIO_ARCH_QWEN2] = "Qwen2ForCausalLM",
	        [LLMIO_ARCH_QWEN3] = "Qwen3ForCausalLM",
	        [LLMIO_ARCH_GEMMA2] = "Gemma2ForCausalLM",
	        [LLMIO_ARCH_GPT2] = "GPT2LMHeadModel",
	        [LLMIO_ARCH_OPT] = "OPTForCausalLM",
	};

	return (unsigned)arch < LLMIO_ARCH_COUNT ? names[arch] : "?";
}

void model_arch_defaults(struct llmio_model *m, enum llmio_arch arch)
{
	bool learned = arch == LLMIO_ARCH_GPT2 || arch == LLMIO_ARCH_OPT;

	m->arch = arch;
	m->gated_mlp = !learned;
	m->norm = learned ? LLMIO_NORM_LAYER : LLMIO_NORM_RMS;
	m->pos = learned ? LLMIO_POS_LEARNED : LLMIO_POS_ROPE;
	m->pos_offset = arch == LLMIO_ARCH_OPT ? 2 : 0;
	m->qkv_bias = learned || arch == LLMIO_ARCH_QWEN2;
	m->out_bias = learned;
	m->mlp_bias = learned;
	m->qk_norm = arch == LLMIO_ARCH_QWEN3;
	m->sandwich_norm = arch == LLMIO_ARCH_GEMMA2;
	m->final_norm = true;
}

int llmio_model_validate(const struct llmio_model *m, struct llmio_error *e)
{
	/* limits far above any real model that keep every product within 64 bits */
	const struct {
		const char *name;
		uint32_t v, max;
	} sizes[] = {
	        {"layers", m->layers, 1u << 12},     {"hidden", m->hidden, 1u << 18},
	        {"ffn", m->ffn, 1u << 20},           {"heads", m->heads, 1u << 14},
	        {"kv_heads", m->kv_heads, 1u << 14}, {"head_dim", m->head_dim, 1u << 14},
	        {"vocab", m->vocab, 1u << 24},
	};

	if ((unsigned)m->arch >= LLMIO_ARCH_COUNT)
		return llmio_err(e, -EINVAL, "model %s: unknown architecture %d", m->name,
		                 (int)m->arch);
	if ((unsigned)m->dtype >= LLMIO_DTYPE_COUNT)
		return llmio_err(e, -EINVAL, "model %s: unknown dtype %d", m->name, (int)m->dtype);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		if (sizes[i].v == 0 || sizes[i].v > sizes[i].max)
			return llmio_err(e, -EINVAL, "model %s: %s is %u; it must be 1 to %u",
			                 m->name, sizes[i].name, sizes[i].v, sizes[i].max);
	if (m->max_positions > (1u << 24) || m->embed_dim > (1u << 18))
		return llmio_err(e, -EINVAL,
		                 "model %s: max_positions (%u) or embed_dim (%u) is beyond 2^24 / "
		                 "2^18",
		                 m->name, m->max_positions, m->embed_dim);
	if (m->heads % m->kv_heads)
		return llmio_err(e, -EINVAL,
		                 "model %s: kv_heads (%u) must divide heads (%u) for grouped-query "
		                 "attention",
		                 m->name, m->kv_heads, m->heads);
	if (m->experts_active > m->experts || (m->experts && !m->experts_active))
		return llmio_err(e, -EINVAL,
		                 "model %s: active experts (%u) must be between 1 and the experts "
		                 "(%u)",
		                 m->name, m->experts_active, m->experts);
	if (m->experts > 1024)
		return llmio_err(e, -EINVAL, "model %s: %u experts per layer is more than 1024",
		                 m->name, m->experts);
	if (m->experts && m->arch != LLMIO_ARCH_MIXTRAL)
		return llmio_err(e, -EINVAL, "model %s: experts are supported for %s only", m->name,
		                 llmio_arch_name(LLMIO_ARCH_MIXTRAL));
	if (m->pos == LLMIO_POS_LEARNED && !m->max_positions)
		return llmio_err(e, -EINVAL,
		                 "model %s: max_positions must be set for learned positions",
		                 m->name);
	return 0;
}

/* ---- the plan: tensors before, in and after the blocks ---- */

enum place { PRE, LAYER, POST };

struct tmpl {
	char suffix[40];
	uint32_t ndims;
	uint64_t shape[2];
	bool tp_split;
	bool expert;
	int32_t layer; /* PRE / POST tensors: -1 or -2 (where they live for pipeline stages) */
};

#define PLAN_MAX 24

struct plan {
	const char *prefix;     /* prefix of block tensors, "%u" = block */
	const char *expert_fmt; /* "experts.%u." inside a block */
	struct tmpl pre[6], layer[PLAN_MAX], post[4];
	uint32_t npre, nlayer, npost;
	uint32_t expert_first, expert_n; /* the expert group inside layer[] */
	uint64_t experts;                /* repeats of the group (1 when dense) */
};

static struct tmpl *plan_add(struct plan *p, enum place where, const char *suffix, uint64_t d0,
                             uint64_t d1, bool tp_split)
{
	struct tmpl *t;

	if (where == PRE)
		t = &p->pre[p->npre++];
	else if (where == LAYER)
		t = &p->layer[p->nlayer++];
	else
		t = &p->post[p->npost++];
	model_copy(t->suffix, sizeof(t->suffix), suffix);
	t->ndims = d1 ? 2 : 1;
	t->shape[0] = d0;
	t->shape[1] = d1;
	t->tp_split = tp_split;
	t->expert = false;
	t->layer = where == POST ? -2 : -1;
	return t;
}

/* name.weight and, when bias, name.bias of a linear with out x in weights. */
static void plan_linear(struct plan *p, const char *name, uint64_t out, uint64_t in, bool bias,
                        bool bias_split)
{
	char s[64];

	snprintf(s, sizeof(s), "%s.weight", name);
	plan_add(p, LAYER, s, out, in, true);
	if (bias) {
		snprintf(s, sizeof(s), "%s.bias", name);
		plan_add(p, LAYER, s, out, 0, bias_split);
	}
}

static void plan_norm(struct plan *p, enum place where, const char *name, uint64_t dim,
                      bool layernorm)
{
	char s[64];

	snprintf(s, sizeof(s), "%s.weight", name);
	plan_add(p, where, s, dim, 0, false);
	if (layernorm) {
		snprintf(s, sizeof(s), "%s.bias", name);
		plan_add(p, where, s, dim, 0, false);
	}
}

static void plan_llama(const struct llmio_model *m, struct plan *p)
{
	uint64_t h = m->hidden, q = (uint64_t)m->heads * m->head_dim;
	uint64_t kv = (uint64_t)m->kv_heads * m->head_dim, f = m->ffn;
	bool ln = m->norm == LLMIO_NORM_LAYER;

	p->prefix = "model.layers.%u.";
	plan_add(p, PRE, "model.embed_tokens.weight", m->vocab, h, true);
	plan_linear(p, "self_attn.q_proj", q, h, m->qkv_bias, true);
	plan_linear(p, "self_attn.k_proj", kv, h, m->qkv_bias, true);
	plan_linear(p, "self_attn.v_proj", kv, h, m->qkv_bias, true);
	plan_linear(p, "self_attn.o_proj", h, q, m->out_bias, false);
	if (m->qk_norm) {
		plan_norm(p, LAYER, "self_attn.q_norm", m->head_dim, false);
		plan_norm(p, LAYER, "self_attn.k_norm", m->head_dim, false);
	}
	if (m->experts) {
		plan_add(p, LAYER, "block_sparse_moe.gate.weight", m->experts, h, false);
		p->expert_fmt = "block_sparse_moe.experts.%u.";
		p->expert_first = p->nlayer;
		plan_linear(p, "w1", f, h, false, true);
		plan_linear(p, "w2", h, f, false, true);
		plan_linear(p, "w3", f, h, false, true);
		p->expert_n = p->nlayer - p->expert_first;
		for (uint32_t i = p->expert_first; i < p->nlayer; i++)
			p->layer[i].expert = true;
		p->experts = m->experts;
	} else {
		plan_linear(p, "mlp.gate_proj", f, h, m->mlp_bias, true);
		plan_linear(p, "mlp.up_proj", f, h, m->mlp_bias, true);
		plan_linear(p, "mlp.down_proj", h, f, m->mlp_bias, false);
	}
	plan_norm(p, LAYER, "input_layernorm", h, ln);
	plan_norm(p, LAYER, "post_attention_layernorm", h, ln);
	if (m->sandwich_norm) {
		plan_norm(p, LAYER, "pre_feedforward_layernorm", h, ln);
		plan_norm(p, LAYER, "post_feedforward_layernorm", h, ln);
	}
	if (m->final_norm)
		plan_norm(p, POST, "model.norm", h, ln);
	if (!m->tied_embeddings)
		plan_add(p, POST, "lm_head.weight", m->vocab, h, true);
}

/* GPT-2's Conv1D stores weights as in x out. */
static void plan_gpt2(const struct llmio_model *m, struct plan *p)
{
	uint64_t h = m->hidden, q = (uint64_t)m->heads * m->head_dim;
	uint64_t qkv = q + 2ull * m->kv_heads * m->head_dim, f = m->ffn;

	p->prefix = "transformer.h.%u.";
	plan_add(p, PRE, "transformer.wte.weight", m->vocab, h, true);
	plan_add(p, PRE, "transformer.wpe.weight", m->max_positions + m->pos_offset, h, false);
	plan_norm(p, LAYER, "ln_1", h, true);
	plan_add(p, LAYER, "attn.c_attn.weight", h, qkv, true);
	if (m->qkv_bias)
		plan_add(p, LAYER, "attn.c_attn.bias", qkv, 0, true);
	plan_add(p, LAYER, "attn.c_proj.weight", q, h, true);
	if (m->out_bias)
		plan_add(p, LAYER, "attn.c_proj.bias", h, 0, false);
	plan_norm(p, LAYER, "ln_2", h, true);
	plan_add(p, LAYER, "mlp.c_fc.weight", h, f, true);
	if (m->mlp_bias)
		plan_add(p, LAYER, "mlp.c_fc.bias", f, 0, true);
	plan_add(p, LAYER, "mlp.c_proj.weight", f, h, true);
	if (m->mlp_bias)
		plan_add(p, LAYER, "mlp.c_proj.bias", h, 0, false);
	if (m->final_norm)
		plan_norm(p, POST, "transformer.ln_f", h, true);
	if (!m->tied_embeddings)
		plan_add(p, POST, "lm_head.weight", m->vocab, h, true);
}

/* OPTDecoder registers final_layer_norm before its layers, so it is stored first. */
static void plan_opt(const struct llmio_model *m, struct plan *p)
{
	uint64_t h = m->hidden, q = (uint64_t)m->heads * m->head_dim;
	uint64_t kv = (uint64_t)m->kv_heads * m->head_dim, f = m->ffn;
	uint64_t e = m->embed_dim ? m->embed_dim : h;

	p->prefix = "model.decoder.layers.%u.";
	plan_add(p, PRE, "model.decoder.embed_tokens.weight", m->vocab, e, true);
	plan_add(p, PRE, "model.decoder.embed_positions.weight", m->max_positions + m->pos_offset,
	         h, false);
	if (e != h) {
		plan_add(p, PRE, "model.decoder.project_out.weight", e, h, false)->layer = -2;
		plan_add(p, PRE, "model.decoder.project_in.weight", h, e, false);
	}
	if (m->final_norm) {
		plan_add(p, PRE, "model.decoder.final_layer_norm.weight", h, 0, false)->layer = -2;
		plan_add(p, PRE, "model.decoder.final_layer_norm.bias", h, 0, false)->layer = -2;
	}
	plan_linear(p, "self_attn.k_proj", kv, h, m->qkv_bias, true);
	plan_linear(p, "self_attn.v_proj", kv, h, m->qkv_bias, true);
	plan_linear(p, "self_attn.q_proj", q, h, m->qkv_bias, true);
	plan_linear(p, "self_attn.out_proj", h, q, m->out_bias, false);
	plan_norm(p, LAYER, "self_attn_layer_norm", h, true);
	plan_linear(p, "fc1", f, h, m->mlp_bias, true);
	plan_linear(p, "fc2", h, f, m->mlp_bias, false);
	plan_norm(p, LAYER, "final_layer_norm", h, true);
	if (!m->tied_embeddings)
		plan_add(p, POST, "lm_head.weight", m->vocab, e, true);
}

static void plan_build(const struct llmio_model *m, struct plan *p)
{
	memset(p, 0, sizeof(*p));
	p->experts = 1;
	if (m->arch == LLMIO_ARCH_GPT2)
		plan_gpt2(m, p);
	else if (m->arch == LLMIO_ARCH_OPT)
		plan_opt(m, p);
	else
		plan_llama(m, p);
}

static uint64_t tmpl_numel(const struct tmpl *t)
{
	return t->ndims == 2 ? t->shape[0] * t->shape[1] : t->shape[0];
}

/* Tensors in one block. */
static uint64_t plan_per_layer(const struct plan *p)
{
	return p->nlayer + (p->experts - 1) * p->expert_n;
}

/*
 * Sum of f over every tensor, each template weighted by how many tensors it stands for:
 * `experts` of each expert template per block (all of them, or only the active ones).
 */
static uint64_t plan_sum(const struct llmio_model *m, const struct plan *p, uint64_t experts,
                         uint64_t (*f)(const struct tmpl *t, void *arg), void *arg)
{
	uint64_t sum = 0;

	for (uint32_t i = 0; i < p->npre; i++)
		sum += f(&p->pre[i], arg);
	for (uint32_t i = 0; i < p->npost; i++)
		sum += f(&p->post[i], arg);
	for (uint32_t i = 0; i < p->nlayer; i++)
		sum += (uint64_t)m->layers * (p->layer[i].expert ? experts : 1) *
		       f(&p->layer[i], arg);
	return sum;
}

static uint64_t numel_of(const struct tmpl *t, void *arg)
{
	(void)arg;
	return tmpl_numel(t);
}

static uint64_t bytes_of(const struct tmpl *t, void *arg)
{
	return llmio_dtype_bytes(*(const enum llmio_dtype *)arg, tmpl_numel(t));
}

uint64_t llmio_model_params_total(const struct llmio_model *m)
{
	struct plan p;

	plan_build(m, &p);
	return plan_sum(m, &p, p.experts, numel_of, NULL);
}

uint64_t llmio_model_params_active(const struct llmio_model *m)
{
	struct plan p;

	plan_build(m, &p);
	return plan_sum(m, &p, m->experts ? m->experts_active : 1, numel_of, NULL);
}

uint64_t llmio_model_weight_bytes(const struct llmio_model *m, enum llmio_dtype dt)
{
	struct plan p;

	plan_build(m, &p);
	return plan_sum(m, &p, p.experts, bytes_of, &dt);
}

size_t llmio_model_tensor_count(const struct llmio_model *m)
{
	struct plan p;

	plan_build(m, &p);
	return p.npre + p.npost + (size_t)m->layers * plan_per_layer(&p);
}

static void tensor_fill(const struct tmpl *t, const char *name, int32_t layer, int32_t expert,
                        struct llmio_tensor *out)
{
	snprintf(out->name, sizeof(out->name), "%s", name);
	out->ndims = t->ndims;
	out->shape[0] = t->shape[0];
	out->shape[1] = t->ndims == 2 ? t->shape[1] : 0;
	out->numel = tmpl_numel(t);
	out->layer = layer;
	out->expert = expert;
	out->tp_split = t->tp_split;
}

static int plan_tensor(const struct llmio_model *m, const struct plan *p, size_t i,
                       struct llmio_tensor *out)
{
	uint64_t per = plan_per_layer(p), j, group = (uint64_t)p->expert_n;
	const struct tmpl *t;
	char prefix[40], name[LLMIO_TENSOR_NAME_MAX];
	uint32_t layer;
	int32_t expert = -1;

	if (i < p->npre) {
		t = &p->pre[i];
		tensor_fill(t, t->suffix, t->layer, -1, out);
		return 0;
	}
	i -= p->npre;
	if (i >= (uint64_t)m->layers * per) {
		i -= (uint64_t)m->layers * per;
		if (i >= p->npost)
			return -ENOENT;
		t = &p->post[i];
		tensor_fill(t, t->suffix, t->layer, -1, out);
		return 0;
	}
	layer = (uint32_t)(i / per);
	j = i % per;
	if (group && j >= p->expert_first && j < p->expert_first + p->experts * group) {
		expert = (int32_t)((j - p->expert_first) / group);
		t = &p->layer[p->expert_first + (j - p->expert_first) % group];
	} else {
		t = &p->layer[j < p->expert_first || !group ? j : j - (p->experts - 1) * group];
	}
	snprintf(prefix, sizeof(prefix), p->prefix, layer);
	if (expert >= 0) {
		char ex[40];

		snprintf(ex, sizeof(ex), p->expert_fmt, (unsigned)expert);
		snprintf(name, sizeof(name), "%s%s%s", prefix, ex, t->suffix);
	} else {
		snprintf(name, sizeof(name), "%s%s", prefix, t->suffix);
	}
	tensor_fill(t, name, (int32_t)layer, expert, out);
	return 0;
}

int llmio_model_tensor(const struct llmio_model *m, size_t i, struct llmio_tensor *out)
{
	struct plan p;

	plan_build(m, &p);
	return plan_tensor(m, &p, i, out);
}

/* ---- safetensors shard layout ---- */

struct strbuf {
	char *s;
	size_t len, cap;
};

static int sb_printf(struct strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int sb_printf(struct strbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0)
			return -EINVAL;
		if (b->s && b->len + (size_t)n < b->cap) {
			b->len += (size_t)n;
			return 0;
		}
		size_t cap = b->cap ? b->cap * 2 : 4096;
		while (cap <= b->len + (size_t)n)
			cap *= 2;
		char *s = realloc(b->s, cap);
		if (!s)
			return -ENOMEM;
		b->s = s;
		b->cap = cap;
	}
}

struct named {
	struct llmio_tensor t;
	uint32_t index;
};

static int cmp_named(const void *a, const void *b)
{
	return strcmp(((const struct named *)a)->t.name, ((const struct named *)b)->t.name);
}

/* Write one shard's header; entries[] of the shard are in file order already. */
static int shard_header(struct llmio_shard_layout *l, struct llmio_shard *sh,
                        const struct named *nt)
{
	struct strbuf b = {0};
	enum llmio_dtype dt = l->dtype;
	int ret;

	ret = sb_printf(&b, "{\"__metadata__\":{\"format\":\"pt\"}");
	for (size_t k = 0; !ret && k < sh->count; k++) {
		const struct llmio_shard_entry *e = &l->entries[sh->first + k];
		const struct llmio_tensor *t = &nt[k].t;

		if (dt == LLMIO_DTYPE_INT4) /* packed bytes, one dimension */
			ret = sb_printf(&b, ",\"%s\":{\"dtype\":\"U8\",\"shape\":[%llu]", t->name,
			                (unsigned long long)e->bytes);
		else if (t->ndims == 2)
			ret = sb_printf(&b, ",\"%s\":{\"dtype\":\"%s\",\"shape\":[%llu,%llu]",
			                t->name, dtypes[dt].st, (unsigned long long)t->shape[0],
			                (unsigned long long)t->shape[1]);
		else
			ret = sb_printf(&b, ",\"%s\":{\"dtype\":\"%s\",\"shape\":[%llu]", t->name,
			                dtypes[dt].st, (unsigned long long)t->shape[0]);
		if (!ret)
			ret = sb_printf(&b, ",\"data_offsets\":[%llu,%llu]}",
			                (unsigned long long)e->data_offset,
			                (unsigned long long)(e->data_offset + e->bytes));
	}
	if (!ret)
		ret = sb_printf(&b, "}");
	while (!ret && b.len % 8)
		ret = sb_printf(&b, " ");
	if (ret) {
		free(b.s);
		return ret;
	}
	sh->header = b.s;
	sh->header_len = b.len;
	return 0;
}

/* The open shard [from, to) becomes the next shard, if it holds anything. */
static void close_shard(size_t *shard_of, size_t from, size_t to, size_t *nshards)
{
	bool any = false;

	for (size_t i = from; i < to; i++) {
		if (shard_of[i] == SIZE_MAX) {
			shard_of[i] = *nshards;
			any = true;
		}
	}
	if (any)
		(*nshards)++;
}

void llmio_shard_layout_destroy(struct llmio_shard_layout *l)
{
	if (!l)
		return;
	for (size_t i = 0; l->shards && i < l->nshards; i++)
		free(l->shards[i].header);
	free(l->shards);
	free(l->entries);
	free(l);
}

int llmio_model_shard_layout(const struct llmio_model *m, enum llmio_dtype dt,
                             uint64_t max_shard_bytes, struct llmio_shard_layout **out)
{
	struct llmio_shard_layout *l;
	struct named *nt = NULL, *sorted = NULL;
	size_t *shard_of = NULL;
	struct plan p;
	size_t n, s, k, pending;
	uint64_t cur;
	int ret = -ENOMEM;

	*out = NULL;
	if ((unsigned)dt >= LLMIO_DTYPE_COUNT)
		return -EINVAL;
	if (!max_shard_bytes)
		max_shard_bytes = LLMIO_HF_MAX_SHARD_BYTES;
	plan_build(m, &p);
	n = p.npre + p.npost + (size_t)m->layers * plan_per_layer(&p);
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->dtype = dt;
	l->max_shard_bytes = max_shard_bytes;
	l->nentries = n;
	nt = calloc(n, sizeof(*nt));
	l->entries = calloc(n, sizeof(*l->entries));
	l->shards = calloc(n ? n : 1, sizeof(*l->shards)); /* at most one shard per tensor */
	if (!nt || !l->entries || !l->shards)
		goto fail;

	/*
	 * Shard assignment in state_dict order, exactly as huggingface_hub does it: a tensor
	 * over the limit becomes a shard at once while the open shard stays open, so it can
	 * precede the shard of the tensors before it.
	 */
	shard_of = malloc(n * sizeof(*shard_of));
	if (!shard_of)
		goto fail;
	cur = 0;
	pending = 0; /* tensors [pending, i) not over the limit wait in the open shard */
	for (size_t i = 0; i < n; i++) {
		uint64_t bytes;

		plan_tensor(m, &p, i, &nt[i].t);
		nt[i].index = (uint32_t)i;
		bytes = llmio_dtype_bytes(dt, nt[i].t.numel);
		shard_of[i] = SIZE_MAX;
		if (bytes > max_shard_bytes) {
			shard_of[i] = l->nshards++;
			continue;
		}
		if (cur && cur + bytes > max_shard_bytes) {
			close_shard(shard_of, pending, i, &l->nshards);
			pending = i;
			cur = 0;
		}
		cur += bytes;
	}
	close_shard(shard_of, pending, n, &l->nshards);

	/* group the tensors shard by shard (stable: state_dict order inside a shard) */
	sorted = malloc(n * sizeof(*sorted));
	if (!sorted)
		goto fail;
	k = 0;
	for (s = 0; s < l->nshards; s++) {
		l->shards[s].first = k;
		for (size_t i = 0; i < n; i++)
			if (shard_of[i] == s)
				sorted[k++] = nt[i];
		l->shards[s].count = k - l->shards[s].first;
	}
	free(nt);
	nt = sorted;
	sorted = NULL;

	/* within a file: sorted by name (one dtype), data back to back, then the header */
	for (s = 0; s < l->nshards; s++) {
		struct llmio_shard *sh = &l->shards[s];
		uint64_t off = 0;

		qsort(nt + sh->first, sh->count, sizeof(*nt), cmp_named);
		for (k = 0; k < sh->count; k++) {
			struct llmio_shard_entry *e = &l->entries[sh->first + k];

			e->tensor = nt[sh->first + k].index;
			e->bytes = llmio_dtype_bytes(dt, nt[sh->first + k].t.numel);
			e->data_offset = off;
			off += e->bytes;
		}
		sh->data_bytes = off;
		ret = shard_header(l, sh, nt + sh->first);
		if (ret)
			goto fail;
		for (k = 0; k < sh->count; k++)
			l->entries[sh->first + k].file_offset =
			        8 + sh->header_len + l->entries[sh->first + k].data_offset;
		sh->file_bytes = 8 + sh->header_len + sh->data_bytes;
		l->total_file_bytes += sh->file_bytes;
		if (l->nshards == 1)
			snprintf(sh->filename, sizeof(sh->filename), "model.safetensors");
		else
			snprintf(sh->filename, sizeof(sh->filename),
			         "model-%05zu-of-%05zu.safetensors", s + 1, l->nshards);
	}
	free(shard_of);
	free(nt);
	*out = l;
	return 0;
fail:
	free(sorted);
	free(shard_of);
	free(nt);
	llmio_shard_layout_destroy(l);
	return ret;
}

/* ---- training checkpoints ---- */

void llmio_ckpt_opts_init(struct llmio_ckpt_opts *o, const struct llmio_model *m)
{
	memset(o, 0, sizeof(*o));
	o->opts_size = sizeof(*o);
	o->weight_dtype = m ? m->dtype : LLMIO_DTYPE_BF16;
	o->master_bytes = o->weight_dtype == LLMIO_DTYPE_FP32 ? 0 : 4;
	o->optim_bytes = 8;
	o->grad_bytes = 0;
	o->tp = o->pp = o->dp = 1;
	o->zero_stage = 0;
}

static uint64_t state_per_param(const struct llmio_ckpt_opts *o)
{
	return (uint64_t)o->master_bytes + o->optim_bytes + o->grad_bytes;
}

uint64_t llmio_model_checkpoint_bytes(const struct llmio_model *m, const struct llmio_ckpt_opts *o)
{
	return llmio_model_weight_bytes(m, o->weight_dtype) +
	       llmio_model_params_total(m) * state_per_param(o);
}

/* Part i of n things split into `parts` near-equal parts. */
static uint64_t split(uint64_t n, uint64_t parts, uint64_t i)
{
	return n / parts + (i < n % parts);
}

struct slice {
	uint64_t tp, tp_rank;
	uint64_t params;
	uint64_t bytes;
	enum llmio_dtype dt;
};

static void slice_add(struct slice *s, const struct tmpl *t, uint64_t count)
{
	uint64_t n = tmpl_numel(t);

	if (t->tp_split)
		n = split(n, s->tp, s->tp_rank);
	s->params += count * n;
	s->bytes += count * llmio_dtype_bytes(s->dt, n);
}

static void slice_add_list(struct slice *s, const struct tmpl *list, uint32_t n, int32_t where)
{
	for (uint32_t i = 0; i < n; i++)
		if (list[i].layer == where)
			slice_add(s, &list[i], 1);
}

int llmio_model_rank_bytes(const struct llmio_model *m, const struct llmio_ckpt_opts *o,
                           uint32_t rank, struct llmio_rank_bytes *out)
{
	struct slice s = {0};
	struct plan p;
	uint64_t world, nl, opt_params;
	uint32_t tp_r, dp_r, pp_r;

	if (!o->tp || !o->pp || !o->dp || o->zero_stage > 3 ||
	    (unsigned)o->weight_dtype >= LLMIO_DTYPE_COUNT)
		return -EINVAL;
	world = (uint64_t)o->tp * o->pp * o->dp;
	if (rank >= world)
		return -EINVAL;
	tp_r = rank % o->tp;
	dp_r = (rank / o->tp) % o->dp;
	pp_r = (uint32_t)(rank / ((uint64_t)o->tp * o->dp));

	plan_build(m, &p);
	s.tp = o->tp;
	s.tp_rank = tp_r;
	s.dt = o->weight_dtype;
	/* nl blocks live on this pipeline stage */
	nl = split(m->layers, o->pp, pp_r);
	for (uint32_t i = 0; i < p.nlayer; i++)
		slice_add(&s, &p.layer[i], nl * (p.layer[i].expert ? p.experts : 1));
	if (pp_r == 0) {
		slice_add_list(&s, p.pre, p.npre, -1);
		slice_add_list(&s, p.post, p.npost, -1);
	}
	if (pp_r == o->pp - 1) {
		slice_add_list(&s, p.pre, p.npre, -2);
		slice_add_list(&s, p.post, p.npost, -2);
		if (m->tied_embeddings && o->pp > 1)
			slice_add(&s, &p.pre[0], 1); /* the output layer's copy */
	}

	memset(out, 0, sizeof(*out));
	out->tp_rank = tp_r;
	out->dp_rank = dp_r;
	out->pp_rank = pp_r;
	out->params = s.params;
	if (o->zero_stage == 0) {
		out->weight_bytes = dp_r == 0 ? s.bytes : 0;
		opt_params = dp_r == 0 ? s.params : 0;
	} else {
		opt_params = split(s.params, o->dp, dp_r);
		if (o->zero_stage == 3)
			out->weight_bytes =
			        llmio_dtype_bytes(o->weight_dtype, split(s.params, o->dp, dp_r));
		else
			out->weight_bytes = dp_r == 0 ? s.bytes : 0;
	}
	out->optim_bytes = opt_params * state_per_param(o);
	out->total_bytes = out->weight_bytes + out->optim_bytes;
	return 0;
}

static int cmp_size_desc(const void *a, const void *b)
{
	uint64_t x = ((const struct llmio_rank_size *)a)->bytes;
	uint64_t y = ((const struct llmio_rank_size *)b)->bytes;

	return x < y ? 1 : x > y ? -1 : 0;
}

/* Count `ranks` more ranks of size bytes in out[0 .. *found). */
static void size_add(struct llmio_rank_size *out, size_t cap, size_t *found, bool *overflow,
                     uint64_t bytes, uint64_t ranks)
{
	size_t k;

	if (!ranks)
		return;
	for (k = 0; k < *found && k < cap; k++) {
		if (out[k].bytes == bytes) {
			out[k].ranks += (uint32_t)ranks;
			return;
		}
	}
	if (*found < cap) {
		out[*found].bytes = bytes;
		out[*found].ranks = (uint32_t)ranks;
	} else {
		*overflow = true;
	}
	(*found)++;
}

int llmio_model_rank_sizes(const struct llmio_model *m, const struct llmio_ckpt_opts *o,
                           struct llmio_rank_size *out, size_t cap, size_t *n)
{
	struct llmio_rank_bytes rb;
	uint64_t world, rem, lo;
	size_t found = 0;
	bool overflow = false;
	int ret;

	*n = 0;
	if (!o->tp || !o->pp || !o->dp)
		return -EINVAL;
	world = (uint64_t)o->tp * o->pp * o->dp;
	if (world > UINT32_MAX)
		return -EINVAL;
	/*
	 * Within one model-parallel slice (a TP rank of a PP stage) the DP ranks fall into three
	 * classes: DP rank 0, the ranks that get one element more of a partition (1 .. rem-1),
	 * and the rest; one rank of each class stands for all of it.
	 */
	for (uint32_t pp_r = 0; pp_r < o->pp; pp_r++) {
		for (uint32_t tp_r = 0; tp_r < o->tp; tp_r++) {
			uint64_t base = tp_r + (uint64_t)o->tp * o->dp * pp_r;

			ret = llmio_model_rank_bytes(m, o, (uint32_t)base, &rb);
			if (ret)
				return ret;
			size_add(out, cap, &found, &overflow, rb.total_bytes, 1);
			if (o->dp == 1)
				continue;
			rem = rb.params % o->dp;
			lo = rem > 1 ? rem : 1;
			if (rem > 1) {
				ret = llmio_model_rank_bytes(m, o, (uint32_t)(base + o->tp), &rb);
				if (ret)
					return ret;
				size_add(out, cap, &found, &overflow, rb.total_bytes, rem - 1);
			}
			if (lo < o->dp) {
				ret = llmio_model_rank_bytes(m, o, (uint32_t)(base + lo * o->tp),
				                             &rb);
				if (ret)
					return ret;
				size_add(out, cap, &found, &overflow, rb.total_bytes, o->dp - lo);
			}
		}
	}
	*n = found;
	qsort(out, found < cap ? found : cap, sizeof(*out), cmp_size_desc);
	return overflow ? -ENOSPC : 0;
}

/* ---- inference and training sizes ---- */

uint64_t llmio_model_kv_bytes_per_token(const struct llmio_model *m, enum llmio_dtype dt)
{
	return llmio_dtype_bytes(dt, 2ull * m->layers * m->kv_heads * m->head_dim);
}

uint64_t llmio_model_kv_block_bytes(const struct llmio_model *m, enum llmio_dtype dt,
                                    uint32_t tokens, bool per_layer, uint32_t tp)
{
	uint64_t heads = m->kv_heads;

	if (tp > 1)
		heads = heads / tp ? heads / tp : 1;
	return llmio_dtype_bytes(dt,
	                         2ull * (per_layer ? 1 : m->layers) * heads * m->head_dim * tokens);
}

uint64_t llmio_model_activation_bytes(const struct llmio_model *m, uint32_t b, uint32_t s,
                                      uint32_t tp, bool seq_parallel)
{
	uint64_t h = m->hidden, a = m->heads, t = tp ? tp : 1, sb = (uint64_t)s * b;

	/* the bracketed terms multiplied by h*t so that everything stays an integer */
	if (t == 1)
		return sb * (34 * h + 5 * a * s);
	if (seq_parallel)
		return sb * (34 * h + 5 * a * s) / t;
	return sb * (10 * h * t + 24 * h + 5 * a * s) / t;
}

uint64_t llmio_model_activation_bytes_per_token(const struct llmio_model *m, uint32_t b, uint32_t s)
{
	if (!b || !s)
		return 0;
	return llmio_model_activation_bytes(m, b, s, 1, false) / ((uint64_t)b * s);
}

int llmio_lora_targets_parse(const char *text, uint32_t *mask)
{
	static const struct {
		const char *name;
		uint32_t bit;
	} names[] = {
	        {"q", LLMIO_LORA_Q},       {"k", LLMIO_LORA_K},       {"v", LLMIO_LORA_V},
	        {"o", LLMIO_LORA_O},       {"gate", LLMIO_LORA_GATE}, {"up", LLMIO_LORA_UP},
	        {"down", LLMIO_LORA_DOWN}, {"all", LLMIO_LORA_ALL},
	};
	uint32_t out = 0;
	const char *p = text;

	if (!text || !*text)
		return -EINVAL;
	while (*p) {
		size_t len = strcspn(p, ",");
		size_t base = len;
		size_t i;

		/* HF module names: q_proj, gate_proj, ... */
		if (len > 5 && !strncasecmp(p + len - 5, "_proj", 5))
			base = len - 5;
		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (strlen(names[i].name) == base && !strncasecmp(p, names[i].name, base))
				break;
		if (i == sizeof(names) / sizeof(names[0]))
			return -EINVAL;
		out |= names[i].bit;
		p += len;
		if (*p == ',' && !*++p)
			return -EINVAL; /* trailing comma */
	}
	*mask = out;
	return 0;
}

uint64_t llmio_model_lora_params(const struct llmio_model *m, uint32_t rank, uint32_t targets)
{
	uint64_t h = m->hidden, q = (uint64_t)m->heads * m->head_dim;
	uint64_t kv = (uint64_t)m->kv_heads * m->head_dim, f = m->ffn;
	uint64_t e = m->experts ? m->experts : 1, per = 0;

	if (m->arch == LLMIO_ARCH_GPT2) {
		if (targets & (LLMIO_LORA_Q | LLMIO_LORA_K | LLMIO_LORA_V))
			per += h + q + 2 * kv; /* fused c_attn */
	} else {
		if (targets & LLMIO_LORA_Q)
			per += h + q;
		if (targets & LLMIO_LORA_K)
			per += h + kv;
		if (targets & LLMIO_LORA_V)
			per += h + kv;
	}
	if (targets & LLMIO_LORA_O)
		per += q + h;
	if ((targets & LLMIO_LORA_GATE) && m->gated_mlp)
		per += e * (h + f);
	if (targets & LLMIO_LORA_UP)
		per += e * (h + f);
	if (targets & LLMIO_LORA_DOWN)
		per += e * (f + h);
	return per * rank * m->layers;
}

uint64_t llmio_model_lora_bytes(const struct llmio_model *m, uint32_t rank, uint32_t targets,
                                enum llmio_dtype dt)
{
	return llmio_dtype_bytes(dt, llmio_model_lora_params(m, rank, targets));
}

uint64_t llmio_tokens_per_step(uint64_t global_batch, uint64_t seq_len)
{
	return global_batch * seq_len;
}
