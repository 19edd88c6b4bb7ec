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

#include "engine/engine.h"
#include "llmio/engine.h"
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
 * options or defaults have changed (an empty object for an engine without options).
 */
static cJSON *engine_options_json(const struct llmio_job_opts *o)
{
	const struct engine_ops *e = engine_find(o->engine);
	int v[64]; /* engine option structs are ints (engine.h) */
	char err[256];
	cJSON *j;

	if (!e || e->opts_size > sizeof(v) ||
	    engine_opts_parse(e, o->engine_opts, v, err, sizeof(err)))
		return NULL;
	j = cJSON_CreateObject();
	for (const struct engine_opt *eo = e->opts; j && eo && eo->name; eo++) {
		int x = *(const int *)((const char *)v + eo->offset);

		if (eo->type == ENGINE_OPT_ENUM)
			cJSON_AddStringToObject(j, eo->name, eo->choices[x]);
		else
			cJSON_AddNumberToObject(j, eo->name, x);
	}
	return j;
}

static cJSON *opts_json(const struct llmio_job_opts *o)
{
	cJSON *j = cJSON_CreateObject(), *eng = engine_options_json(o);

	cJSON_AddStringToObject(j, "ioengine", o->engine);
	if (o->engine_opts[0])
		cJSON_AddStringToObject(j, "engine_opts", o->engine_opts);
	if (eng && !cJSON_AddItemToObject(j, "engine_options", eng))
		cJSON_Delete(eng);
	if (o->filename[0])
		cJSON_AddStringToObject(j, "filename", o->filename);
	if (o->directory[0]) {
		cJSON_AddStringToObject(j, "directory", o->directory);
		cJSON_AddNumberToObject(j, "nrfiles", o->nrfiles);
	}
	cJSON_AddStringToObject(j, "rw", llmio_rw_name(o->rw));
	if (o->rw == LLMIO_RW_RANDRW)
		cJSON_AddNumberToObject(j, "rwmixread", o->rwmixread);
	cJSON_AddNumberToObject(j, "bs", (double)o->bs);
	cJSON_AddNumberToObject(j, "iodepth", o->iodepth);
	cJSON_AddNumberToObject(j, "numjobs", o->numjobs);
	cJSON_AddNumberToObject(j, "size", (double)o->size);
	cJSON_AddNumberToObject(j, "io_size", (double)o->io_size);
	cJSON_AddNumberToObject(j, "runtime_s", (double)o->runtime_ns / 1e9);
	cJSON_AddNumberToObject(j, "ramp_time_s", (double)o->ramp_time_ns / 1e9);
	cJSON_AddBoolToObject(j, "direct", o->direct);
	if (o->random_distribution == LLMIO_DIST_ZIPF) {
		char d[48];

		snprintf(d, sizeof(d), "zipf:%g", o->zipf_theta);
		cJSON_AddStringToObject(j, "random_distribution", d);
	} else {
		cJSON_AddStringToObject(j, "random_distribution", "random");
	}
	cJSON_AddNumberToObject(j, "randseed", (double)o->randseed);
	cJSON_AddBoolToObject(j, "invalidate", o->invalidate);
	cJSON_AddNumberToObject(j, "fsync", o->fsync);
	cJSON_AddBoolToObject(j, "end_fsync", o->end_fsync);
	cJSON_AddNumberToObject(j, "rate", (double)o->rate);
	cJSON_AddNumberToObject(j, "thinktime_us", (double)o->thinktime_ns / 1e3);
	cJSON_AddNumberToObject(j, "thinktime_blocks", o->thinktime_blocks);
	if (o->cpus_allowed[0]) {
		cJSON_AddStringToObject(j, "cpus_allowed", o->cpus_allowed);
		cJSON_AddStringToObject(j, "cpus_allowed_policy", o->cpus_allowed_policy);
	}
	return j;
}

