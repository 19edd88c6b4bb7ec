/* SPDX-License-Identifier: MIT */
/*
 * The built-in models, as data.  Every number is the one in the config.json of the official
 * Hugging Face repository named in `hf` (fields: num_hidden_layers, hidden_size,
 * intermediate_size, num_attention_heads, num_key_value_heads, head_dim, vocab_size,
 * max_position_embeddings, tie_word_embeddings, torch_dtype, num_local_experts,
 * num_experts_per_tok; GPT-2: n_layer, n_embd, n_head, n_inner = null -> 4 * n_embd,
 * n_positions; OPT: ffn_dim, word_embed_proj_dim).  What follows from the architecture alone
 * (biases, norms, gated MLP, position embeddings) is set by model_arch_defaults().
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "workload/model_internal.h"

struct entry {
	const char *name;
	const char *hf;
	const char *aliases; /* comma-separated, matched case-insensitively */
	enum llmio_arch arch;
	uint32_t layers, hidden, ffn, heads, kv_heads, head_dim, vocab, max_pos;
	uint32_t experts, active;
	bool tied;
	enum llmio_dtype dtype;
};

/* clang-format off */
static const struct entry catalog[] = {
	/* name             hf id                              aliases */
	{"Llama-3.2-1B", "meta-llama/Llama-3.2-1B", "llama3.2-1b",
	 LLMIO_ARCH_LLAMA, 16, 2048, 8192, 32, 8, 64, 128256, 131072, 0, 0, true, LLMIO_DTYPE_BF16},
	{"Llama-3.2-3B", "meta-llama/Llama-3.2-3B", "llama3.2-3b",
	 LLMIO_ARCH_LLAMA, 28, 3072, 8192, 24, 8, 128, 128256, 131072, 0, 0, true, LLMIO_DTYPE_BF16},
	{"Llama-3.1-8B", "meta-llama/Llama-3.1-8B", "llama3.1-8b,llama3-8b,meta-llama/Meta-Llama-3.1-8B",
	 LLMIO_ARCH_LLAMA, 32, 4096, 14336, 32, 8, 128, 128256, 131072, 0, 0, false, LLMIO_DTYPE_BF16},
	{"Llama-3.1-70B", "meta-llama/Llama-3.1-70B", "llama3.1-70b,llama3-70b,meta-llama/Meta-Llama-3.1-70B",
	 LLMIO_ARCH_LLAMA, 80, 8192, 28672, 64, 8, 128, 128256, 131072, 0, 0, false, LLMIO_DTYPE_BF16},
	{"Llama-3.1-405B", "meta-llama/Llama-3.1-405B", "llama3.1-405b,llama3-405b,meta-llama/Meta-Llama-3.1-405B",
	 LLMIO_ARCH_LLAMA, 126, 16384, 53248, 128, 8, 128, 128256, 131072, 0, 0, false, LLMIO_DTYPE_BF16},
	/* v0.3: the v0.1 vocabulary (32000) extended to 32768; otherwise the same model */
	{"Mistral-7B", "mistralai/Mistral-7B-v0.3", "mistral-7b-v0.3",
	 LLMIO_ARCH_MISTRAL, 32, 4096, 14336, 32, 8, 128, 32768, 32768, 0, 0, false, LLMIO_DTYPE_BF16},
	{"Mixtral-8x7B", "mistralai/Mixtral-8x7B-v0.1", "mixtral-8x7b-v0.1",
	 LLMIO_ARCH_MIXTRAL, 32, 4096, 14336, 32, 8, 128, 32000, 32768, 8, 2, false, LLMIO_DTYPE_BF16},
	{"Qwen2.5-7B", "Qwen/Qwen2.5-7B", "qwen2.5-7b",
	 LLMIO_ARCH_QWEN2, 28, 3584, 18944, 28, 4, 128, 152064, 131072, 0, 0, false, LLMIO_DTYPE_BF16},
	{"Qwen3-8B", "Qwen/Qwen3-8B", "qwen3-8b",
	 LLMIO_ARCH_QWEN3, 36, 4096, 12288, 32, 8, 128, 151936, 40960, 0, 0, false, LLMIO_DTYPE_BF16},
	/* the base repository stores float32 weights (torch_dtype "float32"); -it is bf16 */
	{"Gemma-2-9B", "google/gemma-2-9b", "gemma2-9b",
	 LLMIO_ARCH_GEMMA2, 42, 3584, 14336, 16, 8, 256, 256000, 8192, 0, 0, true, LLMIO_DTYPE_FP32},
	/* no torch_dtype in its config: the checkpoint is float32 */
	{"GPT-2", "openai-community/gpt2", "gpt2,gpt-2-124m,gpt2-124m",
	 LLMIO_ARCH_GPT2, 12, 768, 3072, 12, 12, 64, 50257, 1024, 0, 0, true, LLMIO_DTYPE_FP32},
	{"OPT-1.3B", "facebook/opt-1.3b", "opt-1.3b",
	 LLMIO_ARCH_OPT, 24, 2048, 8192, 32, 32, 64, 50272, 2048, 0, 0, true, LLMIO_DTYPE_FP16},
};
/* clang-format on */

#define NCATALOG (sizeof(catalog) / sizeof(catalog[0]))

size_t llmio_model_catalog_count(void)
{
	return NCATALOG;
}

static void fill(const struct entry *e, struct llmio_model *m)
{
	memset(m, 0, sizeof(*m));
	model_arch_defaults(m, e->arch);
	snprintf(m->name, sizeof(m->name), "%s", e->name);
	snprintf(m->hf_id, sizeof(m->hf_id), "%s", e->hf);
	snprintf(m->source, sizeof(m->source), "config.json of huggingface.co/%s", e->hf);
	m->layers = e->layers;
	m->hidden = e->hidden;
	m->ffn = e->ffn;
	m->heads = e->heads;
	m->kv_heads = e->kv_heads;
	m->head_dim = e->head_dim;
	m->vocab = e->vocab;
	m->max_positions = e->max_pos;
	m->experts = e->experts;
	m->experts_active = e->active;
	m->tied_embeddings = e->tied;
	m->dtype = e->dtype;
}

int llmio_model_catalog(size_t i, struct llmio_model *out)
{
	if (i >= NCATALOG)
		return -ENOENT;
	fill(&catalog[i], out);
	return 0;
}

/* Is name one of the comma-separated words of list? */
static bool in_list(const char *list, const char *name)
{
	size_t len = strlen(name);

	while (*list) {
		size_t n = strcspn(list, ",");

		if (n == len && !strncasecmp(list, name, n))
			return true;
		list += n;
		if (*list == ',')
			list++;
	}
	return false;
}

int llmio_model_find(const char *name, struct llmio_model *out)
{
	const char *slash;

	if (!name || !*name)
		return -ENOENT;
	for (size_t i = 0; i < NCATALOG; i++) {
		const struct entry *e = &catalog[i];

		slash = strchr(e->hf, '/');
		if (!strcasecmp(name, e->name) || !strcasecmp(name, e->hf) ||
		    (slash && !strcasecmp(name, slash + 1)) || in_list(e->aliases, name)) {
			fill(e, out);
			return 0;
		}
	}
	return -ENOENT;
}
