/* SPDX-License-Identifier: MIT */
/* Internal view of the job option table (options.c) for job files and sweeps. */
#ifndef LLMIO_CORE_OPTIONS_H
#define LLMIO_CORE_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

#include "base/optdesc.h"

#include "llmio/job.h"

/*
 * The canonical form of option `key` (a name or an alias) as set in o, into buf: sizes and
 * counts as decimal bytes / numbers, times in ns, booleans 0/1, enums by their name, strings
 * as they are.  *name (may be NULL) gets the option's own name ("blocksize" -> "bs").
 * \return 0; -ENOENT for an unknown key; -ERANGE when buf is too small.
 */
int job_opt_canonical(const struct llmio_job_opts *o, const char *key, const char **name, char *buf,
                      size_t len);

/* Job option i of the table (NULL past the end), and the one named or aliased key (or NULL). */
const struct llmio_optdesc *job_optdesc(size_t i);
const struct llmio_optdesc *job_opt_find(const char *key);

/* Does option d take fio's READ,WRITE,TRIM values in one (rate, rate_iops)? */
bool job_opt_per_dir(const struct llmio_optdesc *d);

/* The type of job option `key` (a name or an alias) into *type: 0, or -ENOENT when unknown. */
int job_opt_type(const char *key, enum llmio_optdesc_type *type);

/* Set job option key (a name or an alias) from text.  0; -ENOENT for an unknown key, -EINVAL
 * for a value the option refuses (optdesc_parse()'s message in e). */
int job_opt_set(struct llmio_job_opts *opts, const char *key, const char *value,
                struct llmio_error *e);

/*
 * The job options a result echoes (each option's json, json_ns, json_if and no_echo), in the
 * table's order: fn(arg, key, d, v) for each, with the value as in o.
 */
void job_opts_echo(const struct llmio_job_opts *o,
                   void (*fn)(void *arg, const char *key, const struct llmio_optdesc *d,
                              const struct llmio_optval *v),
                   void *arg);

/*
 * fio's options into llmio's fields (filesize -> size, rate_iops -> rate, randrepeat=0 -> a new
 * randseed, a log named JOB_LOG_JOBNAME -> the job's name); loops, number_ios and time_based are
 * applied where the job sizes its I/O.  0, or -EINVAL with one line when two of them disagree or a
 * value has no llmio meaning.  Setting randrepeat back to 1 makes a second call keep the seed
 * drawn.
 */
int job_opts_resolve(struct llmio_job_opts *o, struct llmio_error *e);

/*
 * A log option's value that stands for the job's name: what a bare write_bw_log, write_iops_log
 * or write_lat_log line of a job file means (fio then names the logs after the job).
 * job_opts_resolve() puts the name in its place.
 */
#define JOB_LOG_JOBNAME "$jobname"

/*
 * fio's percentile_list ("50:99:99.9", ',' also taken) into out (at most max); "" or NULL = fio's
 * default list (1, 5, 10, 20 ... 99.99).  0, or -EINVAL with one line in e.
 */
#define JOB_PCT_MAX 64
/* Does rw draw random offsets (randread, randwrite, randrw)? */
bool job_rw_random(enum llmio_rw rw);

/*
 * The posix_fadvise() advice of o's fadvise_hint, as fio resolves it (fadvise_hint=1:
 * POSIX_FADV_RANDOM for a random rw, POSIX_FADV_SEQUENTIAL otherwise), or -1 for none
 * (fadvise_hint=0; fadvise_hint=1 for a job whose I/Os come from an io_source).
 */
int job_fadvise_advice(const struct llmio_job_opts *o);

int job_percentile_list(const char *text, double *out, size_t max, size_t *n,
                        struct llmio_error *e);

/*
 * fio's bssplit ("4k/10:64k/50:32k/40", a list per direction: "READS,WRITES[,TRIMS]", one list
 * for all): the sizes and their cumulative percentages per direction (0 reads, 1 writes), a
 * blank percentage filled as fio fills it (the rest, evenly).  min is the smallest size of
 * either direction, the job's grain (its bs), max the largest (the buffers'), dmin[d] the
 * smallest of direction d (its I/Os' alignment, as fio's blockalign default).  0, or -EINVAL
 * with one line in e (a size that is not a multiple of its direction's smallest, a
 * direction's smallest not a multiple of min, percentages that do not add up to 100).
 */
#define JOB_BSSPLIT_MAX 64 /* fio's BSSPLIT_MAX */
struct job_bssplit {
	unsigned n[2];
	uint64_t bs[2][JOB_BSSPLIT_MAX];
	uint32_t cum[2][JOB_BSSPLIT_MAX];
	uint64_t min, max, dmin[2];
	uint64_t range[2]; /* bsrange: direction d's largest size (its smallest is dmin[d]), or 0 */
};
int job_bssplit_parse(const char *text, struct job_bssplit *out, struct llmio_error *e);

/*
 * fio's bsrange ("MIN-MAX", or "MIN-MAX,MIN-MAX" for reads, writes; a third list, trims, is
 * checked): into out as the split of each direction's sizes, dmin[d] = MIN, range[d] = MAX,
 * min and max as job_bssplit_parse()'s.  Each I/O's size is then drawn as fio draws it.  0, or
 * -EINVAL with one line in e (MIN > MAX, MAX not a multiple of MIN, a direction's MIN not a
 * multiple of the other's).
 */
int job_bsrange_parse(const char *text, struct job_bssplit *out, struct llmio_error *e);

/* The job's sizes: bssplit's or bsrange's (neither: out->min = 0); 0 or -EINVAL with e. */
int job_bs_sizes(const struct llmio_job_opts *o, struct job_bssplit *out, struct llmio_error *e);

/*
 * fio's zoned and zoned_abs distributions: zone i takes the I/Os whose draw r in 0..99 is below
 * cum[i] (and at least cum[i-1]), at an offset uniform in its part of the target: from
 * start_pct[i] percent for size_pct[i] percent of it (zoned), or from start[i] bytes for size[i]
 * bytes (zoned_abs).
 */
#define JOB_ZONES_MAX 64
struct job_zones {
	unsigned n;
	bool abs;
	uint32_t cum[JOB_ZONES_MAX];
	uint32_t start_pct[JOB_ZONES_MAX], size_pct[JOB_ZONES_MAX];
	uint64_t start[JOB_ZONES_MAX], size[JOB_ZONES_MAX];
};
/* The list of o's random_zones into out; 0, or -EINVAL with one line in e. */
int job_zones_parse(const struct llmio_job_opts *o, struct job_zones *out, struct llmio_error *e);

/* A fio option llmio refuses: what to use instead (one line), or NULL when key is not one. */
const char *job_fio_refused(const char *key);

#endif
