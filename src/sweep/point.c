/* SPDX-License-Identifier: MIT */
/*
 * One point of a sweep: its configuration, running it (a plain job here; a workload recipe
 * through the workload layer), and its journal record (docs/sweeps.md, "The journal").
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/sysinfo.h"
#include "base/error.h"
#include "engine/engine.h"
#include "llmio/llmio.h"
#include "stats/record.h"
#include "stats/result_json.h"
#include "sweep/sweep.h"
#include "workload/workload.h"

static uint64_t canon_u64(const struct sweep_config *c, const char *key)
{
	const char *v = sweep_config_get(c, key);

	return v ? strtoull(v, NULL, 10) : 0;
}

int sweep_point_make(const struct sweep_file *f, const struct sweep_plan *plan, size_t idx,
                     unsigned repeat, struct sweep_point *p, struct llmio_error *e)
{
	const struct sweep_plan_point *pp = &plan->p[idx];
	int ret;

	memset(p, 0, sizeof(*p));
	p->file = f;
	p->section = f->sec[pp->sec].name;
	p->index = idx;
	p->npoints = plan->n;
	p->repeat = repeat;
	ret = sweep_config_build(f, pp->sec, pp->choice, &p->cfg, e);
	if (ret)
		return ret;
	p->hash = sweep_config_hash(&p->cfg, repeat);
	p->workload = sweep_config_get(&p->cfg, "workload");
	steady_parse(sweep_config_get(&p->cfg, "ss"), &p->ss, NULL); /* checked when loaded */
	if (p->ss.enabled) {
		const char *iv = sweep_config_get(&p->cfg, "ss_interval");

		/* ss_interval is in the configuration only when the file sets it: 1 s otherwise */
		p->ss.interval_s = iv ? (double)strtoull(iv, NULL, 10) / 1e9 : 1.0;
		p->ss.window = steady_window_samples((double)canon_u64(&p->cfg, "ss_window") / 1e9,
		                                     p->ss.interval_s);
		p->ss.min_s = (double)canon_u64(&p->cfg, "ss_min") / 1e9;
		p->ss.max_s = (double)canon_u64(&p->cfg, "ss_max") / 1e9;
		if (!p->ss.max_s)
			p->ss.max_s = (double)canon_u64(&p->cfg, "runtime") / 1e9;
	}
	return 0;
}

int sweep_point_opts(const struct sweep_point *p, struct llmio_job_opts *o, struct llmio_error *e)
{
	int ret = 0;

	llmio_job_opts_init(o);
	for (size_t i = 0; i < p->cfg.n && !ret; i++) {
		const struct sweep_kv *kv = &p->cfg.kv[i];
		if (!kv->from_file)
			continue; /* a default: llmio_job_opts_init() has it */
		if (kv->kind == SK_JOB) {
			ret = llmio_job_opts_set(o, kv->key, kv->raw, e);
		} else if (kv->kind == SK_ENGINE &&
		           engine_opts_append(o->engine_opts, sizeof(o->engine_opts), kv->key,
		                              kv->raw)) {
			ret = llmio_err(e, -EINVAL, "too many engine options");
		}
	}
	if (!ret && p->ss.enabled && p->ss.max_s > 0)
		o->runtime_ns = (uint64_t)(p->ss.max_s * 1e9); /* steady state ends it sooner */
	return ret;
}

/* The job's progress callback: live figures to the caller, samples to the steady state. */
static void on_progress(void *arg, double elapsed_s, double eta_s, double iops, double bw)
{
	struct sweep_run_ctx *ctx = arg;

	if (ctx->progress)
		ctx->progress(ctx->progress_arg, elapsed_s, eta_s, iops, bw);
	if (steady_add(&ctx->ss, elapsed_s, ctx->ss.cfg.metric == STEADY_BW ? bw : iops))
		*ctx->stop = 1;
}

