/* SPDX-License-Identifier: MIT */
/*
 * Running a job: validate the options, prepare the target, start one worker per thread, run
 * the ramp and the measured window, and merge what the workers measured into a result.  This
 * control thread also takes the CPU and block-device snapshots that bracket the window, so
 * every figure in the result covers exactly the same interval.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/error.h"
#include "job/cpu.h"
#include "job/job_internal.h"
#include "job/options.h"
#include "job/pattern.h"
#include "job/verify.h"
#include "base/sysinfo.h"
#include "llmio/engine.h"

#define STATE_FAILED 2
#define STATE_DONE   3

/* Cross-option checks that no single option can make; -EINVAL with the fix in err. */
static int validate(struct job *j, struct llmio_error *e)
{
	struct llmio_job_opts *o = &j->o;
	const char *sizes_opt = o->bssplit[0] ? "bssplit" : "bsrange";
	const char *sizes = o->bssplit[0] ? o->bssplit : o->bsrange;
	char why[512];
	int ret;

	ret = job_opts_resolve(o, e); /* fio's options into llmio's (loops: layout()) */
	if (ret)
		return ret;
	j->io_max = o->bs;
	if (o->bssplit[0] || o->bsrange[0]) {
		if (job_bs_sizes(o, &j->bss, e))
			return -EINVAL;
		j->bss_on = j->bss.min != j->bss.max;
		j->io_max = j->bss.max;
	}
	if (j->bss_on && o->random_distribution == LLMIO_DIST_ZIPF)
		return llmio_err(e, -EINVAL,
		                 "%s=%s with random_distribution=zipf: not done (offsets of "
		                 "several sizes are drawn uniformly)",
		                 sizes_opt, sizes);
	if (j->bss_on && (o->io_source || o->verify || o->number_ios || o->rate_iops ||
	                  o->rate_iops_write || o->rate_iops_trim))
		return llmio_err(e, -EINVAL,
		                 "%s=%s with %s: not done with several block sizes (give one "
		                 "size, or leave %s out)",
		                 sizes_opt, sizes,
		                 o->io_source    ? "a recipe or replay"
		                 : o->verify     ? "verify"
		                 : o->number_ios ? "number_ios"
		                                 : "rate_iops",
		                 o->io_source    ? sizes_opt
		                 : o->verify     ? "verify"
		                 : o->number_ios ? "number_ios"
		                                 : "rate_iops (give rate in bytes)");
	if (o->random_distribution == LLMIO_DIST_ZONED ||
	    o->random_distribution == LLMIO_DIST_ZONED_ABS) {
		if (job_zones_parse(o, &j->zones, e))
			return -EINVAL;
		if (!job_rw_random(o->rw) || o->io_source)
			return llmio_err(e, -EINVAL,
			                 "random_distribution=%s: needs a random rw (randread, "
			                 "randwrite, randrw), not a recipe or replay",
			                 j->zones.abs ? "zoned_abs" : "zoned");
	}
	if (o->blockalign) {
		/* fio's blockalign: random offsets its multiples (of bs, the smallest size) */
		const uint64_t grain = j->bss_on ? j->bss.min : o->bs;

		if (o->blockalign % grain ||
		    (o->blockalign > grain &&
		     (o->io_source || o->random_distribution == LLMIO_DIST_ZIPF)))
			return llmio_err(
			        e, -EINVAL,
			        "blockalign=%" PRIu64 ": a multiple of bs (%" PRIu64
			        "), and not with random_distribution=zipf, a recipe or replay",
			        o->blockalign, grain);
		j->align_blocks = o->blockalign / grain;
	}
	/* fio's random map: uniform offsets of one size (fio turns it off for the other
	 * distributions and for a blockalign above the smallest size); bssplit's draws stay
	 * independent */
	j->use_map = !o->norandommap && job_rw_random(o->rw) && !o->io_source && !j->bss_on &&
	             o->random_distribution == LLMIO_DIST_UNIFORM && j->align_blocks <= 1;
	if (o->rw_skip) {
		const uint64_t mag = o->rw_skip < 0 ? (uint64_t)-o->rw_skip : (uint64_t)o->rw_skip;

		if (mag % o->bs || j->bss_on || o->io_source)
			return llmio_err(
			        e, -EINVAL,
			        "rw=%s:%" PRId64 ": the skip must be a multiple of bs (%" PRIu64
			        ") and one size per I/O (no bssplit, bsrange, recipe or replay)",
			        llmio_rw_name(o->rw), o->rw_skip, o->bs);
		j->skip_blocks = o->rw_skip / (int64_t)o->bs;
	}
	if (o->zonemode == LLMIO_ZONE_STRIDED) {
		const unsigned nfiles = o->files          ? o->nfiles_list
		                        : o->directory[0] ? o->nrfiles
		                                          : 1;

		if ((o->rw != LLMIO_RW_READ && o->rw != LLMIO_RW_WRITE) || j->bss_on ||
		    o->io_source || o->rw_skip || nfiles > 1 || o->numjobs > 1 ||
		    o->zonerange % o->bs || o->zonesize % o->bs || o->zoneskip % o->bs)
			return llmio_err(
			        e, -EINVAL,
			        "zonemode=strided: done for one thread of rw=read or rw=write on "
			        "one "
			        "file, one size per I/O (no bssplit, bsrange, rw=TYPE:N, recipe or "
			        "replay), zonerange, zonesize and zoneskip multiples of bs "
			        "(%" PRIu64 ")",
			        o->bs);
		j->zone_range = o->zonerange / o->bs;
		j->zone_size = o->zonesize / o->bs;
		j->zone_step = (o->zonerange + o->zoneskip) / o->bs;
	}
	if (o->write_lat_log[0] && (o->disable_lat || o->disable_clat || o->disable_slat))
		return llmio_err(
		        e, -EINVAL,
		        "write_lat_log with gtod_reduce or disable_*lat: the latencies are "
		        "reported as not measured; leave one out");
	/* `llmio run` writes the logs of its jobs; a recipe's or a replay's would go unwritten */
	if (o->io_source && iolog_wanted(o))
		return llmio_err(e, -EINVAL,
		                 "write_bw_log, write_lat_log, write_iops_log: fio's logs are for "
		                 "jobs of rw/bs, not recipes or replay");
	j->engine = engine_find(o->engine);
	if (!j->engine) {
		llmio_engine_probe(o->engine, why, sizeof(why));
		return llmio_err(e, -EINVAL, "%s", why);
	}
	if (o->cmdprio_percentage && !(j->engine->caps & ENGINE_CAP_CMDPRIO))
		return llmio_err(e, -EINVAL,
		                 "cmdprio_percentage=%u with the %s engine: a priority per command "
		                 "is libaio's and io_uring's (as in fio); prioclass and prio set "
		                 "the thread's",
		                 o->cmdprio_percentage, j->engine->name);
	if (o->cmdprio_bssplit[0]) {
		if (o->cmdprio_percentage || !(j->engine->caps & ENGINE_CAP_CMDPRIO))
			return llmio_err(
			        e, -EINVAL, "cmdprio_bssplit=%s: %s", o->cmdprio_bssplit,
			        o->cmdprio_percentage
			                ? "not with cmdprio_percentage (fio refuses the two "
			                  "together): leave one out"
			                : "a priority per command is libaio's and io_uring's "
			                  "(as in fio); prioclass and prio set the thread's");
		j->cmdprio_bss = calloc(1, sizeof(*j->cmdprio_bss));
		if (!j->cmdprio_bss)
			return llmio_err(e, -ENOMEM, "no memory for cmdprio_bssplit's table");
		ret = cmdprio_table_parse(o->cmdprio_bssplit, o->cmdprio_class, o->cmdprio,
		                          j->cmdprio_bss, e);
		if (ret)
			return ret;
	}
	if (o->buffer_pattern[0]) {
		ret = pattern_parse("buffer_pattern", o->buffer_pattern, j->pattern,
		                    sizeof(j->pattern), &j->pattern_len, e);
		if (ret)
			return ret;
		if (o->dedupe_percentage)
			return llmio_err(
			        e, -EINVAL,
			        "buffer_pattern with dedupe_percentage: every write would be "
			        "alike; leave one out");
	}
	if (o->verify_pattern[0]) {
		ret = pattern_parse("verify_pattern", o->verify_pattern, j->vpattern,
		                    sizeof(j->vpattern), &j->vpattern_len, e);
		if (ret)
			return ret;
		if (!o->verify)
			return llmio_err(e, -EINVAL,
			                 "verify_pattern without verify: give verify=meta (fio's "
			                 "header and the pattern checked) or a digest; fio's "
			                 "verify=pattern alone is not done");
		if (j->pattern_len || o->dedupe_percentage || o->buffer_compress_percentage)
			return llmio_err(
			        e, -EINVAL,
			        "verify_pattern with %s: every written block is the pattern; "
			        "leave one out",
			        j->pattern_len         ? "buffer_pattern"
			        : o->dedupe_percentage ? "dedupe_percentage"
			                               : "buffer_compress_percentage");
	}
	if (o->fill_device && !o->size && o->rw != LLMIO_RW_WRITE && o->rw != LLMIO_RW_RANDWRITE)
		return llmio_err(e, -EINVAL,
		                 "fill_device without size with rw=%s: a job that reads needs "
		                 "its files laid out first, and llmio does not lay one out until "
		                 "the filesystem is full; give size, or rw=write",
		                 llmio_rw_name(o->rw));
	/* dedupe's, compression's and the patterns' data is written into host buffers (worker.c,
	 * stamp) */
	if ((o->dedupe_percentage || o->buffer_compress_percentage || j->pattern_len ||
	     j->vpattern_len) &&
	    j->engine->buf_alloc && !(j->engine->caps & ENGINE_CAP_HOST_BUFS))
		return llmio_err(e, -EINVAL,
		                 "%s with the %s engine: its buffers are not host memory llmio "
		                 "fills; use a file engine (psync, libaio, io_uring)",
		                 j->pattern_len         ? "buffer_pattern"
		                 : j->vpattern_len      ? "verify_pattern"
		                 : o->dedupe_percentage ? "dedupe_percentage"
		                                        : "buffer_compress_percentage",
		                 j->engine->name);
	/* results name the engine that ran, not the alias typed ("sync" -> "psync") */
	snprintf(o->engine, sizeof(o->engine), "%s", j->engine->name);
	ret = j->engine->probe(why, sizeof(why));
	if (ret)
		return llmio_err(e, ret == -EINVAL ? -ENOTSUP : ret,
		                 "engine %s cannot run here: %s", j->engine->name, why);
	if (j->engine->opts_size) {
		j->engine_opts = calloc(1, j->engine->opts_size);
		if (!j->engine_opts)
			return -ENOMEM;
	}
	ret = engine_opts_parse(j->engine, o->engine_opts, j->engine_opts, e);
	if (ret)
		return ret;
	if (j->engine->caps & ENGINE_CAP_TIMED) {
		/* fio's exec job moves no bytes, so no size ends it: its runtime does */
		if (!o->runtime_ns)
			return llmio_err(e, -EINVAL,
			                 "engine %s runs for the job's runtime: give runtime=N "
			                 "(seconds)",
			                 j->engine->name);
		o->time_based = true;
	}
	/* a connection's job sends or receives a stream: no offsets (fio refuses a random rw), one
	 * direction (fio 3.33's sender of rw=rw never ends) */
	if ((j->engine->caps & ENGINE_CAP_SOCKET) && (job_rw_random(o->rw) || o->rw == LLMIO_RW_RW))
		return llmio_err(e, -EINVAL,
		                 "engine %s: rw=%s: a job's socket is one stream, sent or received "
		                 "in order, with no offsets; use rw=write (the sender) or rw=read "
		                 "(the receiver)",
		                 j->engine->name, llmio_rw_name(o->rw));
	if (o->direct && (!(j->engine->caps & ENGINE_CAP_DIRECT) ||
	                  engine_owns_target(j->engine, j->engine_opts))) {
		return llmio_err(e, -EINVAL,
		                 engine_owns_target(j->engine, j->engine_opts)
		                         ? "engine %s does no local file I/O, so O_DIRECT does not "
		                           "apply; use --direct=0"
		                         : "engine %s goes through the page cache and cannot do "
		                           "O_DIRECT; use --direct=0",
		                 j->engine->name);
	}
	if (o->files && (o->filename[0] || o->directory[0] || !o->nfiles_list))
		return llmio_err(e, -EINVAL, "a file list replaces --filename and --directory%s",
		                 o->nfiles_list ? "" : ", and it is empty");
	if (!(j->engine->caps & ENGINE_CAP_NO_IO) && !o->filename[0] && !o->directory[0] &&
	    !o->files) {
		return llmio_err(e, -EINVAL,
		                 "no target: give --filename FILE|DEVICE or --directory DIR");
	}
	if (o->filename_format[0])
		return llmio_err(e, -EINVAL,
		                 "filename_format names the files of `llmio run`'s jobs (fio's); "
		                 "here give --filename or --directory");
	if (o->filename[0] && o->directory[0])
		return llmio_err(e, -EINVAL, "--filename and --directory both given: choose one");
	if (o->random_distribution == LLMIO_DIST_ZIPF &&
	    (o->rw == LLMIO_RW_READ || o->rw == LLMIO_RW_WRITE || o->rw == LLMIO_RW_RW)) {
		return llmio_err(
		        e, -EINVAL,
		        "random_distribution=zipf needs a random rw (randread, randwrite, randrw)");
	}
	if (o->cpus_allowed_policy[0] && strcmp(o->cpus_allowed_policy, "shared") &&
	    strcmp(o->cpus_allowed_policy, "split")) {
		return llmio_err(e, -EINVAL,
		                 "cpus_allowed_policy=%s is not valid: expected shared or split",
		                 o->cpus_allowed_policy);
	}
	j->cpus_split = !strcmp(o->cpus_allowed_policy, "split");
	CPU_ZERO(&j->cpus);
	if (o->cpus_allowed[0] && cpu_list_parse(o->cpus_allowed, &j->cpus, e))
		return -EINVAL;
	/* fio binds to the nodes after cpus_allowed: every thread on all their CPUs */
	if (o->numa_cpu_nodes[0]) {
		if (cpu_numa_nodes(o->numa_cpu_nodes, &j->cpus, e))
			return -EINVAL;
		j->cpus_split = false;
	}
	memset(&j->mpol, 0, sizeof(j->mpol));
	if (o->numa_mem_policy[0] && cpu_mempolicy_parse(o->numa_mem_policy, &j->mpol, e))
		return -EINVAL;
	/* fio refuses a minimum no thread could meet (its "minimum rate exceeds rate") */
	if (o->rate && o->rate_min > o->rate)
		return llmio_err(e, -EINVAL,
		                 "rate_min=%" PRIu64 " is above rate=%" PRIu64
		                 ": lower rate_min or raise rate",
		                 o->rate_min, o->rate);
	return 0;
}

