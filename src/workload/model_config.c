/* SPDX-License-Identifier: MIT */
/*
 * Hugging Face config.json -> struct llmio_model.  Key names and defaults are those of the
 * transformers configuration classes (LlamaConfig, MistralConfig, MixtralConfig, Qwen2Config,
 * Qwen3Config, Gemma2Config, GPT2Config, OPTConfig): a key the class has a default for may be
 * missing; a key it needs must be there.  Every error names the file and the key (and the
 * value when there is one).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "workload/model_internal.h"
#include "base/error.h"
#include "base/optdesc.h"

#define CONFIG_MAX_BYTES (16u << 20) /* real ones are a few KiB */

struct cfg {
	const char *path;
	const cJSON *root;
	struct llmio_error *e;
};

static const struct {
	const char *arch;       /* architectures[0] */
	const char *model_type; /* used when architectures is absent */
	enum llmio_arch id;
	bool tied_default; /* tie_word_embeddings' default in the config class */
} archs[] = {
        {"LlamaForCausalLM", "llama", LLMIO_ARCH_LLAMA, false},
        {"MistralForCausalLM", "mistral", LLMIO_ARCH_MISTRAL, false},
        {"MixtralForCausalLM", "mixtral", LLMIO_ARCH_MIXTRAL, false},
        {"Qwen2ForCausalLM", "qwen2", LLMIO_ARCH_QWEN2, false},
        {"Qwen3ForCausalLM", "qwen3", LLMIO_ARCH_QWEN3, false},
        {"Gemma2ForCausalLM", "gemma2", LLMIO_ARCH_GEMMA2, true},
        {"GPT2LMHeadModel", "gpt2", LLMIO_ARCH_GPT2, true},
        {"OPTForCausalLM", "opt", LLMIO_ARCH_OPT, true},
};

#define NARCHS (sizeof(archs) / sizeof(archs[0]))

/* A short rendering of a JSON value for messages. */
static void value_text(const cJSON *v, char *buf, size_t len)
{
	char *s = cJSON_PrintUnformatted(v);

	if (!s) {
		snprintf(buf, len, "(unprintable)");
		return;
	}
	if (strlen(s) > 40)
		snprintf(buf, len, "%.37s...", s);
	else
		snprintf(buf, len, "%s", s);
	cJSON_free(s);
}

static int missing(struct cfg *c, const char *key)
{
	return llmio_err(c->e, -EINVAL, "%s: missing key \"%s\"", c->path, key);
}

static int wrong(struct cfg *c, const char *key, const cJSON *v, const char *want)
{
	char val[64];

	value_text(v, val, sizeof(val));
	return llmio_err(c->e, -EINVAL, "%s: key \"%s\" must be %s, not %s", c->path, key, want,
	                 val);
}

/* A key that is absent or null takes its default. */
static const cJSON *get(struct cfg *c, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(c->root, key);

	return cJSON_IsNull(v) ? NULL : v;
}

/*
 * A positive integer key.  required: missing is an error; otherwise *out keeps its value.
 */
static int get_uint(struct cfg *c, const char *key, bool required, uint32_t *out)
{
	const cJSON *v = get(c, key);
	double d;

	if (!v)
		return required ? missing(c, key) : 0;
	d = cJSON_IsNumber(v) ? v->valuedouble : -1;
	if (d < 1 || d > UINT32_MAX || d != (double)(uint32_t)d)
		return wrong(c, key, v, "a positive integer");
	*out = (uint32_t)d;
	return 0;
}

static int get_bool(struct cfg *c, const char *key, bool *out)
{
	const cJSON *v = get(c, key);

	if (!v)
		return 0;
	if (!cJSON_IsBool(v))
		return wrong(c, key, v, "true or false");
	*out = cJSON_IsTrue(v);
	return 0;
}

static int get_arch(struct cfg *c, size_t *which)
{
	const cJSON *a = get(c, "architectures"), *first;
	const char *name;
	char val[64];

	if (a) {
		first = cJSON_IsArray(a) ? cJSON_GetArrayItem(a, 0) : NULL;
		if (!cJSON_IsString(first))
			return wrong(c, "architectures", a, "a list of class names");
		name = first->valuestring;
		for (size_t i = 0; i < NARCHS; i++) {
			if (!strcmp(name, archs[i].arch)) {
				*which = i;
				return 0;
			}
		}
		value_text(first, val, sizeof(val));
	} else {
		a = get(c, "model_type");
		if (!a)
			return missing(c, "architectures");
		if (!cJSON_IsString(a))
			return wrong(c, "model_type", a, "a string");
		for (size_t i = 0; i < NARCHS; i++) {
			if (!strcmp(a->valuestring, archs[i].model_type)) {
				*which = i;
				return 0;
			}
		}
		value_text(a, val, sizeof(val));
	}
	return llmio_err(c->e, -EINVAL,
	                 "%s: key \"%s\": unsupported architecture %s (supported: "
	                 "LlamaForCausalLM, MistralForCausalLM, MixtralForCausalLM, "
	                 "Qwen2ForCausalLM, Qwen3ForCausalLM, Gemma2ForCausalLM, GPT2LMHeadModel, "
	                 "OPTForCausalLM)",
	                 c->path, get(c, "architectures") ? "architectures" : "model_type", val);
}

