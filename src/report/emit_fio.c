/* SPDX-License-Identifier: MIT */
/*
 * `llmio run --emit-fio`: the fio job file that runs the same job, so that any llmio figure can
 * be checked with fio in one step.
 *
 * The whole mapping is the option tables themselves (struct llmio_optdesc): fio_kind and fio in
 * the job options' table (src/job/options.c) and in each engine's own table, each with fio's
 * name and how the value converts; job options that convert in their own way are written by
 * the functions of custom[] below.  Where fio has no equivalent, or
 * means something slightly different, the job file gets a comment line saying what differs
 * instead of a silently different job.  Conventions that hold for every job:
 *  - thread=1: llmio runs its workers as threads of one process, as fio does with thread=1;
 *  - norandommap: the job's; 1 where llmio draws independently though asked for the map
 *    (a random job of several block sizes: fio would map it);
 *  - async engines: llmio submits everything it queued in one round and waits for at least
 *    one completion, which is fio's iodepth_batch_submit=iodepth, iodepth_batch_complete_min=1;
 *    io_uring's reap_batch becomes iodepth_batch_complete_max as the engine resolves it, so
 *    fio reaps O_DIRECT completions one at a time as llmio does;
 *  - percentile_list and lat_percentiles=1: the percentiles llmio reports, of completion and
 *    of total latency, so the two outputs line up.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "job/options.h"
#include "job/target.h"
#include "engine/engine.h"
#include "base/fmt.h"

struct emit {
	FILE *f;
	const struct llmio_job_opts *o;
	const struct engine_ops *e;
	unsigned depth; /* iodepth as llmio runs it: 1 for synchronous engines */
	bool random;    /* random offsets */
};

/* Does the engine have an option that fio calls fio_name (it then writes that line itself)? */
static bool engine_maps(const struct engine_ops *e, const char *fio_name)
{
	for (const struct llmio_optdesc *eo = e->opts; eo && eo->name; eo++)
		if (eo->fio_kind != OPTD_FIO_UNMAPPED && eo->fio_kind != OPTD_FIO_NONE &&
		    !strcmp(optdesc_fio_name(eo), fio_name))
			return true;
	return false;
}

/* ---- job options ---------------------------------------------------------------------- */

/* fio splits a filename list at ':'; a literal colon is written "\:". */
static void put_escaped(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == ':')
			fputc('\\', f);
		fputc(*s, f);
	}
}

/* fio's name for the engine where it has another (pmem2 is fio's libpmem) */
static void emit_ioengine(struct emit *x)
{
	fprintf(x->f, "ioengine=%s\n", x->e->fio_name ? x->e->fio_name : x->o->engine);
}

static void emit_filename(struct emit *x)
{
	if (!x->o->filename[0])
		return;
	/* as given: llmio run reads fio's ':' list and "\:" as fio does (docs/fio.md, "Files") */
	fprintf(x->f, "filename=%s\n", x->o->filename);
}

static void emit_directory(struct emit *x)
{
	const struct llmio_job_opts *o = x->o;
	/* llmio's own files are llmio.0 .. llmio.N-1 in its work directory under the user's,
	 * shared by all threads, unless named (fio's): fio reads and writes the same ones */
	const bool own = !o->filename[0] && !o->filename_format[0];

	if (!o->directory[0])
		return;
	fputs("directory=", x->f);
	put_escaped(x->f, o->directory);
	fprintf(x->f, "%s\nnrfiles=%u\n", own ? "/" TARGET_WORK_DIR : "", o->nrfiles);
	if (own)
		fprintf(x->f, "filename_format=llmio.$filenum\n");
	/* llmio draws a block of the whole set (random) or walks the files in order (sequential) */
	fprintf(x->f, "file_service_type=%s\n", x->random ? "random" : "sequential");
	if (!x->random && o->numjobs > 1)
		fprintf(x->f,
		        "; differs: llmio gives each of the %u threads its own slice of the "
		        "files laid end to end; fio's clones each walk every file from its "
		        "start\n",
		        o->numjobs);
}