static bool job_writes(const struct llmio_job_opts *o)
{
	return o->rw == LLMIO_RW_WRITE || o->rw == LLMIO_RW_RANDWRITE ||
	       ((o->rw == LLMIO_RW_RANDRW || o->rw == LLMIO_RW_RW) && o->rwmixread < 100);
}

/*
 * fio's file_service_type, TYPE[:N]: llmio moves over a job's files in one way per rw, so a job
 * of several files takes the type that is that way and is refused any other (docs/fio.md).
 */
static bool is_word(const char *t, size_t n, const char *word)
{
	return n == strlen(word) && !strncmp(t, word, n);
}

static int check_file_service(const struct llmio_job_opts *o, struct llmio_error *e)
{
	const char *t = o->file_service_type, *colon = strchr(t, ':');
	const size_t n = colon ? (size_t)(colon - t) : strlen(t);
	const bool random = job_rw_random(o->rw);
	/* the job's files, as target_open() will make them (before any is created) */
	const unsigned nfiles = o->files ? o->nfiles_list : o->directory[0] ? o->nrfiles : 1;
	char *end;

	if (colon && (strtoul(colon + 1, &end, 10), end == colon + 1 || *end))
		return llmio_err(e, -EINVAL, "file_service_type=%s: expected TYPE or TYPE:N", t);
	if (!is_word(t, n, "random") && !is_word(t, n, "roundrobin") &&
	    !is_word(t, n, "sequential"))
		return llmio_err(e, -EINVAL,
		                 "file_service_type=%s: a distribution over the files is not done "
		                 "(llmio takes random, roundrobin or sequential)",
		                 t);
	if (nfiles <= 1)
		return 0; /* one file: every type is the same */
	for (unsigned f = 1; random && o->files && f < nfiles; f++)
		if (o->files[f].size != o->files[0].size && is_word(t, n, "roundrobin"))
			return llmio_err(
			        e, -EINVAL,
			        "file_service_type=%s over files of different sizes: llmio "
			        "draws each offset over all of them (fio's random); give "
			        "random",
			        t);
	if (random != is_word(t, n, "sequential"))
		return 0;
	return llmio_err(e, -EINVAL,
	                 random ? "file_service_type=%s with rw=%s over %u files: llmio draws each "
	                          "random offset over all of them (fio's random); give random"
	                        : "file_service_type=%s with rw=%s over %u files: llmio's thread "
	                          "walks its files one after another (fio's sequential); give "
	                          "sequential",
	                 t, llmio_rw_name(o->rw), nfiles);
}

