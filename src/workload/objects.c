/* SPDX-License-Identifier: MIT */
/*
 * Recipes against an object store (objects.h): where the recipe's files go for the engine
 * that runs it, the objects a read phase needs (uploaded when absent, as files are filled),
 * what each phase cost on the wire and in client CPU, and what is left in the bucket.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"
#include "engine/engine.h"
#include "workload/objects.h"
#include "workload/segsrc.h"

#define OBJ_PART      (8u << 20) /* parts of an upload: the AWS CLI's multipart_chunksize */
#define OBJ_UPLOADERS 4

bool wl_object_url(const char *dir)
{
	return !strncmp(dir, "s3://", 5);
}

bool wl_on_objects(const struct wl *w)
{
	return w->obj && w->obj->on_objects;
}

/* What the recipe asks of its run's engine, with the run's engine options (parsed once here). */
struct run_engine {
	bool owns; /* it resolves s3:// names itself (s3, s3-agent, cuda-bounce host=s3) */
	/*
	 * its cleanup=1 (s3) is given: that deletes a job's objects when the job ends, in a recipe
	 * each phase's, before a later phase reads them (ckpt's restore)
	 */
	bool cleanup;
	const struct engine_objects *objects; /* its object operations (engine.h), or NULL */
};

/* All false for an unknown engine or options it refuses: the job's setup says which. */
static void run_engine(const struct wl *w, struct run_engine *re)
{
	const struct engine_ops *ops = engine_find(w->base.engine);
	const struct llmio_optdesc *od;
	void *opts = NULL;

	memset(re, 0, sizeof(*re));
	if (!ops)
		return;
	if (ops->opts_size) {
		opts = calloc(1, ops->opts_size);
		if (!opts || engine_opts_parse(ops, w->base.engine_opts, opts, NULL)) {
			free(opts);
			return;
		}
	}
	od = engine_opt_find(ops, "cleanup");
	re->owns = engine_owns_target(ops, opts);
	re->objects = engine_objects(ops, opts);
	re->cleanup = od && opts && *(const int *)((const char *)opts + od->offset);
	free(opts);
}

static void note_add(char *note, size_t len, const char *text)
{
	engine_appendf(note, len, "%s%s", note[0] ? "; " : "", text);
}

/*
 * The recipes whose files are written whole and front to back, as objects are: the others
 * (infer's KV file, offload's and migrate's tensor store, replay) write at random offsets.
 */
static bool on_objects_ok(const struct recipe *r)
{
	static const char *const ok[] = {"load", "pretrain", "ckpt", "finetune"};

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (!strcmp(r->name, ok[i]))
			return true;
	return false;
}

/* The bucket, the credentials and the server, asked once before anything is laid out. */
static int check_bucket(const struct engine_objects *obj, const char *prefix, struct llmio_error *e)
{
	char probe[LLMIO_PATH_MAX + 16] = "";
	const char *name = probe;
	uint64_t size;

	engine_appendf(probe, sizeof(probe), "%s/.llmio-check", prefix);
	return obj->size(&name, 1, &size, e);
}

const char *wl_objects_staging(const struct wl *w)
{
	struct run_engine re;
	const char *staging;

	run_engine(w, &re);
	if (!wl_object_url(w->base.directory) || re.owns)
		return NULL;
	staging = wl_str(w, "staging");
	if (!staging[0])
		staging = getenv("TMPDIR") && getenv("TMPDIR")[0] ? getenv("TMPDIR") : "/var/tmp";
	return staging;
}