static void emit_rw(struct emit *x)
{
	if (x->o->rw_skip) /* fio's offset modifier, rw=TYPE:N */
		fprintf(x->f, "rw=%s:%" PRId64 "\n", llmio_rw_name(x->o->rw), x->o->rw_skip);
	else
		fprintf(x->f, "rw=%s\n", llmio_rw_name(x->o->rw));
	if (x->o->rw == LLMIO_RW_RANDRW || x->o->rw == LLMIO_RW_RW)
		fprintf(x->f, "rwmixread=%u\n", x->o->rwmixread);
}

static void emit_iodepth(struct emit *x)
{
	fprintf(x->f, "iodepth=%u\n", x->depth);
	if (x->depth != x->o->iodepth)
		fprintf(x->f,
		        "; llmio runs the synchronous engine %s one I/O at a time (iodepth=%u "
		        "asked), as fio does\n",
		        x->e->name, x->o->iodepth);
	if (!(x->e->caps & ENGINE_CAP_ASYNC))
		return;
	/* llmio: queue every free slot, submit them together, wait for one completion */
	if (!engine_maps(x->e, "iodepth_batch_submit"))
		fprintf(x->f, "iodepth_batch_submit=%u\n", x->depth);
	fprintf(x->f, "iodepth_batch_complete_min=1\n");
	/* an engine option may map to fio's iodepth_batch_complete_max (io_uring's reap_batch) */
	if (x->o->direct && x->depth > 1 && !engine_maps(x->e, "iodepth_batch_complete_max"))
		fprintf(x->f,
		        "; differs: under O_DIRECT llmio's %s takes every completion in one call "
		        "and resubmits each freed slot at once; fio reaps up to iodepth and then "
		        "refills them together\n",
		        x->e->name);
}

static void emit_numjobs(struct emit *x)
{
	fprintf(x->f, "numjobs=%u\n", x->o->numjobs);
	if (x->o->numjobs > 1)
		fprintf(x->f, "group_reporting=1\n");
}

/*
 * Sizes.  llmio's size is the whole target and io_size is per thread, defaulting to an equal
 * share of size; fio's size is per job and each clone moves all of it.  Sequential threads in
 * llmio walk disjoint slices, which fio expresses with offset_increment.
 */
static void emit_size(struct emit *x)
{
	const struct llmio_job_opts *o = x->o;
	uint64_t size = o->size;
	unsigned n = o->numjobs ? o->numjobs : 1;

	if (!size && (x->e->caps & ENGINE_CAP_NO_IO))
		size = 1ull << 30; /* llmio's virtual target for the null engine */
	if (!x->random && n > 1 && !o->directory[0]) {
		if (size) {
			fprintf(x->f, "size=%" PRIu64 "\noffset_increment=%" PRIu64 "\n", size / n,
			        size / n);
		} else {
			fprintf(x->f,
			        "; differs: llmio gives each of the %u threads 1/%u of the "
			        "file; give --size to get fio's size/offset_increment for it\n",
			        n, n);
		}
	} else if (size) {
		fprintf(x->f, "size=%" PRIu64 "\n", size);
	}
	if (o->io_size)
		fprintf(x->f, "io_size=%" PRIu64 "\n", o->io_size);
	else if (!o->runtime_ns && n > 1 && x->random && size)
		fprintf(x->f, "io_size=%" PRIu64 "\n", size / n);
	else if (!o->runtime_ns && n > 1 && x->random)
		fprintf(x->f, "; differs: llmio's threads share the file's size between them; "
		              "fio's clones each move all of it (give --size or --io_size)\n");
}

/* fio reads a bare number as seconds and knows the units us, ms, s. */
static void put_time(FILE *f, const char *name, uint64_t ns)
{
	if (ns % 1000000000ull == 0)
		fprintf(f, "%s=%" PRIu64 "s\n", name, (uint64_t)(ns / 1000000000u));
	else if (ns % 1000000ull == 0)
		fprintf(f, "%s=%" PRIu64 "ms\n", name, (uint64_t)(ns / 1000000u));
	else
		fprintf(f, "%s=%" PRIu64 "us\n", name, (ns + 500) / 1000);
}

static void emit_runtime(struct emit *x)
{
	if (!x->o->runtime_ns)
		return;
	put_time(x->f, "runtime", x->o->runtime_ns);
	fprintf(x->f, "time_based=%d\n", x->o->time_based);
}

static void emit_ramp(struct emit *x)
{
	if (x->o->ramp_time_ns)
		put_time(x->f, "ramp_time", x->o->ramp_time_ns);
}