/*
 * fio's openfiles=N: fio closes and reopens files as a thread moves over them; llmio opens a
 * job's files once, so fewer than the job's files is refused, unless the job holds none open
 * (filecreate opens and closes each file within its I/O; cpuio has none).
 */
static int check_openfiles(const struct job *j, struct llmio_error *e)
{
	const struct llmio_job_opts *o = &j->o;
	const unsigned nfiles = o->files ? o->nfiles_list : o->directory[0] ? o->nrfiles : 1;

	if (!o->openfiles || o->openfiles >= nfiles ||
	    (j->engine->caps & (ENGINE_CAP_MAKES_FILES | ENGINE_CAP_NO_IO)))
		return 0;
	return llmio_err(e, -EINVAL,
	                 "openfiles=%u with %u files: llmio keeps every file of a job open for "
	                 "the whole run (fio would close and reopen them); give openfiles=%u or "
	                 "leave it out",
	                 o->openfiles, nfiles, nfiles);
}

/*
 * fio's trims: falloc punches holes; fio's other engines send a trim to the device (BLKDISCARD,
 * which a regular file fails with ENOTTY), which llmio's do not do.
 */
static int check_trims(const struct job *j, struct llmio_error *e)
{
	const char *rw = j->o.rw == LLMIO_RW_WRITE ? "trim" : "randtrim";

	if (!(j->engine->caps & ENGINE_CAP_TRIM))
		return llmio_err(
		        e, -EINVAL,
		        "rw=%s with ioengine=%s: llmio trims with ioengine=falloc (a hole "
		        "punched in the file); fio's other engines discard a block device's "
		        "range (BLKDISCARD), which llmio does not: run blkdiscard(8)",
		        rw, j->engine->name);
	if (j->o.verify || j->bss_on)
		return llmio_err(e, -EINVAL, "rw=%s with %s: a trim moves no data; leave it out",
		                 rw, j->o.verify ? "verify" : "bssplit");
	return 0;
}

static int layout(struct job *j, struct llmio_error *e)
{
	struct llmio_job_opts *o = &j->o;
	unsigned nfiles = j->target.nfiles ? j->target.nfiles : 1;

	j->file_first_block = calloc(nfiles + 1, sizeof(*j->file_first_block));
	if (!j->file_first_block)
		return -ENOMEM;
	if (j->target.nfiles) {
		for (unsigned f = 0; f < nfiles; f++)
			j->file_first_block[f + 1] =
			        j->file_first_block[f] + j->target.sizes[f] / o->bs;
	} else {
		/* null engine: a virtual target of `size` bytes, 1 GiB unless given */
		if (!o->size)
			o->size = 1ull << 30;
		j->file_first_block[1] = o->size / o->bs;
	}
	j->total_blocks = j->file_first_block[nfiles];
	if (o->io_source) {
		/* the source places every I/O; files may be smaller than bs */
		if (!o->size)
			o->size = j->target.total_size;
		return 0;
	}
	/* the size a read takes from its target (an object's HEAD, a file's) is the target's */
	if (!j->total_blocks && !o->size)
		return llmio_err(e, -EINVAL,
		                 "%s is %" PRIu64 " bytes, smaller than bs=%" PRIu64
		                 ": lower --bs to at most its size",
		                 j->target.nfiles == 1 ? j->target.paths[0] : "the target",
		                 j->target.total_size, o->bs);
	if (!j->total_blocks)
		return llmio_err(e, -EINVAL,
		                 "size %" PRIu64 " is smaller than bs=%" PRIu64
		                 ": raise --size or lower --bs",
		                 o->size, o->bs);
	if (!o->size)
		o->size = j->total_blocks * o->bs;
	if (j->zones.abs && j->zones.start[j->zones.n - 1] + j->zones.size[j->zones.n - 1] >
	                            j->total_blocks * o->bs)
		return llmio_err(
		        e, -EINVAL,
		        "random_distribution=zoned_abs:%s: the zones end past the target's "
		        "%" PRIu64 " bytes (fio stops there too): shrink them or raise size",
		        o->random_zones, j->total_blocks * o->bs);
	if (o->random_distribution == LLMIO_DIST_ZIPF) {
		zipf_init(&j->zipf, j->total_blocks, o->zipf_theta);
		j->zipf_mult = scatter_multiplier(j->total_blocks);
	}
	/* by default the whole job moves the target once (fio's loops: N times), each thread its
	 * share; with runtime and time_based=0 (fio's default) too, whichever ends first */
	if (!o->io_size && (!o->runtime_ns || !o->time_based)) {
		o->io_size = j->total_blocks / o->numjobs * o->bs;
		if (!o->io_size)
			o->io_size = o->bs;
	}
	if (o->loops > 1)
		o->io_size *= o->loops;
	if (o->number_ios && (!o->io_size || o->number_ios * o->bs < o->io_size))
		o->io_size = o->number_ios * o->bs;
	return 0;
}