int wl_objects_begin(struct wl *w, struct llmio_error *e)
{
	struct wl_objects *o = calloc(1, sizeof(*o));
	const char *dir = w->base.directory, *staging;
	size_t len = strlen(dir);
	struct run_engine re;
	struct stat st;

	if (!o)
		return llmio_err(e, -ENOMEM, "out of memory");
	w->obj = o;
	if (!on_objects_ok(w->recipe))
		return llmio_err(
		        e, -EINVAL,
		        "workload %s updates its files in place, which an object cannot be; "
		        "give a local --directory (on s3://: load, pretrain, ckpt, finetune)",
		        w->recipe->name);
	while (len > 5 && dir[len - 1] == '/')
		len--;
	snprintf(o->url, sizeof(o->url), "%.*s", (int)len, dir);
	run_engine(w, &re);
	if (!re.owns) {
		/* a file engine beside the object engines: files, said in every phase */
		staging = wl_objects_staging(w);
		if (stat(staging, &st) || !S_ISDIR(st.st_mode))
			return llmio_err(e, -ENOENT,
			                 "--staging %s is not a directory: the file engines of an "
			                 "s3:// run need a local one; create it or choose another",
			                 staging);
		w->base.directory[0] = '\0';
		engine_appendf(w->base.directory, sizeof(w->base.directory), "%s", staging);
		engine_appendf(o->note, sizeof(o->note),
		               "%s is a file engine: ran against the local staging directory "
		               "%s/llmio-work, not %s",
		               w->base.engine, staging, o->url);
		return 0;
	}
	if (re.cleanup)
		return llmio_err(
		        e, -EINVAL,
		        "cleanup=1 deletes a phase's objects when it ends, before a later "
		        "phase reads them (ckpt's restore); a recipe removes the objects it "
		        "created at its end by itself (--keep keeps them): drop cleanup=1");
	o->ops = re.objects;
	if (!o->ops)
		return llmio_err(e, -EINVAL,
		                 "--engine %s resolves its own targets, but not as objects: an "
		                 "s3:// --directory needs an object engine (`llmio engines`)",
		                 w->base.engine);
	o->on_objects = true;
	if (w->base.direct && !w->direct_auto)
		snprintf(o->note, sizeof(o->note),
		         "O_DIRECT does not apply to objects (no local file): ran without it");
	w->base.direct = false;
	/* the recipe's objects get llmio's own names under its own prefix, as files do */
	if (strlen(o->url) + 12 >= sizeof(w->base.directory))
		return llmio_err(e, -ENAMETOOLONG, "--directory %.64s... is too long", o->url);
	w->base.directory[0] = '\0';
	engine_appendf(w->base.directory, sizeof(w->base.directory), "%s/llmio-work", o->url);
	return check_bucket(o->ops, w->base.directory, e);
}

static bool listed(char *const *v, unsigned n, const char *name)
{
	for (unsigned i = 0; i < n; i++)
		if (!strcmp(v[i], name))
			return true;
	return false;
}

/* name onto the list v (n of cap): 0 or -ENOMEM */
static int list_add(char ***v, unsigned *n, unsigned *cap, const char *name)
{
	if (*n == *cap) {
		unsigned c = *cap ? *cap * 2 : 16;
		char **p = realloc(*v, c * sizeof(*p));

		if (!p)
			return -ENOMEM;
		*v = p;
		*cap = c;
	}
	(*v)[*n] = strdup(name);
	if (!(*v)[*n])
		return -ENOMEM;
	(*n)++;
	return 0;
}

static int remember(struct wl_objects *o, const char *name, uint64_t size, bool dedupe)
{
	int ret;

	if (dedupe && listed(o->created, o->ncreated, name))
		return 0;
	ret = list_add(&o->created, &o->ncreated, &o->cap, name);
	if (!ret)
		o->created_bytes += size;
	return ret;
}

int wl_objects_before_write(struct wl *w, const struct llmio_file *files, unsigned n,
                            struct llmio_error *e)
{
	struct wl_objects *o = w->obj;
	const char **names;
	uint64_t *sizes;
	int ret;

	if (!wl_on_objects(w) || !n)
		return 0;
	names = calloc(n, sizeof(*names));
	sizes = calloc(n, sizeof(*sizes));
	ret = names && sizes ? 0 : llmio_err(e, -ENOMEM, "out of memory");
	for (unsigned i = 0; i < n && !ret; i++)
		names[i] = files[i].path;
	if (!ret)
		ret = o->ops->size(names, n, sizes, e);
	/* one this run made (an earlier phase, --repeat) is still its own */
	for (unsigned i = 0; i < n && !ret; i++)
		if (sizes[i] != ENGINE_OBJECT_ABSENT &&
		    !listed(o->created, o->ncreated, names[i]) &&
		    !listed(o->before, o->nbefore, names[i]))
			ret = list_add(&o->before, &o->nbefore, &o->before_cap, names[i]);
	if (ret == -ENOMEM)
		llmio_err(e, ret, "out of memory");
	free(sizes);
	free(names);
	return ret;
}

int wl_objects_written(struct wl *w, const struct llmio_file *files, unsigned n)
{
	int ret = 0;

	for (unsigned i = 0; i < n && !ret && wl_on_objects(w); i++)
		if (!listed(w->obj->before, w->obj->nbefore, files[i].path))
			ret = remember(w->obj, files[i].path, files[i].size, true);
	return ret;
}

