/* SPDX-License-Identifier: MIT */
/*
 * Recipe `pretrain`: dataset streaming plus checkpoint bursts, emulating the accelerator the
 * way MLPerf Storage (DLIO) does.  Reader threads read samples (records of record bytes, in
 * pieces of at most bs, in a shuffled order over the dataset files) up to `prefetch` batches
 * ahead of the accelerator; the accelerator takes a batch when it is complete and "computes"
 * for compute time (a sleep); every ckpt_every steps it stops for a checkpoint: every
 * simulated rank writes its shard and fsyncs (sizes from the model, TP x PP x DP and ZeRO).
 *
 * accelerator utilisation = compute / (total - first step's wait), MLPerf Storage's AU (the
 * first step's I/O is excluded from AU but counted in samples/s); stall = time the
 * accelerator waited for data; checkpoint stall = time it waited for checkpoints.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/rand.h"
#include "workload/objects.h"
#include "workload/phases.h"

struct reader {
	uint64_t sample, pos, end; /* current sample's byte range in the file */
	uint32_t file;
	bool busy;
};

struct trainsrc {
	struct llmio_io_source src;
	const struct train_cfg *c;
	uint64_t stride; /* bytes between samples in a file (record, aligned for O_DIRECT) */
	uint64_t hdr;    /* bytes read before each record (a tar member's header) */
	uint64_t spf;    /* samples per file (1: one file or object per sample) */
	uint64_t nfiles;
	uint64_t fmult;    /* layout tar: shard k is shard k * fmult mod nfiles */
	uint64_t nsamples; /* in the dataset */
	uint64_t mult;     /* shuffle: sample k is dataset sample k * mult mod nsamples */
	uint64_t total;    /* samples the run needs: steps x batch */
	uint32_t align;
	_Atomic uint64_t next, completed, consumed;
	atomic_bool finish; /* the accelerator stopped: readers end instead of waiting for it */
	struct reader rd[64];
};

static int train_next(void *arg, unsigned t, struct llmio_io *io)
{
	struct trainsrc *s = arg;
	struct reader *r = &s->rd[t];
	uint64_t start, end;

	if (!r->busy) {
		uint64_t k = atomic_load(&s->next), ds;

		if (k >= s->total || atomic_load(&s->finish))
			return 0;
		/* read ahead at most `prefetch` batches beyond what the accelerator took */
		if (k >= atomic_load(&s->consumed) + s->c->prefetch * s->c->batch)
			return -EAGAIN;
		if (!atomic_compare_exchange_strong(&s->next, &k, k + 1))
			return -EAGAIN;
		if (s->c->layout == TRAIN_TAR) { /* shuffled shards, each front to back */
			uint64_t kk = k % s->nsamples;

			ds = (uint64_t)((unsigned __int128)(kk / s->spf) * s->fmult % s->nfiles) *
			             s->spf +
			     kk % s->spf;
		} else {
			ds = (uint64_t)((unsigned __int128)k * s->mult % s->nsamples);
		}
		r->file = (uint32_t)(ds / s->spf);
		r->pos = ds % s->spf * s->stride;
		r->end = r->pos + s->hdr + s->c->record_bytes;
		r->busy = true;
	}
	start = r->pos / s->align * s->align;
	end = start + s->c->bs < r->end ? start + s->c->bs : r->end;
	end = (end + s->align - 1) / s->align * s->align;
	*io = (struct llmio_io){.file = r->file, .off = start, .len = (uint32_t)(end - start)};
	r->pos = end;
	if (r->pos >= r->end) {
		io->tag = 1; /* the sample's last piece */
		r->busy = false;
	}
	return 1;
}

static void train_done(void *arg, unsigned t, const struct llmio_io *io, int64_t res,
                       uint64_t lat_ns)
{
	struct trainsrc *s = arg;

	(void)t;
	(void)res;
	(void)lat_ns;
	if (io->tag)
		atomic_fetch_add(&s->completed, 1);
}