struct snap {
	uint64_t t;
	struct cpu_snap cpu;
	uint64_t rd, wr, rdio, wrio;
	bool pio_ok;                /* /proc/self/io read: the process witness */
	uint64_t prd, pwr;          /* its read_bytes, write_bytes */
	uint64_t irq[IRQ_MAX_CPUS]; /* the device's interrupts per CPU */
};

static void snap_take(const struct job *j, struct snap *s)
{
	cpu_snap_take(&s->cpu);
	if (target_dev_counters(&j->target, &s->rd, &s->wr, &s->rdio, &s->wrio))
		s->rd = s->wr = s->rdio = s->wrio = 0;
	s->pio_ok = sysinfo_proc_io(&s->prd, &s->pwr) == 0;
	if (j->target.nirqs)
		irq_counts(j->target.irqs, j->target.nirqs, s->irq);
	s->t = now_ns();
}

/*
 * The control thread's sleep: until ns pass or a worker finishes (it writes the job's
 * eventfd).  The control thread must stay out of the workers' way: waking every 5 ms cost a
 * synchronous buffered-write job at numjobs 2 on 2 CPUs 11 % of its IOPS (each wake-up
 * preempts a worker, often one holding the inode lock the other waits for).
 */
static void wait_wake(const struct job *j, uint64_t ns)
{
	struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
	struct pollfd p = {.fd = j->wake_fd, .events = POLLIN};
	uint64_t v;

	if (ppoll(&p, j->wake_fd >= 0, &ts, NULL) > 0)
		(void)!read(j->wake_fd, &v, sizeof(v));
}

/* Longest control-thread sleep: how late a stop from outside (SIGINT) is noticed. */
#define CONTROL_TICK_NS 100000000ull

static void nap(uint64_t ns)
{
	struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};

	nanosleep(&ts, NULL);
}

/* stop may be set by another thread (with an atomic store, see llmio/job.h): read it as one. */
static bool stopped_from_outside(const struct job *j)
{
	return j->o.stop && __atomic_load_n(j->o.stop, __ATOMIC_RELAXED);
}

/* fio's startdelay, in naps that look at the stop flag (a stopped job then ends at once). */
static void start_delay(const struct llmio_job_opts *o)
{
	const uint64_t end = now_ns() + o->startdelay_ns;

	for (uint64_t t = now_ns(); o->startdelay_ns && t < end; t = now_ns()) {
		if (o->stop && __atomic_load_n(o->stop, __ATOMIC_RELAXED))
			break;
		nap(end - t < 10000000 ? end - t : 10000000);
	}
}

static int start_workers(struct job *j, struct llmio_error *e)
{
	unsigned started = 0;
	int ret = 0;

	if (iolog_wanted(&j->o)) {
		j->logs = calloc(j->nworkers, sizeof(*j->logs));
		const bool slat = j->engine->caps & ENGINE_CAP_ASYNC; /* fio: none for psync */

		if (!j->logs) {
			j->nworkers = 0; /* none started */
			return llmio_err(e, -ENOMEM, "no memory for the logs (write_*_log)");
		}
		for (; j->nlogs < j->nworkers; j->nlogs++) {
			ret = iolog_init(&j->logs[j->nlogs], &j->o, j->nlogs, slat, e);
			if (ret) {
				j->nlogs++; /* released with the others */
				j->nworkers = 0;
				return ret;
			}
		}
	}
	j->workers = calloc(j->nworkers, sizeof(*j->workers));
	if (!j->workers) {
		j->nworkers = 0;
		return -ENOMEM;
	}
	for (unsigned i = 0; i < j->nworkers; i++) {
		struct worker *w = &j->workers[i];

		w->idx = i;
		w->job = j;
		w->log = j->logs ? &j->logs[i] : NULL;
		ret = -pthread_create(&w->thread, NULL, worker_main, w);
		if (ret) {
			llmio_err(e, ret, "cannot start thread %u of %u: %s", i + 1, j->nworkers,
			          strerror(-ret));
			break;
		}
		started++;
	}
	/* every worker sets itself up in its own thread (rings are per-thread); wait for all */
	for (unsigned i = 0; i < started; i++) {
		struct worker *w = &j->workers[i];

		while (atomic_load(&w->state) == 0) {
			/* an engine's setup may wait on a peer (net's accept): Ctrl-C ends it */
			if (stopped_from_outside(j))
				atomic_store(&j->stop, 1);
			nap(200000);
		}
		if (atomic_load(&w->state) == STATE_FAILED && !ret)
			ret = llmio_err(e, w->err ? w->err : -EIO, "%s", w->errmsg);
	}
	j->nworkers = started;
	return ret;
}

static double progress_interval_s(const struct job *j)
{
	return j->o.progress_interval_ns ? (double)j->o.progress_interval_ns / 1e9 : 1.0;
}

static void progress(struct job *j, uint64_t now, uint64_t *last_t, uint64_t *last_ios,
                     uint64_t *last_bytes)
{
	uint64_t ios = 0, bytes = 0, done_bytes, total;
	double dt = (double)(now - *last_t) / 1e9, elapsed, eta = 0;

	if (!j->o.progress || dt < progress_interval_s(j))
		return;
	for (unsigned i = 0; i < j->nworkers; i++) {
		for (int d = 0; d < 2; d++) {
			ios += atomic_load_explicit(&j->workers[i].live_ios[d],
			                            memory_order_relaxed);
			bytes += atomic_load_explicit(&j->workers[i].live_bytes[d],
			                              memory_order_relaxed);
		}
	}
	elapsed = (double)(now - j->t_measure) / 1e9;
	if (j->o.runtime_ns) {
		eta = (double)j->o.runtime_ns / 1e9 - elapsed;
	} else {
		done_bytes = bytes;
		total = j->o.io_size * j->nworkers;
		if (done_bytes && total > done_bytes)
			eta = elapsed * (double)(total - done_bytes) / (double)done_bytes;
	}
	j->o.progress(j->o.progress_arg, elapsed, eta < 0 ? 0 : eta, (double)(ios - *last_ios) / dt,
	              (double)(bytes - *last_bytes) / dt);
	*last_t = now;
	*last_ios = ios;
	*last_bytes = bytes;
}

