/* SPDX-License-Identifier: MIT */
/*
 * Sweeps: fio-style INI job files whose keys may hold lists and ranges, expanded into the
 * cartesian product of each section (minus exclude= expressions and duplicates), and run
 * point by point.  The language is documented in docs/sweeps.md.
 *
 *   jobfile.c  reads the file (libinih), checks every key and value, keeps each key's list
 *   matrix.c   ranges, exclude= expressions, the product, canonical configurations + hash
 *   point.c    one point: its configuration, running it, its journal record
 *   runner.c   a whole sweep: order, resume, each point into the journal (runner.h)
 *   quick.c    the plan of `llmio quick` (quick.h)
 */
#ifndef LLMIO_SWEEP_SWEEP_H
#define LLMIO_SWEEP_SWEEP_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "llmio/job.h"
#include "sweep/steady.h"
#include "base/error.h"

enum sweep_kind {
	SK_JOB,      /* an option of `llmio run` (llmio_job_opts_set) */
	SK_ENGINE,   /* an option of one or more engines */
	SK_STEADY,   /* ss, ss_window, ss_min, ss_max */
	SK_WORKLOAD, /* workload, model */
	SK_PARAM,    /* a recipe parameter: any other key of a workload= section */
};

/* One value of a key's list: as written, and canonical (what is hashed and recorded). */
struct sweep_value {
	char *raw;
	char *canon;
};

/* A key of a section and its list of values (one value = not swept). */
struct sweep_dim {
	char *key; /* canonical name ("blocksize" -> "bs") */
	enum sweep_kind kind;
	const char *file; /* where it was given: the job file or one it includes */
	unsigned line;
	size_t n;
	struct sweep_value *v;
};

struct sweep_expr;

struct sweep_exclude {
	struct sweep_expr *expr;
	unsigned line;
};

struct sweep_section {
	char *name;
	const char *file; /* of its header */
	unsigned line;
	size_t ndims;
	struct sweep_dim *dims; /* [global]'s keys first, then the section's own */
	size_t nexcl;
	struct sweep_exclude *excl; /* OR-ed: [global]'s and the section's */
};

/* Defaults of a set of options (the job's, or one engine's), canonical. */
struct sweep_defaults {
	size_t n;
	const char **key;
	struct sweep_value *v;
};

struct sweep_file {
	char *path;
	char **files; /* every file read: [0] path, then the files it includes */
	size_t nfiles;
	char *dir; /* --dir override, or NULL */
	size_t nsec;
	struct sweep_section *sec;
	struct sweep_defaults job;    /* every job option */
	struct sweep_defaults steady; /* ss_window, ss_min, ss_max */
	size_t nengines;
	struct sweep_defaults *engine; /* per engine, registry order */
};

/*
 * Read and check a job file.  dir (may be NULL) overrides where the points' files go: every
 * point's directory= becomes dir, and a relative filename= is taken inside dir.
 * \return 0 and *out; -EINVAL with "FILE:LINE: KEY: problem" in err for a bad file (exit 2);
 *         another -errno (file unreadable, no memory) with a message.
 */
int sweep_file_load(const char *path, const char *dir, struct sweep_file **out,
                    struct llmio_error *e);
/*
 * sweep_file_load() for `llmio run FILE.fio` (docs/fio.md): the same reader, but ss is fio's
 * steadystate (a job option), not llmio sweep's steady-state key of that name.
 */
int fio_file_load(const char *path, struct sweep_file **out, struct llmio_error *e);
void sweep_file_free(struct sweep_file *f);

/*
 * fio's arithmetic and reserved keywords in values (jobexpr.c).  sweep_arith_eval: the
 * expression s[0..len) (numbers with k/m/g/t/p, + - * / % ^, parentheses) into *out; 0,
 * -EINVAL (not an expression) or -EDOM (division by zero, no finite result).
 * sweep_arith_has_op: does s[0..len) hold an operator after its first character?
 * sweep_keyword: the value of the keyword at name ("ncpus..." after the '$') in buf, its
 * length in *len; NULL when name starts with none of pagesize, mb_memory, ncpus.
 */
int sweep_arith_eval(const char *s, size_t len, double *out);
bool sweep_arith_has_op(const char *s, size_t len);
const char *sweep_keyword(const char *name, size_t *len, char *buf, size_t cap);

/* Split one value on ',' and expand ranges (matrix.c); used by the loader. */
int sweep_dim_expand(struct sweep_dim *d, const char *text, struct llmio_error *e);

/* Canonical form of one value of key (jobfile.c); -EINVAL with the value's error in err. */
int sweep_canon(enum sweep_kind kind, const char *key, const char *raw, char **canon,
                struct llmio_error *e);

/* Classify a key (jobfile.c): kind and canonical name; -ENOENT for an unknown key. */
int sweep_classify(const char *key, bool workload_section, enum sweep_kind *kind,
                   const char **name);

/*
 * exclude= expressions (matrix.c).  Bounded, since a job file may come from anywhere and the
 * parser, evaluator and free recurse: at most SWEEP_EXPR_MAX_DEPTH nested '(' or '!', at most
 * SWEEP_EXPR_MAX_TERMS comparisons and SWEEP_EXPR_MAX_LEN characters per expression (several
 * exclude= lines are OR-ed, so a longer one can be split).
 */
#define SWEEP_EXPR_MAX_DEPTH 64
#define SWEEP_EXPR_MAX_TERMS 1024
#define SWEEP_EXPR_MAX_LEN   65536
struct sweep_config;
int sweep_expr_parse(const char *text, bool workload_section, struct sweep_expr **out,
                     struct llmio_error *e);
