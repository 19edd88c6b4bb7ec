/* SPDX-License-Identifier: MIT */
/*
 * Workloads: a recipe (load, pretrain, ckpt, finetune, infer) turns a model and a few
 * parameters into a sequence of named phases; each phase runs one or more streams (jobs) on
 * the chosen engine and keeps their results plus the recipe's own metrics (load time, samples
 * per second, accelerator utilisation, checkpoint duration ...).
 *
 * A recipe is one file in this folder plus one line in the table of workload.c.  Its
 * parameters are data (struct llmio_optdesc, with their ranges), used for parsing, range
 * checks, --help and the JSON record alike.
 */
#ifndef LLMIO_WORKLOAD_H
#define LLMIO_WORKLOAD_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/optdesc.h"
#include "llmio/job.h"
#include "llmio/model.h"
#include "llmio/result.h"
#include "base/error.h"

#define WL_MAX_PHASES  48
#define WL_MAX_STREAMS 16
#define WL_MAX_METRICS 16
#define WL_MAX_KV      48

/* A recipe parameter: name, type, range (min, max; max 0 = none), default and help. */
#define WL_ENUM(n, choices_, d, h)                                                                 \
	{                                                                                          \
		.name = (n), .type = OPTD_ENUM, .def = (d), .choices = (choices_), .help = (h),    \
		.scope = OPTD_SCOPE_RECIPE                                                         \
	}
#define WL_PARAM(n, t, lo, hi, d, h)                                                               \
	{                                                                                          \
		.name = (n), .type = (t), .def = (d), .min = (lo), .max = (hi), .help = (h),       \
		.scope = OPTD_SCOPE_RECIPE                                                         \
	}

struct wl_metric {
	char name[40];
	double value;
	char unit[16];
};

struct wl_phase {
	char name[48];
	double wall_s;
	unsigned nstreams;
	char stream_names[WL_MAX_STREAMS][40];
	struct llmio_result *streams[WL_MAX_STREAMS];
	unsigned nmetrics;
	struct wl_metric metrics[WL_MAX_METRICS];
	uint64_t promised_bytes; /* what the recipe set out to move in this phase */
	char note[320];          /* page-cache honesty, fallbacks */
};

struct wl;

struct recipe {
	const char *name;
	const char *summary;
	const struct llmio_optdesc *params; /* terminated by name == NULL */
	const struct llmio_optdesc
	        *shared; /* a second table it shares with other recipes, or NULL */
	bool needs_model;
	bool no_directory; /* may run without --directory (migrate --simulate moves no bytes) */
	/* Run the phases.  0, or -errno with a one-line message in e (-EINVAL: usage). */
	int (*run)(struct wl *w, struct llmio_error *e);
};

/*
 * Under MPI (docs/mpi.md): the CLI fills this from src/mpi, the only code that calls MPI.
 * NULL for one process.  Recipes ask wl_owns() which simulated ranks or dataset files are this
 * process's and wl_reduce() for figures over every rank; each phase starts at a barrier.
 */
enum wl_op { WL_SUM, WL_MIN, WL_MAX };
struct wl_dist {
	unsigned rank, size;
	bool reorder;           /* --reorder: a restore reads what another process wrote (IOR -C) */
	unsigned reorder_shift; /* from process (rank + shift) % size */
	void (*barrier)(void);
	double (*allreduce)(double v, enum wl_op op);
	/* this rank failed: end every rank with e's message (does not return) */
	int (*fail)(int code, const struct llmio_error *e);
	/* after wl_run(): merge the streams over the ranks; *mpi = the ranks' records (rank 0) */
	int (*reduce)(struct wl *w, cJSON **mpi, struct llmio_error *e);
};
/* The wl_dist every wl_init() takes (the CLI sets it once under mpirun). */
void wl_dist_default(const struct wl_dist *d);

struct wl {
	const struct recipe *recipe;
	struct llmio_model model;
	bool has_model;
	/* engine, engine options, direct, directory, iodepth, numjobs, stop, progress */
	struct llmio_job_opts base;
	bool direct_auto;   /* direct was not asked for: fall back to buffered where refused */
	bool direct_probed; /* the filesystem was asked whether it does O_DIRECT */
	double scale;       /* fraction of the bytes (request sizes and patterns unchanged) */
	char keys[WL_MAX_KV][40];    /* copied */
	const char *vals[WL_MAX_KV]; /* borrowed (argv, a job file) */
	unsigned nkv;
	struct wl_phase phases[WL_MAX_PHASES];
	unsigned nphases;
	const struct wl_dist *dist; /* under MPI, else NULL */
	/*
	 * Called as each phase starts (stream NULL, o NULL) and as each of its streams starts,
	 * before its files are prepared: the CLI's progress line.  NULL for none; must not block.
	 */
	void (*on_step)(void *arg, const struct wl *w, const char *stream,
	                const struct llmio_job_opts *o);
	void *on_step_arg;
	struct wl_objects *obj; /* an s3:// --directory (objects.h), else NULL */
	bool keep;              /* --keep: leave the files or objects the run made */
};

