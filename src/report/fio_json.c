/* SPDX-License-Identifier: MIT */
/*
 * fio's JSON from llmio's results.  The job object starts as `llmio run --json` writes it
 * (stats/result_out.c: already fio's names for io_bytes, bw, iops, runtime, slat/clat/lat_ns,
 * job_runtime, usr_cpu, sys_cpu, ctx) and gets here what fio's own readers expect as well:
 * percentiles over fio's list, a trim direction (a trim job's, zeros otherwise), per-second
 * bandwidth and IOPS statistics, the json+ bins, disk_util and fio's top-level keys.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "job/options.h"
#include "llmio/hist.h"
#include "report/fio_json.h"
#include "base/fmt.h"
#include "stats/result_json.h"

/* fio's "percentile" object: "%f" of each percentile -> ns */
static cJSON *percentiles(const struct llmio_hist *h, const double *pct, size_t n)
{
	cJSON *o = cJSON_CreateObject();
	char key[32];

	for (size_t i = 0; o && i < n; i++) {
		snprintf(key, sizeof(key), "%f", pct[i]);
		cJSON_AddNumberToObject(o, key,
		                        h->count ? (double)llmio_hist_percentile(h, pct[i]) : 0);
	}
	return o;
}

/* json+: fio's "bins", each non-empty bucket as its value in ns -> count */
static cJSON *bins(const struct llmio_hist *h)
{
	cJSON *o = cJSON_CreateObject();
	char key[32];

	for (unsigned i = 0; o && i < LLMIO_HIST_BUCKETS; i++) {
		if (!h->bucket[i])
			continue;
		snprintf(key, sizeof(key), "%llu", (unsigned long long)llmio_hist_bucket_value(i));
		cJSON_AddNumberToObject(o, key, (double)h->bucket[i]);
	}
	return o;
}

/* fio writes a latency's percentiles and bins only when it has samples (N > 0) */
static void set_percentiles(cJSON *lat, const struct llmio_hist *h, const double *pct, size_t n,
                            bool plus)
{
	if (!lat)
		return;
	cJSON_DeleteItemFromObject(lat, "percentile");
	if (!h->count)
		return;
	cJSON_AddItemToObject(lat, "percentile", percentiles(h, pct, n));
	if (plus)
		cJSON_AddItemToObject(lat, "bins", bins(h));
}

/* fio's per-second statistics: bw_* in KiB/s as fio's bw, iops_* in I/Os per second */
static void sample_json(cJSON *d, const struct llmio_sample_stats *iops,
                        const struct llmio_sample_stats *bw)
{
	cJSON_AddNumberToObject(d, "bw_min", floor(bw->min / 1024));
	cJSON_AddNumberToObject(d, "bw_max", floor(bw->max / 1024));
	cJSON_AddNumberToObject(d, "bw_mean", bw->mean / 1024);
	cJSON_AddNumberToObject(d, "bw_dev", bw->stddev / 1024);
	cJSON_AddNumberToObject(d, "bw_samples", (double)bw->samples);
	cJSON_AddNumberToObject(d, "iops_min", floor(iops->min));
	cJSON_AddNumberToObject(d, "iops_max", floor(iops->max));
	cJSON_AddNumberToObject(d, "iops_mean", iops->mean);
	cJSON_AddNumberToObject(d, "iops_stddev", iops->stddev);
	cJSON_AddNumberToObject(d, "iops_samples", (double)iops->samples);
}

static void patch_dir(cJSON *d, const struct llmio_op_result *op, const double *pct, size_t n,
                      bool plus, bool clat)
{
	if (!d)
		return;
	/* fio's runtime of a direction is the time it did I/O: 0 for one that did none */
	if (!op->ios)
		cJSON_ReplaceItemInObjectCaseSensitive(d, "runtime", cJSON_CreateNumber(0));
	/* clat_percentiles=0: fio's clat_ns has neither percentiles nor json+'s bins */
	if (clat)
		set_percentiles(cJSON_GetObjectItem(d, "clat_ns"), &op->clat, pct, n, plus);
	else
		cJSON_DeleteItemFromObject(cJSON_GetObjectItem(d, "clat_ns"), "percentile");
	set_percentiles(cJSON_GetObjectItem(d, "lat_ns"), &op->lat, pct, n, false);
}