bool sweep_expr_eval(const struct sweep_expr *e, const struct sweep_config *c);
void sweep_expr_free(struct sweep_expr *e);

/* A resolved configuration: every key of the point, sorted by key. */
#define SWEEP_MAX_KEYS 160

struct sweep_kv {
	const char *key;
	const char *raw;
	const char *canon;
	enum sweep_kind kind;
	bool from_file; /* set by the job file (not a default) */
};

struct sweep_config {
	size_t n;
	struct sweep_kv kv[SWEEP_MAX_KEYS];
};

/* Canonical value of key in c, or NULL. */
const char *sweep_config_get(const struct sweep_config *c, const char *key);

/*
 * The configuration hash: FNV-1a 64 over "key=canonical\n" for every key in sorted order,
 * "repeat=R" included in its place.  Printed as 16 hex digits.
 */
uint64_t sweep_config_hash(const struct sweep_config *c, unsigned repeat);

/* The "config" object of a journal record (canonical values; whole numbers as numbers). */
cJSON *sweep_config_json(const struct sweep_config *c, unsigned repeat);

/* The points of a file, in file order, after exclusions and duplicates. */
struct sweep_plan_point {
	uint32_t sec;
	uint32_t *choice; /* index into each dim's values */
};

struct sweep_plan {
	size_t n;
	struct sweep_plan_point *p;
	size_t combinations; /* before exclusions */
	size_t excluded;
	size_t duplicates; /* same resolved configuration as an earlier point */
};

#define SWEEP_MAX_COMBINATIONS 1000000

/* Expand every section.  \return 0, or -errno with a message. */
int sweep_plan_build(const struct sweep_file *f, struct sweep_plan *plan, struct llmio_error *e);
void sweep_plan_release(struct sweep_plan *plan);

/* The configuration of one combination of section sec. */
int sweep_config_build(const struct sweep_file *f, uint32_t sec, const uint32_t *choice,
                       struct sweep_config *c, struct llmio_error *e);

/* What the caller of sweep_run_point() provides, and what it learns about the run. */
/* Under MPI: set by the CLI from src/mpi (docs/mpi.md). */
struct sweep_dist {
	int (*run_job)(struct llmio_job_opts *o, struct llmio_result **r, cJSON **mpi,
	               struct llmio_error *e);
	bool writer; /* this rank writes the journal (rank 0) */
};

struct sweep_run_ctx {
	/* The job's stop flag; set by the caller's signal handler, and by steady state. */
	volatile int *stop;
	/* Set (by the caller's signal handler) when the whole sweep is to stop. */
	volatile int *abort;
	/* Live figures about once a second (may be NULL); must not block. */
	void (*progress)(void *arg, double elapsed_s, double eta_s, double iops, double bw);
	void *progress_arg;

	/*
	 * Under MPI (NULL for one process): a plain point's job runs through run_job, every rank
	 * its share, merged on rank 0 (*r NULL elsewhere, a failing rank ends them all).
	 */
	const struct sweep_dist *dist;
	/* --keep: a recipe point leaves the files and objects it made (objects are removed by the
	 * recipe itself, files by the sweep at its end: src/cli/cmd_sweep.c) */
	bool keep;

	/* out */
	struct steady ss;
	bool interrupted; /* stopped by *abort: not a measurement to keep */
	cJSON *mpi;       /* under MPI on rank 0: the ranks' records of the point */
};

struct sweep_point {
	const struct sweep_file *file;
	const char *section;
	size_t index;   /* 0-based, file order */
	size_t npoints; /* in the file */
	unsigned repeat;
	uint64_t hash;
	const char *workload; /* recipe name, or NULL for a plain job */
	struct steady_cfg ss;
	struct sweep_config cfg;
	struct sweep_run_ctx *ctx; /* may be NULL */
};

/* Resolve point idx of plan for repetition repeat. \return 0 or -errno with a message. */
int sweep_point_make(const struct sweep_file *f, const struct sweep_plan *plan, size_t idx,
                     unsigned repeat, struct sweep_point *p, struct llmio_error *e);

/* The job options of a plain point (defaults + what the file set). */
int sweep_point_opts(const struct sweep_point *p, struct llmio_job_opts *o, struct llmio_error *e);

/*
 * Run one point.  On return *phases (may be NULL on failure) is the record's "phases" array:
 * for a plain job one phase "run" with one job object exactly as `llmio run --json` writes
 * it.  \return 0; -errno with a message when the point failed (the sweep records it and
 * goes on); what was measured before a failure is still in *phases.
 */
int sweep_run_point(const struct sweep_point *p, cJSON **phases, struct llmio_error *e);

/*
 * Seconds one point is expected to take at most (runtime + ramp, or ss_max + ramp), and at
 * least (*min_s: with steady state, reached as early as ss_min / ss_window allow); *known is
 * false when it depends on what the configuration does not say (by-size jobs, recipes).
 */
double sweep_point_estimate_s(const struct sweep_point *p, double *min_s, bool *known);

/* The page cache dropped (sync + drop_caches) when running as root. \return true if done. */
bool sweep_drop_caches(void);

/* What happened to one point, for its journal record. */
struct sweep_outcome {
	cJSON *phases; /* taken over by the record */
	cJSON *mpi;    /* under MPI: the ranks' records, taken over by the record (or NULL) */
	int error;     /* 0 or -errno */
	const char *message;
	bool cache_dropped;
	uint64_t start_epoch_ms;
	double wall_s;
};

/* The journal record of a point (docs/sweeps.md).  \return a new object or NULL. */
cJSON *sweep_point_record(const struct sweep_point *p, struct sweep_outcome *o);

#endif
