/* SPDX-License-Identifier: MIT */
/*
 * Job options declared as data (struct llmio_optdesc, core/optdesc.h): one table gives each
 * option's name (fio's where fio has one), type, field, default, range, help and fio mapping.
 * The same table parses CLI flags and job-file keys, prints --help, writes docs/options.md and
 * the fio job file of --emit-fio, so they can never disagree.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/error.h"
#include "core/options.h"
#include "llmio/job.h"

/* zipf:THETA or random (uniform): the distribution in i, theta in d. */
static int dist_parse(const char *text, struct llmio_optval *out)
{
	char *end;

	if (!strcmp(text, "random") || !strcmp(text, "uniform")) {
		out->i = LLMIO_DIST_UNIFORM;
		return 0;
	}
	if (strncmp(text, "zipf:", 5))
		return -EINVAL;
	errno = 0;
	out->d = strtod(text + 5, &end);
	if (errno || end == text + 5 || *end || !(out->d > 0) || out->d > 100)
		return -EINVAL;
	out->i = LLMIO_DIST_ZIPF;
	return 0;
}

static void dist_store(const struct llmio_optval *v, void *base)
{
	struct llmio_job_opts *o = base;

	o->random_distribution = (enum llmio_dist)v->i;
	if (v->i == LLMIO_DIST_ZIPF)
		o->zipf_theta = v->d;
}

static void dist_load(const void *base, struct llmio_optval *v)
{
	const struct llmio_job_opts *o = base;

	v->i = o->random_distribution;
	v->d = o->zipf_theta;
}

static int dist_format(const struct llmio_optval *v, char *buf, size_t len)
{
	int n = v->i == LLMIO_DIST_ZIPF ? snprintf(buf, len, "zipf:%g", v->d)
	                                : snprintf(buf, len, "random");

	return n < 0 || (size_t)n >= len ? -ERANGE : 0;
}

static const struct llmio_optdesc_codec dist_codec = {dist_parse, dist_store, dist_load,
                                                      dist_format};

#define JOB(n, a, t, f, d, h, ...)                                                                 \
	{                                                                                          \
		.name = n, .alias = a, .type = t, OPTD_FIELD(struct llmio_job_opts, f), .def = d,  \
		.help = h, .scope = OPTD_SCOPE_JOB, __VA_ARGS__                                    \
	}
/* fio takes the value as it is under the same name */
#define FIO .fio_kind = OPTD_FIO_VALUE
/* emit_fio.c converts it (or writes it with another option) */
#define FIO_CUSTOM .fio_kind = OPTD_FIO_CUSTOM

