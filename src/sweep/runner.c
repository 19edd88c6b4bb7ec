/* SPDX-License-Identifier: MIT */
/* The sweep runner (runner.h): plan -> order -> run each point -> append its record. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "base/rand.h"
#include "engine/engine.h"
#include "base/error.h"
#include "sweep/journal.h"
#include "sweep/runner.h"
#include "workload/leftover.h"

/* Thread start-up, target open, the record and its fsync per point, when the configuration
 * says nothing about it: an estimate for --dry-run only (measured: 0.07 to 0.15 s on a busy
 * 2-CPU machine; a page cache drop, where one is due, adds about half a second). */
#define SETUP_S_PER_POINT 0.15

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

struct collect {
	struct sweep_runner *r;
	const struct sweep_events *ev;
};

static int collect_hash(void *arg, unsigned line, const cJSON *rec, const char *skipped)
{
	struct collect *c = arg;
	struct sweep_runner *r = c->r;
	uint64_t *d;

	(void)line;
	if (!rec) {
		if (c->ev && c->ev->skipped_line)
			c->ev->skipped_line(c->ev->arg, skipped);
		return 0;
	}
	if (cJSON_GetObjectItemCaseSensitive(rec, "error"))
		return 0; /* a failed point is tried again */
	d = realloc(r->done, (r->ndone + 1) * sizeof(*d));
	if (!d)
		return -ENOMEM;
	r->done = d;
	journal_record_hash(rec, &r->done[r->ndone++]);
	return 0;
}

bool sweep_runner_is_done(const struct sweep_runner *r, uint64_t hash)
{
	return r->ndone && bsearch(&hash, r->done, r->ndone, sizeof(hash), cmp_u64);
}

static int make_order(struct sweep_runner *r)
{
	struct rng rng;

	r->norder = r->plan.n * r->o.repeat;
	r->order = calloc(r->norder ? r->norder : 1, sizeof(*r->order));
	if (!r->order)
		return -ENOMEM;
	/* whole rounds: every point once, then every point again, ... */
	for (size_t i = 0; i < r->norder; i++)
		r->order[i] = (struct sweep_order){i % r->plan.n, (unsigned)(i / r->plan.n)};
	if (!r->o.shuffle)
		return 0;
	rng_seed(&rng, r->o.seed);
	for (size_t i = r->norder; i > 1; i--) {
		size_t j = rng_below(&rng, i);
		struct sweep_order t = r->order[i - 1];

		r->order[i - 1] = r->order[j];
		r->order[j] = t;
	}
	return 0;
}

int sweep_runner_prepare(struct sweep_runner *r, const struct sweep_run_opts *o,
                         const struct sweep_events *ev, struct llmio_error *e)
{
	struct collect c = {r, ev};
	int ret;

	memset(r, 0, sizeof(*r));
	r->o = *o;
	if (!r->o.repeat)
		r->o.repeat = 1;
	ret = sweep_file_load(o->path, o->dir, &r->file, e);
	if (ret) {
		/* a bad or missing job file is bad input */
		r->bad_input = ret == -EINVAL || ret == -ENOENT;
		return ret;
	}
	/* a point's record is the journal's: fio's logs are `llmio run`'s, never silently lost */
	for (size_t i = 0; i < r->file->nsec; i++)
		for (size_t k = 0; k < r->file->sec[i].ndims; k++) {
			const struct sweep_dim *d = &r->file->sec[i].dims[k];

			if (!strncmp(d->key, "write_", 6) && strstr(d->key, "_log")) {
				r->bad_input = true;
				return llmio_err(e, -EINVAL,
				                 "%s:%u: %s: fio's logs are written by `llmio run` "
				                 "(a job file of one point), not by sweep points",
				                 d->file, d->line, d->key);
			}
		}
	ret = sweep_plan_build(r->file, &r->plan, e);
	if (ret) {
		r->bad_input = ret == -EINVAL;
		return ret;
	}
	if (make_order(r))
		return llmio_err(e, -ENOMEM, "out of memory");
	if (o->resume && o->journal && access(o->journal, F_OK) == 0) {
		ret = journal_read(o->journal, collect_hash, &c, e);
		if (ret) {
			if (ret == -ENOMEM)
				llmio_err(e, ret, "out of memory");
			return ret;
		}
		if (r->ndone) /* qsort's base must not be NULL, even for no elements */
			qsort(r->done, r->ndone, sizeof(*r->done), cmp_u64);
	}
	return 0;
}