/*
 * Upload files (their sizes, llmio's pattern) with the store's writer engine (s3, whichever
 * engine reads them): OBJ_UPLOADERS threads, each its own objects, in 8 MiB parts.  Not a
 * phase: like filling files, it is not measured.
 */
static int upload(struct wl *w, const struct llmio_file *files, unsigned n, struct llmio_error *e)
{
	unsigned threads = n < OBJ_UPLOADERS ? n : OBJ_UPLOADERS;
	struct llmio_result *r = NULL;
	struct llmio_job_opts o;
	struct segsrc s;
	int ret;

	ret = segsrc_init(&s, threads, OBJ_PART, 1, 1);
	for (unsigned t = 0; t < threads && !ret; t++)
		for (unsigned f = t; f < n && !ret; f += threads)
			ret = segsrc_add(&s, t, f, 0, files[f].size);
	if (ret) {
		segsrc_release(&s);
		return llmio_err(e, ret, "out of memory");
	}
	llmio_job_opts_init(&o);
	snprintf(o.engine, sizeof(o.engine), "%s", w->obj->ops->writer->name);
	o.files = files;
	o.nfiles_list = n;
	o.io_source = &s.src;
	o.numjobs = threads;
	o.iodepth = 4;
	o.bs = OBJ_PART;
	o.rw = LLMIO_RW_WRITE;
	o.stop = w->base.stop;
	ret = llmio_job_run(&o, &r, e);
	llmio_result_destroy(r);
	segsrc_release(&s);
	if (ret)
		llmio_err_prefix(e, "uploading the recipe's objects");
	return ret;
}

/* Objects that were there before, each set once: load prepares the same shards per phase. */
static void count_reused(struct wl_objects *o, const struct llmio_file *files, unsigned n,
                         unsigned reused)
{
	for (unsigned i = 0; i < o->nseen; i++)
		if (o->seen_n[i] == n &&
		    !strncmp(o->seen[i], files[0].path, sizeof(o->seen[0]) - 1))
			return;
	if (o->nseen < sizeof(o->seen) / sizeof(o->seen[0])) {
		snprintf(o->seen[o->nseen], sizeof(o->seen[0]), "%s", files[0].path);
		o->seen_n[o->nseen++] = n;
	}
	o->reused += reused;
}

static int prepare_here(struct wl *w, const struct llmio_file *files, unsigned n,
                        struct llmio_error *e)
{
	const char **names = calloc(n, sizeof(*names));
	uint64_t *sizes = calloc(n, sizeof(*sizes));
	struct llmio_file *todo = calloc(n, sizeof(*todo));
	unsigned m = 0;
	int ret = -ENOMEM;

	if (!names || !sizes || !todo) {
		llmio_err(e, ret, "out of memory");
		goto out;
	}
	for (unsigned i = 0; i < n; i++)
		names[i] = files[i].path;
	ret = w->obj->ops->size(names, n, sizes, e);
	if (ret)
		goto out;
	/* another size is an object of an earlier run at another --scale: ours to rewrite */
	for (unsigned i = 0; i < n; i++)
		if (sizes[i] != files[i].size)
			todo[m++] =
			        (struct llmio_file){.path = files[i].path, .size = files[i].size};
	if (m)
		ret = upload(w, todo, m, e);
	for (unsigned i = 0; i < m && !ret; i++)
		ret = remember(w->obj, todo[i].path, todo[i].size, false);
	if (ret == -ENOMEM)
		llmio_err(e, ret, "out of memory");
	if (!ret)
		count_reused(w->obj, files, n, n - m);
out:
	free(todo);
	free(sizes);
	free(names);
	return ret;
}

/*
 * Under MPI the ranks take turns, rank 0 first, a barrier between turns: a rank uploads only
 * the objects no rank before it did (the same shards are uploaded once, by rank 0, instead of
 * by every rank at once), and it alone removes them at the end (wl_objects_end).  A rank that
 * fails still waits its turns out, so that every rank passes the same barriers; its error ends
 * the run at the phase's barrier.
 */
int wl_objects_prepare(struct wl *w, const struct llmio_file *files, unsigned n,
                       struct llmio_error *e)
{
	int ret = 0;

	if (!w->dist || w->dist->size < 2)
		return prepare_here(w, files, n, e);
	for (unsigned r = 0; r < w->dist->size; r++) {
		w->dist->barrier();
		if (r == w->dist->rank)
			ret = prepare_here(w, files, n, e);
	}
	w->dist->barrier();
	return ret;
}