static void emit_startdelay(struct emit *x)
{
	if (x->o->startdelay_ns)
		put_time(x->f, "startdelay", x->o->startdelay_ns);
}

static void emit_distribution(struct emit *x)
{
	if (x->o->random_distribution == LLMIO_DIST_ZONED ||
	    x->o->random_distribution == LLMIO_DIST_ZONED_ABS)
		fprintf(x->f, "random_distribution=%s:%s\n",
		        x->o->random_distribution == LLMIO_DIST_ZONED ? "zoned" : "zoned_abs",
		        x->o->random_zones);
	if (x->o->random_distribution != LLMIO_DIST_ZIPF)
		return;
	fprintf(x->f, "random_distribution=zipf:%g\n", x->o->zipf_theta);
	fprintf(x->f, "; differs: same Zipf law, but llmio scatters the ranks over the blocks with "
	              "its own bijection, so the hot blocks are other blocks than fio's\n");
}

static void emit_norandommap(struct emit *x)
{
	struct job_bssplit sizes;
	const bool several = !job_bs_sizes(x->o, &sizes, NULL) && sizes.min != sizes.max;

	fprintf(x->f, "norandommap=%d\n",
	        x->o->norandommap || (several && job_rw_random(x->o->rw)));
}

static void emit_randseed(struct emit *x)
{
	fprintf(x->f, "randseed=%" PRIu64 "\n", x->o->randseed);
	if (x->random)
		fprintf(x->f, "; differs: other random generators, so the same seed gives other "
		              "offsets (same distribution)\n");
}

static void emit_rate(struct emit *x)
{
	const struct llmio_job_opts *o = x->o;

	if (!o->rate && !o->rate_write && !o->rate_trim)
		return;
	/* per thread, as fio's per clone; fio's READ,WRITE,TRIM */
	if (o->rate == o->rate_write && o->rate == o->rate_trim)
		fprintf(x->f, "rate=%" PRIu64 "\n", o->rate);
	else
		fprintf(x->f, "rate=%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n", o->rate, o->rate_write,
		        o->rate_trim);
}

static void emit_thinktime(struct emit *x)
{
	if (!x->o->thinktime_ns)
		return;
	put_time(x->f, "thinktime", x->o->thinktime_ns);
	fprintf(x->f, "thinktime_blocks=%u\n", x->o->thinktime_blocks);
	if (x->depth > 1)
		fprintf(x->f, "; differs: llmio lets the I/Os in flight finish before it pauses\n");
}

static void emit_fsync(struct emit *x)
{
	if (!x->o->fsync)
		return;
	fprintf(x->f, "fsync=%u\n", x->o->fsync);
	if (x->e->caps & ENGINE_CAP_ASYNC)
		fprintf(x->f,
		        "; differs: llmio drains the queue and calls fsync(2); fio queues the "
		        "sync through the engine\n");
}

static void emit_destructive(struct emit *x)
{
	if (x->o->allow_destructive || x->o->force)
		fprintf(x->f, "; differs: fio has no allow_destructive/force; it writes to a raw "
		              "device without asking (allow_mounted_write=1 for a mounted one)\n");
}

static void emit_noatime(struct emit *x)
{
	if (x->o->noatime)
		fprintf(x->f, "; differs: noatime=1: llmio opens the files with O_NOATIME where "
		              "permitted; fio's reads update the access time\n");
}

/* fio's --readonly is a command-line option: a job file cannot carry it */
static void emit_readonly(struct emit *x)
{
	if (x->o->readonly)
		fprintf(x->f, "; differs: readonly=1: fio takes it on its command line only: run "
		              "fio --readonly FILE\n");
}

static void emit_clat_percentiles(struct emit *x)
{
	if (x->o->clat_percentiles_off)
		fputs("clat_percentiles=0\n", x->f);
}

static void emit_unlink(struct emit *x)
{
	if (x->o->unlink)
		fprintf(x->f,
		        "unlink=1\n; differs: llmio removes only the files the job created\n");
}