void sweep_runner_release(struct sweep_runner *r)
{
	free(r->done);
	free(r->order);
	sweep_plan_release(&r->plan);
	sweep_file_free(r->file);
	r->done = NULL;
	r->order = NULL;
	r->file = NULL;
}

/* Is dim i an option of another engine than the point's (so not part of the point)? */
static bool ioengine_lacks(const struct sweep_runner *r, const struct sweep_plan_point *pp,
                           size_t i)
{
	struct sweep_config *cfg = malloc(sizeof(*cfg));
	bool lacks;

	if (!cfg)
		return false;
	lacks = sweep_config_build(r->file, pp->sec, pp->choice, cfg, NULL) == 0 &&
	        !sweep_config_get(cfg, r->file->sec[pp->sec].dims[i].key);
	free(cfg);
	return lacks;
}

void sweep_runner_label(const struct sweep_runner *r, size_t idx, char *buf, size_t len)
{
	const struct sweep_plan_point *pp = &r->plan.p[idx];
	const struct sweep_section *s = &r->file->sec[pp->sec];
	size_t used = (size_t)snprintf(buf, len, "[%s]", s->name);

	for (size_t i = 0; i < s->ndims && used < len; i++)
		if (s->dims[i].n > 1 && (s->dims[i].kind != SK_ENGINE || !ioengine_lacks(r, pp, i)))
			used += (size_t)snprintf(buf + used, len - used, " %s=%s", s->dims[i].key,
			                         s->dims[i].v[pp->choice[i]].raw);
}

double sweep_runner_eta_s(const struct sweep_runner *r, double current_left)
{
	size_t left = r->norder - r->k;

	return r->ran ? r->spent / (double)r->ran * (double)(left ? left - 1 : 0) + current_left
	              : 0;
}

int sweep_runner_estimate(const struct sweep_runner *r, struct sweep_estimate *est,
                          struct llmio_error *e)
{
	struct sweep_point *p = malloc(sizeof(*p));
	double min_s;
	int ret = 0;

	memset(est, 0, sizeof(*est));
	est->setup_s = SETUP_S_PER_POINT;
	if (!p)
		return llmio_err(e, -ENOMEM, "out of memory");
	for (size_t i = 0; i < r->norder && !ret; i++) {
		bool known;

		ret = sweep_point_make(r->file, &r->plan, r->order[i].idx, r->order[i].repeat, p,
		                       e);
		if (ret)
			break;
		if (sweep_runner_is_done(r, p->hash)) {
			est->already++;
			continue;
		}
		est->total_s += sweep_point_estimate_s(p, &min_s, &known) + SETUP_S_PER_POINT;
		est->least_s += min_s + SETUP_S_PER_POINT;
		est->unknown += !known;
	}
	free(p);
	return ret;
}

/* Main figures of a record's first job, for the caller's line per point. */
static void record_figures(const cJSON *rec, double *iops, double *bw)
{
	const cJSON *job = cJSON_GetArrayItem(
	        cJSON_GetObjectItemCaseSensitive(
	                cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(rec, "phases"), 0),
	                "jobs"),
	        0);

	*iops = *bw = 0;
	for (int op = 0; op < 2; op++) {
		const cJSON *o = cJSON_GetObjectItemCaseSensitive(job, op ? "write" : "read");
		const cJSON *i = cJSON_GetObjectItemCaseSensitive(o, "iops");
		const cJSON *b = cJSON_GetObjectItemCaseSensitive(o, "bw_bytes");

		*iops += cJSON_IsNumber(i) ? i->valuedouble : 0;
		*bw += cJSON_IsNumber(b) ? b->valuedouble : 0;
	}
}