/*
 * fio's JSON types.  fio writes each number as an integer ("%lld") or a float ("%f", so 0 is
 * 0.000000), by key; a reader that checks types (a schema, a typed language) takes what fio
 * writes.  cJSON would write a whole-valued double as an integer and a fraction as a float,
 * so each of these keys is written here as fio writes it.  Keys not listed are llmio's own.
 */
struct fio_type {
	const char *key;
	bool flt;
};

static const struct fio_type fio_types[] = {
        /* a direction: read, write, trim, sync */
        {"io_bytes", false},
        {"io_kbytes", false},
        {"bw_bytes", false},
        {"bw", false},
        {"iops", true},
        {"runtime", false},
        {"total_ios", false},
        {"bw_min", false},
        {"bw_max", false},
        {"bw_mean", true},
        {"bw_dev", true},
        {"bw_samples", false},
        {"iops_min", false},
        {"iops_max", false},
        {"iops_mean", true},
        {"iops_stddev", true},
        /* slat_ns, clat_ns, lat_ns */
        {"min", false},
        {"max", false},
        {"mean", true},
        {"stddev", true},
        {"N", false},
        /* the job */
        {"groupid", false},
        {"error", false},
        {"elapsed", false},
        {"job_start", false},
        {"job_runtime", false},
        {"latency_depth", false},
        {"latency_target", false},
        {"latency_percentile", true},
        {"latency_window", false},
        {"usr_cpu", true},
        {"sys_cpu", true},
        {"ctx", false},
        /* disk_util[] and the top level */
        {"read_ios", false},
        {"write_ios", false},
        {"timestamp", false},
        {"timestamp_ms", false},
};

static const struct fio_type *fio_type_of(const char *key)
{
	for (size_t i = 0; i < sizeof(fio_types) / sizeof(fio_types[0]); i++)
		if (!strcmp(fio_types[i].key, key))
			return &fio_types[i];
	return NULL;
}

/* item, a number, replaced by the same number written as fio writes that key */
static void fio_number(cJSON *parent, cJSON *item, bool flt)
{
	char text[64];
	double v = item->valuedouble;
	cJSON *raw;

	if (flt)
		snprintf(text, sizeof(text), "%f", isfinite(v) ? v : 0.0);
	else
		snprintf(text, sizeof(text), "%lld", isfinite(v) ? (long long)llround(v) : 0ll);
	raw = cJSON_CreateRaw(text);
	if (raw && !cJSON_ReplaceItemInObjectCaseSensitive(parent, item->string, raw))
		cJSON_Delete(raw);
}

/* Every number of o (and of the objects and arrays under it) that fio types, as fio types it. */
static void fio_retype(cJSON *o)
{
	cJSON *item = o ? o->child : NULL;

	while (item) {
		cJSON *next = item->next;
		const struct fio_type *t = item->string ? fio_type_of(item->string) : NULL;

		if (cJSON_IsNumber(item) && t)
			fio_number(o, item, t->flt);
		else if (cJSON_IsArray(item) ||
		         (cJSON_IsObject(item) &&
		          (!item->string || strcmp(item->string, "job options"))))
			fio_retype(item);
		item = next;
	}
}

/*
 * fio's "job options": the options of the job as text, by fio's names, as a fio job file
 * gives them.  They are the lines of the fio job file that runs this job (--emit-fio, with
 * the conversions it names), so a reader of fio's JSON finds fio's options and units
 * (rw=randrw, rwmixread=70, bs=4096, runtime=30s ...).  A job that has no fio equivalent
 * (an engine fio lacks) keeps llmio's own echo, each value as text.
 */
