/* SPDX-License-Identifier: MIT */
/*
 * Recipe `infer`: load the model, then serve: requests in flight restore KV-cache blocks
 * from storage (a prefix-cache hit) or spill freshly computed ones (a miss), in random
 * blocks of a KV file.  The block is what a serving engine moves: tokens per block x the
 * model's KV bytes per token (2 x layers x KV heads x head dim x dtype), optionally one
 * layer's share and one tensor-parallel rank's (llmio_model_kv_block_bytes()); rounded up to
 * 4 KiB under O_DIRECT.  Per-block latency is the I/O's completion latency.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "workload/phases.h"
#include "base/error.h"

static const struct llmio_optdesc params[] = {
        WL_PARAM("block_tokens", OPTD_UINT, 1, 65536, "16",
                 "tokens per KV block (vLLM 16, LMCache 256)"),
        WL_PARAM("per_layer", OPTD_UINT, 0, 0, "0",
                 "1: a block is one layer's K and V (the I/O per layer)"),
        WL_PARAM("tp", OPTD_UINT, 1, 0, "1",
                 "tensor-parallel degree: a rank's share of the KV heads"),
        WL_PARAM("kv_dtype", OPTD_STRING, 0, 0, "", "KV-cache dtype; default the model's"),
        WL_PARAM("in_flight", OPTD_UINT, 1, 4096, "16", "requests in flight (the queue depth)"),
        WL_PARAM("hit_ratio", OPTD_UINT, 0, 100, "70",
                 "percent of requests that restore (read) their KV blocks; "
                 "the rest spill (write)"),
        WL_PARAM("kv_capacity", OPTD_SIZE, 0, 0, "8g",
                 "bytes of the KV file on storage (before --scale)"),
        WL_PARAM("duration", OPTD_DURATION, 1, 0, "10s", "serving time"),
        WL_PARAM("load", OPTD_UINT, 0, 0, "1",
                 "1: load the model first (sequential, cold); 0: serve only"),
        {.name = NULL},
};

static int run(struct wl *w, struct llmio_error *e)
{
	uint64_t tokens, per_layer, tp, depth, hit, cap, dur, load, block;
	enum llmio_dtype dt = w->model.dtype;
	char path[LLMIO_PATH_MAX];
	struct llmio_file file;
	struct llmio_job_opts o;
	struct wl_phase *ph;
	int ret;

	if ((ret = wl_u64(w, "block_tokens", &tokens, e)) ||
	    (ret = wl_u64(w, "per_layer", &per_layer, e)) || (ret = wl_u64(w, "tp", &tp, e)) ||
	    (ret = wl_u64(w, "in_flight", &depth, e)) || (ret = wl_u64(w, "hit_ratio", &hit, e)) ||
	    (ret = wl_u64(w, "kv_capacity", &cap, e)) || (ret = wl_u64(w, "duration", &dur, e)) ||
	    (ret = wl_u64(w, "load", &load, e)))
		return ret;
	if (wl_str(w, "kv_dtype")[0] && llmio_dtype_parse(wl_str(w, "kv_dtype"), &dt))
		return llmio_err(e, -EINVAL, "--kv_dtype=%s is not one of fp32 bf16 fp16 fp8 int8",
		                 wl_str(w, "kv_dtype"));
	block = llmio_model_kv_block_bytes(&w->model, dt, (uint32_t)tokens, per_layer != 0,
	                                   (uint32_t)tp);
	block = (block + wl_align(w) - 1) / wl_align(w) * wl_align(w);
	if (block > (256u << 20))
		return llmio_err(e, -EINVAL,
		                 "a KV block of %llu bytes is too large: lower --block_tokens",
		                 (unsigned long long)block);
	if (load) {
		ret = load_phase(w, "load", LOAD_SEQUENTIAL, true, 1, 4u << 20, e);
		if (ret)
			return ret;
	}
	if (wl_path(w, path, sizeof(path), "kv-cache.bin"))
		return llmio_err(e, -ENAMETOOLONG, "--directory is too long");
	cap = wl_scaled(w, cap, block * 16, block);
	cap -= cap % block;
	file = (struct llmio_file){.path = path, .size = cap};
	ret = wl_check_space(w, &file, 1, e);
	if (ret)
		return ret;
	wl_job_opts(w, &o);
	snprintf(o.filename, sizeof(o.filename), "%s", path);
	o.size = cap;
	o.bs = block;
	o.rw = hit == 100 ? LLMIO_RW_RANDREAD : hit == 0 ? LLMIO_RW_RANDWRITE : LLMIO_RW_RANDRW;
	o.rwmixread = (uint32_t)hit;
	o.iodepth = (uint32_t)depth;
	o.runtime_ns = dur;
	ph = wl_phase_new(w, "serve");
	if (!ph)
		return -E2BIG;
	ret = wl_job(w, ph, "kv-blocks", &o, e);
	if (ph->nstreams) {
		const struct llmio_result *r = ph->streams[0];

		ph->wall_s = r->runtime_s;
		ph->promised_bytes = 0; /* time-based */
		wl_metric(ph, "block_bytes", (double)block, "B");
		wl_metric(ph, "blocks_per_s", r->read.iops + r->write.iops, "blocks/s");
		wl_metric(ph, "kv_tokens_restored_per_s", r->read.iops * (double)tokens,
		          "tokens/s");
		wl_metric(ph, "restore_p50_us",
		          (double)llmio_hist_percentile(&r->read.clat, 50) / 1e3, "us");
		wl_metric(ph, "restore_p99_us",
		          (double)llmio_hist_percentile(&r->read.clat, 99) / 1e3, "us");
		wl_metric(ph, "restore_p99.9_us",
		          (double)llmio_hist_percentile(&r->read.clat, 99.9) / 1e3, "us");
		wl_metric(ph, "spill_p99_us",
		          (double)llmio_hist_percentile(&r->write.clat, 99) / 1e3, "us");
	}
	return ret;
}

const struct recipe recipe_infer = {
        .name = "infer",
        .summary = "model load, then serving that restores and spills KV-cache blocks",
        .params = params,
        .needs_model = true,
        .run = run,
};
