/* SPDX-License-Identifier: MIT */
/*
 * Models: LLM architectures from the built-in catalog or a Hugging Face config.json, and the
 * sizes that the workload recipes derive from them: parameter counts, the checkpoint's tensor
 * list and its safetensors shard layout, weight / training-checkpoint / per-rank shard bytes,
 * KV-cache bytes, activation bytes, LoRA adapter bytes.
 *
 * A struct llmio_model is plain data (no handles, nothing to free): fill it with
 * llmio_model_find(), llmio_model_catalog(), llmio_model_load_config() or llmio_model_resolve()
 * and pass it by pointer to the arithmetic.  Every function here is pure (no global state,
 * nothing printed) and thread-safe.  Functions that return int return 0 or a negative errno;
 * functions that return a size return it directly (they cannot fail for a model that one of
 * the fill functions accepted).  The formulas and their sources are in docs/models.md and in
 * the comment block at the top of src/workload/model.c.
 *
 * Fields are only ever added at the end of the structs.
 */
#ifndef LLMIO_MODEL_H
#define LLMIO_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "llmio/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Element types of weights, KV cache and adapters. */
enum llmio_dtype {
	LLMIO_DTYPE_FP32,
	LLMIO_DTYPE_BF16,
	LLMIO_DTYPE_FP16,
	LLMIO_DTYPE_FP8, /* e4m3 */
	LLMIO_DTYPE_INT8,
	LLMIO_DTYPE_INT4, /* two per byte; a tensor's bytes round up */
	LLMIO_DTYPE_COUNT
};

/*
 * Tensor naming and layer structure.  The Llama family (Llama, Mistral, Qwen2, Qwen3, Gemma2)
 * share HF's "model.layers.N.self_attn.q_proj" names; the others have their own.
 */
enum llmio_arch {
	LLMIO_ARCH_LLAMA,   /* LlamaForCausalLM */
	LLMIO_ARCH_MISTRAL, /* MistralForCausalLM */
	LLMIO_ARCH_MIXTRAL, /* MixtralForCausalLM: sparse MoE MLP */
	LLMIO_ARCH_QWEN2,   /* Qwen2ForCausalLM: q/k/v biases */
	LLMIO_ARCH_QWEN3,   /* Qwen3ForCausalLM: per-head q/k RMSNorm */
	LLMIO_ARCH_GEMMA2,  /* Gemma2ForCausalLM: four norms per layer */
	LLMIO_ARCH_GPT2,    /* GPT2LMHeadModel: fused qkv Conv1D, learned positions */
	LLMIO_ARCH_OPT,     /* OPTForCausalLM: learned positions with a 2-row offset */
	LLMIO_ARCH_COUNT
};

enum llmio_norm {
	LLMIO_NORM_RMS,   /* RMSNorm: weight only */
	LLMIO_NORM_LAYER, /* LayerNorm: weight and bias */
};

enum llmio_pos {
	LLMIO_POS_ROPE,    /* rotary: no position parameters */
	LLMIO_POS_LEARNED, /* a learned table of (max_positions + pos_offset) x hidden */
};

struct llmio_model {
	char name[64];    /* catalog name ("Llama-3.1-8B") or the config's name */
	char hf_id[96];   /* Hugging Face repository ("meta-llama/Llama-3.1-8B"), or "" */
	char source[192]; /* where the numbers come from (config.json of the official repo) */
	enum llmio_arch arch;
	uint32_t layers;         /* transformer blocks */
	uint32_t hidden;         /* model width */
	uint32_t ffn;            /* MLP intermediate size (per expert for MoE) */
	uint32_t heads;          /* attention (query) heads */
	uint32_t kv_heads;       /* key/value heads (GQA); = heads for MHA */
	uint32_t head_dim;       /* may differ from hidden / heads (Gemma-2: 256 vs 224) */
	uint32_t vocab;          /* embedding rows */
	uint32_t max_positions;  /* context length; rows of a learned position table */
	uint32_t pos_offset;     /* extra position rows (OPT: 2) */
	uint32_t embed_dim;      /* projected embedding width (OPT); 0 = hidden */
	uint32_t experts;        /* MoE experts per layer; 0 = dense */
	uint32_t experts_active; /* experts per token; 0 = dense */
	bool tied_embeddings;    /* the output head shares the input embedding (not stored twice) */
	bool qkv_bias;           /* biases on q, k, v projections */
	bool out_bias;           /* bias on the attention output projection */
	bool mlp_bias;           /* biases on the MLP linears */
	bool gated_mlp;          /* gate + up + down (SwiGLU/GeGLU); false: up + down (fc1, fc2) */
	bool qk_norm;            /* per-head RMSNorm on q and k (Qwen3) */
	bool sandwich_norm;      /* norms after attention and MLP as well (Gemma-2: 4 per layer) */
	bool final_norm;         /* a final norm after the last block (OPT-350m has none) */
	enum llmio_norm norm;
	enum llmio_pos pos;
	enum llmio_dtype dtype; /* the checkpoint's dtype (config.json torch_dtype) */
};