/* A phase's bytes on the wire and its client CPU split, from its streams (docs/output.md). */
static void wire_metrics(struct wl_phase *ph)
{
	double proc = 0, agent = 0, hash = 0, copy = 0, soft = 0, rx = 0, tx = 0, req = 0,
	       retries = 0, moved = 0;
	bool known = false;

	for (unsigned s = 0; s < ph->nstreams; s++) {
		const struct llmio_result *r = ph->streams[s];

		moved += (double)(r->read.bytes + r->write.bytes);
		proc += r->cpu.proc_s;
		soft += r->softirq_system_s;
		if (!r->wire.known)
			continue;
		known = true;
		rx += (double)r->wire.rx_bytes;
		tx += (double)r->wire.tx_bytes;
		req += (double)r->wire.requests;
		retries += (double)r->wire.retries;
		hash += r->wire.hash_s;
		copy += r->wire.copy_s;
		agent += r->wire.agent_s;
	}
	if (!ph->nstreams)
		return;
	/* the client's CPU: the process's threads and, for s3-agent, the agent's */
	wl_metric(ph, "client_cpu_s_per_GB", moved > 0 ? (proc + agent) / (moved / 1e9) : 0,
	          "CPU-s/GB");
	if (!known)
		return;
	wl_metric(ph, "wire_rx_bytes", rx, "B");
	wl_metric(ph, "wire_tx_bytes", tx, "B");
	wl_metric(ph, "requests", req, "");
	if (retries > 0)
		wl_metric(ph, "retries", retries, "");
	wl_metric(ph, "hash_s", hash, "s");
	wl_metric(ph, "copy_s", copy, "s");
	if (agent > 0)
		wl_metric(ph, "agent_s", agent, "s");
	wl_metric(ph, "softirq_system_s", soft, "s (all CPUs)");
}

void wl_objects_end(struct wl *w, int ret)
{
	struct wl_objects *o = w->obj;
	struct llmio_error e = {0};
	char left[LLMIO_PATH_MAX + 256];
	unsigned deleted = 0;
	bool keep = w->keep;

	if (!o)
		return;
	for (unsigned p = 0; p < w->nphases; p++) {
		wire_metrics(&w->phases[p]);
		if (o->note[0])
			note_add(w->phases[p].note, sizeof(w->phases[p].note), o->note);
	}
	if (!o->on_objects)
		return;
	/* no rank removes what it uploaded while another may still read it */
	if (w->dist && w->dist->size > 1 && !ret)
		w->dist->barrier();
	left[0] = '\0';
	if (o->ncreated && !keep &&
	    o->ops->remove((const char *const *)o->created, o->ncreated, &deleted, &e))
		engine_appendf(left, sizeof(left),
		               "objects: %u created under %s/, removing them failed: %s",
		               o->ncreated, w->base.directory, e.msg);
	else if (o->ncreated && !keep)
		engine_appendf(left, sizeof(left),
		               "objects: %u created under %s/ (%llu bytes), %u removed at the end "
		               "(--keep keeps them)",
		               o->ncreated, w->base.directory, (unsigned long long)o->created_bytes,
		               deleted);
	else if (o->ncreated)
		engine_appendf(
		        left, sizeof(left),
		        "objects: %u created under %s/ (%llu bytes) left in the bucket (--keep)",
		        o->ncreated, w->base.directory, (unsigned long long)o->created_bytes);
	else
		engine_appendf(left, sizeof(left), "objects: none created under %s/",
		               w->base.directory);
	if (o->reused)
		engine_appendf(left, sizeof(left), ", %u there before left as they were",
		               o->reused);
	if (o->nbefore)
		engine_appendf(left, sizeof(left), ", %u there before rewritten and kept",
		               o->nbefore);
	if (w->nphases)
		note_add(w->phases[w->nphases - 1].note, sizeof(w->phases[0].note), left);
}

void wl_objects_release(struct wl *w)
{
	if (!w->obj)
		return;
	for (unsigned i = 0; i < w->obj->ncreated; i++)
		free(w->obj->created[i]);
	free(w->obj->created);
	for (unsigned i = 0; i < w->obj->nbefore; i++)
		free(w->obj->before[i]);
	free(w->obj->before);
	free(w->obj);
	w->obj = NULL;
}