/* fio's disable_* (gtod_reduce): written only when set, as a job file gives them */
static void emit_disable(struct emit *x)
{
	const struct llmio_job_opts *o = x->o;

	if (o->disable_lat && o->disable_clat && o->disable_slat && o->disable_bw) {
		fprintf(x->f, "gtod_reduce=1\n");
		return;
	}
	if (o->disable_lat)
		fprintf(x->f, "disable_lat=1\n");
	if (o->disable_clat)
		fprintf(x->f, "disable_clat=1\n");
	if (o->disable_slat)
		fprintf(x->f, "disable_slat=1\n");
	if (o->disable_bw)
		fprintf(x->f, "disable_bw_measurement=1\n");
}

/* fio 3.33's fadvise_hint knows 0, 1, random and sequential; llmio's normal is fio's 0 */
static void emit_fadvise(struct emit *x)
{
	static const char *const fio[] = {
	        [LLMIO_FADV_NONE] = "0",        [LLMIO_FADV_TYPE] = "1",
	        [LLMIO_FADV_RANDOM] = "random", [LLMIO_FADV_SEQUENTIAL] = "sequential",
	        [LLMIO_FADV_NORMAL] = "0",
	};
	const unsigned h = (unsigned)x->o->fadvise_hint;

	fprintf(x->f, "fadvise_hint=%s\n", h < sizeof(fio) / sizeof(fio[0]) ? fio[h] : "1");
	if (x->o->fadvise_hint == LLMIO_FADV_NORMAL)
		fprintf(x->f, "; differs: llmio advises POSIX_FADV_NORMAL; fio gives no advice, "
		              "which leaves the same (the kernel's default) readahead\n");
}

static void emit_cpus(struct emit *x)
{
	if (!x->o->cpus_allowed[0])
		return;
	fprintf(x->f, "cpus_allowed=%s\n", x->o->cpus_allowed);
	fprintf(x->f, "cpus_allowed_policy=%s\n", x->o->cpus_allowed_policy);
}

/* fio's steadystate, only with its window (without, fio's default criterion does nothing) */
static void emit_ss(struct emit *x)
{
	char ss[64];

	if (!x->o->ss_dur_ns || job_opt_canonical(x->o, "steadystate", NULL, ss, sizeof(ss)))
		return;
	fprintf(x->f, "ss=%s\nss_dur=%" PRIu64 "ms\nss_ramp=%" PRIu64 "ms\n", ss,
	        x->o->ss_dur_ns / 1000000, x->o->ss_ramp_ns / 1000000);
}

/* cmdprio_class is an option of fio's libaio and io_uring: only with cmdprio_percentage or
 * cmdprio_bssplit */
static void emit_cmdprio_class(struct emit *x)
{
	if (x->o->cmdprio_percentage || x->o->cmdprio_bssplit[0])
		fprintf(x->f, "cmdprio_class=%u\n", x->o->cmdprio_class);
}

/* fio's flow_sleep is a plain number of microseconds */
static void emit_flow_sleep(struct emit *x)
{
	if (x->o->flow_sleep_ns)
		fprintf(x->f, "flow_sleep=%" PRIu64 "\n", (x->o->flow_sleep_ns + 999) / 1000);
}

/* buffer_compress_chunk: fio's default is llmio's (512), so it is written with a percentage */
static void emit_compress_chunk(struct emit *x)
{
	if (x->o->buffer_compress_percentage)
		fprintf(x->f, "buffer_compress_chunk=%" PRIu32 "\n", x->o->buffer_compress_chunk);
}

/* fio's latency_target and its companions, only with a target; plain numbers are microseconds */
static void emit_latency(struct emit *x)
{
	if (!x->o->latency_target_ns)
		return;
	fprintf(x->f,
	        "latency_target=%" PRIu64 "\nlatency_window=%" PRIu64
	        "\nlatency_percentile=%g\nlatency_run=%d\n",
	        (x->o->latency_target_ns + 999) / 1000, (x->o->latency_window_ns + 999) / 1000,
	        x->o->latency_percentile, x->o->latency_run ? 1 : 0);
}

/*
 * Job options marked OPTD_FIO_CUSTOM in their table, by name: fn writes the fio lines, or NULL
 * when another option's fn writes them (nrfiles with directory, rwmixread with rw ...) or fio
 * needs none (extend: fio extends a short file itself).
 */
