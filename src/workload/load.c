/* SPDX-License-Identifier: MIT */
/*
 * Recipe `load`: model loading from safetensors shard files laid out from the model's real
 * tensor list (llmio_model_shard_layout(): HF's shard assignment, an 8-byte header length,
 * the JSON header, then the tensors back to back).  Strategies:
 *   sequential  one thread reads each file whole, front to back, in bs pieces;
 *   tensor      the header (8 bytes, then the JSON), then every tensor at its offset, as a
 *               loader that materialises tensor by tensor does;
 *   mmap        the default safetensors path: map the file and touch every tensor (the mmap
 *               engine, through the page cache whatever --direct says);
 *   parallel    N threads each read a contiguous part of every file in large pieces (the
 *               fastsafetensors / Run:ai model-streamer style).
 * Each runs cold (the files' page cache dropped first) and warm (right after, cache kept).
 * With --scale F each shard keeps its first tensors up to F of its bytes: tensor sizes, and so
 * request sizes, stay real.  The header region holds synthetic bytes of the real header length.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workload/objects.h"
#include "workload/phases.h"
#include "base/error.h"
#include "workload/segsrc.h"

const char *const load_strategy_names[LOAD_NSTRAT] = {"sequential", "tensor", "mmap", "parallel"};

struct shard_files {
	struct llmio_shard_layout *l;
	unsigned n;
	char (*paths)[LLMIO_PATH_MAX];
	struct llmio_file *files;
	size_t *kept; /* tensors kept per shard under --scale */
};

static void shard_files_release(struct shard_files *sf)
{
	llmio_shard_layout_destroy(sf->l);
	free(sf->paths);
	free(sf->files);
	free(sf->kept);
	memset(sf, 0, sizeof(*sf));
}

static int shard_files_make(struct wl *w, struct shard_files *sf, struct llmio_error *e)
{
	enum llmio_dtype dt = w->model.dtype;
	const char *dts = wl_str(w, "dtype");
	uint64_t max_shard;
	int ret;

	memset(sf, 0, sizeof(*sf));
	if (dts[0] && llmio_dtype_parse(dts, &dt))
		return llmio_err(e, -EINVAL,
		                 "--dtype=%s is not one of fp32 bf16 fp16 fp8 int8 int4", dts);
	max_shard = LLMIO_HF_MAX_SHARD_BYTES; /* recipes that load without saying how */
	if (recipe_has_param(w->recipe, "max_shard") &&
	    (ret = wl_u64(w, "max_shard", &max_shard, e)))
		return ret;
	ret = llmio_model_shard_layout(&w->model, dt, max_shard, &sf->l);
	if (ret)
		return ret;
	sf->n = (unsigned)sf->l->nshards;
	sf->paths = calloc(sf->n, sizeof(*sf->paths));
	sf->files = calloc(sf->n, sizeof(*sf->files));
	sf->kept = calloc(sf->n, sizeof(*sf->kept));
	if (!sf->paths || !sf->files || !sf->kept)
		return -ENOMEM;
	for (unsigned i = 0; i < sf->n; i++) {
		const struct llmio_shard *s = &sf->l->shards[i];
		uint64_t want = (uint64_t)((double)s->data_bytes * w->scale), data = 0;
		size_t k = 0;

		while (k < s->count && (k == 0 || data < want))
			data += sf->l->entries[s->first + k++].bytes;
		sf->kept[i] = k;
		if (wl_path(w, sf->paths[i], sizeof(sf->paths[i]), "%s", s->filename))
			return -ENAMETOOLONG;
		sf->files[i] =
		        (struct llmio_file){.path = sf->paths[i], .size = 8 + s->header_len + data};
	}
	return wl_check_space(w, sf->files, sf->n, e);
}