static void fio_job_options(cJSON *j, const struct llmio_result *r)
{
	cJSON *opts = cJSON_CreateObject(), *old = cJSON_GetObjectItem(j, "job options");
	char *text = NULL, *line, *save = NULL;
	size_t len = 0;
	FILE *f;

	if (!opts)
		return;
	/* fio's job options start with the job's name (the section, in a job file) */
	cJSON_AddStringToObject(opts, "name", r->opts.name[0] ? r->opts.name : r->opts.engine);
	f = open_memstream(&text, &len);
	if (f && emit_fio_job(f, &r->opts, "", NULL) == 0 && fflush(f) == 0) {
		for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			char *eq = strchr(line, '=');

			if (line[0] == ';' || line[0] == '[' || !eq)
				continue;
			*eq = '\0';
			if (!cJSON_GetObjectItem(opts, line))
				cJSON_AddStringToObject(opts, line, eq + 1);
		}
		/* --emit-fio reports threads together; this document as the job asked */
		if (!r->opts.group_reporting)
			cJSON_DeleteItemFromObject(opts, "group_reporting");
	} else {
		for (cJSON *v = old ? old->child : NULL; v; v = v->next) {
			char *s = cJSON_IsString(v) ? NULL : cJSON_PrintUnformatted(v);

			if (cJSON_IsBool(v))
				cJSON_AddStringToObject(opts, v->string,
				                        cJSON_IsTrue(v) ? "1" : "0");
			else
				cJSON_AddStringToObject(opts, v->string, s ? s : v->valuestring);
			cJSON_free(s);
		}
	}
	if (f)
		fclose(f);
	free(text);
	if (!(old ? cJSON_ReplaceItemInObjectCaseSensitive(j, "job options", opts)
	          : cJSON_AddItemToObject(j, "job options", opts)))
		cJSON_Delete(opts);
}

/* fio's sync.lat_ns has percentiles only when the job synced */
static void no_sync_percentiles(cJSON *sync, const struct llmio_result *r)
{
	if (sync && !r->fsyncs)
		cJSON_DeleteItemFromObject(cJSON_GetObjectItem(sync, "lat_ns"), "percentile");
}

/* A number written as fio's format writes it (%f, or a whole number), into o under key. */
static void add_raw(cJSON *o, const char *key, bool flt, double v, uint64_t u)
{
	char text[64];

	if (flt)
		snprintf(text, sizeof(text), "%f", v);
	else
		snprintf(text, sizeof(text), "%" PRIu64, u);
	if (key)
		cJSON_AddRawToObject(o, key, text);
	else
		cJSON_AddItemToArray(o, cJSON_CreateRaw(text));
}

/*
 * fio's "steadystate" of a job with ss_dur (stat.c, show_thread_status_json): the criterion as
 * fio spells it, the window in seconds, attained 0/1, the last criterion (text, "%" with a
 * percentage), the deviation and slope, and the window's samples with their means.
 */
