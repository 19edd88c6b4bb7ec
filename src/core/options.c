/* SPDX-License-Identifier: MIT */
/*
 * Job options declared as data: one table gives each option's name (fio's where fio has one),
 * type, field, default and help.  The same table parses CLI flags and job-file keys, prints
 * --help and documents the options, so they can never disagree.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/options.h"
#include "llmio/job.h"

enum otype { O_BOOL, O_U32, O_U64, O_SIZE, O_TIME, O_TIME_US, O_STR, O_RW, O_DIST };

struct opt {
	struct llmio_option_info info;
	enum otype type;
	size_t off;
	size_t len; /* O_STR: field size */
	uint64_t min, max;
};

#define OFF(f) offsetof(struct llmio_job_opts, f)
#define OPT(n, a, t, f, d, h)                                                                      \
	{                                                                                          \
		.info = {n, a, NULL, d, h}, .type = t, .off = OFF(f)                               \
	}
#define OPT_RANGE(n, a, t, f, d, h, lo, hi)                                                        \
	{                                                                                          \
		.info = {n, a, NULL, d, h}, .type = t, .off = OFF(f), .min = lo, .max = hi         \
	}
#define OPT_STR(n, a, f, d, h)                                                                     \
	{                                                                                          \
		.info = {n, a, NULL, d, h}, .type = O_STR, .off = OFF(f),                          \
		.len = sizeof(((struct llmio_job_opts *)0)->f)                                     \
	}

/* Each storage kind as the typed option description (core/optdesc.h) names its type. */
static const enum llmio_optdesc_type desc_types[] = {
        [O_BOOL] = OPTD_BOOL,  [O_U32] = OPTD_UINT,      [O_U64] = OPTD_UINT,
        [O_SIZE] = OPTD_SIZE,  [O_TIME] = OPTD_DURATION, [O_TIME_US] = OPTD_DURATION,
        [O_STR] = OPTD_STRING, [O_RW] = OPTD_ENUM,       [O_DIST] = OPTD_ENUM,
};