/* ---- dtypes ---- */

/* "fp32", "bf16", "fp16", "fp8", "int8", "int4". */
LLMIO_API const char *llmio_dtype_name(enum llmio_dtype dt);
/*
 * Parse a dtype name: the names above and HF's torch_dtype spellings ("float32", "bfloat16",
 * "float16", "float8_e4m3fn", "int8"), case-insensitively.
 * \return 0, -EINVAL for anything else.
 */
LLMIO_API int llmio_dtype_parse(const char *text, enum llmio_dtype *out);
/* Bits per element: 32, 16, 16, 8, 8, 4. */
LLMIO_API uint32_t llmio_dtype_bits(enum llmio_dtype dt);
/* Bytes that n elements take: n * bits / 8, rounded up. */
LLMIO_API uint64_t llmio_dtype_bytes(enum llmio_dtype dt, uint64_t n);
/* The HF architectures[] string ("LlamaForCausalLM") of an arch. */
LLMIO_API const char *llmio_arch_name(enum llmio_arch arch);

/* ---- finding a model ---- */

/* Number of built-in models. */
LLMIO_API size_t llmio_model_catalog_count(void);
/* The i-th built-in model.  \return 0, -ENOENT when i >= count. */
LLMIO_API int llmio_model_catalog(size_t i, struct llmio_model *out);
/*
 * A built-in model by name, case-insensitively: the catalog name ("llama-3.1-8b"), its HF id
 * ("meta-llama/Llama-3.1-8B") or an alias ("gpt2", "mistral-7b-v0.3").
 * \return 0, -ENOENT when no model has that name.
 */
LLMIO_API int llmio_model_find(const char *name, struct llmio_model *out);
/*
 * Load a Hugging Face config.json (a file, or a directory holding config.json).  On error e
 * holds one line naming the file and the key (and the value) at fault.
 * \return 0; -ENOENT / -EACCES / -EISDIR ... when the file cannot be read; -EINVAL when it is
 *         not JSON, the architecture is not supported, or a key is missing or has a wrong
 *         type or value.
 */
LLMIO_API int llmio_model_load_config(const char *path, struct llmio_model *out,
                                      struct llmio_error *e);
/*
 * A catalog name or HF id, or else a path to a config.json (or its directory): what the CLI's
 * MODEL arguments accept.  \return as llmio_model_find() / llmio_model_load_config(); e
 * says what was tried.
 */
LLMIO_API int llmio_model_resolve(const char *name_or_path, struct llmio_model *out,
                                  struct llmio_error *e);
/*
 * Check that a model's fields are consistent (non-zero sizes, kv_heads divides heads,
 * experts_active <= experts, ...).  The fill functions call it; call it after editing a model.
 * \return 0, or -EINVAL with e naming the field.
 */
LLMIO_API int llmio_model_validate(const struct llmio_model *m, struct llmio_error *e);

/* ---- parameters and tensors ---- */

/* Every parameter stored in the checkpoint (a tied head counted once). */
LLMIO_API uint64_t llmio_model_params_total(const struct llmio_model *m);
/* Parameters used per token: all but the experts that are not routed to (dense: = total). */
LLMIO_API uint64_t llmio_model_params_active(const struct llmio_model *m);
/* Bytes of all weights at dtype dt (per tensor, so int4 rounds up per tensor). */
LLMIO_API uint64_t llmio_model_weight_bytes(const struct llmio_model *m, enum llmio_dtype dt);

#define LLMIO_TENSOR_NAME_MAX 128
#define LLMIO_TENSOR_DIMS_MAX 2

struct llmio_tensor {
	char name[LLMIO_TENSOR_NAME_MAX]; /* HF state_dict name */
	uint32_t ndims;                   /* 1 or 2 */
	uint64_t shape[LLMIO_TENSOR_DIMS_MAX];
	uint64_t numel;
	int32_t layer;  /* block index, or -1 before the blocks, -2 after them */
	int32_t expert; /* expert index for MoE expert weights, else -1 */
	bool tp_split;  /* split across tensor-parallel ranks (linears, embeddings); false =
	                   replicated (norms, row-parallel biases, router, position table) */
};

/*
 * The tensors of the checkpoint in the order the model's state_dict (and so save_pretrained's
 * shard assignment) has them: embeddings, then block by block, then final norm and head.  A
 * tied head is not listed; non-persistent buffers (GPT-2's causal masks) are not listed.
 */