static const struct llmio_optdesc opts_table[] = {
        JOB("ioengine", "engine", OPTD_STRING, engine, "psync", "datapath: see `llmio engines`",
            .fio = "ioengine", FIO),
        JOB("filename", NULL, OPTD_STRING, filename, "", "file or block device to do I/O to",
            FIO_CUSTOM),
        JOB("directory", NULL, OPTD_STRING, directory, "",
            "directory: files llmio.0 .. llmio.N-1 in its llmio-work (llmio's own)", FIO_CUSTOM),
        JOB("nrfiles", NULL, OPTD_UINT, nrfiles, "1", "number of files in --directory", .min = 1,
            .max = 1000000, FIO_CUSTOM, .json_if = "directory"),
        JOB("rw", "readwrite", OPTD_ENUM, rw, "read",
            "read | write | randread | randwrite | randrw",
            .choices = "read|write|randread|randwrite|randrw",
            .expect = "read, write, randread, randwrite or randrw", .fio = "rw", FIO_CUSTOM),
        JOB("rwmixread", NULL, OPTD_UINT, rwmixread, "50", "percent of reads in randrw", .min = 0,
            .max = 100, FIO_CUSTOM, .json_if = "rw=randrw"),
        JOB("bs", "blocksize", OPTD_SIZE, bs, "4k", "block size of every I/O", .min = 1,
            .max = 1u << 30, .fio = "bs", FIO),
        JOB("iodepth", NULL, OPTD_UINT, iodepth, "1", "I/Os in flight per thread (async engines)",
            .min = 1, .max = 4096, FIO_CUSTOM),
        JOB("numjobs", NULL, OPTD_UINT, numjobs, "1", "threads, each with its own iodepth",
            .min = 1, .max = 1024, FIO_CUSTOM),
        JOB("size", NULL, OPTD_SIZE, size, "0",
            "bytes of the target (all files together); 0 = an existing file's size", FIO_CUSTOM),
        JOB("io_size", "io_limit", OPTD_SIZE, io_size, "0",
            "bytes each thread transfers; 0 = the job moves size once, or unlimited with runtime",
            .fio = "io_size", FIO_CUSTOM),
        JOB("runtime", NULL, OPTD_DURATION, runtime_ns, "0",
            "measured time (s, or with unit: 500ms, 2m); 0 = by size", FIO_CUSTOM,
            .json = "runtime_s", .json_ns = 1e9),
        JOB("ramp_time", NULL, OPTD_DURATION, ramp_time_ns, "0",
            "I/O run before measuring starts, not counted", FIO_CUSTOM, .json = "ramp_time_s",
            .json_ns = 1e9),
        JOB("direct", NULL, OPTD_BOOL, direct, "0", "O_DIRECT: bypass the page cache", FIO),
        JOB("random_distribution", NULL, OPTD_ENUM, random_distribution, "random",
            "random (uniform) | zipf:THETA", .codec = &dist_codec,
            .expect = "random or zipf:THETA with THETA > 0 (e.g. zipf:1.2)", FIO_CUSTOM),
        /* a seed is any 64-bit number, which a double bound cannot state */
        JOB("randseed", NULL, OPTD_UINT, randseed, "1",
            "seed of offsets and op mix (runs repeat exactly)", .umin = 0, .umax = UINT64_MAX,
            FIO_CUSTOM),
        JOB("invalidate", NULL, OPTD_BOOL, invalidate, "1",
            "drop the target's page cache before the run", FIO),
        JOB("fsync", NULL, OPTD_UINT, fsync, "0", "fsync after every N writes; 0 = never",
            FIO_CUSTOM),
        JOB("end_fsync", NULL, OPTD_BOOL, end_fsync, "0", "fsync when a write job ends", FIO),
        JOB("rate", NULL, OPTD_SIZE, rate, "0",
            "bytes per second for the whole job (e.g. 100m); 0 = no limit", FIO_CUSTOM),
        JOB("thinktime", NULL, OPTD_DURATION, thinktime_ns, "0",
            "pause after every thinktime_blocks I/Os (plain number = microseconds, as in fio)",
            .bare_ns = 1000, FIO_CUSTOM, .json = "thinktime_us", .json_ns = 1e3),
        JOB("thinktime_blocks", NULL, OPTD_UINT, thinktime_blocks, "1",
            "I/Os between think-time pauses", .min = 1, FIO_CUSTOM),
        JOB("cpus_allowed", NULL, OPTD_STRING, cpus_allowed, "",
            "CPUs the job threads run on, e.g. 1 or 0-3,6 (fio's list); empty = any", FIO_CUSTOM),
        JOB("cpus_allowed_policy", NULL, OPTD_STRING, cpus_allowed_policy, "shared",
            "shared: every thread on every listed CPU | split: thread i on the i-th CPU",
            FIO_CUSTOM, .json_if = "cpus_allowed"),
        JOB("allow_destructive", "allow-destructive", OPTD_BOOL, allow_destructive, "0",
            "allow writes to a raw block device (destroys its data)", FIO_CUSTOM, .no_echo = true,
            .fio_note = "fio asks nothing before writing to a raw device (a comment says so)"),
        JOB("force", NULL, OPTD_BOOL, force, "0",
            "with allow_destructive: write over a filesystem signature too (never a mounted "
            "device)",
            FIO_CUSTOM, .fio_note = "as allow_destructive", .no_echo = true),
        JOB("extend", NULL, OPTD_BOOL, extend, "0",
            "a job that only reads may append to an existing file shorter than size (its own "
            "bytes and holes are never written)",
            FIO_CUSTOM, .fio_note = "fio lays a short file out to size itself", .no_echo = true),
};