/*
 * fio's per-second IOPS and bandwidth samples (iops_min/max/mean/stddev, bw_*): every second
 * of the measured window, the counts since the last sample over the time since it, per
 * direction.  Welford's running mean and variance: no sample is stored.
 */
static void sample(struct job *j, uint64_t now)
{
	uint64_t ios[2] = {0}, bytes[2] = {0};
	const double dt = (double)(now - j->samp_t) / 1e9;

	if (dt < 1.0)
		return;
	for (unsigned i = 0; i < j->nworkers; i++)
		for (int d = 0; d < 2; d++) {
			ios[d] += atomic_load_explicit(&j->workers[i].live_ios[d],
			                               memory_order_relaxed);
			bytes[d] += atomic_load_explicit(&j->workers[i].live_bytes[d],
			                                 memory_order_relaxed);
		}
	for (int d = 0; d < 2; d++) {
		/* a worker's count is reset when measuring starts: never a negative delta */
		const double v[2] = {
		        ios[d] > j->samp_ios[d] ? (double)(ios[d] - j->samp_ios[d]) / dt : 0,
		        bytes[d] > j->samp_bytes[d] ? (double)(bytes[d] - j->samp_bytes[d]) / dt
		                                    : 0};

		for (int k = 0; k < 2; k++) {
			typeof(j->samp[0][0]) *s = &j->samp[d][k];
			const double delta = v[k] - s->mean;

			s->min = s->n && s->min < v[k] ? s->min : v[k];
			s->max = s->n && s->max > v[k] ? s->max : v[k];
			s->n++;
			s->mean += delta / (double)s->n;
			s->m2 += delta * (v[k] - s->mean);
		}
		j->samp_ios[d] = ios[d];
		j->samp_bytes[d] = bytes[d];
	}
	j->samp_t = now;
	if (j->ss.dur)
		job_ss_check(j, now, ios[0] + ios[1], bytes[0] + bytes[1]);
}

static void sample_stats(const struct job *j, struct llmio_result *r)
{
	for (int d = 0; d < 2; d++)
		for (int k = 0; k < 2; k++) {
			const typeof(j->samp[0][0]) *s = &j->samp[d][k];
			struct llmio_sample_stats *o = k ? &r->bw_samples[d] : &r->iops_samples[d];

			o->samples = s->n;
			o->min = s->min;
			o->max = s->max;
			o->mean = s->mean;
			o->stddev = s->n > 1 ? sqrt(s->m2 / (double)(s->n - 1)) : 0;
		}
}

/*
 * A time-based window ends at its runtime, or later when a thread has not completed one I/O
 * in it yet, by at most LATE_MAX_NS.  On a loaded disk a single I/O can outlast a short
 * runtime; a window that ended then would report a thread that worked as one that did nothing
 * (fio, too, checks its runtime only between I/Os).  Rates still divide by the window's real
 * length.  The control thread polls during this grace only.  Not for an engine whose I/Os
 * wait on another machine (ENGINE_CAP_OWN_TARGET: s3, s3-agent): there a first I/O that has
 * not ended by the runtime is a server that stopped answering, and the run ends on time; the
 * engine abandons what is in flight and says so (docs/object-storage.md).
 */
#define LATE_MAX_NS  2000000000ull
#define LATE_TICK_NS 1000000ull

static bool every_worker_counted(const struct job *j)
{
	for (unsigned i = 0; i < j->nworkers; i++) {
		const struct worker *w = &j->workers[i];

		if (atomic_load(&w->state) != STATE_DONE && !w->err &&
		    !atomic_load_explicit(&w->live_ios[0], memory_order_relaxed) &&
		    !atomic_load_explicit(&w->live_ios[1], memory_order_relaxed))
			return false;
	}
	return true;
}

/* Run the ramp and the measured window; fills start/end snapshots. */
static void supervise(struct job *j, struct snap *s0, struct snap *s1, bool *interrupted)
{
	uint64_t t0 = now_ns(), last_t, last_ios = 0, last_bytes = 0, deadline = 0;

	if (stopped_from_outside(j))
		atomic_store(&j->stop, 1); /* stopped before it began: not one I/O */
	if (j->o.ramp_time_ns) {
		atomic_store(&j->go, 1);
		for (uint64_t t;
		     (t = now_ns() - t0) < j->o.ramp_time_ns && !stopped_from_outside(j);)
			wait_wake(j, j->o.ramp_time_ns - t < CONTROL_TICK_NS ? j->o.ramp_time_ns - t
			                                                     : CONTROL_TICK_NS);
	}
	snap_take(j, s0);
	j->t_measure = s0->t;
	j->ss.t = s0->t;   /* fio's: the steady state's first rate from the window's start */
	j->samp_t = s0->t; /* the workers' counts start at 0 with the epoch */
	atomic_store(&j->epoch, 1);
	atomic_store(&j->go, 1);
	last_t = s0->t;
	if (j->o.runtime_ns)
		deadline = s0->t + j->o.runtime_ns;

	for (;;) {
		unsigned done = 0;
		uint64_t now, tick;

		for (unsigned i = 0; i < j->nworkers; i++)
			done += atomic_load(&j->workers[i].state) == STATE_DONE;
		if (done == j->nworkers)
			break;
		for (unsigned i = 0; i < j->nworkers; i++)
			if (j->workers[i].err)
				atomic_store(&j->stop, 1); /* one failed: stop the others */
		if (stopped_from_outside(j)) {
			*interrupted = true;
			atomic_store(&j->stop, 1);
		}
		now = now_ns();
		if (deadline && now >= deadline) {
			if (!(j->engine->caps & ENGINE_CAP_OWN_TARGET) &&
			    !every_worker_counted(j) && now < deadline + LATE_MAX_NS) {
				wait_wake(j, LATE_TICK_NS);
				continue;
			}
			atomic_store(&j->stop, 1);
		}
		if (atomic_load(&j->stop)) {
			sample(j, now); /* the last second, when a whole one has passed */
			snap_take(j, s1);
			break;
		}
		progress(j, now, &last_t, &last_ios, &last_bytes);
		sample(j, now);
		if (stopped_from_outside(j))
			continue; /* the progress callback stopped it (steady state): at once */
		/* until the deadline (time-based runs end on time), a worker ends, a tick, or a
		 * progress call finer than the tick is due (a sweep's steady-state samples) */
		tick = deadline && deadline - now < CONTROL_TICK_NS ? deadline - now
		                                                    : CONTROL_TICK_NS;
		if (j->o.progress && j->o.progress_interval_ns &&
		    last_t + j->o.progress_interval_ns > now &&
		    last_t + j->o.progress_interval_ns - now < tick)
			tick = last_t + j->o.progress_interval_ns - now;
		wait_wake(j, tick);
	}
	for (unsigned i = 0; i < j->nworkers; i++)
		pthread_join(j->workers[i].thread, NULL);
	if (!atomic_load(&j->stop))
		snap_take(j, s1); /* finished by size: the window ends when the last one did */
}