struct reader_job {
	struct wl *w;
	struct wl_phase *ph;
	struct llmio_job_opts o;
	struct llmio_error err;
	int ret;
	atomic_bool finished;
};

static void *reader_main(void *arg)
{
	struct reader_job *j = arg;

	j->ret = wl_job(j->w, j->ph, "readers", &j->o, &j->err);
	atomic_store(&j->finished, true);
	return NULL;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};

	nanosleep(&ts, NULL);
}

static bool stopped(const struct wl *w)
{
	return w->base.stop && *w->base.stop;
}

/* The accelerator: wait for each batch, compute, checkpoint every ckpt_every steps. */
static int accelerate(struct wl *w, struct trainsrc *s, struct reader_job *rj, struct wl_phase *ph,
                      struct llmio_error *e)
{
	const struct train_cfg *c = s->c;
	uint64_t t0 = now_ns(), stall = 0, first_stall = 0, compute = 0, ckpt = 0, steps = 0;
	double total;
	int ret = 0;

	for (uint64_t step = 0; step < c->steps && !ret && !stopped(w); step++) {
		uint64_t need = (step + 1) * c->batch, ts = now_ns();

		while (atomic_load(&s->completed) < need && !atomic_load(&rj->finished) &&
		       !stopped(w))
			sleep_ns(50000);
		if (atomic_load(&s->completed) < need)
			break; /* the readers failed or were stopped */
		stall += now_ns() - ts;
		if (!step)
			first_stall = now_ns() - ts;
		atomic_store(&s->consumed, need);
		sleep_ns(c->compute_ns);
		compute += c->compute_ns;
		steps++;
		if (c->ckpt_every && (step + 1) % c->ckpt_every == 0 && c->ckpt_ranks) {
			char name[48];
			uint64_t tc = now_ns();

			snprintf(name, sizeof(name), "checkpoint@step%llu",
			         (unsigned long long)step + 1);
			ret = ckpt_phases(w, name, c->ckpt_prefix, c->ckpt_sizes, c->ckpt_ranks,
			                  4u << 20, false, e);
			ckpt += now_ns() - tc;
		}
	}
	total = (double)(now_ns() - t0) / 1e9;
	ph->wall_s = total;
	wl_metric(ph, "steps", (double)steps, "");
	/* under MPI: samples/s summed over the ranks, AU their mean (DLIO) */
	wl_metric(ph, "samples_per_s",
	          wl_reduce(w, total > 0 ? (double)(steps * c->batch) / total : 0, WL_SUM),
	          "samples/s");
	wl_metric(ph, "accelerator_utilisation",
	          wl_reduce(w,
	                    total - (double)first_stall / 1e9 > 0
	                            ? (double)compute / 1e9 / (total - (double)first_stall / 1e9)
	                            : 0,
	                    WL_SUM) /
	                  (w->dist ? w->dist->size : 1),
	          "");
	wl_metric(ph, "compute_s", (double)compute / 1e9, "s");
	wl_metric(ph, "data_stall_s", (double)stall / 1e9, "s");
	wl_metric(ph, "checkpoint_stall_s", (double)ckpt / 1e9, "s");
	if (steps < c->steps && !ret && !stopped(w))
		ret = llmio_err(e, rj->ret ? rj->ret : -EIO,
		                "the readers stopped after %llu of %llu steps: %s",
		                (unsigned long long)steps, (unsigned long long)c->steps,
		                rj->err.msg);
	return ret;
}