#define NOPTS (sizeof(opts_table) / sizeof(opts_table[0]))

static const char *const rw_names[] = {
        [LLMIO_RW_READ] = "read",         [LLMIO_RW_WRITE] = "write",
        [LLMIO_RW_RANDREAD] = "randread", [LLMIO_RW_RANDWRITE] = "randwrite",
        [LLMIO_RW_RANDRW] = "randrw",
};

const char *llmio_rw_name(enum llmio_rw rw)
{
	return (unsigned)rw < sizeof(rw_names) / sizeof(rw_names[0]) ? rw_names[rw] : "?";
}

size_t llmio_job_option_count(void)
{
	return NOPTS;
}

const struct llmio_optdesc *job_optdesc(size_t i)
{
	return i < NOPTS ? &opts_table[i] : NULL;
}

int llmio_job_option(size_t i, struct llmio_option_info *out)
{
	const struct llmio_optdesc *d = job_optdesc(i);

	if (!d)
		return -ENOENT;
	*out = (struct llmio_option_info){d->name, d->alias, optdesc_type_name(d), d->def, d->help};
	return 0;
}

const struct llmio_optdesc *job_opt_find(const char *key)
{
	return optdesc_find(opts_table, NOPTS, key);
}

int job_opt_type(const char *key, enum llmio_optdesc_type *type)
{
	const struct llmio_optdesc *d = job_opt_find(key);

	if (!d)
		return -ENOENT;
	*type = d->type;
	return 0;
}

int job_opt_set(struct llmio_job_opts *opts, const char *key, const char *value,
                struct llmio_error *e)
{
	const struct llmio_optdesc *d = job_opt_find(key);

	if (!d)
		return llmio_err(e, -ENOENT, "unknown option '%s' (see `llmio run --help`)", key);
	return optdesc_set(d, value ? value : "", opts, e);
}

int llmio_job_opts_set(struct llmio_job_opts *opts, const char *key, const char *value,
                       struct llmio_error *e)
{
	return job_opt_set(opts, key, value, e);
}

void llmio_job_opts_init(struct llmio_job_opts *opts)
{
	memset(opts, 0, sizeof(*opts));
	opts->opts_size = sizeof(*opts);
	for (size_t i = 0; i < NOPTS; i++)
		optdesc_set(&opts_table[i], NULL, opts, NULL);
}

/* Does json_if hold in o: the named option set (non-empty, non-zero), or "key=value"? */
static bool echo_if(const struct llmio_job_opts *o, const char *cond)
{
	const char *eq = strchr(cond, '=');
	char key[64], text[LLMIO_PATH_MAX];

	snprintf(key, sizeof(key), "%.*s", (int)(eq ? eq - cond : (ptrdiff_t)strlen(cond)), cond);
	if (!job_opt_find(key) || job_opt_canonical(o, key, NULL, text, sizeof(text)))
		return false;
	if (eq)
		return !strcmp(text, eq + 1);
	return text[0] && (job_opt_find(key)->type == OPTD_STRING || strcmp(text, "0"));
}

void job_opts_echo(const struct llmio_job_opts *o,
                   void (*fn)(void *arg, const char *key, const struct llmio_optdesc *d,
                              const struct llmio_optval *v),
                   void *arg)
{
	for (size_t i = 0; i < NOPTS; i++) {
		const struct llmio_optdesc *d = &opts_table[i];
		struct llmio_optval v;

		if (d->no_echo || (d->json_if && !echo_if(o, d->json_if)))
			continue;
		optdesc_load(d, o, &v);
		if (d->type == OPTD_STRING && !d->codec && !v.s[0])
			continue;
		fn(arg, d->json ? d->json : d->name, d, &v);
	}
}

int job_opt_canonical(const struct llmio_job_opts *o, const char *key, const char **name, char *buf,
                      size_t len)
{
	const struct llmio_optdesc *d = job_opt_find(key);
	struct llmio_optval v;

	if (!d)
		return -ENOENT;
	if (name)
		*name = d->name;
	optdesc_load(d, o, &v);
	return optdesc_format(d, &v, buf, len);
}