/*
 * Each thread's own counts, histograms and log (fio's clones: numjobs without
 * group_reporting).  The histograms are copies of what each worker kept anyway; the logs move
 * into the result.  Without memory the result simply has no threads.
 */
static void thread_results(struct job *j, struct llmio_result *r, uint64_t t_end)
{
	r->threads = calloc(j->nworkers, sizeof(*r->threads));
	if (!r->threads)
		return;
	r->nthreads = j->nworkers;
	for (unsigned i = 0; i < j->nworkers; i++) {
		const struct worker *w = &j->workers[i];
		struct llmio_thread_result *t = &r->threads[i];
		const uint64_t end = w->t_end > j->t_measure ? w->t_end : t_end;
		const double wall = end > j->t_measure ? (double)(end - j->t_measure) / 1e9 : 1e-9;

		t->read = w->st[0];
		t->write = w->st[1];
		t->runtime_s = wall;
		t->fsyncs = w->fsyncs;
		for (int op = 0; op < 2; op++) {
			struct llmio_op_result *d = op ? &t->write : &t->read;

			d->iops = (double)d->ios / wall;
			d->bw_bytes = (double)d->bytes / wall;
		}
		if (j->logs) {
			t->log = j->logs[i].buf;
			t->nlog = j->logs[i].n;
			t->log_truncated = j->logs[i].truncated;
			j->logs[i].buf = NULL;
		}
	}
}

static void wire_add(struct llmio_wire *w, const struct engine_counters *c)
{
	w->known = true;
	w->rx_bytes += c->wire_rx;
	w->tx_bytes += c->wire_tx;
	w->requests += c->requests;
	w->retries += c->retries;
	w->hash_s += (double)c->hash_ns / 1e9;
	w->copy_s += (double)c->copy_ns / 1e9;
	w->agent_s += (double)c->agent_cpu_ns / 1e9;
}

static void fill_result(struct job *j, struct llmio_result *r, const struct snap *s0,
                        const struct snap *s1)
{
	uint64_t t_end = 0;
	double wall, gb;

	r->opts = j->o;
	/* the options as parsed when the job was set up: the record prints them (no registry) */
	r->engine_options_known = true;
	r->nengine_options = engine_opts_values(j->engine, j->engine_opts, r->engine_options,
	                                        &r->engine_option_strings, r->engine_text,
	                                        sizeof(r->engine_text));
	sample_stats(j, r);
	job_ss_result(j, r);
	/*
	 * The caller's pointers were borrowed for the run only (include/llmio/result.h): a result
	 * outlives them, so it keeps none.  nfiles_list stays as the count.
	 */
	r->opts.stop = NULL;
	r->opts.progress = NULL;
	r->opts.progress_arg = NULL;
	r->opts.prepare_progress = NULL;
	r->opts.prepare_arg = NULL;
	r->opts.ready = NULL;
	r->opts.ready_arg = NULL;
	r->opts.files = NULL;
	r->opts.io_source = NULL;
	/* NVMe commands (passthrough, SPDK) never pass through the page cache, whatever --direct */
	r->direct_in_effect = j->target.direct || (j->engine->caps & ENGINE_CAP_NAMESPACE);
	r->target_bytes = j->target.nfiles ? j->target.total_size : j->total_blocks * j->o.bs;
	r->iodepth_effective = (j->engine->caps & ENGINE_CAP_ASYNC) ? j->o.iodepth : 1;
	if (j->nworkers && j->workers[0].ctx.depth_effective &&
	    j->workers[0].ctx.depth_effective < r->iodepth_effective)
		r->iodepth_effective = j->workers[0].ctx.depth_effective;
	for (int op = 0; op < 2; op++) {
		struct llmio_op_result *dst = op ? &r->write : &r->read;

		llmio_hist_init(&dst->clat);
		llmio_hist_init(&dst->slat);
		llmio_hist_init(&dst->lat);
	}
	llmio_hist_init(&r->sync_lat);
	for (unsigned i = 0; i < j->nworkers; i++) /* fio's latency_depth */
		if (j->workers[i].lt_on && j->workers[i].lt.qd > r->latency_depth)
			r->latency_depth = j->workers[i].lt.qd;
	for (unsigned i = 0; i < j->nworkers; i++) {
		struct worker *w = &j->workers[i];

		/* fio's disable_*lat (gtod_reduce): measured at no cost, reported as not measured
		 */
		for (int op = 0; op < 2; op++) {
			if (j->engine->caps & ENGINE_CAP_TIMED)
				w->st[op].bytes = 0; /* its I/Os moved none (exec), as fio's NOIO */
			if (j->o.disable_clat)
				llmio_hist_init(&w->st[op].clat);
			if (j->o.disable_slat)
				llmio_hist_init(&w->st[op].slat);
			if (j->o.disable_lat)
				llmio_hist_init(&w->st[op].lat);
		}

		for (int op = 0; op < 2; op++) {
			struct llmio_op_result *dst = op ? &r->write : &r->read;

			dst->ios += w->st[op].ios;
			dst->bytes += w->st[op].bytes;
			llmio_hist_merge(&dst->clat, &w->st[op].clat);
			llmio_hist_merge(&dst->slat, &w->st[op].slat);
			llmio_hist_merge(&dst->lat, &w->st[op].lat);
		}
		r->fsyncs += w->fsyncs;
		llmio_hist_merge(&r->sync_lat, &w->sync_lat);
		if (w->t_end > t_end)
			t_end = w->t_end;
	}
	if (!t_end || t_end < j->t_measure)
		t_end = s1->t;
	thread_results(j, r, t_end);
	wall = (double)(t_end - j->t_measure) / 1e9;
	if (wall <= 0)
		wall = 1e-9;
	r->runtime_s = wall;
	for (int op = 0; op < 2; op++) {
		struct llmio_op_result *dst = op ? &r->write : &r->read;

		dst->iops = (double)dst->ios / wall;
		dst->bw_bytes = (double)dst->bytes / wall;
	}
	llmio_hist_init(&r->trim.clat);
	llmio_hist_init(&r->trim.slat);
	llmio_hist_init(&r->trim.lat);
	if (j->trims) { /* the writes were trims: the result says so, as fio's trim direction */
		r->opts.rw = r->opts.rw == LLMIO_RW_WRITE ? LLMIO_RW_TRIM : LLMIO_RW_RANDTRIM;
		r->trim = r->write;
		memset(&r->write, 0, sizeof(r->write));
		llmio_hist_init(&r->write.clat);
		llmio_hist_init(&r->write.slat);
		llmio_hist_init(&r->write.lat);
		memset(&r->iops_samples[1], 0, sizeof(r->iops_samples[1]));
		memset(&r->bw_samples[1], 0, sizeof(r->bw_samples[1]));
	}
	r->cpu.usr_s = s1->cpu.usr_s - s0->cpu.usr_s;
	r->cpu.sys_s = s1->cpu.sys_s - s0->cpu.sys_s;
	r->cpu.proc_s = r->cpu.usr_s + r->cpu.sys_s;
	r->cpu.system_busy_s = s1->cpu.sys_busy_s - s0->cpu.sys_busy_s;
	r->cpu.ctx_voluntary = s1->cpu.nvcsw - s0->cpu.nvcsw;
	r->cpu.ctx_involuntary = s1->cpu.nivcsw - s0->cpu.nivcsw;
	/* the CPU window is the snapshot interval, within a few ms of the I/O window */
	wall = (double)(s1->t - s0->t) / 1e9;
	if (wall > 0) {
		r->cpu.cores_busy = r->cpu.proc_s / wall;
		r->cpu.system_cores_busy = r->cpu.system_busy_s / wall;
	}
	r->cpu.online_cpus = sysinfo_online_cpus();
	gb = (double)(r->read.bytes + r->write.bytes) / 1e9 / r->runtime_s;
	r->gb_per_s_per_core = r->cpu.cores_busy > 0 ? gb / r->cpu.cores_busy : 0;
	r->device = j->target.dev;
	if (j->target.dev.known && j->target.stat_path[0]) {
		r->device.read_bytes = s1->rd - s0->rd;
		r->device.write_bytes = s1->wr - s0->wr;
		r->device.read_ios = s1->rdio - s0->rdio;
		r->device.write_ios = s1->wrio - s0->wrio;
	}
	r->process_io.known = s0->pio_ok && s1->pio_ok;
	if (r->process_io.known) {
		/* a thread's counts move to the process's as it exits: never below zero */
		r->process_io.read_bytes = s1->prd > s0->prd ? s1->prd - s0->prd : 0;
		r->process_io.write_bytes = s1->pwr > s0->pwr ? s1->pwr - s0->pwr : 0;
	}
	if (j->target.nirqs)
		irq_share(s0->irq, s1->irq, &r->device.irqs, r->device.irq_cpus,
		          sizeof(r->device.irq_cpus));
	r->softirq_system_s = s1->cpu.softirq_s - s0->cpu.softirq_s;
	for (unsigned i = 0; i < j->nworkers; i++) {
		const struct engine_counters *c = &j->workers[i].ctx.counters;

		if (!c->known)
			continue;
		wire_add(&r->wire, c);
		if (!r->thread_wire && r->threads)
			r->thread_wire = calloc(r->nthreads, sizeof(*r->thread_wire));
		if (r->thread_wire)
			wire_add(&r->thread_wire[i], c);
	}
}

