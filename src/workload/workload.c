/* SPDX-License-Identifier: MIT */
/*
 * The recipe table and what every recipe shares: parameters as data, phases, running a stream
 * as a job, paths and space checks, the page-cache honesty notes and the JSON record.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "llmio/engine.h"
#include "base/error.h"
#include "stats/record.h"
#include "stats/result_json.h"
#include "workload/objects.h"
#include "workload/workload.h"

static const struct recipe *const recipes[] = {
        &recipe_load,  &recipe_pretrain, &recipe_ckpt,    &recipe_finetune,
        &recipe_infer, &recipe_replay,   &recipe_offload, &recipe_migrate,
};

/* Parameters every recipe has. */
static const struct llmio_optdesc common_params[] = {
        WL_PARAM("scale", OPTD_DOUBLE, 0, 0, "1",
                 "fraction of the bytes to move (request sizes and patterns unchanged); e.g. 0.01 "
                 "fits "
                 "a 70B model's phases on a small disk"),
        WL_PARAM("staging", OPTD_STRING, 0, 0, "",
                 "with an s3:// --directory: the local directory file engines run against "
                 "(--engine all); default $TMPDIR, else /var/tmp"),
        {.name = NULL},
};

size_t recipe_count(void)
{
	return sizeof(recipes) / sizeof(recipes[0]);
}

const struct recipe *recipe_at(size_t i)
{
	return i < recipe_count() ? recipes[i] : NULL;
}

const struct recipe *recipe_find(const char *name)
{
	for (size_t i = 0; i < recipe_count(); i++)
		if (!strcasecmp(recipes[i]->name, name))
			return recipes[i];
	return NULL;
}

static const struct llmio_optdesc *param_find(const struct recipe *r, const char *key)
{
	for (const struct llmio_optdesc *p = r->params; p && p->name; p++)
		if (!strcmp(p->name, key))
			return p;
	for (const struct llmio_optdesc *p = r->shared; p && p->name; p++)
		if (!strcmp(p->name, key))
			return p;
	for (const struct llmio_optdesc *p = common_params; p->name; p++)
		if (!strcmp(p->name, key))
			return p;
	return NULL;
}

bool recipe_has_param(const struct recipe *r, const char *key)
{
	return param_find(r, key) != NULL;
}

static const struct wl_dist *dist_default;

void wl_dist_default(const struct wl_dist *d)
{
	dist_default = d;
}

void wl_init(struct wl *w, const struct recipe *r, const struct llmio_job_opts *base)
{
	memset(w, 0, sizeof(*w));
	w->recipe = r;
	w->dist = dist_default; /* NULL unless under mpirun */
	w->base = *base;
	w->scale = 1;
}

void wl_release(struct wl *w)
{
	for (unsigned p = 0; p < w->nphases; p++)
		for (unsigned s = 0; s < w->phases[p].nstreams; s++)
			llmio_result_destroy(w->phases[p].streams[s]);
	w->nphases = 0;
	wl_objects_release(w);
}

int wl_set(struct wl *w, const char *key, const char *val, struct llmio_error *e)
{
	const struct llmio_optdesc *d = param_find(w->recipe, key);

	if (d && optdesc_check_text("--", key, val, e))
		return -EINVAL;
	if (!d) {
		char list[768] = "";
		size_t used = 0;

		for (const struct llmio_optdesc *p = w->recipe->params;
		     p && p->name && used < sizeof(list); p++)
			used += (size_t)snprintf(list + used, sizeof(list) - used, " %s", p->name);
		for (const struct llmio_optdesc *p = w->recipe->shared;
		     p && p->name && used < sizeof(list); p++)
			used += (size_t)snprintf(list + used, sizeof(list) - used, " %s", p->name);
		return llmio_err(e, -EINVAL,
		                 "--%s is not a parameter of workload %s; it has:%s scale staging "
		                 "(see llmio run --workload %s --help)",
		                 key, w->recipe->name, list, w->recipe->name);
	}
	for (unsigned i = 0; i < w->nkv; i++)
		if (!strcmp(w->keys[i], key)) {
			w->vals[i] = val;
			return 0;
		}
	if (w->nkv == WL_MAX_KV)
		return llmio_err(e, -EINVAL, "too many workload parameters");
	snprintf(w->keys[w->nkv], sizeof(w->keys[0]), "%s", key);
	w->vals[w->nkv++] = val;
	return 0;
}