cJSON *result_job_json(const struct llmio_result *r)
{
	const double rt = r->runtime_s > 0 ? r->runtime_s : 1;
	cJSON *j = cJSON_CreateObject(), *c, *d, *h, *hr, *hw;

	cJSON_AddStringToObject(j, "jobname", r->opts.engine);
	cJSON_AddNumberToObject(j, "error", -r->error);
	if (r->error)
		cJSON_AddStringToObject(j, "error_msg", r->error_msg);
	cJSON_AddBoolToObject(j, "interrupted", r->interrupted);
	cJSON_AddItemToObject(j, "job options", opts_json(&r->opts));
	cJSON_AddItemToObject(j, "read", op_json(&r->read, r->runtime_s));
	cJSON_AddItemToObject(j, "write", op_json(&r->write, r->runtime_s));
	c = cJSON_AddObjectToObject(j, "sync");
	cJSON_AddNumberToObject(c, "total_ios", (double)r->fsyncs);
	cJSON_AddItemToObject(c, "lat_ns", lat_json(&r->sync_lat, true));
	cJSON_AddNumberToObject(j, "job_runtime", r->runtime_s * 1000);
	/* fio's fields: percent of the runtime, here for the whole process (see "cpu") */
	cJSON_AddNumberToObject(j, "usr_cpu", r->cpu.usr_s / rt * 100);
	cJSON_AddNumberToObject(j, "sys_cpu", r->cpu.sys_s / rt * 100);
	cJSON_AddNumberToObject(j, "ctx", (double)(r->cpu.ctx_voluntary + r->cpu.ctx_involuntary));

	/* llmio's additions */
	cJSON_AddNumberToObject(j, "iodepth_effective", r->iodepth_effective);
	cJSON_AddBoolToObject(j, "direct_in_effect", r->direct_in_effect);
	cJSON_AddStringToObject(j, "engine_notes", r->engine_notes);
	cJSON_AddNumberToObject(j, "target_bytes", (double)r->target_bytes);
	c = cJSON_AddObjectToObject(j, "cpu");
	cJSON_AddNumberToObject(c, "usr_s", r->cpu.usr_s);
	cJSON_AddNumberToObject(c, "sys_s", r->cpu.sys_s);
	cJSON_AddNumberToObject(c, "proc_s", r->cpu.proc_s);
	cJSON_AddNumberToObject(c, "cores_busy", r->cpu.cores_busy);
	cJSON_AddNumberToObject(c, "system_busy_s", r->cpu.system_busy_s);
	cJSON_AddNumberToObject(c, "system_cores_busy", r->cpu.system_cores_busy);
	cJSON_AddNumberToObject(c, "online_cpus", r->cpu.online_cpus);
	cJSON_AddNumberToObject(c, "ctx_voluntary", (double)r->cpu.ctx_voluntary);
	cJSON_AddNumberToObject(c, "ctx_involuntary", (double)r->cpu.ctx_involuntary);
	cJSON_AddNumberToObject(j, "gb_per_s_per_core", r->gb_per_s_per_core);
	d = cJSON_AddObjectToObject(j, "device");
	cJSON_AddBoolToObject(d, "known", r->device.known);
	cJSON_AddStringToObject(d, "name", r->device.name);
	cJSON_AddStringToObject(d, "model", r->device.model);
	cJSON_AddStringToObject(d, "scheduler", r->device.scheduler);
	cJSON_AddBoolToObject(d, "rotational", r->device.rotational);
	cJSON_AddNumberToObject(d, "logical_block_size", r->device.logical_block_size);
	cJSON_AddBoolToObject(d, "io_poll", r->device.io_poll);
	cJSON_AddStringToObject(d, "fstype", r->device.fstype);
	cJSON_AddNumberToObject(d, "read_bytes", (double)r->device.read_bytes);
	cJSON_AddNumberToObject(d, "write_bytes", (double)r->device.write_bytes);
	cJSON_AddNumberToObject(d, "read_ios", (double)r->device.read_ios);
	cJSON_AddNumberToObject(d, "write_ios", (double)r->device.write_ios);
	cJSON_AddNumberToObject(d, "irqs", (double)r->device.irqs);
	cJSON_AddStringToObject(d, "irq_cpus", r->device.irq_cpus);
	d = cJSON_AddObjectToObject(j, "process_io");
	cJSON_AddBoolToObject(d, "known", r->process_io.known);
	cJSON_AddNumberToObject(d, "read_bytes", (double)r->process_io.read_bytes);
	cJSON_AddNumberToObject(d, "write_bytes", (double)r->process_io.write_bytes);
	cJSON_AddStringToObject(j, "service", llmio_service_name(r->service));
	cJSON_AddStringToObject(j, "service_reason", r->service_reason);
	cJSON_AddBoolToObject(j, "shared_disk", r->shared_disk);
	cJSON_AddBoolToObject(j, "busy_system", r->busy_system);
	d = cJSON_AddArrayToObject(j, "warnings");
	if (r->shared_disk)
		cJSON_AddItemToArray(d, cJSON_CreateString(r->shared_disk_warning));
	if (r->busy_system)
		cJSON_AddItemToArray(d, cJSON_CreateString(r->busy_system_warning));
	h = cJSON_AddObjectToObject(j, "histogram");
	cJSON_AddStringToObject(h, "scheme", "log-linear: linear_bits=7 sub_bits=6, ns");
	hr = cJSON_AddObjectToObject(h, "read");
	cJSON_AddItemToObject(hr, "clat_ns", buckets_json(&r->read.clat));
	cJSON_AddItemToObject(hr, "lat_ns", buckets_json(&r->read.lat));
	hw = cJSON_AddObjectToObject(h, "write");
	cJSON_AddItemToObject(hw, "clat_ns", buckets_json(&r->write.clat));
	cJSON_AddItemToObject(hw, "lat_ns", buckets_json(&r->write.lat));
	return j;
}

int llmio_results_write_json(FILE *f, struct llmio_result *const *r, size_t n)
{
	cJSON *root = cJSON_CreateObject(), *jobs, *host;

	if (!root)
		return -ENOMEM;
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
	return json_write_doc(f, root);
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