static void notes(struct job *j, struct llmio_result *r)
{
	size_t used = 0;
	char *n = r->engine_notes;
	const size_t len = sizeof(r->engine_notes);
	const int advice = job_fadvise_advice(&j->o);

	if (j->nworkers && j->workers[0].ctx.notes[0])
		used += (size_t)snprintf(n + used, len - used, "%s", j->workers[0].ctx.notes);
	if (!(j->engine->caps & ENGINE_CAP_ASYNC) && j->o.iodepth > 1 && used < len)
		used += (size_t)snprintf(n + used, len - used,
		                         "%ssynchronous engine: iodepth=%u runs as 1 (use numjobs "
		                         "for parallelism)",
		                         used ? "; " : "", j->o.iodepth);
	if (CPU_COUNT(&j->cpus) && used < len) {
		char list[256];

		cpu_list_format(&j->cpus, list, sizeof(list));
		used += (size_t)snprintf(n + used, len - used, "%sthreads pinned to CPU%s %s%s",
		                         used ? "; " : "", CPU_COUNT(&j->cpus) > 1 ? "s" : "", list,
		                         j->cpus_split ? " (split: one CPU per thread)" : "");
	}
	/* under O_DIRECT, where completions arrive decides a latency-bound result */
	if (j->target.direct && r->device.irqs && used < len)
		used += (size_t)snprintf(n + used, len - used,
		                         "%s%s completions interrupted CPU %s (%llu interrupts); "
		                         "threads %s",
		                         used ? "; " : "", r->device.name, r->device.irq_cpus,
		                         (unsigned long long)r->device.irqs,
		                         CPU_COUNT(&j->cpus)
		                                 ? "pinned as above"
		                                 : "unpinned (--cpus_allowed pins them)");
	if (j->o.invalidate && j->target.nfiles && !engine_owns_target(j->engine, j->engine_opts) &&
	    used < len)
		used += (size_t)snprintf(n + used, len - used,
		                         "%spage cache of the target dropped before the run",
		                         used ? "; " : "");
	if (advice >= 0 && j->target.nfiles && !engine_owns_target(j->engine, j->engine_opts) &&
	    used < len)
		snprintf(n + used, len - used, "%sfiles advised POSIX_FADV_%s (fadvise_hint)",
		         used ? "; " : "",
		         advice == POSIX_FADV_RANDOM       ? "RANDOM: no readahead"
		         : advice == POSIX_FADV_SEQUENTIAL ? "SEQUENTIAL: readahead doubled"
		                                           : "NORMAL");
}

static void job_release(struct job *j)
{
	for (unsigned i = 0; i < j->nlogs; i++)
		iolog_release(&j->logs[i]);
	free(j->logs);
	verify_release(j);
	target_close(&j->target);
	free(j->workers);
	free(j->file_first_block);
	free(j->cmdprio_bss);
	free(j->engine_opts);
	job_ss_release(j);
	if (j->wake_fd >= 0)
		close(j->wake_fd);
}

/* j set up from the caller's opts, validated, its target opened (and laid out). */
/*
 * An engine that removes its files (ENGINE_CAP_NEW_FILES) works only on files this job makes:
 * one that is there already is refused before the layout would fill or extend it.
 */
static int refuse_existing(struct job *j, struct llmio_error *e)
{
	struct target names;
	struct stat st;
	int ret = target_open_names(&names, &j->o, e);

	for (unsigned i = 0; !ret && i < names.nfiles; i++)
		if (!lstat(names.paths[i], &st))
			ret = llmio_err(
			        e, -EEXIST,
			        "%s removes only files this job creates, and %s is there "
			        "already (llmio never removes what it did not make): remove it "
			        "yourself, or give the job a directory where its files do not "
			        "exist yet",
			        j->engine->name, names.paths[i]);
	target_close(&names);
	return ret;
}