LLMIO_API size_t llmio_model_tensor_count(const struct llmio_model *m);
/* The i-th tensor.  \return 0, -ENOENT when i >= count.  O(1). */
LLMIO_API int llmio_model_tensor(const struct llmio_model *m, size_t i, struct llmio_tensor *out);

/*
 * safetensors shard layout, as save_pretrained(max_shard_size=N) writes it:
 *   - shard assignment (huggingface_hub split_torch_state_dict_into_shards): tensors in
 *     state_dict order; a tensor that would push the current shard over N starts a new shard;
 *     a tensor larger than N gets a shard of its own;
 *   - each file is: 8-byte little-endian header length, the JSON header (padded with spaces
 *     to a multiple of 8), then the tensors' data back to back in the header's order, which is
 *     the safetensors library's (by dtype, then by name, so "layers.10" before "layers.2");
 *   - files are "model.safetensors" when there is one shard, else
 *     "model-00001-of-0000K.safetensors".
 */
struct llmio_shard_entry {
	uint32_t tensor;      /* index for llmio_model_tensor() */
	uint64_t data_offset; /* from the start of the data section (as in the header) */
	uint64_t file_offset; /* from the start of the file = 8 + header_len + data_offset */
	uint64_t bytes;
};

struct llmio_shard {
	char filename[64];
	uint64_t header_len; /* JSON header bytes including padding (the u64 at offset 0) */
	uint64_t data_bytes; /* sum of the tensors' bytes */
	uint64_t file_bytes; /* 8 + header_len + data_bytes */
	size_t first, count; /* its entries: layout->entries[first .. first + count) */
	char *header;        /* the JSON header text, header_len bytes, NUL-terminated */
};

struct llmio_shard_layout {
	enum llmio_dtype dtype;
	uint64_t max_shard_bytes;
	size_t nshards;
	struct llmio_shard *shards;
	size_t nentries;                   /* = tensor count */
	struct llmio_shard_entry *entries; /* shard by shard, in file order */
	uint64_t total_file_bytes;
};

/* HF's default max_shard_size, "5GB" = 5 * 10^9 bytes. */
#define LLMIO_HF_MAX_SHARD_BYTES 5000000000ull

/*
 * Lay out the model's checkpoint at dtype dt in shards of at most max_shard_bytes of tensor
 * data (0 = LLMIO_HF_MAX_SHARD_BYTES).  *out is allocated; free it with
 * llmio_shard_layout_destroy().  \return 0, -ENOMEM.
 */
LLMIO_API int llmio_model_shard_layout(const struct llmio_model *m, enum llmio_dtype dt,
                                       uint64_t max_shard_bytes, struct llmio_shard_layout **out);
LLMIO_API void llmio_shard_layout_destroy(struct llmio_shard_layout *l);

/* ---- training checkpoints and their per-rank shards ---- */

/*
 * What a training checkpoint holds per parameter and how the job is parallelised.  Defaults
 * (llmio_ckpt_opts_init): weights at the model's dtype, fp32 master weights (4 bytes; 0 when
 * the weights are fp32 themselves), Adam m and v in fp32 (8 bytes), no gradients (0; some
 * count 4 bytes of fp32 gradients too), TP = PP = DP = 1, ZeRO stage 0.  For bf16 that is
 * 2 + 4 + 8 = 14 bytes per parameter, the Megatron / DeepSpeed mixed-precision convention.
 */
struct llmio_ckpt_opts {
	size_t opts_size; /* sizeof(struct llmio_ckpt_opts) as the caller knows it */
	enum llmio_dtype weight_dtype;
	uint32_t master_bytes; /* per parameter */
	uint32_t optim_bytes;  /* per parameter (Adam: m + v) */
	uint32_t grad_bytes;   /* per parameter */
	uint32_t tp, pp, dp;   /* tensor, pipeline, data parallel degrees */
	uint32_t zero_stage;   /* 0..3 */
};

LLMIO_API void llmio_ckpt_opts_init(struct llmio_ckpt_opts *o, const struct llmio_model *m);
/* Whole checkpoint, one copy, unsharded: weights + params_total * (master + optim + grad). */
LLMIO_API uint64_t llmio_model_checkpoint_bytes(const struct llmio_model *m,
                                                const struct llmio_ckpt_opts *o);

/*
 * What one rank writes.  Ranks are numbered tp fastest, then dp, then pp (Megatron's
 * order): rank = tp_rank + tp * (dp_rank + dp * pp_rank).
 */
struct llmio_rank_bytes {
	uint32_t tp_rank, pp_rank, dp_rank;
	uint64_t params;       /* parameters of this rank's model-parallel (TP x PP) slice */
	uint64_t weight_bytes; /* model weights it writes */
	uint64_t optim_bytes;  /* master weights + optimizer (+ gradients) it writes */
	uint64_t total_bytes;
};

