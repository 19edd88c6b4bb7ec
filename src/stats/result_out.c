/* SPDX-License-Identifier: MIT */
/*
 * Result records as JSON (fio's layout where the meaning is the same, llmio's additions beside
 * it) and CSV.  Field definitions: docs/metrics.md and docs/output.md.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job/options.h"
#include "llmio/result.h"
#include "stats/record.h"
#include "stats/result_json.h"

const double llmio_percentiles[LLMIO_NPCT] = {1.0, 50.0, 90.0, 99.0, 99.9, 99.99, 100.0};

/* Standard deviation from the buckets (midpoints): within the histogram's 1/128 bound. */
static double hist_stddev(const struct llmio_hist *h)
{
	double mean = llmio_hist_mean(h), acc = 0;

	if (h->count < 2)
		return 0;
	for (unsigned i = 0; i < LLMIO_HIST_BUCKETS; i++) {
		double d;

		if (!h->bucket[i])
			continue;
		d = (double)llmio_hist_bucket_value(i) - mean;
		acc += d * d * (double)h->bucket[i];
	}
	return sqrt(acc / (double)(h->count - 1));
}

static cJSON *lat_json(const struct llmio_hist *h, bool with_pct)
{
	cJSON *o = cJSON_CreateObject(), *p;
	char key[32];

	cJSON_AddNumberToObject(o, "min", h->count ? (double)h->min : 0);
	cJSON_AddNumberToObject(o, "max", (double)h->max);
	cJSON_AddNumberToObject(o, "mean", llmio_hist_mean(h));
	cJSON_AddNumberToObject(o, "stddev", hist_stddev(h));
	cJSON_AddNumberToObject(o, "N", (double)h->count);
	if (!with_pct)
		return o;
	p = cJSON_AddObjectToObject(o, "percentile");
	for (int i = 0; i < LLMIO_NPCT; i++) {
		snprintf(key, sizeof(key), "%f", llmio_percentiles[i]);
		cJSON_AddNumberToObject(p, key,
		                        (double)llmio_hist_percentile(h, llmio_percentiles[i]));
	}
	return o;
}

/* Raw buckets as [index, count] pairs (non-empty only); see include/llmio/hist.h. */
static cJSON *buckets_json(const struct llmio_hist *h)
{
	cJSON *a = cJSON_CreateArray();

	for (unsigned i = 0; i < LLMIO_HIST_BUCKETS; i++) {
		cJSON *pair;

		if (!h->bucket[i])
			continue;
		pair = cJSON_CreateArray();
		cJSON_AddItemToArray(pair, cJSON_CreateNumber(i));
		cJSON_AddItemToArray(pair, cJSON_CreateNumber((double)h->bucket[i]));
		cJSON_AddItemToArray(a, pair);
	}
	return a;
}

static cJSON *op_json(const struct llmio_op_result *op, double runtime_s)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddNumberToObject(o, "io_bytes", (double)op->bytes);
	cJSON_AddNumberToObject(o, "io_kbytes", (double)(op->bytes / 1024));
	cJSON_AddNumberToObject(o, "bw_bytes", op->bw_bytes);
	cJSON_AddNumberToObject(o, "bw", op->bw_bytes / 1024); /* KiB/s, as fio */
	cJSON_AddNumberToObject(o, "iops", op->iops);
	cJSON_AddNumberToObject(o, "runtime", runtime_s * 1000); /* ms, as fio */
	cJSON_AddNumberToObject(o, "total_ios", (double)op->ios);
	cJSON_AddItemToObject(o, "slat_ns", lat_json(&op->slat, false));
	cJSON_AddItemToObject(o, "clat_ns", lat_json(&op->clat, true));
	cJSON_AddItemToObject(o, "lat_ns", lat_json(&op->lat, true));
	cJSON_AddNumberToObject(o, "gb_per_s", op->bw_bytes / 1e9);
	cJSON_AddNumberToObject(o, "gib_per_s", op->bw_bytes / 1073741824.0);
	return o;
}

/*
 * Every option of the job's engine as it ran, defaults included (enums by name, times in ms),
 * so a journal says which keys were engine options and what they were after the engine's
 * options or defaults have changed (an empty object for an engine without options).  The job
 * parsed them once when it was set up (llmio_result.engine_options); NULL for a result that
 * no job made.
 */
static cJSON *engine_options_json(const struct llmio_result *r)
{
	cJSON *j;

	if (!r->engine_options_known)
		return NULL;
	j = cJSON_CreateObject();
	for (uint32_t i = 0; j && i < r->nengine_options && i < LLMIO_ENGINE_OPTS_MAX; i++) {
		const struct llmio_engine_optval *v = &r->engine_options[i];

		if ((r->engine_option_strings >> i & 1) && v->value >= 0 &&
		    (size_t)v->value < sizeof(r->engine_text))
			cJSON_AddStringToObject(j, v->name, r->engine_text + v->value);
		else if (v->choice[0])
			cJSON_AddStringToObject(j, v->name, v->choice);
		else
			cJSON_AddNumberToObject(j, v->name, v->value);
	}
	return j;
}

struct echo {
	cJSON *j;
	const struct llmio_result *r;
	const struct llmio_job_opts *o;
};

