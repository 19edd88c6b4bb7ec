/* SPDX-License-Identifier: MIT */
/*
 * Jobs: one homogeneous I/O stream (engine, target, pattern, block size, queue depth, threads)
 * run for an amount of I/O or a time, measured into a struct llmio_result.
 *
 * Option names are fio's wherever fio has one (rw, bs, iodepth, numjobs, size, io_size,
 * runtime, ramp_time, direct, ...), so that the CLI flags, job files and fio job files read
 * alike.  Options can be set field by field or by name with llmio_job_opts_set().
 */
#ifndef LLMIO_JOB_H
#define LLMIO_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "llmio/common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define LLMIO_PATH_MAX 4096

enum llmio_rw {
	LLMIO_RW_READ,      /* sequential read */
	LLMIO_RW_WRITE,     /* sequential write */
	LLMIO_RW_RANDREAD,  /* uniform or zipf random read */
	LLMIO_RW_RANDWRITE, /* random write */
	LLMIO_RW_RANDRW,    /* random mix, rwmixread percent reads */
	LLMIO_RW_RW,        /* sequential mix (fio's rw=rw, readwrite), rwmixread percent reads */
	LLMIO_RW_TRIM,      /* sequential trim (fio's rw=trim; ioengine=falloc: punch holes) */
	LLMIO_RW_RANDTRIM,  /* random trim */
};

enum llmio_fallocate {
	LLMIO_FALLOC_NATIVE,   /* fio's default: reserve the blocks (llmio writes them too) */
	LLMIO_FALLOC_NONE,     /* create empty; the job's writes make the file */
	LLMIO_FALLOC_POSIX,    /* posix_fallocate(): as NATIVE here */
	LLMIO_FALLOC_KEEP,     /* fallocate(FALLOC_FL_KEEP_SIZE): blocks reserved, size 0 */
	LLMIO_FALLOC_TRUNCATE, /* ftruncate(): the file's size, no blocks */
	LLMIO_FALLOC_0,        /* fio's 0: NONE */
	LLMIO_FALLOC_1,        /* fio's 1: POSIX */
};

enum llmio_dist {
	LLMIO_DIST_UNIFORM,
	LLMIO_DIST_ZIPF,      /* theta in zipf_theta */
	LLMIO_DIST_ZONED,     /* fio's zoned: the zones in random_zones, sizes in percent */
	LLMIO_DIST_ZONED_ABS, /* fio's zoned_abs: the zones in random_zones, sizes in bytes */
};

struct llmio_job_opts {
	size_t opts_size; /* sizeof(struct llmio_job_opts) as the caller knows it */

	char engine[32]; /* engine name, default "psync" */
	/* "key=value,key=value" for the engine's own options; in a value, a comma is "\," and a
	 * backslash "\\" (exec's arguments=-s Busy%\,Bzy_MHz) */
	char engine_opts[512];

	char filename[LLMIO_PATH_MAX];  /* a file or block device */
	char directory[LLMIO_PATH_MAX]; /* or a directory of nrfiles files */
	uint32_t nrfiles;               /* files in directory (default 1) */

	enum llmio_rw rw;
	uint32_t rwmixread;    /* percent of reads for randrw (default 50) */
	uint64_t bs;           /* block size in bytes (default 4096) */
	uint32_t iodepth;      /* I/Os in flight per thread (default 1) */
	uint32_t numjobs;      /* threads (default 1) */
	uint64_t size;         /* target size in bytes (all files together); 0 = existing size */
	uint64_t io_size;      /* bytes per thread; 0 = size/numjobs, or unlimited with runtime */
	uint64_t runtime_ns;   /* measured time; 0 = until io_size is done */
	uint64_t ramp_time_ns; /* I/O before measurement starts, not counted */
	bool direct;           /* O_DIRECT */
	enum llmio_dist random_distribution;
	double zipf_theta;
	uint64_t randseed;     /* seed of all random choices (default fixed, so runs repeat) */
	bool invalidate;       /* drop the target's page cache before the run (default on) */
	bool noatime;          /* open with O_NOATIME where permitted (default on) */
	uint32_t fsync;        /* fsync after every N writes; 0 = never */
	bool end_fsync;        /* fsync at the end of a write job */
	uint64_t rate;         /* reads' bytes per second per thread (fio's per clone); 0 = none */
	uint64_t thinktime_ns; /* pause after every thinktime_blocks I/Os */
	uint32_t thinktime_blocks;

