/* SPDX-License-Identifier: MIT */
/*
 * Recipe `ckpt`: MLPerf Storage checkpointing.  Each simulated rank writes its shard of the
 * training checkpoint (sizes from the model, TP x PP x DP and the ZeRO stage: see
 * llmio_model_rank_bytes()) and fsyncs it; the page cache of the files is dropped; the ranks
 * read their shards back.  Duration is the maximum over ranks and throughput the minimum over
 * ranks, as MLPerf Storage reports them; repeated R times.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workload/objects.h"
#include "workload/phases.h"
#include "base/error.h"
#include "workload/segsrc.h"

/* Under MPI the simulated ranks are spread over the processes: the figures are over all. */
static void rank_metrics(struct wl *w, struct wl_phase *ph, const struct segsrc *s,
                         const uint64_t *sizes, unsigned n)
{
	double dmax = 0, tmin = -1, total = 0;

	for (unsigned r = 0; r < n; r++) {
		double d = segsrc_thread_s(s, r), t;

		if (!sizes[r])
			continue;
		total += (double)sizes[r];
		if (d > dmax)
			dmax = d;
		t = d > 0 ? (double)sizes[r] / d / 1e9 : 0;
		if (tmin < 0 || t < tmin)
			tmin = t;
	}
	dmax = wl_reduce(w, dmax, WL_MAX);
	tmin = wl_reduce(w, tmin < 0 ? 1e300 : tmin, WL_MIN);
	tmin = tmin >= 1e300 ? -1 : tmin;
	total = wl_reduce(w, total, WL_SUM);
	n = (unsigned)wl_reduce(w, n, WL_SUM);
	wl_metric(ph, "duration_s", dmax, "s");
	wl_metric(ph, "throughput_min_rank_GBps", tmin < 0 ? 0 : tmin, "GB/s");
	wl_metric(ph, "aggregate_GBps", dmax > 0 ? total / dmax / 1e9 : 0, "GB/s");
	wl_metric(ph, "ranks", n, "");
}

/*
 * An object larger than a write is a multipart upload whose parts are the writes: S3 wants
 * 5 MiB or more but the last, so smaller writes become 8 MiB parts (the AWS CLI's
 * multipart_chunksize), and the phase says so.
 */
static uint64_t object_part(struct wl_phase *ph, const uint64_t *sizes, unsigned n, uint64_t bs)
{
	bool multipart = false;
	size_t used = strlen(ph->note);

	for (unsigned r = 0; r < n; r++)
		multipart |= sizes[r] > bs;
	if (!multipart || bs >= (5u << 20))
		return bs;
	snprintf(ph->note + used, sizeof(ph->note) - used,
	         "%sobjects: written as multipart uploads in 8 MiB parts (bs=%llu is below S3's "
	         "5 MiB part minimum)",
	         used ? "; " : "", (unsigned long long)bs);
	return 8u << 20;
}

static int one_way(struct wl *w, struct wl_phase *ph, struct llmio_file *files,
                   const uint64_t *sizes, unsigned n, uint64_t bs, bool write,
                   struct llmio_error *e)
{
	struct llmio_job_opts o;
	struct segsrc s;
	int ret;

	if (write && wl_on_objects(w))
		bs = object_part(ph, sizes, n, bs);
	ret = segsrc_init(&s, n, (uint32_t)bs, wl_align(w), write);
	for (unsigned r = 0; r < n && !ret; r++)
		ret = segsrc_add(&s, r, r, 0, sizes[r]);
	if (ret) {
		segsrc_release(&s);
		return llmio_err(e, ret, "out of memory");
	}
	wl_job_opts(w, &o);
	o.files = files;
	o.nfiles_list = n;
	o.io_source = &s.src;
	o.numjobs = n;
	o.bs = bs;
	o.rw = write ? LLMIO_RW_WRITE : LLMIO_RW_READ;
	o.end_fsync = write;
	o.invalidate = true; /* a restore reads cold, as after MLPerf's cache drop */
	ph->promised_bytes = segsrc_bytes(&s);
	ret = wl_job(w, ph, write ? "ranks-write" : "ranks-read", &o, e);
	if (ph->nstreams)
		ph->wall_s = ph->streams[ph->nstreams - 1]->runtime_s;
	rank_metrics(w, ph, &s, sizes, n);
	segsrc_release(&s);
	return ret;
}

