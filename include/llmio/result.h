/* SPDX-License-Identifier: MIT */
/*
 * Results of one job: per-op counters and latency histograms, CPU cost including the kernel
 * threads that work for the process, what reached the block device, and the facts of the host
 * and target.  Every metric is defined in docs/metrics.md.
 */
#ifndef LLMIO_RESULT_H
#define LLMIO_RESULT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "llmio/common.h"
#include "llmio/hist.h"
#include "llmio/job.h"

#ifdef __cplusplus
extern "C" {
#endif

struct llmio_op_result {
	uint64_t ios;   /* completed I/Os in the measured window */
	uint64_t bytes; /* bytes transferred (short transfers count what moved) */
	double iops;
	double bw_bytes;        /* bytes per second */
	struct llmio_hist clat; /* completion latency, ns: submitted -> completion seen */
	struct llmio_hist slat; /* submission latency, ns: queued -> submit call returned */
	struct llmio_hist lat;  /* total latency, ns: queued -> completion seen */
};

struct llmio_cpu_result {
	double usr_s;         /* user seconds of every task of the process (threads + io workers) */
	double sys_s;         /* system seconds of the same */
	double proc_s;        /* usr_s + sys_s */
	double system_busy_s; /* busy time of all CPUs from /proc/stat (non-idle, non-iowait) */
	double cores_busy;    /* proc_s / wall */
	double system_cores_busy; /* system_busy_s / wall */
	uint64_t ctx_voluntary;
	uint64_t ctx_involuntary;
	unsigned online_cpus;
};

struct llmio_device_result {
	bool known;    /* false on tmpfs, overlay and other device-less filesystems */
	char name[64]; /* "vda", "nvme0n1p1" */
	char model[128];
	char scheduler[32];
	bool rotational;
	uint32_t logical_block_size;
	bool io_poll;        /* the queue has poll queues (queue/io_poll) */
	char fstype[32];     /* filesystem of the target ("ext4", "tmpfs", "" for raw) */
	uint64_t read_bytes; /* sectors read x 512 during the measured window */
	uint64_t write_bytes;
	uint64_t read_ios;
	uint64_t write_ios;
	/*
	 * The device's interrupts during the measured window (whole device, as the counters
	 * above) and the CPUs that took at least 5 % of them ("1", "0-1"); 0 and "" when they
	 * cannot be seen (no MSI interrupts in sysfs, or none happened).
	 */
	uint64_t irqs;
	char irq_cpus[64];
};

/*
 * Who served a result's bytes (docs/metrics.md, "Page cache or device"): the block device,
 * the page cache (memory), a mix of both, or unknown (nothing to tell them apart by).
 */
enum llmio_service {
	LLMIO_SERVICE_UNKNOWN = 0,
	LLMIO_SERVICE_DEVICE,
	LLMIO_SERVICE_PAGE_CACHE,
	LLMIO_SERVICE_MIXED,
};

/*
 * This process's own storage bytes in the measured window, from /proc/self/io (all threads of
 * the process, io_uring io-wq and SQPOLL threads included): the witness the disk's counters
 * (which count every program's I/O) are checked against.  read_bytes counts reads the
 * process made the block layer do; write_bytes counts bytes it dirtied or wrote directly
 * (charged when a page is dirtied, so a buffered write counts before it reaches the device).
 */
struct llmio_process_io {
	bool known; /* false where the kernel has no per-task I/O accounting */
	uint64_t read_bytes;
	uint64_t write_bytes;
};

/* What a verdict is decided from; every field is in a result and in its JSON record. */
struct llmio_service_facts {
	bool direct;         /* O_DIRECT in effect */
	uint64_t read_bytes; /* requested (moved) by the job */
	uint64_t write_bytes;
	uint64_t fsyncs;    /* fsync calls in the window (fsync=N, end_fsync) */
	const char *fstype; /* "ext4", "tmpfs", "" for a raw device or unknown; NULL = "" */
	struct llmio_process_io witness;
	bool device_known; /* the disk's counters were read */
	uint64_t device_read_bytes;
	uint64_t device_write_bytes;
};

/* Statistics of one-second samples of a rate (IOPS, bytes per second). */
struct llmio_sample_stats {
	uint64_t samples;
	double min, max, mean, stddev;
};

/*
 * One interval of one thread's log (write_bw_log, write_lat_log, write_iops_log;
 * log_avg_msec): what completed in it, per direction ([0] reads, [1] writes).  t_ms: the end of
 * the interval in ms since the measured window started; the last one ends with the thread.
 */
struct llmio_log_sample {
	uint64_t t_ms;
	uint64_t ios[2];
	uint64_t bytes[2];
	uint64_t slat_ns[2], clat_ns[2], lat_ns[2]; /* sums over the interval's I/Os */
};

/* One thread of a job: fio's clone (numjobs without group_reporting). */
struct llmio_thread_result {
	struct llmio_op_result read, write; /* iops and bw_bytes over this thread's runtime_s */
	double runtime_s;                   /* the measured window until this thread ended */
	uint64_t fsyncs;
	struct llmio_log_sample *log; /* a log's intervals, oldest first; NULL without a log */
	size_t nlog;
	bool log_truncated; /* the thread ran longer than its log's buffer: the end is missing */
};

/* The most options an engine has (the registry checks each engine's table against it). */
#define LLMIO_ENGINE_OPTS_MAX 32

/* The bytes of an engine's string options together (llmio_result.engine_text). */
#define LLMIO_ENGINE_TEXT_MAX 1024

/* One engine option's value as a job ran it (llmio_result.engine_options). */
struct llmio_engine_optval {
	char name[32];
	/* an enum's value by name, or "" for a number; a string's first 63 bytes (its whole
	 * text is in llmio_result.engine_text) */
	char choice[64];
	/* the number (bools 0/1, times in ms), or the enum's index; a string's offset in
	 * llmio_result.engine_text */
	int value;
};

/*
 * A result owns everything in it: it holds no pointer into the caller's memory, so it stays
 * valid after the options, file list and strings it was run with are freed.  opts holds the
 * options as run, with defaults resolved; its pointer members (stop, progress, progress_arg,
 * files, io_source) are NULL in a result, nfiles_list keeps the number of files.
 *
 * Versions: the library allocates results, and members are only ever added at the end, so a
 * program built against an older llmio works with a newer one.  A program that reads a member
 * added later checks that the library it runs with has it:
 *     offsetof(struct llmio_result, member) + sizeof(r->member) <= llmio_result_size()
 */
struct llmio_result {
	struct llmio_job_opts opts; /* as run, with defaults resolved; pointers NULL (above) */
	double runtime_s;           /* measured wall time */
	bool interrupted;           /* stopped early by a signal or opts->stop */
	int error;                  /* 0, or the -errno of an I/O error that stopped the run */
	char error_msg[512];
	bool direct_in_effect; /* O_DIRECT on the open files, or NVMe commands (uring_cmd, spdk) */
	uint64_t target_bytes; /* size of the target actually used */
	char engine_notes[1024]; /* what the engine really did ("fixedbufs on, sqpoll off ...") */
	uint32_t iodepth_effective; /* 1 for synchronous engines whatever iodepth asked */
	struct llmio_op_result read, write;
	uint64_t fsyncs;            /* fsync/msync calls made (fsync=N, end_fsync) */
	struct llmio_hist sync_lat; /* their latency, ns */
	struct llmio_cpu_result cpu;
	double gb_per_s_per_core; /* (read+write bytes / 1e9 / runtime) / cpu.cores_busy */
	struct llmio_device_result device;
	char hostname[256];
	char kernel[128];
	char cpu_model[128];
	uint64_t start_epoch_ms;
	/* Added later: members only ever grow at the end. */
	struct llmio_process_io process_io; /* this process's bytes, same window as device */
	enum llmio_service service;         /* llmio_service_classify() of this result */
	char service_reason[192];           /* "device read 0.5% of 38.0 GB requested" */
	bool shared_disk;                   /* the disk did much more I/O than this process */
	bool busy_system;                   /* other work used the CPUs beyond this job */
	char shared_disk_warning[384];      /* the two numbers, "" when !shared_disk */
	char busy_system_warning[256];      /* the numbers, "" when !busy_system */
	/*
	 * One-second samples of the measured window, all threads together (fio's iops_* and
	 * bw_*; docs/fio.md): [0] reads, [1] writes.  A run shorter than a second has none.
	 */
	struct llmio_sample_stats iops_samples[2];
	struct llmio_sample_stats bw_samples[2]; /* bytes per second */
	/* softirq time of all CPUs in the window (/proc/stat; system-wide, network receive
	 * among it, not this process's alone) */
	double softirq_system_s;
	/* an engine whose bytes go over a network (s3): what it counted, not device bytes */
	struct llmio_wire {
		bool known;
		uint64_t rx_bytes, tx_bytes; /* on the wire, HTTP headers included (curl) */
		uint64_t requests;
		uint64_t retries; /* sent again after 503 SlowDown / 500 */
		double hash_s;    /* client CPU hashing payloads (SHA-256, MD5), measured apart */
		double copy_s; /* client CPU copying payloads, measured apart (0: not separable) */
		/* a separate client process's CPU (s3-agent, the off-host client stand-in); not
		 * part of cpu.proc_s */
		double agent_s;
	} wire;
	/*
	 * Each thread (numjobs) on its own, fio's clones: nthreads entries owned by the result
	 * (llmio_result_destroy frees them).  NULL in a result not made by llmio_job_run().
	 */
	uint32_t nthreads;
	struct llmio_thread_result *threads;
	/* each thread's own wire figures (nthreads entries beside threads; wire is their sum), or
	 * NULL when the engine counted none */
	struct llmio_wire *thread_wire;
	/*
	 * Every option of the engine as the job ran it, defaults included, in the engine's table
	 * order (the record's "engine_options"): parsed once, when the job was set up, from
	 * opts.engine_opts.  engine_options_known is false in a result not made by
	 * llmio_job_run() (its record then has no "engine_options").
	 */
	bool engine_options_known;
	uint32_t nengine_options;
	struct llmio_engine_optval engine_options[LLMIO_ENGINE_OPTS_MAX];
	/*
	 * fio's steadystate (opts.ss_dur_ns; docs/fio.md): on when the job had one.  The window's
	 * one-second samples, IOPS and bandwidth (bytes/s), oldest first: dur entries, zero past
	 * the n taken, owned by the result (llmio_result_destroy frees them); the last criterion
	 * computed (a percentage of the mean with LLMIO_SS_PCT), the window's largest deviation
	 * from its mean or its least-squares slope (whichever ss_state judges; the other 0).
	 */
	struct llmio_steadystate {
		bool on, attained;
		uint32_t dur, n;
		double criterion, max_deviation, slope;
		uint64_t *iops, *bw;
	} ss;
	/*
	 * fio's trim direction: a job of rw=trim or randtrim has its I/Os here, none in write
	 * (each of its threads[] has them in write, opts.rw saying they are trims).
	 */
	struct llmio_op_result trim;
	/* fio's latency_depth (opts.latency_target_ns): the depth the search ended at, the
	 * deepest of the job's threads; 0 without a target */
	uint32_t latency_depth;
	/*
	 * The engine's string options (exec's program and arguments) in full: bit i set says
	 * engine_options[i] is one, its text the NUL-terminated one at engine_text +
	 * engine_options[i].value.
	 */
	uint32_t engine_option_strings;
	char engine_text[LLMIO_ENGINE_TEXT_MAX];
};

/**
 * Classify who served the bytes of a job (docs/metrics.md, "Page cache or device"): tmpfs and
 * ramfs are memory (even under O_DIRECT); otherwise O_DIRECT is the device; buffered reads are
 * judged by this process's read bytes (the witness; the disk's counters when there is none) over
 * the bytes requested:
 * >= 90 % device, < 50 % page cache, between mixed; buffered writes reach the device within
 * the window only with an fsync in it or when the disk wrote >= 90 % of them.  A short reason
 * naming the numbers goes to reason (may be NULL).  Thread-safe, no allocation.
 * \return the verdict.
 */
LLMIO_API enum llmio_service llmio_service_classify(const struct llmio_service_facts *f,
                                                    char *reason, size_t len);

/** "device", "page-cache", "mixed" or "unknown". */
LLMIO_API const char *llmio_service_name(enum llmio_service s);

/** The facts of a finished result, for llmio_service_classify(). */
LLMIO_API void llmio_result_service_facts(const struct llmio_result *r,
                                          struct llmio_service_facts *f);

/**
 * Set r->service, r->service_reason and the shared-disk and busy-system flags with their
 * warnings from the rest of r (docs/metrics.md gives the margins).  llmio_job_run() does this;
 * call it again after changing a result's counters.
 */
LLMIO_API void llmio_result_judge(struct llmio_result *r);

/** Free a result from llmio_job_run(). NULL is fine. */
LLMIO_API void llmio_result_destroy(struct llmio_result *r);

/**
 * sizeof(struct llmio_result) in the library the program runs with: how many of the members
 * (which only grow at the end) its results have.  Thread-safe.
 */
LLMIO_API size_t llmio_result_size(void);

/**
 * Write results as one JSON document in fio's layout (see docs/output.md): "jobs" with
 * "read"/"write" objects holding io_bytes, bw_bytes, iops, clat_ns/slat_ns/lat_ns with
 * "percentile" keys like "99.000000", plus llmio's additions.  n may be 0.
 * \return 0 or -errno from the stream.
 */
LLMIO_API int llmio_results_write_json(FILE *f, struct llmio_result *const *r, size_t n);

/** CSV: a header line and one line per result. \return 0 or -errno. */
LLMIO_API int llmio_results_write_csv(FILE *f, struct llmio_result *const *r, size_t n);

/** Percentiles reported everywhere, in order. */
#define LLMIO_NPCT 7
LLMIO_API extern const double llmio_percentiles[LLMIO_NPCT];

#ifdef __cplusplus
}
#endif
#endif