	bool allow_destructive; /* allow writes to a raw block device */
	bool force;             /* with allow_destructive: even over a filesystem signature */

	/*
	 * Set to non-zero (from a signal handler, another thread) to stop the job early; the
	 * result is then marked interrupted.  May be NULL.  Another thread sets it with an
	 * atomic store, e.g. __atomic_store_n(stop, 1, __ATOMIC_RELAXED); the job reads it so.
	 */
	volatile int *stop;
	/*
	 * Called about once per second from the job's control thread with the live figures;
	 * may be NULL.  Must not block.
	 */
	void (*progress)(void *arg, double elapsed_s, double eta_s, double iops, double bw_bytes);
	void *progress_arg;

	/*
	 * Workload recipes and trace replay (NULL / 0 for plain jobs).  The arrays and the source
	 * are borrowed: they must stay valid until llmio_job_run() returns (a result keeps no
	 * pointer to them, nor to stop or progress_arg).
	 *
	 * files: an explicit list of files with their own sizes, used instead of filename /
	 * directory.  Sizes are exact (not rounded to bs).
	 *
	 * io_source: the job asks it for every I/O instead of generating rw / bs patterns; rw
	 * then only says whether the job reads, writes or both (files are filled with data
	 * before a job that reads), and bs is the largest I/O the source may ask for.
	 */
	const struct llmio_file *files;
	uint32_t nfiles_list;
	const struct llmio_io_source *io_source;

	/*
	 * CPUs the job threads may run on, fio's cpus_allowed list ("1", "0-3,6"); empty = where
	 * the process may run.  Policy "shared" (default): every thread may use every CPU of the
	 * list; "split": thread i runs on the (i mod n)-th CPU of the list alone.
	 */
	char cpus_allowed[256];
	char cpus_allowed_policy[8];

	/*
	 * A job that only reads may lengthen an existing file that is shorter than size (the new
	 * part is written with llmio's data; the file's own bytes and holes stay as they are).
	 * Without it such a job is refused: llmio reads a file it did not create as it is.
	 */
	bool extend;

	/*
	 * fio's options with fio's meaning (docs/fio.md).  name and description label the job in
	 * the output.  time_based: with runtime, run the whole runtime (the library's default, 1);
	 * 0 = fio's default, which `llmio run` gives its command lines and job files: stop once the
	 * job has moved its bytes even if runtime remains.  loops:
	 * move the bytes this many times.  number_ios: at most this many I/Os per thread (0 =
	 * no limit).  filesize: bytes of each file (size = filesize x nrfiles when size is 0).
	 * rate_iops: I/Os per second per thread (0 = no limit; converted to rate).  randrepeat 0:
	 * a new seed every run.  norandommap 0 (the default, as fio's): a random
	 * job's threads each move over every block once per pass (fio's random map), where one
	 * block size and uniform offsets allow it; 1: offsets drawn independently.
	 * group_reporting, stonewall, new_group: how a job file's jobs are reported and grouped.
	 * percentile_list: latency percentiles of the JSON ("" = fio's default list).  verify:
	 * below.
	 */
	char name[64];
	char description[256];
	bool time_based;
	uint32_t loops;
	uint64_t number_ios;
	uint64_t filesize;
	uint64_t rate_iops;
	bool randrepeat;
	bool norandommap;
	bool group_reporting;
	bool stonewall;
	bool new_group;
	char percentile_list[256];
	/*
	 * verify: 0, or 1 crc32c, 2 md5, 3 sha256, 4 crc64, 5 meta (fio's verify=): every written
	 * block carries a header and that checksum (meta: the header alone), checked when read;
	 * do_verify (default 1): a write job reads back and checks every block it wrote when it
	 * ends.
	 */
	uint32_t verify;
	bool do_verify;
	/*
	 * fio's logs (docs/fio.md): a non-empty name logs the measured window of every thread N
	 * into NAME_bw.N.log, NAME_iops.N.log and NAME_{slat,clat,lat}.N.log in the current
	 * directory.  log_avg_msec 0 (the default, as fio's): one line per I/O, written by the
	 * job itself (files created before the run, written out between I/Os when a thread's
	 * buffer of 2^18 I/Os is full, and at its end).  log_avg_msec N: one entry per N ms (I/Os,
	 * bytes and latency sums per direction) in the result's threads[].log, from which the
	 * report layer writes the files.  log_offset (below): the offset column.
	 */
	char write_bw_log[128];
	char write_lat_log[128];
	char write_iops_log[128];
	uint32_t log_avg_msec;