extern const struct recipe recipe_load, recipe_pretrain, recipe_ckpt, recipe_finetune, recipe_infer,
        recipe_replay, recipe_offload, recipe_migrate;

size_t recipe_count(void);
const struct recipe *recipe_at(size_t i);
const struct recipe *recipe_find(const char *name);
/* Is `key` one of the recipe's parameters (or a parameter every recipe has)? */
bool recipe_has_param(const struct recipe *r, const char *key);

/* Set up w for recipe r (base options copied); release with wl_release(). */
void wl_init(struct wl *w, const struct recipe *r, const struct llmio_job_opts *base);
void wl_release(struct wl *w);
/* Record a recipe parameter; -EINVAL naming the recipe's parameters when unknown. */
int wl_set(struct wl *w, const char *key, const char *val, struct llmio_error *e);
/* A parameter's value (given or default), parsed by its type and checked against its range;
 * -EINVAL with the fix. */
int wl_u64(const struct wl *w, const char *name, uint64_t *out, struct llmio_error *e);
int wl_double(const struct wl *w, const char *name, double *out, struct llmio_error *e);
const char *wl_str(const struct wl *w, const char *name);
/* An OPTD_ENUM parameter's value, checked against its choices; -EINVAL with the fix. */
int wl_enum(const struct wl *w, const char *name, const char **out, struct llmio_error *e);
/* Run the recipe: its phases, then the page-cache honesty notes. */
int wl_run(struct wl *w, struct llmio_error *e);

/* For recipes.  Is item i (a simulated rank, a dataset file) this process's?  (i mod size) */
bool wl_owns(const struct wl *w, unsigned i);
/* Is item i process `rank`'s?  (Always, without MPI.) */
bool wl_owned_by(const struct wl *w, unsigned i, unsigned rank);
/* v over every process (v itself for one). */
double wl_reduce(const struct wl *w, double v, enum wl_op op);

struct wl_phase *wl_phase_new(struct wl *w, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
void wl_metric(struct wl_phase *ph, const char *name, double value, const char *unit);
/* A job with the base options filled in (engine, direct, iodepth, stop ...). */
void wl_job_opts(const struct wl *w, struct llmio_job_opts *o);
/* Run o as stream `name` of phase ph; its result is kept in the phase. */
int wl_job(struct wl *w, struct wl_phase *ph, const char *name, struct llmio_job_opts *o,
           struct llmio_error *e);
/* A file path in the workload's directory. */
int wl_path(const struct wl *w, char *out, size_t len, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
/* Refuse when the directory lacks `need` more bytes than the files already hold. */
int wl_check_space(const struct wl *w, const struct llmio_file *files, unsigned n,
                   struct llmio_error *e);
/* Bytes scaled by w->scale, at least `min` and rounded up to `align` (a power of two). */
uint64_t wl_scaled(const struct wl *w, uint64_t bytes, uint64_t min, uint64_t align);
/* O_DIRECT alignment the recipe must respect (4096 when direct, else 1). */
uint32_t wl_align(const struct wl *w);

/*
 * Run recipe `recipe` for `model` (catalog name or config.json) with job options `base` and
 * the recipe parameters keys[i] = vals[i], for callers without a struct wl (sweeps).
 * direct_given: base->direct was chosen by the user (else O_DIRECT where the engine can).
 * keep: leave the files and objects the run made (the sweep's --keep).
 * *phases = the "phases" array of wl_json() (also on failure, with what was measured); under
 * MPI (wl_dist_default()) the streams merged over the ranks and, on rank 0, *mpi the ranks'
 * records (else NULL).
 */
int wl_run_params(const char *recipe, const char *model, const struct llmio_job_opts *base,
                  bool direct_given, bool keep, const char *const *keys, const char *const *vals,
                  size_t n, cJSON **phases, cJSON **mpi, struct llmio_error *e);

/* The whole run as one JSON object (the journal's "phases" layout). */
cJSON *wl_json(const struct wl *w);

#endif