static int job_open(struct job *j, const struct llmio_job_opts *opts, struct llmio_error *e)
{
	int ret;

	memset(j, 0, sizeof(*j));
	j->wake_fd = -1;
	llmio_job_opts_init(&j->o);
	/* an older caller's struct is shorter: take what it has, defaults for the rest */
	memcpy(&j->o, opts, opts->opts_size < sizeof(j->o) ? opts->opts_size : sizeof(j->o));
	j->o.opts_size = sizeof(j->o);
	j->nworkers = j->o.numjobs;
	/* a trim job runs as the write job of the same offsets, whose writes its engine trims */
	j->trims = j->o.rw == LLMIO_RW_TRIM || j->o.rw == LLMIO_RW_RANDTRIM;
	if (j->trims)
		j->o.rw = j->o.rw == LLMIO_RW_TRIM ? LLMIO_RW_WRITE : LLMIO_RW_RANDWRITE;

	ret = validate(j, e);
	if (!ret)
		ret = job_ss_init(j, e);
	if (ret)
		return ret;
	if (j->trims && check_trims(j, e))
		return -EINVAL;
	if (j->o.file_service_type[0] && check_file_service(&j->o, e))
		return -EINVAL;
	if (check_openfiles(j, e))
		return -EINVAL;
	if (j->o.readonly && job_writes(&j->o))
		return llmio_err(e, -EINVAL,
		                 "--readonly: this job writes (rw=%s); llmio refuses every write "
		                 "under --readonly: drop it, or run a read job",
		                 llmio_rw_name(opts->rw)); /* trim, not the write it runs as */
	/* fio's fill_device without size: as much as the filesystem holds, until ENOSPC */
	if (j->o.fill_device && !j->o.size) {
		if (engine_owns_target(j->engine, j->engine_opts) ||
		    (j->engine->caps & (ENGINE_CAP_MAKES_FILES | ENGINE_CAP_NO_IO)))
			return llmio_err(
			        e, -EINVAL,
			        "fill_device with ioengine=%s: it fills a filesystem's "
			        "files; give size, or a file engine (psync, libaio, io_uring)",
			        j->engine->name);
		ret = target_fs_free(&j->o, &j->o.size, e);
		if (ret)
			return ret;
		/* up to a whole block: the last write finds the filesystem full */
		if (j->o.bs && j->o.size % j->o.bs)
			j->o.size += j->o.bs - j->o.size % j->o.bs;
	}
	if (engine_owns_target(j->engine, j->engine_opts))
		return target_open_engine(&j->target, &j->o, job_writes(&j->o), j->engine,
		                          j->engine_opts, e);
	if (j->engine->caps & ENGINE_CAP_MAKES_FILES)
		return target_open_names(&j->target, &j->o, e);
	if ((j->engine->caps & ENGINE_CAP_NEW_FILES) && refuse_existing(j, e))
		return -EEXIST;
	if (!(j->engine->caps & ENGINE_CAP_NO_IO))
		return target_open(&j->target, &j->o, job_writes(&j->o), e);
	j->target.writable = job_writes(&j->o); /* no file: the job's direction, for the engine */
	return 0;
}

int target_prepare_job(const struct llmio_job_opts *opts, struct llmio_error *e)
{
	struct job j;
	int ret = job_open(&j, opts, e);

	job_release(&j);
	return ret;
}

static int job_run(const struct llmio_job_opts *opts, struct llmio_result **out,
                   struct llmio_error *e)
{
	struct snap s0 = {0}, s1 = {0};
	struct llmio_result *r = NULL;
	struct llmio_error inner;
	bool interrupted = false;
	struct timeval tv;
	struct job j;
	int ret;

	*out = NULL;
	llmio_error_init(&inner);
	ret = job_open(&j, opts, e);
	if (ret)
		goto out_release;
	ret = layout(&j, e);
	if (!ret)
		ret = verify_prepare(&j, e);
	if (ret)
		goto out_release;
	if (j.o.invalidate && j.target.nfiles && !engine_owns_target(j.engine, j.engine_opts))
		target_invalidate(&j.target);
	/* fio's fadvise_hint, after the invalidate as in fio's td_io_open_file() */
	if (job_fadvise_advice(&j.o) >= 0 && j.target.nfiles &&
	    !engine_owns_target(j.engine, j.engine_opts))
		target_advise(j.target.fds, j.target.nfiles, job_fadvise_advice(&j.o));

	r = calloc(1, sizeof(*r));
	if (!r) {
		ret = -ENOMEM;
		goto out_release;
	}
	if (j.o.ready)
		j.o.ready(j.o.ready_arg);
	start_delay(&j.o);
	gettimeofday(&tv, NULL);
	r->start_epoch_ms = (uint64_t)tv.tv_sec * 1000 + (uint64_t)tv.tv_usec / 1000;
	sysinfo_host(r);
	j.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); /* -1: the control thread naps */

	ret = start_workers(&j, e);
	if (ret) {
		atomic_store(&j.go, -1);
		for (unsigned i = 0; i < j.nworkers; i++)
			pthread_join(j.workers[i].thread, NULL);
		free(r);
		r = NULL;
		goto out_release;
	}
	supervise(&j, &s0, &s1, &interrupted);
	fill_result(&j, r, &s0, &s1);
	llmio_result_judge(r);
	if (r->wire.known)
		snprintf(r->service_reason, sizeof(r->service_reason),
		         "an object store over the network: no device or page cache of this host "
		         "in the path; its bytes are on the wire (`wire`)");
	else if ((j.engine->caps & ENGINE_CAP_NAMESPACE) && r->service == LLMIO_SERVICE_DEVICE)
		/* the disk's counters do not see passthrough or SPDK commands (not block I/O) */
		snprintf(r->service_reason, sizeof(r->service_reason),
		         "NVMe commands to the device (%s): no page cache in the path; the disk's "
		         "own counters do not count them",
		         j.engine->name);
	notes(&j, r);
	r->interrupted = interrupted;
	/* a failed I/O first: an upload left incomplete (err_at_end) may only follow from one */
	for (int pass = 0; pass < 2 && !ret; pass++) {
		for (unsigned i = 0; i < j.nworkers; i++) {
			if (!j.workers[i].err || j.workers[i].err_at_end != (pass == 1))
				continue;
			ret = j.workers[i].err;
			r->error = ret;
			if (ret == -EINVAL)
				ret = -EIO; /* an I/O refused at run time is not a usage error */
			snprintf(r->error_msg, sizeof(r->error_msg), "%s", j.workers[i].errmsg);
			llmio_err(e, ret, "%s", j.workers[i].errmsg);
			break;
		}
	}
	/* fio's do_verify: the blocks written, read back and checked after the measured run */
	if (!ret && !interrupted && (ret = verify_pass(&j, e))) {
		r->error = ret;
		snprintf(r->error_msg, sizeof(r->error_msg), "%s", llmio_err_msg(e));
	}
	*out = r;
out_release:
	/* fio's unlink, after the job (its verify pass too): only the files this job created */
	if (j.o.unlink && target_unlink_created(&j.target, &inner) && !ret) {
		ret = -EIO;
		llmio_err(e, ret, "%s", llmio_err_msg(&inner));
		if (r) {
			r->error = ret;
			snprintf(r->error_msg, sizeof(r->error_msg), "%s", llmio_err_msg(e));
		}
	}
	job_release(&j);
	return ret;
}

int llmio_job_run(const struct llmio_job_opts *opts, struct llmio_result **out,
                  struct llmio_error *e)
{
	struct llmio_error inner;
	int ret;

	/* an allocation deep down may fail without a word: say so rather than print nothing */
	llmio_error_init(&inner);
	ret = job_run(opts, out, &inner);
	if (ret == -ENOMEM && !inner.msg[0])
		llmio_err(&inner, ret, "out of memory");
	if (ret && e) {
		*e = inner;
		e->code = ret;
	}
	return ret;
}

void llmio_result_destroy(struct llmio_result *r)
{
	for (uint32_t i = 0; r && r->threads && i < r->nthreads; i++)
		free(r->threads[i].log);
	if (r) {
		free(r->threads);
		free(r->thread_wire);
		free(r->ss.iops);
		free(r->ss.bw);
	}
	free(r);
}

size_t llmio_result_size(void)
{
	return sizeof(struct llmio_result);
}