/* The dataset's n-th file or object name under the workload's directory, into pool. */
static int dataset_name(const struct wl *w, const struct train_cfg *c, uint64_t n, char *pool,
                        size_t *used, size_t cap, const char **out)
{
	static const char *const fmt[] = {"data-%06llu.bin", "sample-%08llu.bin",
	                                  "data-%06llu.tar"};
	char path[LLMIO_PATH_MAX];
	size_t len;

	if (wl_path(w, path, sizeof(path), fmt[c->layout], (unsigned long long)n))
		return -ENAMETOOLONG;
	len = strlen(path) + 1;
	if (*used + len > cap)
		return -ENAMETOOLONG;
	memcpy(pool + *used, path, len);
	*out = pool + *used;
	*used += len;
	return 0;
}

int train_phases(struct wl *w, const char *name, const struct train_cfg *c, struct llmio_error *e)
{
	uint64_t nfiles = c->files, fsize, all;
	char *paths = NULL; /* the names back to back: a dataset can have a million objects */
	size_t used = 0, cap;
	struct llmio_file *files = NULL;
	struct reader_job rj = {.w = w};
	struct trainsrc *s = calloc(1, sizeof(*s));
	pthread_t th;
	int ret = -ENOMEM;

	if (!s)
		goto out;
	s->c = c;
	s->align = wl_align(w);
	s->spf = c->layout == TRAIN_SAMPLE ? 1 : c->samples_per_file;
	s->hdr = c->layout == TRAIN_TAR ? 512 : 0;
	s->stride = c->layout == TRAIN_TAR ? 512 + (c->record_bytes + 511) / 512 * 512
	                                   : c->record_bytes;
	s->stride = (s->stride + s->align - 1) / s->align * s->align;
	fsize = s->stride * s->spf + (c->layout == TRAIN_TAR ? 1024 : 0);
	/* --scale shrinks the dataset (fewer files), never the records */
	nfiles = (uint64_t)((double)nfiles * w->scale);
	if (!nfiles)
		nfiles = 1;
	if (c->layout == TRAIN_SAMPLE)
		nfiles *= c->samples_per_file;
	cap = nfiles * (strlen(w->base.directory) + 32);
	paths = malloc(cap);
	files = calloc(nfiles, sizeof(*files));
	if (!paths || !files)
		goto out;
	/* under MPI the dataset is sharded by file: this process reads its files (wl_owns) */
	all = nfiles;
	nfiles = 0;
	for (uint64_t f = 0; f < all; f++) {
		if (!wl_owns(w, (unsigned)f))
			continue;
		if (dataset_name(w, c, f, paths, &used, cap, &files[nfiles].path)) {
			ret = -ENAMETOOLONG;
			llmio_err(e, ret, "--directory is too long");
			goto out;
		}
		files[nfiles].size = fsize;
		nfiles++;
	}
	if (!nfiles) {
		ret = llmio_err(e, -EINVAL, "fewer dataset files than MPI ranks: raise --files");
		goto out;
	}
	s->nfiles = nfiles;
	s->nsamples = nfiles * s->spf;
	s->total = c->steps * c->batch;
	s->mult = scatter_multiplier(s->nsamples);
	s->fmult = scatter_multiplier(nfiles);
	s->src = (struct llmio_io_source){.next = train_next, .done = train_done, .arg = s};
	ret = wl_check_space(w, files, (unsigned)nfiles, e);
	if (!ret && wl_on_objects(w)) /* the dataset as objects: uploaded when absent */
		ret = wl_objects_prepare(w, files, (unsigned)nfiles, e);
	if (ret)
		goto out;
	wl_job_opts(w, &rj.o);
	rj.o.files = files;
	rj.o.nfiles_list = (uint32_t)nfiles;
	rj.o.io_source = &s->src;
	rj.o.numjobs = c->readers;
	rj.o.bs = (c->bs + s->align - 1) / s->align * s->align + s->align;
	rj.o.rw = LLMIO_RW_READ;
	rj.ph = wl_phase_new(w, "%s", name);
	if (!rj.ph) {
		ret = -E2BIG;
		llmio_err(e, ret, "too many phases");
		goto out;
	}
	rj.ph->promised_bytes = s->total * (s->hdr + c->record_bytes);
	ret = -pthread_create(&th, NULL, reader_main, &rj);
	if (ret) {
		llmio_err(e, ret, "cannot start the reader thread");
		goto out;
	}
	ret = accelerate(w, s, &rj, rj.ph, e);
	/* a checkpoint failure or a stop ends training early: readers must not wait for it */
	atomic_store(&s->finish, true);
	pthread_join(th, NULL);
	if (!ret && rj.ret) {
		ret = rj.ret;
		llmio_err(e, ret, "%s", rj.err.msg);
	}
out:
	if (ret == -ENOMEM && !llmio_err_msg(e)[0])
		llmio_err(e, ret, "out of memory");
	free(files);
	free(paths);
	free(s);
	return ret;
}