/* The segments strategy `strat` reads, for `threads` threads. */
static int plan(struct segsrc *s, const struct shard_files *sf, enum load_strategy strat,
                unsigned threads)
{
	int ret = 0;

	for (unsigned t = 0; t < threads && !ret; t++) {
		for (unsigned f = 0; f < sf->n && !ret; f++) {
			const struct llmio_shard *sh = &sf->l->shards[f];
			uint64_t size = sf->files[f].size, part = size / threads;

			switch (strat) {
			case LOAD_SEQUENTIAL:
				ret = segsrc_add(s, t, f, 0, size);
				break;
			case LOAD_PARALLEL:
				ret = segsrc_add(s, t, f, part * t,
				                 t + 1 == threads ? size - part * t : part);
				break;
			default: /* tensor, mmap: header length, header, each tensor */
				ret = segsrc_add(s, t, f, 0, 8);
				if (!ret)
					ret = segsrc_add(s, t, f, 8, sh->header_len);
				for (size_t k = 0; k < sf->kept[f] && !ret; k++) {
					const struct llmio_shard_entry *e =
					        &sf->l->entries[sh->first + k];

					ret = segsrc_add(s, t, f, e->file_offset, e->bytes);
				}
				break;
			}
		}
	}
	return ret;
}

/*
 * Objects (s3://): the shards as objects, uploaded when absent.  mmap maps files: its phase is
 * kept, without a stream, so that --engine all lines the phases up, and says why.
 */
static int load_objects(struct wl *w, const char *name, enum load_strategy strat,
                        const struct shard_files *sf, struct llmio_error *e)
{
	struct wl_phase *ph;

	if (strat != LOAD_MMAP)
		return wl_objects_prepare(w, sf->files, sf->n, e);
	ph = wl_phase_new(w, "%s", name);
	if (!ph)
		return llmio_err(e, -E2BIG, "too many phases");
	snprintf(ph->note, sizeof(ph->note),
	         "mmap maps files: an object has nothing to map (not run; the other strategies "
	         "read the objects)");
	return 0;
}

int load_phase(struct wl *w, const char *name, enum load_strategy strat, bool cold,
               unsigned threads, uint64_t bs, struct llmio_error *e)
{
	struct shard_files sf;
	struct llmio_job_opts o;
	struct wl_phase *ph;
	struct segsrc s;
	double secs;
	int ret;

	if (strat != LOAD_PARALLEL)
		threads = 1;
	ret = shard_files_make(w, &sf, e);
	if (!ret && wl_on_objects(w))
		ret = load_objects(w, name, strat, &sf, e);
	if (ret)
		goto out;
	if (strat == LOAD_MMAP && wl_on_objects(w))
		goto out; /* its phase says why it has no stream */
	wl_job_opts(w, &o);
	if (strat == LOAD_MMAP) {
		snprintf(o.engine, sizeof(o.engine), "mmap");
		o.engine_opts[0] = '\0';
		o.direct = false;
	}
	ret = segsrc_init(&s, threads, (uint32_t)bs, o.direct ? 4096 : 1, 0);
	if (!ret)
		ret = plan(&s, &sf, strat, threads);
	if (ret)
		goto out_src;
	o.files = sf.files;
	o.nfiles_list = sf.n;
	o.io_source = &s.src;
	o.numjobs = threads;
	o.bs = bs;
	o.rw = LLMIO_RW_READ;
	o.invalidate = cold;
	ph = wl_phase_new(w, "%s", name);
	if (!ph) {
		ret = -E2BIG;
		llmio_err(e, ret, "too many phases");
		goto out_src;
	}
	ph->promised_bytes = segsrc_bytes(&s);
	ret = wl_job(w, ph, load_strategy_names[strat], &o, e);
	if (ph->nstreams) {
		const struct llmio_result *r = ph->streams[0];

		secs = r->runtime_s;
		ph->wall_s = secs;
		wl_metric(ph, "load_time_s", secs, "s");
		wl_metric(ph, "GBps", secs > 0 ? (double)r->read.bytes / secs / 1e9 : 0, "GB/s");
		wl_metric(ph, "cpu_s", r->cpu.proc_s, "s");
		wl_metric(ph, "device_read_bytes", (double)r->device.read_bytes, "B");
		wl_metric(ph, "shards", sf.n, "");
	}
	if (!cold && wl_on_objects(w))
		snprintf(ph->note + strlen(ph->note), sizeof(ph->note) - strlen(ph->note),
		         "%sobjects: no page cache on this host, warm is cold here (the server's "
		         "own cache is not dropped)",
		         ph->note[0] ? "; " : "");
	if (!cold && o.direct) {
		size_t used = strlen(ph->note);

		snprintf(ph->note + used, sizeof(ph->note) - used,
		         "%sO_DIRECT: warm is the same as cold (no page cache)", used ? "; " : "");
	}
out_src:
	segsrc_release(&s);
out:
	shard_files_release(&sf);
	if (ret == -ENOMEM && !llmio_err_msg(e)[0])
		llmio_err(e, ret, "out of memory laying out the model's shards");
	return ret;
}