static int get_dtype(struct cfg *c, enum llmio_dtype *out)
{
	const char *key = "torch_dtype";
	const cJSON *v = get(c, key);

	if (!v) {
		key = "dtype"; /* the newer spelling */
		v = get(c, key);
	}
	*out = LLMIO_DTYPE_FP32; /* PyTorch's default when a config names none */
	if (!v)
		return 0;
	if (!cJSON_IsString(v) || llmio_dtype_parse(v->valuestring, out))
		return wrong(c, key, v,
		             "a dtype (float32, bfloat16, float16, float8_e4m3fn, int8)");
	return 0;
}

/* LlamaConfig and its relatives (Mistral, Mixtral, Qwen2, Qwen3, Gemma2). */
static int load_llama(struct cfg *c, struct llmio_model *m)
{
	bool attn_bias = false;
	int ret;

	if ((ret = get_uint(c, "num_hidden_layers", true, &m->layers)) ||
	    (ret = get_uint(c, "hidden_size", true, &m->hidden)) ||
	    (ret = get_uint(c, "intermediate_size", true, &m->ffn)) ||
	    (ret = get_uint(c, "num_attention_heads", true, &m->heads)) ||
	    (ret = get_uint(c, "vocab_size", true, &m->vocab)))
		return ret;
	m->kv_heads = m->heads;
	if ((ret = get_uint(c, "num_key_value_heads", false, &m->kv_heads)) ||
	    (ret = get_uint(c, "max_position_embeddings", false, &m->max_positions)))
		return ret;
	if (m->hidden % m->heads && !get(c, "head_dim"))
		return missing(c, "head_dim"); /* hidden_size / num_attention_heads is no integer */
	m->head_dim = m->hidden / m->heads;
	if ((ret = get_uint(c, "head_dim", false, &m->head_dim)))
		return ret;
	if (m->arch == LLMIO_ARCH_MIXTRAL &&
	    ((ret = get_uint(c, "num_local_experts", true, &m->experts)) ||
	     (ret = get_uint(c, "num_experts_per_tok", true, &m->experts_active))))
		return ret;
	/* Qwen2 always has q/k/v biases and no attention_bias key; the others have one */
	if (m->arch != LLMIO_ARCH_QWEN2) {
		if ((ret = get_bool(c, "attention_bias", &attn_bias)))
			return ret;
		m->qkv_bias = m->out_bias = attn_bias;
	}
	return get_bool(c, "mlp_bias", &m->mlp_bias);
}

static int load_gpt2(struct cfg *c, struct llmio_model *m)
{
	int ret;

	if ((ret = get_uint(c, "n_layer", true, &m->layers)) ||
	    (ret = get_uint(c, "n_embd", true, &m->hidden)) ||
	    (ret = get_uint(c, "n_head", true, &m->heads)) ||
	    (ret = get_uint(c, "vocab_size", true, &m->vocab)) ||
	    (ret = get_uint(c, "n_positions", true, &m->max_positions)))
		return ret;
	if (m->hidden % m->heads)
		return wrong(c, "n_head", get(c, "n_head"), "a divisor of n_embd");
	m->ffn = 4 * m->hidden; /* n_inner: null means 4 * n_embd */
	m->kv_heads = m->heads;
	m->head_dim = m->hidden / m->heads;
	return get_uint(c, "n_inner", false, &m->ffn);
}

static int load_opt(struct cfg *c, struct llmio_model *m)
{
	bool bias = true;
	int ret;

	if ((ret = get_uint(c, "num_hidden_layers", true, &m->layers)) ||
	    (ret = get_uint(c, "hidden_size", true, &m->hidden)) ||
	    (ret = get_uint(c, "ffn_dim", true, &m->ffn)) ||
	    (ret = get_uint(c, "num_attention_heads", true, &m->heads)) ||
	    (ret = get_uint(c, "vocab_size", true, &m->vocab)) ||
	    (ret = get_uint(c, "max_position_embeddings", true, &m->max_positions)))
		return ret;
	if (m->hidden % m->heads)
		return wrong(c, "num_attention_heads", get(c, "num_attention_heads"),
		             "a divisor of hidden_size");
	m->kv_heads = m->heads;
	m->head_dim = m->hidden / m->heads;
	m->embed_dim = m->hidden;
	if ((ret = get_uint(c, "word_embed_proj_dim", false, &m->embed_dim)) ||
	    (ret = get_bool(c, "do_layer_norm_before", &m->final_norm)) ||
	    (ret = get_bool(c, "enable_bias", &bias)))
		return ret;
	if (m->embed_dim == m->hidden)
		m->embed_dim = 0;
	m->qkv_bias = m->out_bias = m->mlp_bias = bias;
	return 0;
}