static cJSON *phase_json(const char *name, double wall_s, cJSON *jobs)
{
	cJSON *ph = cJSON_CreateObject();

	if (!ph) {
		cJSON_Delete(jobs);
		return NULL;
	}
	cJSON_AddStringToObject(ph, RK_NAME, name);
	cJSON_AddNumberToObject(ph, RK_WALL_S, wall_s);
	cJSON_AddItemToObject(ph, RK_JOBS, jobs);
	return ph;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int run_plain(const struct sweep_point *p, cJSON **phases, struct llmio_error *e)
{
	struct sweep_run_ctx *ctx = p->ctx;
	struct llmio_result *r = NULL;
	struct llmio_job_opts o;
	cJSON *jobs, *ph;
	double t0;
	int ret;

	ret = sweep_point_opts(p, &o, e);
	if (ret)
		return ret;
	if (ctx) {
		steady_init(&ctx->ss, &p->ss);
		o.stop = ctx->stop;
		o.progress = on_progress;
		o.progress_arg = ctx;
		if (p->ss.enabled)
			o.progress_interval_ns = (uint64_t)(p->ss.interval_s * 1e9 + 0.5);
	}
	t0 = now_s();
	if (ctx && ctx->dist) /* under MPI: this rank's share; the merged job on rank 0 */
		ret = ctx->dist->run_job(&o, &r, &ctx->mpi, e);
	else
		ret = llmio_job_run(&o, &r, e);
	if (!r)
		return ret;
	if (ctx) {
		ctx->interrupted = ctx->abort && *ctx->abort;
		/* stopped by steady state: a complete measurement, not an interruption */
		if (ctx->ss.reached && !ctx->interrupted)
			r->interrupted = false;
	}
	jobs = cJSON_CreateArray();
	if (jobs)
		cJSON_AddItemToArray(jobs, result_job_json(r));
	ph = jobs ? phase_json("run", now_s() - t0, jobs) : NULL;
	*phases = ph ? cJSON_CreateArray() : NULL;
	if (*phases)
		cJSON_AddItemToArray(*phases, ph);
	else
		cJSON_Delete(ph);
	llmio_result_destroy(r);
	if (!*phases && !ret)
		ret = llmio_err(e, -ENOMEM, "out of memory building the record");
	return ret;
}

/*
 * A workload= point: the recipe builds its phases from the model and the point's recipe
 * parameters; job keys (engine, direct, iodepth ...) apply to every stream.
 */
static int run_workload(const struct sweep_point *p, cJSON **phases, struct llmio_error *e)
{
	const char *keys[SWEEP_MAX_KEYS], *vals[SWEEP_MAX_KEYS];
	struct llmio_job_opts o;
	size_t n = 0;
	bool direct_given = false;
	cJSON *mpi = NULL; /* without a context there is no MPI */
	int ret;

	ret = sweep_point_opts(p, &o, e);
	if (ret)
		return ret;
	for (size_t i = 0; i < p->cfg.n; i++) {
		const struct sweep_kv *kv = &p->cfg.kv[i];

		if (kv->kind == SK_PARAM && kv->from_file) {
			keys[n] = kv->key;
			vals[n++] = kv->raw;
		}
		if (kv->kind == SK_JOB && kv->from_file && !strcmp(kv->key, "direct"))
			direct_given = true;
	}
	if (p->ctx)
		o.stop = p->ctx->stop;
	return wl_run_params(p->workload, sweep_config_get(&p->cfg, "model"), &o, direct_given,
	                     p->ctx && p->ctx->keep, keys, vals, n, phases,
	                     p->ctx ? &p->ctx->mpi : &mpi, e);
}

int sweep_run_point(const struct sweep_point *p, cJSON **phases, struct llmio_error *e)
{
	*phases = NULL;
	if (p->ctx)
		p->ctx->interrupted = false;
	if (!p->workload)
		return run_plain(p, phases, e);
	return run_workload(p, phases, e);
}

double sweep_point_estimate_s(const struct sweep_point *p, double *min_s, bool *known)
{
	double runtime = (double)canon_u64(&p->cfg, "runtime") / 1e9;
	double ramp = (double)canon_u64(&p->cfg, "ramp_time") / 1e9;
	double max = p->ss.enabled && p->ss.max_s > 0 ? p->ss.max_s : runtime;
	double window = p->ss.window * p->ss.interval_s;
	double first = p->ss.min_s > window ? p->ss.min_s : window;

	*known = !p->workload && max > 0;
	*min_s = (p->ss.enabled && first < max ? first : max) + ramp;
	return max + ramp;
}

bool sweep_drop_caches(void)
{
	int fd;
	bool ok;

	if (geteuid() != 0)
		return false;
	sync();
	fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ok = write(fd, "1", 1) == 1;
	close(fd);
	return ok;
}

static cJSON *host_json(void)
{
	struct llmio_result *r = calloc(1, sizeof(*r));
	cJSON *h = cJSON_CreateObject();

	if (!r || !h) {
		free(r);
		cJSON_Delete(h);
		return NULL;
	}
	sysinfo_host(r);
	cJSON_AddStringToObject(h, "hostname", r->hostname);
	cJSON_AddStringToObject(h, "kernel", r->kernel);
	cJSON_AddStringToObject(h, "cpu_model", r->cpu_model);
	cJSON_AddNumberToObject(h, "online_cpus", sysinfo_online_cpus());
	free(r);
	return h;
}

static void add_steady(cJSON *rec, const struct sweep_point *p, const cJSON *phases)
{
	cJSON *ss = cJSON_AddObjectToObject(rec, RK_STEADY_STATE);
	const cJSON *job = cJSON_GetArrayItem(
	        cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(phases, 0), RK_JOBS), 0);
	const cJSON *rt = cJSON_GetObjectItemCaseSensitive(job, RK_JOB_RUNTIME);

	cJSON_AddBoolToObject(ss, "enabled", p->ss.enabled);
	cJSON_AddBoolToObject(ss, "reached", p->ctx && p->ctx->ss.reached);
	cJSON_AddStringToObject(ss, "metric", p->ss.metric == STEADY_BW ? "bw" : "iops");
	cJSON_AddNumberToObject(ss, "window_s",
	                        p->ss.enabled ? p->ss.window * p->ss.interval_s : 0);
	cJSON_AddNumberToObject(ss, "tolerance_pct", p->ss.enabled ? p->ss.tolerance_pct : 0);
	cJSON_AddStringToObject(ss, "test", p->ss.test == STEADY_CI ? "ci" : "range");
	cJSON_AddNumberToObject(ss, "interval_s", p->ss.enabled ? p->ss.interval_s : 0);
	cJSON_AddNumberToObject(ss, "samples", p->ctx ? p->ctx->ss.n : 0);
	if (p->ss.test == STEADY_CI)
		cJSON_AddNumberToObject(ss, "ci_pct", p->ctx ? p->ctx->ss.ci_pct : 0);
	cJSON_AddNumberToObject(ss, "min_s", p->ss.min_s);
	cJSON_AddNumberToObject(ss, "max_s", p->ss.max_s);
	cJSON_AddNumberToObject(ss, "measured_s", cJSON_IsNumber(rt) ? rt->valuedouble / 1000 : 0);
}