	/*
	 * How often progress is called: 0 = about once a second.  A sweep's steady-state test
	 * samples at 250 ms (docs/sweeps.md); the control thread wakes on time for it.
	 */
	uint64_t progress_interval_ns;

	/* fio's log_offset: the logs carry each I/O's offset (0 in averaged lines) */
	bool log_offset;
	/*
	 * Called while the job lays out its files (creates them and writes the data a read will
	 * find), from the thread that called llmio_job_run(), after every MiB written and once
	 * at the start of each file: done bytes of total (the job's files together; files found
	 * complete count as done at once; total 0 when not known).  May be NULL; must not block.
	 */
	void (*prepare_progress)(void *arg, uint64_t done, uint64_t total);
	void *prepare_arg;

	/*
	 * fio's fadvise_hint: the access pattern posix_fadvise() tells the kernel for each file
	 * and device of the target when it is opened, which sets its readahead.  LLMIO_FADV_TYPE
	 * (the default, as fio's 1): POSIX_FADV_RANDOM for a random rw, POSIX_FADV_SEQUENTIAL
	 * for a sequential one (a job with an io_source gives no advice: its pattern is the
	 * source's); NONE (fio's 0): no advice; RANDOM, SEQUENTIAL, NORMAL: that advice.
	 */
	enum llmio_fadvise {
		LLMIO_FADV_NONE,
		LLMIO_FADV_TYPE,
		LLMIO_FADV_RANDOM,
		LLMIO_FADV_SEQUENTIAL,
		LLMIO_FADV_NORMAL,
	} fadvise_hint;
	/*
	 * fio's filename_format ($jobname, $jobnum, $filenum): how `llmio run` names a job's files
	 * when no filename is given (docs/fio.md, "Files"); it names them before the job runs, and
	 * llmio_job_run() refuses a job that still has one (a recipe or a sweep names its own).
	 */
	char filename_format[256];
	/*
	 * fio's --readonly, a safety net: the job is refused when it would write anything, its
	 * I/Os (rw with writes, a verify of writes) or the layout of its files (a file to create,
	 * extend or fill); a read of files that are there as they are runs as usual.
	 */
	bool readonly;
	/*
	 * fio's bssplit: weighted block sizes, "SIZE/PERCENT:..." (a list per direction,
	 * "READS,WRITES"); each I/O draws its size.  bs is then the smallest size: the grain
	 * that files, offsets and io_size are counted in ("" = every I/O is bs).
	 */
	char bssplit[512];
	/*
	 * fio's disable_lat, disable_clat, disable_slat (gtod_reduce=1 sets them and disable_bw):
	 * the result reports no total, completion or submission latency (empty histograms, as
	 * fio's N 0).  I/Os, bytes, IOPS, bandwidth and their per-second samples stay, as in fio
	 * 3.33's JSON, which keeps the samples under disable_bw_measurement too.
	 */
	bool disable_lat, disable_clat, disable_slat, disable_bw;
	/*
	 * fio's unlink: after the job, remove the files it created (llmio never removes a file
	 * that was there before it, which fio's unlink would).
	 */
	bool unlink;
	/*
	 * fio's file_service_type ("" = not given): how a job's I/O moves over its files.  llmio
	 * has one way per rw: a sequential thread walks its files one after another (fio's
	 * sequential), a random one draws each offset over all of them (fio's random, and its
	 * roundrobin, for files of one size); a job of several files that asks for another is
	 * refused.
	 */
	char file_service_type[32];
	/*
	 * fio's rw=TYPE:N offset modifier of a sequential rw (read, write, rw): each I/O after the
	 * first starts rw_skip bytes after where the last ended (a hole), or before when negative
	 * (rw=read:-8k reads backwards); past an end of the thread's slice it wraps as fio's does
	 * at the file's ends.  A multiple of bs; 0 = none.
	 */
	int64_t rw_skip;
	/*
	 * fio's blockalign: random offsets are multiples of it (0 = of bs, or of bssplit's
	 * smallest size of the direction); a multiple of bs.
	 */
	uint64_t blockalign;
	/*
	 * fio's bsrange ("MIN-MAX", or "MIN-MAX,MIN-MAX" for reads, writes): each I/O's size drawn
	 * as fio draws it, a multiple of MIN up to MAX, evenly; bs is then the smallest MIN
	 * ("" = every I/O is bs).
	 */
	char bsrange[64];
	/*
	 * fio's random_distribution=zoned:LIST or zoned_abs:LIST, the LIST ("50/5:30/15:20/": a
	 * share of the I/Os / the part of the target they go to, in percent, or in bytes for
	 * zoned_abs), zones one after another from the target's start.
	 */
	char random_zones[256];
	/*
	 * fio's run control of a job file (docs/fio.md, "Job files"): wait_for, the name of an
	 * earlier job this one starts after; exitall: when a job ends, the others of its group
	 * (exit_what 0), those running (1, fio's stonewall) or all, those not yet started
	 * too (2), are stopped.
	 */
	char wait_for[64];
	bool exitall;
	uint8_t exit_what;
	/*
	 * fio's numbering of a job file's logs (docs/fio.md, "Logs"): the log of thread N of this
	 * job is numbered log_index + N + 1, as fio numbers threads across the file (the job runner
	 * sets it; 0 for a job of its own).
	 */
	uint32_t log_index;
	/*
	 * fio's flow control (docs/fio.md): flow, a weight (0 = none); the threads of the jobs of
	 * one flow_id keep their I/O counts in the ratio of their weights: a thread ahead of its
	 * share lets its I/Os in flight complete and waits flow_sleep_ns (0: a short pause) before
	 * it looks again.
	 */
	uint32_t flow;
	uint32_t flow_id;
	uint64_t flow_sleep_ns;
	/*
	 * Called once the job's files are laid out, just before its threads start, from the thread
	 * that called llmio_job_run(); it may block (a job file's runner holds the jobs of a group
	 * there until all are laid out, as fio starts its jobs together).  May be NULL.
	 */
	void (*ready)(void *arg);
	void *ready_arg;
	/*
	 * fio's I/O priorities (docs/fio.md): prioclass (1 realtime, 2 best effort, 3 idle; 0 =
	 * none) and prio (0-7) of each job thread (ioprio_set(2), set when either is given);
	 * cmdprio_percentage: that share of the I/Os carries cmdprio_class and cmdprio instead
	 * (libaio's aio_reqprio, io_uring's sqe ioprio); log_prio: the logs' priority column holds
	 * each I/O's priority value (else 1 for a realtime I/O, 0 for another, as fio's).
	 */
	uint8_t prio, prioclass;
	uint8_t cmdprio_percentage, cmdprio_class, cmdprio;
	bool log_prio;
	/*
	 * fio's steadystate (docs/fio.md): with ss_dur_ns of a second or more, the job's IOPS or
	 * bandwidth (bytes/s) of each second after ss_ramp_ns + 1 s, over a window of ss_dur_ns,
	 * ends the job once its criterion is below ss_limit: ss_state LLMIO_SS_IOPS (else
	 * bandwidth), LLMIO_SS_SLOPE (the least-squares slope; else the largest deviation from
	 * the mean), LLMIO_SS_PCT (ss_limit is a percentage of the mean).
	 */
	uint8_t ss_state;
	double ss_limit;
	uint64_t ss_dur_ns, ss_ramp_ns;
	/*
	 * fio's fallocate (enum llmio_fallocate): how a file a write-only job creates is laid out
	 * before the job.  NATIVE and POSIX (fio's default and its 1): reserved and written, as
	 * llmio lays out every file; NONE (and 0): created empty, the job's writes make it;
	 * KEEP: created empty with its blocks reserved (FALLOC_FL_KEEP_SIZE); TRUNCATE: created
	 * at its size as a hole (ftruncate).  A read's files are always written in full, as fio's.
	 */
	uint8_t fallocate;
	/*
	 * fio's openfiles: at most this many files open at once per thread (0: all of them).
	 * llmio keeps a job's files open for the whole run, so a job of more files than this is
	 * refused, unless the job holds none open (filecreate, whose I/Os open and close them).
	 */
	uint32_t openfiles;
	/*
	 * fio's zonemode=strided (docs/fio.md): a sequential thread moves zonesize bytes inside a
	 * zone of zonerange bytes (from the zone's start again when it reaches the zone's end),
	 * then on to the next zone, zonerange + zoneskip further (to the start past the end).
	 * zonemode: an enum llmio_zonemode (zbd is refused: zoned block devices are not done).
	 */
	uint8_t zonemode, zone_pad_[7]; /* zone_pad_: zero, so later members stay 8-aligned */
	uint64_t zonerange, zonesize, zoneskip;
	/*
	 * fio's latency_target (docs/fio.md): with latency_target_ns, each thread searches the
	 * highest depth up to iodepth whose I/Os, over windows of latency_window_ns, meet the
	 * target for latency_percentile % of them; without latency_run it ends once
	 * found.
	 */
	uint64_t latency_target_ns, latency_window_ns;
	double latency_percentile;
	bool latency_run;
	uint8_t latency_pad_[7]; /* keeps reserved_ 8-byte aligned; zero */
	/*
	 * fio's dedupe (docs/fio.md): dedupe_percentage of the writes repeat earlier content
	 * instead of new; dedupe_mode LLMIO_DEDUPE_REPEAT (the last unique write's) or
	 * LLMIO_DEDUPE_WORKING_SET (one of the thread's first dedupe_working_set_percentage % of
	 * size / bs unique writes); dedupe_global: that working set is spread over every thread
	 * of dedupe_threads (log_index numbers them) that has dedupe_global, as fio's.
	 */
	uint8_t dedupe_percentage, dedupe_mode, dedupe_working_set_percentage;
	bool dedupe_global;
	uint32_t dedupe_threads;
	/*
	 * fio's buffer_pattern (docs/fio.md): every write's bytes are this pattern repeated from
	 * the start of the I/O (fio's text: hex 0x..., decimals, quoted strings); "" = llmio's own.
	 */
	char buffer_pattern[64];
	/*
	 * fio's startdelay: the job waits this long once the jobs that start with it are laid
	 * out, then starts (a net engine's sender, after its receiver listens); not measured.
	 */
	uint64_t startdelay_ns;
	/*
	 * fio's cmdprio_bssplit (docs/fio.md), as written: per block size, shares of the I/Os of
	 * that size that carry a priority of their own, cmdprio_class and cmdprio's or one given
	 * per share ("64k/25/1/1:64k/75/3/2,1M/10"; a list per direction); "" = none.
	 */
	char cmdprio_bssplit[256];
	/*
	 * fio's rate and rate_iops per direction (docs/fio.md): rate and rate_iops above are the
	 * reads', these the writes' and trims'; a single value given sets all three, as fio's.
	 */
	uint64_t rate_write, rate_trim;
	uint64_t rate_iops_write, rate_iops_trim;
	/*
	 * fio's verify_pattern and verify_interval (docs/fio.md, verify): a written block is this
	 * pattern repeated from its start ("" = llmio's own data); verify=meta writes fio's header
	 * every verify_interval bytes (0 = bs) and checks the pattern after each.  fill_device:
	 * fio's fill-until-full: a write refused for space (ENOSPC, EDQUOT) ends the job, and
	 * without size the job is sized at the filesystem's free blocks (docs/fio.md).
	 */
	char verify_pattern[64];
	uint32_t verify_interval;
	/*
	 * fio's buffer_compress_percentage and buffer_compress_chunk: in every chunk of a write
	 * (0 = 512 bytes) this percentage is zeros, so the data compresses to about the rest.
	 */
	uint32_t buffer_compress_chunk;
	uint8_t buffer_compress_percentage;
	bool fill_device;
	uint8_t pat_pad_[6]; /* keeps reserved_ 8-byte aligned; zero */
	/*
	 * fio's numa_cpu_nodes (docs/fio.md): the job's threads run on the CPUs of these NUMA
	 * nodes (a list such as "0", "0-1,3" or "all"), in place of cpus_allowed; "" = not set.
	 */
	char numa_cpu_nodes[56];
	/* fio's clat_percentiles=0: no clat_ns percentiles (nor json+ bins); false = fio's 1 */
	bool clat_percentiles_off;
	uint8_t numa_pad_[7]; /* keeps reserved_ 8-byte aligned; zero */
	/*
	 * fio's rate_min (ratemin), bytes per second per thread (fio's, per clone): after 2 s,
	 * each second a direction that moved bytes must have moved this many, or the job fails
	 * (EIO, as fio's); 0 = no minimum.
	 */
	uint64_t rate_min;
	/* fio's numa_mem_policy, MODE[:NODES] (docs/fio.md): each job thread's memory policy */
	char numa_mem_policy[64];
	/*
	 * Room for the options of later releases.  struct llmio_result holds a copy of the job's
	 * options first, so this struct keeps its size: a new member goes just before reserved_
	 * and takes as many of its bytes, and every member of a result stays where a program
	 * compiled against an earlier llmio reads it (docs/library.md, "ABI").  Zero.
	 */
	uint8_t reserved_[920];
};