static void steadystate_json(cJSON *j, const struct llmio_result *r)
{
	const struct llmio_steadystate *ss = &r->ss;
	uint64_t sum_iops = 0, sum_bw = 0;
	cJSON *o, *data, *iops, *bw;
	char text[64];

	if (!ss->on || !ss->dur || !(o = cJSON_AddObjectToObject(j, "steadystate")))
		return;
	if (!job_opt_canonical(&r->opts, "steadystate", NULL, text, sizeof(text)))
		cJSON_AddStringToObject(o, "ss", text);
	add_raw(o, "duration", false, 0, ss->dur);
	add_raw(o, "attained", false, 0, ss->attained);
	snprintf(text, sizeof(text), "%f%s", ss->criterion,
	         r->opts.ss_state & LLMIO_SS_PCT ? "%" : "");
	cJSON_AddStringToObject(o, "criterion", text);
	add_raw(o, "max_deviation", true, ss->max_deviation, 0);
	add_raw(o, "slope", true, ss->slope, 0);
	data = cJSON_AddObjectToObject(o, "data");
	iops = cJSON_CreateArray();
	bw = cJSON_CreateArray();
	for (uint32_t i = 0; i < ss->dur && ss->iops && ss->bw; i++) {
		sum_iops += ss->iops[i];
		sum_bw += ss->bw[i];
		add_raw(iops, NULL, false, 0, ss->iops[i]);
		add_raw(bw, NULL, false, 0, ss->bw[i]);
	}
	add_raw(data, "bw_mean", false, 0, sum_bw / ss->dur);
	add_raw(data, "iops_mean", false, 0, sum_iops / ss->dur);
	cJSON_AddItemToObject(data, "iops", iops);
	cJSON_AddItemToObject(data, "bw", bw);
}

static cJSON *job_json(const struct llmio_result *r, unsigned group, bool plus)
{
	cJSON *j = result_job_json(r);
	bool clat = !r->opts.clat_percentiles_off;
	double pct[JOB_PCT_MAX];
	size_t n = 0;

	if (!j)
		return NULL;
	/* the list was checked before the run (job_opts_resolve); a bad one here gets fio's */
	if (job_percentile_list(r->opts.percentile_list, pct, JOB_PCT_MAX, &n, NULL))
		job_percentile_list(NULL, pct, JOB_PCT_MAX, &n, NULL);
	if (r->opts.name[0])
		cJSON_ReplaceItemInObject(j, "jobname", cJSON_CreateString(r->opts.name));
	cJSON_AddNumberToObject(j, "groupid", group);
	cJSON_AddNumberToObject(j, "elapsed", ceil(r->runtime_s));
	if (r->opts.description[0])
		cJSON_AddStringToObject(j, "desc", r->opts.description);
	cJSON_AddNumberToObject(j, "job_start", (double)r->start_epoch_ms);
	if (r->latency_depth) { /* fio 3.33's keys and units: ns, us */
		cJSON_AddNumberToObject(j, "latency_depth", r->latency_depth);
		cJSON_AddNumberToObject(j, "latency_target", (double)r->opts.latency_target_ns);
		cJSON_AddNumberToObject(j, "latency_percentile", r->opts.latency_percentile);
		cJSON_AddNumberToObject(j, "latency_window",
		                        (double)(r->opts.latency_window_ns / 1000));
	}
	patch_dir(cJSON_GetObjectItem(j, "read"), &r->read, pct, n, plus, clat);
	patch_dir(cJSON_GetObjectItem(j, "write"), &r->write, pct, n, plus, clat);
	sample_json(cJSON_GetObjectItem(j, "read"), &r->iops_samples[0], &r->bw_samples[0]);
	sample_json(cJSON_GetObjectItem(j, "write"), &r->iops_samples[1], &r->bw_samples[1]);
	patch_dir(cJSON_GetObjectItem(j, "trim"), &r->trim, pct, n, plus, clat);
	sample_json(cJSON_GetObjectItem(j, "trim"), &(struct llmio_sample_stats){0},
	            &(struct llmio_sample_stats){0});
	no_sync_percentiles(cJSON_GetObjectItem(j, "sync"), r);
	fio_job_options(j, r);
	steadystate_json(j, r);
	return j;
}

bool fio_per_clone(const struct llmio_result *r)
{
	return !r->opts.group_reporting && r->threads && r->nthreads > 1;
}

struct llmio_result *fio_clone_result(const struct llmio_result *r, uint32_t i)
{
	struct llmio_result *c = malloc(sizeof(*c));
	const struct llmio_thread_result *t = &r->threads[i];