static const struct llmio_optdesc params[] = {
        WL_PARAM("strategy", OPTD_STRING, 0, 0, "all",
                 "all | sequential | tensor | mmap | parallel"),
        WL_ENUM("cache", "both|cold|warm", "both",
                "both | cold | warm: page cache dropped first, or kept"),
        WL_PARAM("threads", OPTD_UINT, 1, 64, "4", "reader threads of the parallel strategy"),
        WL_PARAM("bs", OPTD_SIZE, 4096, 64 << 20, "4m",
                 "largest read (tensors and file parts are read in pieces of this)"),
        WL_PARAM("max_shard", OPTD_SIZE, 0, 0, "5GB",
                 "shard file size limit (HF's max_shard_size)"),
        WL_PARAM("dtype", OPTD_STRING, 0, 0, "", "weight dtype; default the model's"),
        {.name = NULL},
};

/* Parse strategy= into a bit mask. */
static int strategies(const char *v, unsigned *mask)
{
	if (!strcmp(v, "all")) {
		*mask = (1u << LOAD_NSTRAT) - 1;
		return 0;
	}
	for (unsigned i = 0; i < LOAD_NSTRAT; i++)
		if (!strcmp(v, load_strategy_names[i])) {
			*mask = 1u << i;
			return 0;
		}
	return -EINVAL;
}

static int run(struct wl *w, struct llmio_error *e)
{
	const char *cache;
	uint64_t threads, bs;
	unsigned mask;
	int ret;

	if ((ret = wl_u64(w, "threads", &threads, e)) || (ret = wl_u64(w, "bs", &bs, e)) ||
	    (ret = wl_enum(w, "cache", &cache, e)))
		return ret;
	if (strategies(wl_str(w, "strategy"), &mask))
		return llmio_err(e, -EINVAL,
		                 "--strategy=%s: use all, sequential, tensor, mmap or parallel",
		                 wl_str(w, "strategy"));
	for (unsigned i = 0; i < LOAD_NSTRAT && !ret; i++) {
		if (!(mask & (1u << i)))
			continue;
		if (strcmp(cache, "warm")) {
			char name[48];

			snprintf(name, sizeof(name), "load-%s-cold", load_strategy_names[i]);
			ret = load_phase(w, name, (enum load_strategy)i, true, (unsigned)threads,
			                 bs, e);
		}
		if (!ret && strcmp(cache, "cold")) {
			char name[48];

			snprintf(name, sizeof(name), "load-%s-warm", load_strategy_names[i]);
			ret = load_phase(w, name, (enum load_strategy)i, false, (unsigned)threads,
			                 bs, e);
		}
	}
	return ret;
}

const struct recipe recipe_load = {
        .name = "load",
        .summary = "model loading from safetensors shards: sequential, per-tensor, mmap, "
                   "parallel; cold and warm cache",
        .params = params,
        .needs_model = true,
        .run = run,
};