/* The model's name: _name_or_path when it is set, else the file's directory or name. */
static void config_name(struct cfg *c, const char *path, struct llmio_model *m)
{
	const cJSON *v = get(c, "_name_or_path");
	char buf[PATH_MAX];
	const char *base;
	char *slash;

	if (cJSON_IsString(v) && *v->valuestring) {
		base = strrchr(v->valuestring, '/');
		snprintf(m->name, sizeof(m->name), "%s", base ? base + 1 : v->valuestring);
		snprintf(m->hf_id, sizeof(m->hf_id), "%s", v->valuestring);
		return;
	}
	snprintf(buf, sizeof(buf), "%s", path);
	slash = strrchr(buf, '/');
	if (slash && !strcmp(slash + 1, "config.json")) {
		*slash = '\0';
		slash = strrchr(buf, '/');
	}
	base = slash ? slash + 1 : buf;
	model_copy(m->name, sizeof(m->name), *base ? base : "config");
}

static int read_file(const char *path, char **out, struct llmio_error *e)
{
	struct stat st;
	FILE *f;
	char *buf;
	size_t n;
	int ret;

	f = fopen(path, "re");
	if (!f) {
		ret = -errno;
		return llmio_err(e, ret, "%s: cannot read: %s", path, strerror(errno));
	}
	if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode) || st.st_size > CONFIG_MAX_BYTES) {
		ret = llmio_err(e, -EINVAL,
		                "%s: not a config.json file (a regular file under 16 MiB)", path);
		goto out_close;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		ret = llmio_err(e, -ENOMEM, "%s: out of memory", path);
		goto out_close;
	}
	n = fread(buf, 1, (size_t)st.st_size, f);
	if (ferror(f)) {
		ret = llmio_err(e, -EIO, "%s: read error", path);
		free(buf);
		goto out_close;
	}
	buf[n] = '\0';
	*out = buf;
	ret = 0;
out_close:
	fclose(f);
	return ret;
}

int llmio_model_load_config(const char *path, struct llmio_model *out, struct llmio_error *e)
{
	char file[PATH_MAX];
	struct llmio_model m;
	struct stat st;
	struct cfg c;
	cJSON *root = NULL;
	char *text = NULL;
	size_t which = 0;
	int ret;

	if (!stat(path, &st) && S_ISDIR(st.st_mode))
		snprintf(file, sizeof(file), "%s/config.json", path);
	else
		snprintf(file, sizeof(file), "%s", path);
	ret = read_file(file, &text, e);
	if (ret)
		return ret;
	c = (struct cfg){.path = file, .e = e};
	root = cJSON_Parse(text);
	if (!root) {
		const char *at = cJSON_GetErrorPtr();

		ret = llmio_err(e, -EINVAL, "%s: not valid JSON (at byte %ld)", file,
		                at && at >= text ? (long)(at - text) : 0L);
		goto out;
	}
	c.root = root;
	if (!cJSON_IsObject(root)) {
		ret = llmio_err(e, -EINVAL, "%s: not a config.json (the top level is no object)",
		                file);
		goto out;
	}
	ret = get_arch(&c, &which);
	if (ret)
		goto out;
	memset(&m, 0, sizeof(m));
	model_arch_defaults(&m, archs[which].id);
	m.tied_embeddings = archs[which].tied_default;
	if (m.arch == LLMIO_ARCH_GPT2)
		ret = load_gpt2(&c, &m);
	else if (m.arch == LLMIO_ARCH_OPT)
		ret = load_opt(&c, &m);
	else
		ret = load_llama(&c, &m);
	if (!ret)
		ret = get_bool(&c, "tie_word_embeddings", &m.tied_embeddings);
	if (!ret)
		ret = get_dtype(&c, &m.dtype);
	if (ret)
		goto out;
	config_name(&c, file, &m);
	model_copy(m.source, sizeof(m.source), file);
	if (m.heads % m.kv_heads) {
		ret = wrong(&c, "num_key_value_heads", get(&c, "num_key_value_heads"),
		            "a divisor of num_attention_heads");
		goto out;
	}
	ret = llmio_model_validate(&m, e);
	if (!ret)
		*out = m;
out:
	cJSON_Delete(root);
	free(text);
	return ret;
}

int llmio_model_resolve(const char *name_or_path, struct llmio_model *out, struct llmio_error *e)
{
	struct stat st;
	size_t len;

	if (!name_or_path || !*name_or_path)
		return llmio_err(e, -EINVAL,
		                 "no model given (a name from `llmio model list` or "
		                 "a config.json)");
	if (optdesc_check_text("--", "model", name_or_path, e))
		return -EINVAL;
	if (!llmio_model_find(name_or_path, out))
		return 0;
	len = strlen(name_or_path);
	if (!stat(name_or_path, &st) || (len > 5 && !strcmp(name_or_path + len - 5, ".json")) ||
	    strchr(name_or_path, '/') == name_or_path || !strncmp(name_or_path, "./", 2))
		return llmio_model_load_config(name_or_path, out, e);
	return llmio_err(e, -ENOENT,
	                 "unknown model '%s': not in the catalog (`llmio model list`) and not a "
	                 "config.json file",
	                 name_or_path);
}