/** fio's zonemode (struct llmio_job_opts.zonemode). */
enum llmio_zonemode { LLMIO_ZONE_NONE, LLMIO_ZONE_STRIDED, LLMIO_ZONE_ZBD };

/** One file of an explicit file list. */
struct llmio_file {
	const char *path;
	uint64_t size;  /* bytes; 0 = the existing file's size */
	unsigned flags; /* LLMIO_FILE_* */
};
/*
 * The job creates the file empty (replacing an existing one of that name) and writes it from
 * the start, as a program saving a checkpoint does: no preallocation, no fill.
 */
#define LLMIO_FILE_FRESH 1u

/* llmio_job_opts.ss_state: fio's steadystate criterion (its FIO_SS_* values) */
#define LLMIO_SS_IOPS  1u /* IOPS, else bandwidth */
#define LLMIO_SS_SLOPE 4u /* the slope, else the largest deviation from the mean */
#define LLMIO_SS_PCT   8u /* the limit is a percentage of the mean */

/* llmio_job_opts.dedupe_mode: where a duplicate write's content comes from (fio's) */
#define LLMIO_DEDUPE_REPEAT      0u /* the thread's last unique write */
#define LLMIO_DEDUPE_WORKING_SET 1u /* one of its first unique writes, drawn */

/*
 * An io_source's fsync: issued after every earlier I/O of its thread has completed, like a
 * program's fsync after its writes; timed into the job's sync latency; done() gets res 0 or
 * -errno.
 */