/*
 * Does point p need the whole page cache dropped before it?  The drop (sync, then
 * drop_caches) costs a system-wide writeback, about half a second per point on a busy
 * machine: more than the rest of a point's setup together.  An O_DIRECT plain job whose
 * invalidate is on does not read through the cache, and the job itself writes back and drops
 * its target's pages (fdatasync + POSIX_FADV_DONTNEED), so a buffered point before it leaves
 * nothing behind; a null-engine point touches no file (not even the run's first one, whose drop
 * cost a null-engine sweep a second); every other point (buffered, a recipe, invalidate off)
 * gets the drop, and so does the first point of the run that touches a file.
 */
static bool needs_drop(const struct sweep_runner *r, const struct sweep_point *p)
{
	const char *direct = sweep_config_get(&p->cfg, "direct");
	const char *inval = sweep_config_get(&p->cfg, "invalidate");
	const struct engine_ops *eng = engine_find(sweep_config_get(&p->cfg, "ioengine"));

	if (r->o.keep_cache)
		return false;
	if (r->o.no_reuse || p->workload)
		return true;
	if (eng && (eng->caps & ENGINE_CAP_NO_IO))
		return false; /* the null engine touches no file, first point or not */
	if (!r->drops)
		return true;
	return !(direct && !strcmp(direct, "1") && inval && !strcmp(inval, "1"));
}

/* One point: run it, append its record, tell the caller. */
static int run_one(struct sweep_runner *r, struct journal *j, struct sweep_point *p,
                   struct sweep_run_ctx *ctx, const struct sweep_events *ev, struct llmio_error *e)
{
	struct sweep_outcome o = {0};
	struct sweep_point_done d = {.k = r->k};
	struct llmio_error pe; /* the point's failure, recorded with it */
	char label[512];
	struct timeval tv;
	double t0 = mono_s();
	cJSON *rec;
	int ret;

	sweep_runner_label(r, p->index, label, sizeof(label));
	r->label = label;
	if (needs_drop(r, p)) {
		/* counted even when not root: what matters is that it was due */
		r->drops++;
		o.cache_dropped = sweep_drop_caches();
	}
	gettimeofday(&tv, NULL);
	o.start_epoch_ms = (uint64_t)tv.tv_sec * 1000 + (uint64_t)tv.tv_usec / 1000;
	*ctx->stop = 0;
	p->ctx = ctx;
	ctx->mpi = NULL;
	llmio_error_init(&pe);
	ret = sweep_run_point(p, &o.phases, &pe);
	o.mpi = ctx->mpi;
	ctx->mpi = NULL;
	o.wall_s = mono_s() - t0;
	r->label = "";
	if (ev && ev->point_ended)
		ev->point_ended(ev->arg);
	if (ctx->interrupted || (r->o.dist && !r->o.dist->writer)) {
		/* cut short: not recorded, a resumed sweep runs it; or another rank journals it */
		cJSON_Delete(o.phases);
		cJSON_Delete(o.mpi);
		r->ran += !ctx->interrupted;
		return 0;
	}
	o.error = ret;
	o.message = ret ? pe.msg : NULL;
	rec = sweep_point_record(p, &o);
	if (!rec) {
		cJSON_Delete(o.phases);
		return llmio_err(e, -ENOMEM, "out of memory");
	}
	record_figures(rec, &d.iops, &d.bw);
	ret = journal_append(j, rec);
	cJSON_Delete(rec);
	if (ret)
		return llmio_err(e, ret, "cannot append to %s: %s", r->o.journal, strerror(-ret));
	r->ran++;
	r->spent += o.wall_s;
	r->failed += o.error != 0;
	d.label = label;
	d.error = o.error;
	d.message = o.error ? pe.msg : NULL;
	d.steady = ctx->ss.reached;
	if (ev && ev->point_done)
		ev->point_done(ev->arg, &d);
	return 0;
}