	if (!c)
		return NULL;
	memcpy(c, r, sizeof(*c));
	c->threads = NULL;
	c->thread_wire = NULL;
	c->nthreads = 0;
	/* the thread's own requests and bytes on the wire, not the whole job's */
	if (r->thread_wire)
		c->wire = r->thread_wire[i];
	c->read = t->read;
	c->write = t->write;
	if (r->opts.rw == LLMIO_RW_TRIM || r->opts.rw == LLMIO_RW_RANDTRIM) {
		c->trim = t->write; /* a trim job's thread counts its trims as writes */
		c->write = r->write;
	}
	c->runtime_s = t->runtime_s;
	c->fsyncs = t->fsyncs;
	/* the one-second samples are of all threads together: a clone has none of its own */
	memset(c->iops_samples, 0, sizeof(c->iops_samples));
	memset(c->bw_samples, 0, sizeof(c->bw_samples));
	return c;
}

/* One entry of jobs[] per result, or per thread of a result reported per clone. */
static int add_jobs(cJSON *jobs, const struct llmio_result *r, unsigned group, bool plus)
{
	if (!fio_per_clone(r))
		return cJSON_AddItemToArray(jobs, job_json(r, group, plus)) ? 0 : -ENOMEM;
	for (uint32_t i = 0; i < r->nthreads; i++) {
		struct llmio_result *c = fio_clone_result(r, i);
		bool ok = c && cJSON_AddItemToArray(jobs, job_json(c, group, plus));

		llmio_result_destroy(c);
		if (!ok)
			return -ENOMEM;
	}
	return 0;
}

/* fio's disk_util: the devices under the jobs, once each, with what llmio counts of them */
static void disk_util(cJSON *root, struct llmio_result *const *r, size_t n)
{
	cJSON *a = cJSON_AddArrayToObject(root, "disk_util");

	for (size_t i = 0; a && i < n; i++) {
		const struct llmio_device_result *d = &r[i]->device;
		bool seen = false;
		cJSON *u;

		for (size_t k = 0; k < i && !seen; k++)
			seen = r[k]->device.known && !strcmp(r[k]->device.name, d->name);
		if (!d->known || seen)
			continue;
		u = cJSON_CreateObject();
		cJSON_AddStringToObject(u, "name", d->name);
		cJSON_AddNumberToObject(u, "read_ios", (double)d->read_ios);
		cJSON_AddNumberToObject(u, "write_ios", (double)d->write_ios);
		cJSON_AddNumberToObject(u, "read_bytes", (double)d->read_bytes);
		cJSON_AddNumberToObject(u, "write_bytes", (double)d->write_bytes);
		cJSON_AddItemToArray(a, u);
	}
}

int fio_json_write(FILE *f, struct llmio_result *const *r, const unsigned *group, size_t n,
                   bool plus)
{
	cJSON *root = cJSON_CreateObject(), *jobs;
	char version[64], when[64] = "";

	if (!root)
		return -ENOMEM;
	snprintf(version, sizeof(version), "llmio-%s", llmio_version());
	cJSON_AddStringToObject(root, "fio version", version);
	if (n) {
		const time_t t = (time_t)(r[0]->start_epoch_ms / 1000);
		struct tm tm;

		cJSON_AddNumberToObject(root, "timestamp", (double)t);
		cJSON_AddNumberToObject(root, "timestamp_ms", (double)r[0]->start_epoch_ms);
		/* fio's "time": ctime() without its newline */
		if (localtime_r(&t, &tm))
			strftime(when, sizeof(when), "%a %b %e %H:%M:%S %Y", &tm);
		cJSON_AddStringToObject(root, "time", when);
	}
	jobs = cJSON_AddArrayToObject(root, "jobs");
	for (size_t i = 0; jobs && i < n; i++)
		if (add_jobs(jobs, r[i], group ? group[i] : 0, plus)) {
			cJSON_Delete(root);
			return -ENOMEM;
		}
	disk_util(root, r, n);
	fio_retype(root);
	return json_write_doc(f, root);
}