#define LLMIO_IO_SYNC 2

/** One I/O asked for by an io_source. */
struct llmio_io {
	uint32_t file; /* index into the job's files */
	uint32_t len;  /* bytes, 1 .. bs */
	uint64_t off;
	int write;      /* 0 read, 1 write, LLMIO_IO_SYNC: fsync file (off and len unused) */
	uint64_t at_ns; /* issue no earlier than this many ns after the measured start; 0 = now */
	uint64_t tag;   /* the source's own, handed back to done() */
};

/**
 * An explicit source of I/Os.  Both callbacks run on the job's worker threads (thread = 0 ..
 * numjobs-1) and must not block; each thread asks for its own stream of I/Os.
 */
struct llmio_io_source {
	/*
	 * Fill *io with thread's next I/O.  \return 1 when *io is filled; 0 when this thread has
	 * no more I/O (it drains and ends; the job ends when all threads have); -EAGAIN when the
	 * next I/O is not ready yet (the thread reaps a completion or naps ~20 us and asks
	 * again); another -errno stops the job with an error.
	 */
	int (*next)(void *arg, unsigned thread, struct llmio_io *io);
	/* Called for every completion with the bytes moved or -errno and the latency; may be NULL.
	 */
	void (*done)(void *arg, unsigned thread, const struct llmio_io *io, int64_t res,
	             uint64_t lat_ns);
	/* Called once when thread has finished, after its end_fsync; may be NULL. */
	void (*end)(void *arg, unsigned thread);
	void *arg;
};