/* \return 0; -EINVAL for rank >= tp * pp * dp, a zero degree, zero_stage > 3 or a bad dtype. */
LLMIO_API int llmio_model_rank_bytes(const struct llmio_model *m, const struct llmio_ckpt_opts *o,
                                     uint32_t rank, struct llmio_rank_bytes *out);

struct llmio_rank_size {
	uint64_t bytes; /* total bytes a rank writes */
	uint32_t ranks; /* how many ranks write exactly that */
};

/*
 * The distinct per-rank sizes, largest first, with how many ranks have each (ranks that write
 * nothing appear with bytes 0).  Cost: O(tp * pp), not O(world).  *n is set to the number
 * of distinct sizes found (at least cap + 1 when it returns -ENOSPC; out then holds the
 * first cap sizes found, sorted).  \return 0; -ENOSPC when cap
 * is too small; -EINVAL as llmio_model_rank_bytes().
 */
LLMIO_API int llmio_model_rank_sizes(const struct llmio_model *m, const struct llmio_ckpt_opts *o,
                                     struct llmio_rank_size *out, size_t cap, size_t *n);

/* ---- inference and training sizes ---- */

/* KV cache per token, all layers: 2 (K and V) * layers * kv_heads * head_dim * bytes(dt). */
LLMIO_API uint64_t llmio_model_kv_bytes_per_token(const struct llmio_model *m, enum llmio_dtype dt);
/* vLLM's default tokens per KV block. */
#define LLMIO_KV_BLOCK_TOKENS 16
/*
 * KV cache of one block of `tokens` tokens.  per_layer: one layer's share (K and V together);
 * tp > 1: one tensor-parallel rank's share (kv_heads / tp heads, at least 1: a rank holds a
 * replica of a head when tp > kv_heads).  tp = 0 is taken as 1.
 */
LLMIO_API uint64_t llmio_model_kv_block_bytes(const struct llmio_model *m, enum llmio_dtype dt,
                                              uint32_t tokens, bool per_layer, uint32_t tp);

/*
 * Activation memory of one transformer layer for a micro-batch of b sequences of s tokens
 * with 16-bit activations and no recomputation (Korthikanti et al. 2022, "Reducing Activation
 * Recomputation in Large Transformer Models", eq. 1-4):
 *   tp = 1:                   s*b*h*(34 + 5*a*s/h)
 *   tp = t:                   s*b*h*(10 + 24/t + 5*a*s/(h*t))
 *   tp = t, sequence parallel: s*b*h*(34/t + 5*a*s/(h*t))
 * with h = hidden and a = heads.  tp = 0 is taken as 1.
 */
LLMIO_API uint64_t llmio_model_activation_bytes(const struct llmio_model *m, uint32_t b, uint32_t s,
                                                uint32_t tp, bool seq_parallel);
/* The same per token: the above divided by s * b (rounded down). */
LLMIO_API uint64_t llmio_model_activation_bytes_per_token(const struct llmio_model *m, uint32_t b,
                                                          uint32_t s);

/* LoRA target modules (bit mask); the default is q and v, as PEFT's for Llama. */
enum {
	LLMIO_LORA_Q = 1u << 0,
	LLMIO_LORA_K = 1u << 1,
	LLMIO_LORA_V = 1u << 2,
	LLMIO_LORA_O = 1u << 3,
	LLMIO_LORA_GATE = 1u << 4,
	LLMIO_LORA_UP = 1u << 5,
	LLMIO_LORA_DOWN = 1u << 6,
	LLMIO_LORA_DEFAULT = LLMIO_LORA_Q | LLMIO_LORA_V,
	LLMIO_LORA_ALL = 0x7f,
};
/*
 * Parse "q,v" / "q,k,v,o,gate,up,down" / "all" (also HF's "q_proj", "gate_proj" ...).
 * \return 0, -EINVAL naming nothing: the caller prints the text.
 */
LLMIO_API int llmio_lora_targets_parse(const char *text, uint32_t *mask);
/*
 * LoRA adapter parameters: sum over the targeted linears of every layer of r * (in + out);
 * MoE expert linears count once per expert.  GPT-2's fused c_attn counts once when any of
 * q, k, v is targeted; "gate" is ignored for a non-gated MLP.
 */
LLMIO_API uint64_t llmio_model_lora_params(const struct llmio_model *m, uint32_t rank,
                                           uint32_t targets);
/* Adapter bytes: llmio_model_lora_params() elements at dt. */
LLMIO_API uint64_t llmio_model_lora_bytes(const struct llmio_model *m, uint32_t rank,
                                          uint32_t targets, enum llmio_dtype dt);

/* Tokens per optimizer step in pre-training: global_batch (sequences) * seq_len. */
LLMIO_API uint64_t llmio_tokens_per_step(uint64_t global_batch, uint64_t seq_len);

#ifdef __cplusplus
}
#endif
#endif