/* MLPerf Storage's workloads (storage-conf/workload/ YAML files; H100 compute times). */
struct dataset_preset {
	const char *name;
	uint64_t record, files, per_file, batch, readers;
	double compute_s;
};

static const struct dataset_preset presets[] = {
        {"unet3d", 146600628, 168, 1, 7, 4, 0.323},
        {"resnet50", 114660, 1024, 1251, 400, 8, 0.224},
        {"cosmoflow", 2828486, 524288, 1, 1, 4, 0.00350},
};

const struct llmio_optdesc train_params[] = {
        WL_ENUM("layout", "shard|sample|tar", "shard",
                "shard: files of samples_per_file records, read in shuffled sample order | "
                "sample: one file (object) per sample | tar: tar-like shards read shard by "
                "shard (WebDataset)"),
        WL_PARAM("dataset", OPTD_STRING, 0, 0, "tokens",
                 "tokens (LLM: records of seq_len token ids, compute from the model) | unet3d | "
                 "resnet50 | cosmoflow (MLPerf Storage, H100 compute times)"),
        WL_PARAM("seq_len", OPTD_UINT, 1, 0, "4096", "tokens per sequence (dataset=tokens)"),
        WL_PARAM("record", OPTD_SIZE, 0, 0, "0", "bytes per sample; 0 = the dataset's"),
        WL_PARAM("files", OPTD_UINT, 0, 0, "0", "dataset files; 0 = the dataset's (tokens: 64)"),
        WL_PARAM("samples_per_file", OPTD_UINT, 0, 0, "0", "0 = the dataset's (tokens: 1024)"),
        WL_PARAM("batch", OPTD_UINT, 0, 0, "0", "samples per step; 0 = the dataset's (tokens: 8)"),
        WL_PARAM("readers", OPTD_UINT, 0, 64, "0", "reader threads; 0 = the dataset's (tokens: 4)"),
        WL_PARAM("compute", OPTD_DURATION, 0, 0, "0",
                 "compute per step; 0 = the dataset's (tokens: 6 x active params x tokens / (989 "
                 "TFLOP/s x 40 % MFU), an H100)"),
        WL_PARAM("steps", OPTD_UINT, 1, 0, "20", "training steps"),
        WL_PARAM("prefetch", OPTD_UINT, 1, 0, "2", "batches read ahead (DLIO's prefetch)"),
        WL_PARAM("bs", OPTD_SIZE, 512, 64 << 20, "256k",
                 "largest read (a sample is read in pieces of this)"),
        WL_PARAM("ckpt_every", OPTD_UINT, 0, 0, "10", "steps between checkpoints; 0 = none"),
        WL_PARAM("tp", OPTD_UINT, 1, 4096, "1", "tensor-parallel degree (checkpoint shards)"),
        WL_PARAM("pp", OPTD_UINT, 1, 4096, "1", "pipeline-parallel degree"),
        WL_PARAM("dp", OPTD_UINT, 1, 4096, "8", "data-parallel degree"),
        WL_PARAM("zero", OPTD_UINT, 0, 3, "3", "ZeRO stage 0..3"),
        WL_PARAM("ranks", OPTD_UINT, 0, 0, "0", "checkpointing ranks simulated here; 0 = all"),
        {.name = NULL},
};