static const struct {
	const char *name;
	void (*fn)(struct emit *x);
} custom[] = {
        {"ioengine", emit_ioengine},
        {"filename", emit_filename},
        {"directory", emit_directory},
        {"nrfiles", NULL},
        {"rw", emit_rw},
        {"rwmixread", NULL},
        {"iodepth", emit_iodepth},
        {"numjobs", emit_numjobs},
        {"size", emit_size},
        {"io_size", NULL},
        {"runtime", emit_runtime},
        {"ramp_time", emit_ramp},
        {"startdelay", emit_startdelay},
        {"random_distribution", emit_distribution},
        {"randseed", emit_randseed},
        {"fadvise_hint", emit_fadvise},
        {"noatime", emit_noatime},
        {"fsync", emit_fsync},
        {"rate", emit_rate},
        {"thinktime", emit_thinktime},
        {"thinktime_blocks", NULL},
        {"cpus_allowed", emit_cpus},
        {"cpus_allowed_policy", NULL},
        {"allow_destructive", emit_destructive},
        {"force", NULL},
        {"extend", NULL},
        {"readonly", emit_readonly},
        /* fio's own options: the conversions llmio made are written above (job_opts_resolve) */
        {"name", NULL},
        {"time_based", NULL},
        {"filesize", NULL},
        {"rate_iops", NULL},
        {"buffered", NULL},
        {"rwmixwrite", NULL},
        {"randrepeat", NULL},
        {"group_reporting", NULL},
        {"stonewall", NULL},
        {"new_group", NULL},
        {"norandommap", emit_norandommap},
        {"thread", NULL},
        {"random_generator", NULL},
        {"disable_lat", emit_disable},
        {"disable_clat", NULL},
        {"disable_slat", NULL},
        {"disable_bw_measurement", NULL},
        {"gtod_reduce", NULL},
        {"unlink", emit_unlink},
        {"create_on_open", NULL},
        {"create_serialize", NULL},
        {"buffer_compress_chunk", emit_compress_chunk},
        {"io_submit_mode", NULL},
        {"lat_percentiles", NULL},
        {"clat_percentiles", emit_clat_percentiles},
        {"slat_percentiles", NULL},
        /* a job file's run control: no meaning for --emit-fio's one job */
        {"exitall", NULL},
        {"exit_what", NULL},
        {"threads", NULL},
        {"flow_watermark", NULL},
        {"flow_sleep", emit_flow_sleep},
        {"cmdprio_class", emit_cmdprio_class},
        {"steadystate", emit_ss},
        {"ss_dur", NULL},
        {"ss_ramp", NULL},
        {"latency_target", emit_latency},
        {"latency_window", NULL},
        {"latency_percentile", NULL},
        {"latency_run", NULL},
};

static int emit_job_option(struct emit *x, const struct llmio_optdesc *d, struct llmio_error *e)
{
	struct llmio_optval v;
	char text[LLMIO_PATH_MAX];

	switch (d->fio_kind) {
	case OPTD_FIO_VALUE:
		/* as the table writes it: numbers in bytes, booleans 0/1; nothing when empty/0 */
		optdesc_load(d, x->o, &v);
		if (optdesc_format(d, &v, text, sizeof(text)) == 0 && text[0] &&
		    (d->type == OPTD_BOOL || strcmp(text, "0")))
			fprintf(x->f, "%s=%s\n", optdesc_fio_name(d), text);
		return 0;
	case OPTD_FIO_CUSTOM:
		for (size_t i = 0; i < sizeof(custom) / sizeof(custom[0]); i++)
			if (!strcmp(custom[i].name, d->name)) {
				if (custom[i].fn)
					custom[i].fn(x);
				return 0;
			}
		break;
	default:
		break;
	}
	return llmio_err(e, -EINVAL, "internal error: job option %s has no fio mapping", d->name);
}

/* ---- engine options ------------------------------------------------------------------- */