/** Fill opts with the defaults (and opts_size). */
LLMIO_API void llmio_job_opts_init(struct llmio_job_opts *opts);

/**
 * Set one option by its name, as written on a command line or in a job file ("bs", "4k").
 * Boolean options accept 1/0, true/false, yes/no, on/off; an empty value means true.
 * "engine" and "ioengine" are synonyms.  Keys that are options of the chosen engine are NOT
 * handled here: the caller appends them to engine_opts (see llmio_engine_has_option()), with
 * a value's commas and backslashes escaped as engine_opts says.
 * \return 0; -ENOENT for an unknown key; -EINVAL / -ERANGE for a bad value, with a message
 *         naming the key, the value and what is accepted in e.
 */
LLMIO_API int llmio_job_opts_set(struct llmio_job_opts *opts, const char *key, const char *value,
                                 struct llmio_error *e);

/** Description of one job option, for --help, job files and docs. */
struct llmio_option_info {
	const char *name;
	const char *alias; /* other accepted name, or NULL */
	const char *type;  /* "bool", "int", "size", "time", "string", "enum" */
	const char *def;   /* default as text */
	const char *help;
};

/** Number of job options, and option i into *out (\return 0, or -ENOENT past the end). */
LLMIO_API size_t llmio_job_option_count(void);
LLMIO_API int llmio_job_option(size_t i, struct llmio_option_info *out);