int sweep_runner_open(struct sweep_runner *r, const struct sweep_events *ev, volatile int *abort,
                      volatile int *point_stop, struct llmio_error *e)
{
	int ret = 0;

	r->pt = malloc(sizeof(*r->pt));
	r->ctx = calloc(1, sizeof(*r->ctx));
	if (!r->pt || !r->ctx)
		return llmio_err(e, -ENOMEM, "out of memory");
	r->j = (struct journal){.fd = -1};
	/* under MPI one rank writes the journal */
	if (!r->o.dist || r->o.dist->writer)
		ret = journal_open(&r->j, r->o.journal, e);
	if (ret)
		return ret;
	r->ctx->stop = point_stop;
	r->ctx->abort = abort;
	r->ctx->dist = r->o.dist;
	r->ctx->keep = r->o.keep;
	r->ev = ev;
	r->started = true;
	r->label = "";
	if (ev) {
		r->ctx->progress = ev->progress;
		r->ctx->progress_arg = ev->arg;
	}
	return 0;
}

int sweep_runner_point(struct sweep_runner *r, size_t idx, unsigned repeat, struct llmio_error *e)
{
	int ret = sweep_point_make(r->file, &r->plan, idx, repeat, r->pt, e);

	if (ret)
		return ret;
	if (sweep_runner_is_done(r, r->pt->hash)) {
		r->skipped++;
		return 0;
	}
	if (r->record)
		return r->record(r->record_arg, r, r->pt, e);
	return run_one(r, &r->j, r->pt, r->ctx, r->ev, e);
}

void sweep_runner_close(struct sweep_runner *r)
{
	if (r->pt)
		journal_close(&r->j);
	free(r->pt);
	free(r->ctx);
	r->pt = NULL;
	r->ctx = NULL;
}

int sweep_runner_reload(struct sweep_runner *r, struct llmio_error *e)
{
	struct collect c = {r, NULL};
	int ret;

	free(r->done);
	r->done = NULL;
	r->ndone = 0;
	if (access(r->o.journal, F_OK))
		return 0;
	ret = journal_read(r->o.journal, collect_hash, &c, e);
	if (ret == -ENOMEM)
		return llmio_err(e, ret, "out of memory");
	if (!ret && r->ndone)
		qsort(r->done, r->ndone, sizeof(*r->done), cmp_u64);
	return ret;
}

int sweep_runner_run(struct sweep_runner *r, const struct sweep_events *ev, volatile int *abort,
                     volatile int *point_stop, struct llmio_error *e)
{
	int ret = sweep_runner_open(r, ev, abort, point_stop, e);

	for (r->k = 0; !ret && r->k < r->norder && !*abort; r->k++)
		ret = sweep_runner_point(r, r->order[r->k].idx, r->order[r->k].repeat, e);
	sweep_runner_close(r);
	return ret;
}

/*
 * Note what is on disk where the points write, before the first one runs: their work
 * directories (plain points with directory=, recipes) and the files they name (filename=)
 * that do not exist yet.  A point of the null engine touches no file.
 */
int sweep_runner_note_targets(const struct sweep_runner *r, struct wl_leftovers *left,
                              struct llmio_error *e)
{
	struct sweep_point *p = malloc(sizeof(*p));
	int ret = 0;

	if (!p)
		return llmio_err(e, -ENOMEM, "out of memory");
	for (size_t i = 0; i < r->plan.n && !ret; i++) {
		const struct engine_ops *eng;

		ret = sweep_point_make(r->file, &r->plan, i, 0, p, e);
		if (ret)
			break;
		eng = engine_find(sweep_config_get(&p->cfg, "ioengine"));
		if (!p->workload && eng && (eng->caps & ENGINE_CAP_NO_IO))
			continue;
		ret = wl_leftovers_add_dir(left, sweep_config_get(&p->cfg, "directory"), e);
		if (!ret && !p->workload)
			ret = wl_leftovers_add_file(left, sweep_config_get(&p->cfg, "filename"), e);
	}
	free(p);
	return ret;
}

int sweep_manifest_path(const char *journal, char *out, size_t len, struct llmio_error *e)
{
	if ((size_t)snprintf(out, len, "%s.llmio-made", journal) >= len)
		return llmio_err(e, -ENAMETOOLONG, "%s: the path is too long", journal);
	return 0;
}