/* Dataset parameters: the preset's, then what the user gave. */
int train_cfg_from_params(struct wl *w, struct train_cfg *c, struct llmio_error *e)
{
	const char *ds = wl_str(w, "dataset");
	uint64_t v, seq;
	int ret;

	memset(c, 0, sizeof(*c));
	if ((ret = wl_u64(w, "seq_len", &seq, e)) || (ret = wl_enum(w, "layout", &ds, e)))
		return ret;
	c->layout = !strcmp(ds, "sample") ? TRAIN_SAMPLE
	            : !strcmp(ds, "tar")  ? TRAIN_TAR
	                                  : TRAIN_SHARD;
	ds = wl_str(w, "dataset");
	if (!strcmp(ds, "tokens")) {
		/* int32 token ids; 6 N T FLOPs per step (Kaplan et al. 2020) */
		c->record_bytes = seq * 4;
		c->files = 64;
		c->samples_per_file = 1024;
		c->batch = 8;
		c->readers = 4;
		c->compute_ns =
		        w->has_model
		                ? (uint64_t)(6.0 * (double)llmio_model_params_active(&w->model) *
		                             (double)(seq * c->batch) / (989e12 * 0.4) * 1e9)
		                : 100000000;
	} else {
		size_t i;

		for (i = 0; i < sizeof(presets) / sizeof(presets[0]); i++)
			if (!strcmp(ds, presets[i].name))
				break;
		if (i == sizeof(presets) / sizeof(presets[0]))
			return llmio_err(e, -EINVAL,
			                 "--dataset=%s: use tokens, unet3d, resnet50 or cosmoflow",
			                 ds);
		c->record_bytes = presets[i].record;
		c->files = presets[i].files;
		c->samples_per_file = presets[i].per_file;
		c->batch = presets[i].batch;
		c->readers = (unsigned)presets[i].readers;
		c->compute_ns = (uint64_t)(presets[i].compute_s * 1e9);
	}
#define OVERRIDE(key, field)                                                                       \
	do {                                                                                       \
		if ((ret = wl_u64(w, key, &v, e)))                                                 \
			return ret;                                                                \
		if (v)                                                                             \
			c->field = v;                                                              \
	} while (0)
	OVERRIDE("record", record_bytes);
	OVERRIDE("files", files);
	OVERRIDE("samples_per_file", samples_per_file);
	OVERRIDE("batch", batch);
	OVERRIDE("compute", compute_ns);
	OVERRIDE("readers", readers);
#undef OVERRIDE
	if ((ret = wl_u64(w, "steps", &c->steps, e)) ||
	    (ret = wl_u64(w, "prefetch", &c->prefetch, e)) || (ret = wl_u64(w, "bs", &c->bs, e)) ||
	    (ret = wl_u64(w, "ckpt_every", &c->ckpt_every, e)))
		return ret;
	return 0;
}

static int run(struct wl *w, struct llmio_error *e)
{
	struct train_cfg c;
	uint64_t *sizes = NULL;
	unsigned n = 0;
	int ret;

	ret = train_cfg_from_params(w, &c, e);
	if (!ret && c.ckpt_every)
		ret = ckpt_rank_sizes(w, &sizes, &n, e);
	if (ret)
		return ret;
	c.ckpt_sizes = sizes;
	c.ckpt_ranks = n;
	c.ckpt_prefix = "pretrain-ckpt";
	ret = train_phases(w, "train", &c, e);
	free(sizes);
	return ret;
}

const struct recipe recipe_pretrain = {
        .name = "pretrain",
        .summary = "dataset streaming with emulated compute (MLPerf Storage AU) and checkpoint "
                   "bursts every K steps",
        .params = train_params,
        .needs_model = true,
        .run = run,
};