/*
 * The shards of the simulated ranks that process `owner` handles (all of them without MPI):
 * paths, files and their sizes in mine; *n of them.
 */
static int shard_list(const struct wl *w, unsigned owner, const char *prefix, const uint64_t *sizes,
                      unsigned all, char (*paths)[LLMIO_PATH_MAX], struct llmio_file *files,
                      uint64_t *mine, unsigned flags, unsigned *n, struct llmio_error *e)
{
	*n = 0;
	for (unsigned r = 0; r < all; r++) {
		if (!wl_owned_by(w, r, owner))
			continue;
		if (wl_path(w, paths[*n], sizeof(paths[*n]), "%s-rank%05u.pt", prefix, r))
			return llmio_err(e, -ENAMETOOLONG, "--directory is too long");
		mine[*n] = sizes[r];
		files[*n] =
		        (struct llmio_file){.path = paths[*n], .size = sizes[r], .flags = flags};
		(*n)++;
	}
	return 0;
}

int ckpt_phases(struct wl *w, const char *name, const char *prefix, const uint64_t *sizes,
                unsigned n, uint64_t bs, bool restore, struct llmio_error *e)
{
	char(*paths)[LLMIO_PATH_MAX] = calloc(n, sizeof(*paths));
	struct llmio_file *files = calloc(n, sizeof(*files));
	uint64_t *mine = calloc(n, sizeof(*mine));
	unsigned all = n, me = w->dist ? w->dist->rank : 0;
	struct wl_phase *ph;
	int ret = -ENOMEM;

	if (!paths || !files || !mine)
		goto out;
	/* under MPI each process writes the shards of its simulated ranks (wl_owns) */
	ret = shard_list(w, me, prefix, sizes, all, paths, files, mine, LLMIO_FILE_FRESH, &n, e);
	if (ret)
		goto out;
	if (!n) {
		ret = llmio_err(e, -EINVAL,
		                "%u simulated ranks (tp x pp x dp) for %u MPI ranks: give each at "
		                "least one",
		                all, w->dist ? w->dist->size : 1);
		goto out;
	}
	ret = wl_check_space(w, files, n, e);
	if (ret)
		goto out;
	ret = wl_objects_before_write(w, files, n, e);
	if (ret)
		goto out;
	ph = wl_phase_new(w, "%s", name);
	ret = ph ? one_way(w, ph, files, mine, n, bs, true, e) : -E2BIG;
	/* what a failed upload left is aborted by the engine; what went in is removed later */
	if (ph && wl_objects_written(w, files, n) && !ret)
		ret = llmio_err(e, -ENOMEM, "out of memory");
	if (ret || !restore)
		goto out;
	/* now read what was written; with --reorder what another process wrote (IOR -C) */
	if (w->dist && w->dist->reorder)
		me = (me + w->dist->reorder_shift) % w->dist->size;
	ret = shard_list(w, me, prefix, sizes, all, paths, files, mine, 0, &n, e);
	if (ret)
		goto out;
	ph = wl_phase_new(w, "%s-restore", name);
	ret = ph ? one_way(w, ph, files, mine, n, bs, false, e) : -E2BIG;
out:
	if (ret == -ENOMEM && !llmio_err_msg(e)[0])
		llmio_err(e, ret, "out of memory");
	if (ret == -E2BIG)
		llmio_err(e, ret, "too many phases: lower --repeat");
	free(mine);
	free(files);
	free(paths);
	return ret;
}