static const char *value_of(const struct wl *w, const char *name, const struct llmio_optdesc **pp)
{
	const struct llmio_optdesc *p = param_find(w->recipe, name);

	*pp = p;
	for (unsigned i = 0; i < w->nkv; i++)
		if (!strcmp(w->keys[i], name))
			return w->vals[i];
	return p ? p->def : "";
}

const char *wl_str(const struct wl *w, const char *name)
{
	const struct llmio_optdesc *p;

	return value_of(w, name, &p);
}

/* The parameter's value parsed by its description (type and range). */
static int param_value(const struct wl *w, const char *name, struct llmio_optval *out,
                       struct llmio_error *e)
{
	const struct llmio_optdesc *p;
	const char *v = value_of(w, name, &p);
	int ret;

	if (!p)
		return llmio_err(e, -EINVAL,
		                 "workload %s has no parameter %s (a bug in the recipe)",
		                 w->recipe->name, name);
	ret = optdesc_parse(p, v, out, e);
	if (!ret)
		return 0;
	if (e)
		e->code = -EINVAL; /* out of range is a usage error too */
	return -EINVAL;
}

int wl_u64(const struct wl *w, const char *name, uint64_t *out, struct llmio_error *e)
{
	struct llmio_optval v;
	int ret = param_value(w, name, &v, e);

	if (!ret)
		*out = v.u;
	return ret;
}

int wl_enum(const struct wl *w, const char *name, const char **out, struct llmio_error *e)
{
	struct llmio_optval v;
	int ret = param_value(w, name, &v, e);

	if (!ret)
		*out = v.s;
	return ret;
}

int wl_double(const struct wl *w, const char *name, double *out, struct llmio_error *e)
{
	struct llmio_optval v;
	int ret = param_value(w, name, &v, e);

	if (!ret)
		*out = v.d;
	return ret;
}

struct wl_phase *wl_phase_new(struct wl *w, const char *fmt, ...)
{
	struct wl_phase *ph;
	va_list ap;

	if (w->nphases == WL_MAX_PHASES)
		return NULL;
	if (w->dist) /* every rank starts the phase together (IOR, DLIO) */
		w->dist->barrier();
	ph = &w->phases[w->nphases++];
	memset(ph, 0, sizeof(*ph));
	va_start(ap, fmt);
	vsnprintf(ph->name, sizeof(ph->name), fmt, ap);
	va_end(ap);
	if (w->on_step)
		w->on_step(w->on_step_arg, w, NULL, NULL);
	return ph;
}

bool wl_owned_by(const struct wl *w, unsigned i, unsigned rank)
{
	return !w->dist || i % w->dist->size == rank;
}

bool wl_owns(const struct wl *w, unsigned i)
{
	return wl_owned_by(w, i, w->dist ? w->dist->rank : 0);
}

double wl_reduce(const struct wl *w, double v, enum wl_op op)
{
	return w->dist ? w->dist->allreduce(v, op) : v;
}

void wl_metric(struct wl_phase *ph, const char *name, double value, const char *unit)
{
	struct wl_metric *m;

	if (ph->nmetrics == WL_MAX_METRICS)
		return;
	m = &ph->metrics[ph->nmetrics++];
	snprintf(m->name, sizeof(m->name), "%s", name);
	snprintf(m->unit, sizeof(m->unit), "%s", unit);
	m->value = value;
}

void wl_job_opts(const struct wl *w, struct llmio_job_opts *o)
{
	*o = w->base;
	o->filename[0] = '\0';
	o->directory[0] = '\0';
	o->files = NULL;
	o->nfiles_list = 0;
	o->io_source = NULL;
}

uint32_t wl_align(const struct wl *w)
{
	return w->base.direct ? 4096 : 1;
}