static const struct opt opts_table[] = {
        OPT_STR("ioengine", "engine", engine, "psync", "datapath: see `llmio engines`"),
        OPT_STR("filename", NULL, filename, "",
                "file or block device to do I/O to (s3://bucket/key with --engine s3)"),
        OPT_STR("directory", NULL, directory, "",
                "directory: files llmio.0 .. llmio.N-1 in its llmio-work (llmio's own); "
                "s3://bucket/prefix: its objects (--engine s3)"),
        OPT_RANGE("nrfiles", NULL, O_U32, nrfiles, "1", "number of files in --directory", 1,
                  1000000),
        OPT("rw", "readwrite", O_RW, rw, "read", "read | write | randread | randwrite | randrw"),
        OPT_RANGE("rwmixread", NULL, O_U32, rwmixread, "50", "percent of reads in randrw", 0, 100),
        OPT_RANGE("bs", "blocksize", O_SIZE, bs, "4k", "block size of every I/O", 1, 1u << 30),
        OPT_RANGE("iodepth", NULL, O_U32, iodepth, "1", "I/Os in flight per thread (async engines)",
                  1, 4096),
        OPT_RANGE("numjobs", NULL, O_U32, numjobs, "1", "threads, each with its own iodepth", 1,
                  1024),
        OPT("size", NULL, O_SIZE, size, "0",
            "bytes of the target (all files together); 0 = an existing file's size"),
        OPT("io_size", "io_limit", O_SIZE, io_size, "0",
            "bytes each thread transfers; 0 = the job moves size once, or unlimited with runtime"),
        OPT("runtime", NULL, O_TIME, runtime_ns, "0",
            "measured time (s, or with unit: 500ms, 2m); 0 = by size"),
        OPT("ramp_time", NULL, O_TIME, ramp_time_ns, "0",
            "I/O run before measuring starts, not counted"),
        OPT("direct", NULL, O_BOOL, direct, "0", "O_DIRECT: bypass the page cache"),
        OPT("random_distribution", NULL, O_DIST, random_distribution, "random",
            "random (uniform) | zipf:THETA"),
        OPT_RANGE("randseed", NULL, O_U64, randseed, "1",
                  "seed of offsets and op mix (runs repeat exactly)", 0, UINT64_MAX),
        OPT("invalidate", NULL, O_BOOL, invalidate, "1",
            "drop the target's page cache before the run"),
        OPT_RANGE("fsync", NULL, O_U32, fsync, "0", "fsync after every N writes; 0 = never", 0,
                  UINT32_MAX),
        OPT("end_fsync", NULL, O_BOOL, end_fsync, "0", "fsync when a write job ends"),
        OPT("rate", NULL, O_SIZE, rate, "0",
            "bytes per second for the whole job (e.g. 100m); 0 = no limit"),
        OPT("thinktime", NULL, O_TIME_US, thinktime_ns, "0",
            "pause after every thinktime_blocks I/Os (plain number = microseconds, as in fio)"),
        OPT_RANGE("thinktime_blocks", NULL, O_U32, thinktime_blocks, "1",
                  "I/Os between think-time pauses", 1, UINT32_MAX),
        OPT_STR("cpus_allowed", NULL, cpus_allowed, "",
                "CPUs the job threads run on, e.g. 1 or 0-3,6 (fio's list); empty = any"),
        OPT_STR("cpus_allowed_policy", NULL, cpus_allowed_policy, "shared",
                "shared: every thread on every listed CPU | split: thread i on the i-th CPU"),
        OPT("allow_destructive", "allow-destructive", O_BOOL, allow_destructive, "0",
            "allow writes to a raw block device (destroys its data)"),
        OPT("force", NULL, O_BOOL, force, "0",
            "with allow_destructive: write over a filesystem signature too (never a mounted "
            "device)"),
        OPT("extend", NULL, O_BOOL, extend, "0",
            "a job that only reads may append to an existing file shorter than size (its own "
            "bytes and holes are never written)"),
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

int llmio_job_option(size_t i, struct llmio_option_info *out)
{
	if (i >= NOPTS)
		return -ENOENT;
	*out = opts_table[i].info;
	out->type = optdesc_type_name(desc_types[opts_table[i].type]);
	return 0;
}

static const struct opt *find(const char *key)
{
	for (size_t i = 0; i < NOPTS; i++)
		if (!strcmp(opts_table[i].info.name, key) ||
		    (opts_table[i].info.alias && !strcmp(opts_table[i].info.alias, key)))
			return &opts_table[i];
	return NULL;
}

int job_opt_type(const char *key, enum llmio_optdesc_type *type)
{
	const struct opt *o = find(key);

	if (!o)
		return -ENOENT;
	*type = desc_types[o->type];
	return 0;
}

static int parse_bool(const char *v, bool *out)
{
	if (!*v || !strcasecmp(v, "1") || !strcasecmp(v, "true") || !strcasecmp(v, "yes") ||
	    !strcasecmp(v, "on"))
		return *out = true, 0;
	if (!strcasecmp(v, "0") || !strcasecmp(v, "false") || !strcasecmp(v, "no") ||
	    !strcasecmp(v, "off"))
		return *out = false, 0;
	return -EINVAL;
}

static int parse_dist(struct llmio_job_opts *o, const char *v)
{
	char *end;

	if (!strcmp(v, "random") || !strcmp(v, "uniform")) {
		o->random_distribution = LLMIO_DIST_UNIFORM;
		return 0;
	}
	if (strncmp(v, "zipf:", 5))
		return -EINVAL;
	errno = 0;
	o->zipf_theta = strtod(v + 5, &end);
	if (errno || end == v + 5 || *end || !(o->zipf_theta > 0) || o->zipf_theta > 100)
		return -EINVAL;
	o->random_distribution = LLMIO_DIST_ZIPF;
	return 0;
}

/* fio's thinktime: a bare number means microseconds */
static int parse_time_us(const char *v, uint64_t *ns)
{
	uint64_t n;

	if (llmio_parse_uint(v, 0, UINT64_MAX / 1000, &n) == 0)
		return *ns = n * 1000, 0;
	return llmio_parse_duration(v, ns);
}

static const char *expected(const struct opt *o)
{
	const struct llmio_optdesc d = {.name = o->info.name, .type = desc_types[o->type]};

	switch (o->type) {
	case O_BOOL:
	case O_U32:
	case O_U64:
	case O_SIZE:
	case O_TIME:
		return optdesc_expected(&d);
	case O_TIME_US:
		return "microseconds, or a time with unit such as 500us, 2ms";
	case O_STR:
		return "a shorter text";
	case O_RW:
		return "read, write, randread, randwrite or randrw";
	case O_DIST:
		return "random or zipf:THETA with THETA > 0 (e.g. zipf:1.2)";
	}
	return "?";
}

int llmio_job_opts_set(struct llmio_job_opts *opts, const char *key, const char *value, char *err,
                       size_t errlen)
{
	const struct opt *o = find(key);
	char *field;
	uint64_t n = 0;
	int ret = 0;

	if (!o) {
		snprintf(err, errlen, "unknown option '%s' (see `llmio run --help`)", key);
		return -ENOENT;
	}
	if (!value)
		value = "";
	field = (char *)opts + o->off;
	switch (o->type) {
	case O_BOOL:
		ret = parse_bool(value, (bool *)field);
		break;
	case O_U32:
	case O_U64:
		ret = llmio_parse_uint(value, o->min, o->max ? o->max : UINT32_MAX, &n);
		if (!ret && o->type == O_U32)
			*(uint32_t *)field = (uint32_t)n;
		else if (!ret)
			*(uint64_t *)field = n;
		break;
	case O_SIZE:
		ret = llmio_parse_size(value, &n);
		if (!ret && (n < o->min || (o->max && n > o->max)))
			ret = -ERANGE;
		if (!ret)
			*(uint64_t *)field = n;
		break;
	case O_TIME:
		ret = llmio_parse_duration(value, (uint64_t *)field);
		break;
	case O_TIME_US:
		ret = parse_time_us(value, (uint64_t *)field);
		break;
	case O_STR:
		if (strlen(value) >= o->len) {
			ret = -ERANGE;
			break;
		}
		memcpy(field, value, strlen(value) + 1);
		break;
	case O_RW:
		ret = -EINVAL;
		for (unsigned i = 0; i < sizeof(rw_names) / sizeof(rw_names[0]); i++)
			if (!strcmp(value, rw_names[i])) {
				*(enum llmio_rw *)field = (enum llmio_rw)i;
				ret = 0;
			}
		break;
	case O_DIST:
		ret = parse_dist(opts, value);
		break;
	}
	if (ret == -ERANGE && (o->type == O_U32 || o->type == O_U64 || o->type == O_SIZE) && o->max)
		snprintf(err, errlen, "%s=%s is out of range: expected %llu to %llu", o->info.name,
		         value, (unsigned long long)o->min, (unsigned long long)o->max);
	else if (ret)
		snprintf(err, errlen, "%s=%s is not valid: expected %s", o->info.name, value,
		         expected(o));
	return ret;
}

void llmio_job_opts_init(struct llmio_job_opts *opts)
{
	char err[256];

	memset(opts, 0, sizeof(*opts));
	opts->opts_size = sizeof(*opts);
	for (size_t i = 0; i < NOPTS; i++)
		llmio_job_opts_set(opts, opts_table[i].info.name, opts_table[i].info.def, err,
		                   sizeof(err));
}

int job_opt_canonical(const struct llmio_job_opts *o, const char *key, const char **name, char *buf,
                      size_t len)
{
	const struct opt *d = find(key);
	const char *field;
	int n = 0;

	if (!d)
		return -ENOENT;
	if (name)
		*name = d->info.name;
	field = (const char *)o + d->off;
	switch (d->type) {
	case O_BOOL:
		n = snprintf(buf, len, "%d", *(const bool *)field ? 1 : 0);
		break;
	case O_U32:
		n = snprintf(buf, len, "%u", *(const uint32_t *)field);
		break;
	case O_U64:
	case O_SIZE:
	case O_TIME:
	case O_TIME_US:
		n = snprintf(buf, len, "%llu", (unsigned long long)*(const uint64_t *)field);
		break;
	case O_STR:
		n = snprintf(buf, len, "%s", field);
		break;
	case O_RW:
		n = snprintf(buf, len, "%s", llmio_rw_name(*(const enum llmio_rw *)field));
		break;
	case O_DIST:
		if (o->random_distribution == LLMIO_DIST_ZIPF)
			n = snprintf(buf, len, "zipf:%g", o->zipf_theta);
		else
			n = snprintf(buf, len, "random");
		break;
	}
	return n < 0 || (size_t)n >= len ? -ERANGE : 0;
}