/* One job option as the option table describes its echo (job/options.c job_opts_echo). */
static void echo_option(void *arg, const char *key, const struct llmio_optdesc *d,
                        const struct llmio_optval *v)
{
	struct echo *x = arg;
	char text[LLMIO_PATH_MAX];

	if (d->type == OPTD_BOOL)
		cJSON_AddBoolToObject(x->j, key, v->b);
	else if (d->type == OPTD_STRING || d->type == OPTD_ENUM)
		cJSON_AddStringToObject(x->j, key,
		                        optdesc_format(d, v, text, sizeof(text)) ? "" : text);
	else if (d->type == OPTD_DURATION)
		cJSON_AddNumberToObject(x->j, key, (double)v->u / (d->json_ns ? d->json_ns : 1));
	else if (d->type == OPTD_INT)
		cJSON_AddNumberToObject(x->j, key, (double)v->i);
	else
		cJSON_AddNumberToObject(x->j, key, (double)v->u);
	if (!strcmp(d->name, "ioengine")) {
		/* the engine's own options follow the engine */
		cJSON *eng = engine_options_json(x->r);

		if (x->o->engine_opts[0])
			cJSON_AddStringToObject(x->j, "engine_opts", x->o->engine_opts);
		if (eng && !cJSON_AddItemToObject(x->j, "engine_options", eng))
			cJSON_Delete(eng);
	}
}

cJSON *result_opts_json(const struct llmio_result *r)
{
	struct echo x = {.j = cJSON_CreateObject(), .r = r, .o = &r->opts};

	if (x.j)
		job_opts_echo(&r->opts, echo_option, &x);
	return x.j;
}

cJSON *result_read_json(const struct llmio_result *r)
{
	return op_json(&r->read, r->runtime_s);
}

cJSON *result_write_json(const struct llmio_result *r)
{
	return op_json(&r->write, r->runtime_s);
}

cJSON *result_trim_json(const struct llmio_result *r)
{
	return op_json(&r->trim, r->runtime_s);
}

cJSON *result_sync_lat_json(const struct llmio_result *r)
{
	return lat_json(&r->sync_lat, true);
}

cJSON *result_warnings_json(const struct llmio_result *r)
{
	cJSON *d = cJSON_CreateArray();

	if (d && r->shared_disk)
		cJSON_AddItemToArray(d, cJSON_CreateString(r->shared_disk_warning));
	if (d && r->busy_system)
		cJSON_AddItemToArray(d, cJSON_CreateString(r->busy_system_warning));
	return d;
}

cJSON *result_histogram_json(const struct llmio_result *r)
{
	cJSON *h = cJSON_CreateObject(), *hr, *hw;

	cJSON_AddStringToObject(h, "scheme", "log-linear: linear_bits=7 sub_bits=6, ns");
	hr = cJSON_AddObjectToObject(h, "read");
	cJSON_AddItemToObject(hr, "clat_ns", buckets_json(&r->read.clat));
	cJSON_AddItemToObject(hr, "lat_ns", buckets_json(&r->read.lat));
	hw = cJSON_AddObjectToObject(h, "write");
	cJSON_AddItemToObject(hw, "clat_ns", buckets_json(&r->write.clat));
	cJSON_AddItemToObject(hw, "lat_ns", buckets_json(&r->write.lat));
	return h;
}

cJSON *results_json_doc(struct llmio_result *const *r, size_t n)
{
	cJSON *root = cJSON_CreateObject(), *jobs, *host;

	if (!root)
		return NULL;
	cJSON_AddStringToObject(root, "llmio version", llmio_version());
	if (n) {
		cJSON_AddNumberToObject(root, "timestamp", (double)(r[0]->start_epoch_ms / 1000));
		cJSON_AddNumberToObject(root, "timestamp_ms", (double)r[0]->start_epoch_ms);
		host = cJSON_AddObjectToObject(root, "host");
		cJSON_AddStringToObject(host, "hostname", r[0]->hostname);
		cJSON_AddStringToObject(host, "kernel", r[0]->kernel);
		cJSON_AddStringToObject(host, "cpu_model", r[0]->cpu_model);
		cJSON_AddNumberToObject(host, "online_cpus", r[0]->cpu.online_cpus);
	}
	jobs = cJSON_AddArrayToObject(root, "jobs");
	for (size_t i = 0; i < n; i++)
		cJSON_AddItemToArray(jobs, result_job_json(r[i]));
	return root;
}

int llmio_results_write_json(FILE *f, struct llmio_result *const *r, size_t n)
{
	cJSON *root = results_json_doc(r, n);

	return root ? json_write_doc(f, root) : -ENOMEM;
}

int json_write_doc(FILE *f, cJSON *root)
{
	char *text = root ? cJSON_Print(root) : NULL;
	int ret = 0;

	cJSON_Delete(root);
	if (!text)
		return -ENOMEM;
	if (fputs(text, f) == EOF || fputc('\n', f) == EOF)
		ret = -EIO;
	free(text);
	return ret;
}

int llmio_results_write_csv(FILE *f, struct llmio_result *const *r, size_t n)
{
	int ret = rec_csv_header(f);

	for (size_t i = 0; i < n && !ret; i++)
		ret = rec_csv_row(f, r[i]);
	return ret;
}