uint64_t wl_scaled(const struct wl *w, uint64_t bytes, uint64_t min, uint64_t align)
{
	uint64_t b = (uint64_t)((double)bytes * w->scale);

	if (b < min)
		b = min;
	if (align > 1)
		b = (b + align - 1) & ~(align - 1);
	return b;
}

int wl_path(const struct wl *w, char *out, size_t len, const char *fmt, ...)
{
	size_t used = (size_t)snprintf(out, len, "%s/", w->base.directory);
	va_list ap;
	int n;

	if (used >= len)
		return -ENAMETOOLONG;
	va_start(ap, fmt);
	n = vsnprintf(out + used, len - used, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= len - used ? -ENAMETOOLONG : 0;
}

int wl_check_space(const struct wl *w, const struct llmio_file *files, unsigned n,
                   struct llmio_error *e)
{
	uint64_t need = 0, avail;
	struct statvfs sv;
	struct stat st;

	for (unsigned i = 0; i < n; i++) {
		uint64_t have = stat(files[i].path, &st) == 0 ? (uint64_t)st.st_size : 0;

		if (files[i].flags & LLMIO_FILE_FRESH)
			have = 0; /* rewritten from scratch: its blocks are freed first, but count
			             it */
		if (files[i].size > have)
			need += files[i].size - have;
	}
	if (statvfs(w->base.directory, &sv))
		return 0; /* the job itself reports a missing directory */
	avail = (uint64_t)sv.f_bavail * sv.f_frsize;
	if (need <= avail)
		return 0;
	return llmio_err(
	        e, -ENOSPC,
	        "workload %s needs %.2f GB more space in %s but only %.2f GB is free; use a "
	        "smaller --scale (now %g) or another --directory",
	        w->recipe->name, (double)need / 1e9, w->base.directory, (double)avail / 1e9,
	        w->scale);
}

/*
 * Direct was our default, not the user's: where the filesystem refuses it (asked once, of the
 * filesystem), say so in the phase's note and measure through the page cache from then on.
 */
static void direct_fallback(struct wl *w, struct wl_phase *ph, struct llmio_job_opts *o)
{
	char why[LLMIO_PATH_MAX + 128];
	size_t used = strlen(ph->note);

	if (!o->direct || !w->direct_auto)
		return;
	/* "cannot tell" (not -EINVAL) leaves O_DIRECT on: the job itself then says why */
	if (!w->direct_probed) {
		w->direct_probed = true;
		if (llmio_direct_probe(w->base.directory, why, sizeof(why)) == -EINVAL) {
			snprintf(ph->note + used, sizeof(ph->note) - used,
			         "%sO_DIRECT refused here (%s): ran buffered", used ? "; " : "",
			         why);
			w->base.direct = false;
		}
	}
	if (!w->base.direct)
		o->direct = false; /* also streams the recipe built before the probe */
}

int wl_job(struct wl *w, struct wl_phase *ph, const char *name, struct llmio_job_opts *o,
           struct llmio_error *e)
{
	struct llmio_result *r = NULL;
	int ret;

	if (ph->nstreams == WL_MAX_STREAMS)
		return llmio_err(e, -EINVAL, "phase %s has too many streams", ph->name);
	direct_fallback(w, ph, o);
	if (w->on_step)
		w->on_step(w->on_step_arg, w, name, o);
	ret = llmio_job_run(o, &r, e);
	if (r) {
		snprintf(ph->stream_names[ph->nstreams], sizeof(ph->stream_names[0]), "%s", name);
		ph->streams[ph->nstreams++] = r;
	}
	return ret;
}

/*
 * The most common complaint about ML storage benchmarks: results that silently came from RAM.
 * Every phase that read says how much of it reached the device.
 */
static void cache_notes(struct wl_phase *ph)
{
	struct llmio_service_facts f = {.direct = true, .device_known = true};
	struct llmio_process_io *w = &f.witness;
	size_t used = strlen(ph->note);
	bool shared = false, busy = false;
	char why[192];

	/* the phase's streams ran one after another: their windows add up */
	w->known = true;
	for (unsigned s = 0; s < ph->nstreams; s++) {
		const struct llmio_result *r = ph->streams[s];

		f.direct &= r->direct_in_effect;
		f.read_bytes += r->read.bytes;
		f.write_bytes += r->write.bytes;
		f.fsyncs += r->fsyncs;
		f.fstype = r->device.fstype;
		w->known &= r->process_io.known;
		w->read_bytes += r->process_io.read_bytes;
		w->write_bytes += r->process_io.write_bytes;
		f.device_known &= r->device.known;
		f.device_read_bytes += r->device.read_bytes;
		f.device_write_bytes += r->device.write_bytes;
	}
	if (!ph->nstreams || used >= sizeof(ph->note))
		return;
	for (unsigned s = 0; s < ph->nstreams; s++) {
		shared |= ph->streams[s]->shared_disk;
		busy |= ph->streams[s]->busy_system;
	}
	if (shared || busy) /* the numbers are in each stream's warnings */
		used += (size_t)snprintf(
		        ph->note + used, sizeof(ph->note) - used, "%s%s%s%s", used ? "; " : "",
		        shared ? "other I/O shared the disk" : "", shared && busy ? ", " : "",
		        busy ? "busy machine (other work beyond the job)" : "");
	if (used >= sizeof(ph->note))
		return;
	switch (llmio_service_classify(&f, why, sizeof(why))) {
	case LLMIO_SERVICE_PAGE_CACHE:
		snprintf(ph->note + used, sizeof(ph->note) - used,
		         "%sWARNING: served from the page cache (%s)", used ? "; " : "", why);
		break;
	case LLMIO_SERVICE_MIXED:
		snprintf(ph->note + used, sizeof(ph->note) - used,
		         "%sWARNING: partly served from the page cache (%s)", used ? "; " : "",
		         why);
		break;
	case LLMIO_SERVICE_UNKNOWN:
		if (f.read_bytes || f.write_bytes)
			snprintf(ph->note + used, sizeof(ph->note) - used,
			         "%scannot tell page cache from device (%s)", used ? "; " : "",
			         why);
		break;
	default:
		break;
	}
}

int wl_run(struct wl *w, struct llmio_error *e)
{
	char work[LLMIO_PATH_MAX];
	int ret;

	ret = wl_double(w, "scale", &w->scale, e);
	if (ret)
		return ret;
	if (w->scale <= 0 || w->scale > 1)
		return llmio_err(e, -EINVAL, "--scale=%g must be in (0, 1]", w->scale);
	if (w->recipe->needs_model && !w->has_model)
		return llmio_err(
		        e, -EINVAL,
		        "workload %s needs --model NAME|config.json (see `llmio model list`)",
		        w->recipe->name);
	if (!w->base.directory[0] && w->recipe->no_directory)
		return w->recipe->run(w, e);
	if (!w->base.directory[0])
		return llmio_err(
		        e, -EINVAL,
		        "workload %s needs --directory DIR for its files (a directory on the "
		        "storage to measure)",
		        w->recipe->name);
	if (wl_object_url(w->base.directory)) {
		/* objects under prefix/llmio-work/, or files in a staging directory */
		ret = wl_objects_begin(w, e);
		if (!ret && wl_on_objects(w))
			ret = w->recipe->run(w, e);
		if (ret || wl_on_objects(w)) {
			wl_objects_end(w, ret);
			return ret;
		}
	}
	/* The recipe's files go in llmio's own directory: their names cannot be a user's. */
	ret = llmio_work_dir(w->base.directory, work, sizeof(work), e);
	if (ret)
		return ret;
	snprintf(w->base.directory, sizeof(w->base.directory), "%s", work);
	ret = w->recipe->run(w, e);
	if (ret)
		llmio_work_dir_prune(work); /* a recipe refused before any file: nothing left */
	for (unsigned p = 0; p < w->nphases; p++)
		cache_notes(&w->phases[p]);
	wl_objects_end(w, ret); /* a file engine of an s3:// run: in the staging directory */
	return ret;
}

cJSON *wl_json(const struct wl *w)
{
	cJSON *root = cJSON_CreateObject(), *params, *phases;

	cJSON_AddStringToObject(root, RK_WORKLOAD, w->recipe->name);
	cJSON_AddStringToObject(root, RK_MODEL, w->has_model ? w->model.name : "");
	cJSON_AddStringToObject(root, RK_ENGINE, w->base.engine);
	cJSON_AddBoolToObject(root, RK_DIRECT, w->base.direct);
	params = cJSON_AddObjectToObject(root, RK_PARAMS);
	for (const struct llmio_optdesc *p = w->recipe->params; p && p->name; p++)
		cJSON_AddStringToObject(params, p->name, wl_str(w, p->name));
	for (const struct llmio_optdesc *p = w->recipe->shared; p && p->name; p++)
		cJSON_AddStringToObject(params, p->name, wl_str(w, p->name));
	cJSON_AddNumberToObject(params, "scale", w->scale);
	phases = cJSON_AddArrayToObject(root, RK_PHASES);
	for (unsigned i = 0; i < w->nphases; i++) {
		const struct wl_phase *ph = &w->phases[i];
		cJSON *o = cJSON_CreateObject(), *m, *jobs;

		cJSON_AddStringToObject(o, RK_NAME, ph->name);
		cJSON_AddNumberToObject(o, RK_WALL_S, ph->wall_s);
		cJSON_AddNumberToObject(o, RK_PROMISED_BYTES, (double)ph->promised_bytes);
		cJSON_AddStringToObject(o, RK_NOTE, ph->note);
		m = cJSON_AddObjectToObject(o, RK_METRICS);
		for (unsigned k = 0; k < ph->nmetrics; k++)
			cJSON_AddNumberToObject(m, ph->metrics[k].name, ph->metrics[k].value);
		jobs = cJSON_AddArrayToObject(o, RK_JOBS);
		for (unsigned s = 0; s < ph->nstreams; s++) {
			cJSON *j = result_job_json(ph->streams[s]);

			cJSON_AddStringToObject(j, RK_STREAM, ph->stream_names[s]);
			cJSON_AddItemToArray(jobs, j);
		}
		cJSON_AddItemToArray(phases, o);
	}
	return root;
}

int wl_run_params(const char *recipe, const char *model, const struct llmio_job_opts *base,
                  bool direct_given, bool keep, const char *const *keys, const char *const *vals,
                  size_t n, cJSON **phases, cJSON **mpi, struct llmio_error *e)
{
	const struct recipe *r = recipe_find(recipe);
	struct wl *w;
	cJSON *all;
	int ret = 0;

	*phases = NULL;
	*mpi = NULL;
	if (!r)
		return llmio_err(e, -EINVAL,
		                 "unknown workload '%s': load, pretrain, ckpt, finetune, infer",
		                 recipe);
	w = malloc(sizeof(*w));
	if (!w)
		return -ENOMEM;
	wl_init(w, r, base);
	w->keep = keep;
	if (model && model[0]) {
		ret = llmio_model_resolve(model, &w->model, e);
		w->has_model = ret == 0;
	}
	for (size_t i = 0; i < n && !ret; i++)
		ret = wl_set(w, keys[i], vals[i], e);
	if (!direct_given) {
		struct llmio_engine_info info;

		for (size_t i = 0; llmio_engine_info(i, &info) == 0; i++)
			if (!strcmp(info.name, w->base.engine))
				w->base.direct = info.supports_direct;
		w->direct_auto = true;
	}
	if (!ret)
		ret = wl_run(w, e);
	/* under MPI a failing rank ends every rank; the others merge their streams */
	if (ret && w->dist)
		ret = w->dist->fail(ret == -EINVAL ? 2 : 1, e);
	if (!ret && w->dist)
		ret = w->dist->reduce(w, mpi, e);
	all = wl_json(w);
	if (all) {
		*phases = cJSON_DetachItemFromObject(all, RK_PHASES);
		cJSON_Delete(all);
	}
	wl_release(w);
	free(w);
	return ret;
}