cJSON *sweep_point_record(const struct sweep_point *p, struct sweep_outcome *o)
{
	cJSON *rec = cJSON_CreateObject(), *sw, *e;
	char hash[20];

	if (!rec)
		return NULL;
	snprintf(hash, sizeof(hash), "%016llx", (unsigned long long)p->hash);
	cJSON_AddStringToObject(rec, RK_LLMIO, llmio_version());
	cJSON_AddStringToObject(rec, RK_RECORD, "point");
	cJSON_AddStringToObject(rec, RK_CONFIG_HASH, hash);
	sw = cJSON_AddObjectToObject(rec, RK_SWEEP);
	cJSON_AddStringToObject(sw, "file", p->file->path);
	cJSON_AddStringToObject(sw, "section", p->section);
	cJSON_AddNumberToObject(sw, "point", (double)p->index);
	cJSON_AddNumberToObject(sw, "points", (double)p->npoints);
	cJSON_AddNumberToObject(sw, "repeat", p->repeat);
	cJSON_AddItemToObject(rec, RK_CONFIG, sweep_config_json(&p->cfg, p->repeat));
	cJSON_AddStringToObject(rec, RK_WORKLOAD, p->workload ? p->workload : "job");
	cJSON_AddItemToObject(rec, RK_HOST, host_json());
	cJSON_AddBoolToObject(rec, RK_CACHE_DROPPED, o->cache_dropped);
	add_steady(rec, p, o->phases);
	cJSON_AddNumberToObject(rec, RK_START_EPOCH_MS, (double)o->start_epoch_ms);
	cJSON_AddNumberToObject(rec, RK_WALL_S, o->wall_s);
	cJSON_AddItemToObject(rec, RK_PHASES, o->phases ? o->phases : cJSON_CreateArray());
	o->phases = NULL;
	if (o->mpi) /* under MPI: the point's aggregate is in phases, each rank's record here */
		cJSON_AddItemToObject(rec, RK_MPI, o->mpi);
	o->mpi = NULL;
	if (o->error) {
		e = cJSON_AddObjectToObject(rec, RK_ERROR);
		cJSON_AddNumberToObject(e, "code", o->error);
		cJSON_AddStringToObject(e, "message", o->message ? o->message : "");
	}
	return rec;
}