static void emit_engine_option(struct emit *x, const struct llmio_optdesc *eo, int v, int def,
                               const void *set)
{
	const char *fio = optdesc_fio_name(eo);
	struct engine_fio_job j;

	switch (eo->fio_kind) {
	case OPTD_FIO_UNMAPPED:
		/* an engine option nobody mapped: say so rather than drop it */
		fprintf(x->f, "; differs: llmio %s option %s=%d has no fio mapping\n", x->e->name,
		        eo->name, v);
		break;
	case OPTD_FIO_VALUE: {
		/* an enum by its name, which is fio's value (stat_type=statx, cpumode=qsort) */
		struct llmio_optval val;
		char text[64];

		optdesc_load(eo, set, &val);
		if (eo->type == OPTD_STRING) { /* fio takes the line's rest: commas, spaces */
			if (val.s[0])
				fprintf(x->f, "%s=%s\n", fio, val.s);
		} else if (eo->type == OPTD_ENUM && !optdesc_format(eo, &val, text, sizeof(text)))
			fprintf(x->f, "%s=%s\n", fio, text);
		else
			fprintf(x->f, "%s=%d\n", fio, v);
		break;
	}
	case OPTD_FIO_IF_SET:
		if (v >= 0)
			fprintf(x->f, "%s=%d\n", fio, v);
		break;
	case OPTD_FIO_ZERO_IS_QD:
		fprintf(x->f, "%s=%u\n", fio, v > 0 ? (unsigned)v : x->depth);
		break;
	case OPTD_FIO_NONE:
		if (v != def)
			fprintf(x->f, "; differs: %s=%d: %s\n", eo->name, v, eo->fio_note);
		break;
	case OPTD_FIO_CUSTOM:
		j = (struct engine_fio_job){.f = x->f,
		                            .opts = set,
		                            .depth = x->depth,
		                            .direct = x->o->direct,
		                            .random = x->random,
		                            .fadvise = job_fadvise_advice(x->o)};
		x->e->fio_option(eo, v, &j);
		break;
	}
}

static int emit_engine_options(struct emit *x, struct llmio_error *err)
{
	const struct engine_ops *e = x->e;
	char *set, *def;
	int ret;

	if (!e->opts_size)
		return 0;
	set = calloc(2, e->opts_size);
	if (!set)
		return llmio_err(err, -ENOMEM, "out of memory");
	def = set + e->opts_size;
	ret = engine_opts_parse(e, x->o->engine_opts, set, err);
	if (!ret)
		engine_opts_parse(e, "", def, NULL); /* the defaults parse */
	for (const struct llmio_optdesc *eo = e->opts; !ret && eo && eo->name; eo++) {
		/* ints, and strings (OPTD_STRING: char arrays, which only OPTD_FIO_VALUE writes) */
		const bool num = eo->type != OPTD_STRING;

		emit_engine_option(x, eo, num ? *(const int *)(set + eo->offset) : 0,
		                   num ? *(const int *)(def + eo->offset) : 0, set);
	}
	free(set);
	return ret;
}

int emit_fio_job(FILE *f, const struct llmio_job_opts *o, const char *cmdline,
                 struct llmio_error *e)
{
	struct emit x = {.f = f, .o = o};
	char why[512];
	int ret;

	x.e = engine_find(o->engine);
	if (!x.e) {
		llmio_engine_probe(o->engine, why, sizeof(why));
		return llmio_err(e, -EINVAL, "%s", why);
	}
	x.depth = (x.e->caps & ENGINE_CAP_ASYNC) ? o->iodepth : 1;
	x.random = job_rw_random(o->rw);
	if (o->direct && !(x.e->caps & ENGINE_CAP_DIRECT))
		return llmio_err(e, -EINVAL, "engine %s cannot do O_DIRECT; use --direct=0",
		                 x.e->name);

	fprintf(f,
	        "; fio job file equivalent to:\n;   llmio run%s\n"
	        "; written by llmio %s (--emit-fio); run it with: fio FILE\n"
	        "; lines starting \"; differs:\" name what fio cannot express the same way\n"
	        "[llmio]\n",
	        cmdline, llmio_version());
	for (size_t i = 0; job_optdesc(i); i++) {
		ret = emit_job_option(&x, job_optdesc(i), e);
		if (ret)
			return ret;
	}
	fprintf(f, "thread=1\n");
	ret = emit_engine_options(&x, e);
	if (ret)
		return ret;
	fprintf(f, "percentile_list=");
	for (int i = 0; i < LLMIO_NPCT; i++)
		fprintf(f, "%s%g", i ? ":" : "", llmio_percentiles[i]);
	fprintf(f, "\nlat_percentiles=1\n");
	return ferror(f) ? -EIO : 0;
}