static const struct llmio_optdesc params[] = {
        WL_PARAM("tp", OPTD_UINT, 1, 4096, "1", "tensor-parallel degree"),
        WL_PARAM("pp", OPTD_UINT, 1, 4096, "1", "pipeline-parallel degree"),
        WL_PARAM("dp", OPTD_UINT, 1, 4096, "8", "data-parallel degree"),
        WL_PARAM("zero", OPTD_UINT, 0, 3, "3",
                 "ZeRO stage 0..3 (how optimizer state and weights are sharded)"),
        WL_PARAM("ranks", OPTD_UINT, 0, 0, "0",
                 "ranks simulated on this host, 0 = all TP x PP x DP (MLPerf's subset mode when "
                 "fewer)"),
        WL_PARAM("repeat", OPTD_UINT, 1, 20, "1", "write + read rounds"),
        WL_PARAM("bs", OPTD_SIZE, 1, 64 << 20, "1m", "size of each write and read"),
        {.name = NULL},
};

/* Parallel layout and per-rank sizes from the model; shared with pretrain. */
int ckpt_rank_sizes(struct wl *w, uint64_t **sizes, unsigned *n, struct llmio_error *e)
{
	struct llmio_ckpt_opts co;
	uint64_t tp, pp, dp, zero, ranks;
	int ret;

	llmio_ckpt_opts_init(&co, &w->model);
	if ((ret = wl_u64(w, "tp", &tp, e)) || (ret = wl_u64(w, "pp", &pp, e)) ||
	    (ret = wl_u64(w, "dp", &dp, e)) || (ret = wl_u64(w, "zero", &zero, e)) ||
	    (ret = wl_u64(w, "ranks", &ranks, e)))
		return ret;
	if (tp * pp * dp > 4096) { /* each degree is in range, their product too? */
		return llmio_err(e, -EINVAL, "tp=%llu pp=%llu dp=%llu: at most 4096 ranks in all",
		                 (unsigned long long)tp, (unsigned long long)pp,
		                 (unsigned long long)dp);
	}
	co.tp = (uint32_t)tp;
	co.pp = (uint32_t)pp;
	co.dp = (uint32_t)dp;
	co.zero_stage = (uint32_t)zero;
	if (!ranks || ranks > tp * pp * dp)
		ranks = tp * pp * dp;
	if (ranks > 64)
		return llmio_err(
		        e, -EINVAL,
		        "%llu ranks on one host: use --ranks N (at most 64) for MLPerf's subset "
		        "mode",
		        (unsigned long long)ranks);
	*sizes = calloc(ranks, sizeof(**sizes));
	if (!*sizes)
		return -ENOMEM;
	for (unsigned r = 0; r < ranks; r++) {
		struct llmio_rank_bytes rb;

		ret = llmio_model_rank_bytes(&w->model, &co, r, &rb);
		if (ret) {
			llmio_err(e, ret, "cannot size rank %u's checkpoint shard", r);
			free(*sizes);
			return ret;
		}
		(*sizes)[r] = rb.total_bytes ? wl_scaled(w, rb.total_bytes, 4096, wl_align(w)) : 0;
	}
	*n = (unsigned)ranks;
	return 0;
}

static int run(struct wl *w, struct llmio_error *e)
{
	uint64_t *sizes = NULL, repeat, bs;
	unsigned n = 0;
	int ret;

	if ((ret = wl_u64(w, "repeat", &repeat, e)) || (ret = wl_u64(w, "bs", &bs, e)))
		return ret;
	ret = ckpt_rank_sizes(w, &sizes, &n, e);
	for (uint64_t i = 0; i < repeat && !ret; i++) {
		char name[32];

		snprintf(name, sizeof(name), repeat > 1 ? "save.%llu" : "save",
		         (unsigned long long)i + 1);
		ret = ckpt_phases(w, name, "ckpt", sizes, n, bs, true, e);
	}
	free(sizes);
	return ret;
}

const struct recipe recipe_ckpt = {
        .name = "ckpt",
        .summary = "MLPerf Storage checkpointing: ranks write their shards (fsync), then read "
                   "them back cold",
        .params = params,
        .needs_model = true,
        .run = run,
};