/** Name of an rw mode ("randread"). */
LLMIO_API const char *llmio_rw_name(enum llmio_rw rw);

struct llmio_result;

/**
 * Validate opts, prepare the target (create / fill / check), run the job and measure it.
 * On success *out is a result the caller frees with llmio_result_destroy(); an interrupted
 * run is a success with result->interrupted set.
 * \return 0; -EINVAL for options that conflict or are out of range (a usage error);
 *         another -errno for a runtime failure (target, engine, I/O error).  In both cases a
 *         one-line message naming the problem and the fix is stored in e, and when I/O
 *         was measured before a runtime failure *out still holds what was measured.
 */
LLMIO_API int llmio_job_run(const struct llmio_job_opts *opts, struct llmio_result **out,
                            struct llmio_error *e);

/**
 * Whether the filesystem holding directory dir does O_DIRECT (a probe file is created there
 * and removed).  For callers that choose O_DIRECT by default and fall back to the page cache.
 * \return 0 it does; -EINVAL it does not (why says so); another -errno when it cannot tell
 *         (dir missing or not writable), with the reason in why.
 */
LLMIO_API int llmio_direct_probe(const char *dir, char *why, size_t len);

/**
 * The directory where llmio keeps the files it creates under a user's directory `dir`:
 * dir/llmio-work, made by llmio (mkdir, then the marker file .llmio-owned created with O_EXCL)
 * and reused by later runs, so that llmio's file names can never be a user's.  Jobs with
 * --directory and workload recipes put their files there.
 * \return 0 with the path in out; -EEXIST when dir/llmio-work exists but llmio did not make
 *         it (no marker); -ENOENT when dir is missing; another -errno.  e holds one line.
 */
LLMIO_API int llmio_work_dir(const char *dir, char *out, size_t len, struct llmio_error *e);

/**
 * Remove a directory from llmio_work_dir() when nothing but its marker is in it, so that a run
 * refused before it created any file leaves nothing behind.  Anything else is left alone.
 */
LLMIO_API void llmio_work_dir_prune(const char *work);

/**
 * A new scratch directory dir/PREFIX.XXXXXX (mkdtemp: a name no one else has), marked as
 * llmio's like llmio_work_dir(), for data that is removed after the run.
 * \return 0 with the path in out, or -errno with one line in e.
 */
LLMIO_API int llmio_scratch_dir(const char *dir, const char *prefix, char *out, size_t len,
                                struct llmio_error *e);

/**
 * Remove a directory made by llmio_scratch_dir(): its plain files, its marker, itself.  A
 * directory without llmio's marker is left alone (-EPERM).  \return 0 or -errno.
 */
LLMIO_API int llmio_scratch_remove(const char *scratch);

#ifdef __cplusplus
}
#endif
#endif
