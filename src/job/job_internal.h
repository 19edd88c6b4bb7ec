/* SPDX-License-Identifier: MIT */
/* Shared state of one running job: the control thread (job.c) and its workers (worker.c). */
#ifndef LLMIO_JOB_INTERNAL_H
#define LLMIO_JOB_INTERNAL_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "job/cmdprio.h"
#include "job/options.h"
#include "job/cpu.h"
#include "base/rand.h"
#include "job/target.h"
#include "job/iolog.h"
#include "job/lat_target.h"
#include "engine/engine.h"
#include "llmio/job.h"
#include "llmio/result.h"

struct job;

struct worker {
	pthread_t thread;
	unsigned idx;
	struct job *job;
	struct engine_ctx ctx;
	struct io_req *ios;
	struct io_req **free_ios;
	/* a free slot whose I/O was prepared (its block drawn, its source entry taken) when the
	 * engine answered ENGINE_Q_BUSY: queued first next time, so no block is skipped */
	struct io_req *held;
	struct io_req **evs;
	struct io_req **batch; /* queued since the last commit */
	void **bufs;
	void **buf_mem; /* what to free for each host buffer (bufs may point into it) */
	int *fds;       /* this thread's own descriptors of the job's files, or NULL: shared */
	unsigned depth;
	struct rng rng;
	uint64_t region_first, region_blocks; /* sequential: this thread's slice of blocks */
	uint64_t seq_next;                    /* next block within the slice */
	uint64_t zone_first, zone_done; /* zonemode=strided: the zone's first block, blocks moved */
	struct randmap map;             /* fio's random map (job.use_map): slots from map_first */
	uint64_t map_first;
	bool *dirty; /* per file: written since the last fsync */

	/* measured window */
	struct llmio_op_result st[2]; /* [ENGINE_OP_READ], [ENGINE_OP_WRITE] */
	uint64_t fsyncs;
	uint64_t writes; /* writes issued, for stamping their data unique */
	struct llmio_hist sync_lat;
	uint64_t t_end;        /* when this worker stopped counting */
	struct iolog *log;     /* fio's averaged log (job/iolog.h), or NULL; owned by the job */
	struct job_flow *flow; /* fio's flow (job/flow.h) while the thread runs, or NULL */
	uint64_t flow_count;   /* this thread's I/Os counted in it */
	/* fio's priorities: the thread's (prioclass, prio) and cmdprio's, and cmdprio's draw */
	uint16_t ioprio, cmdprio;
	struct rng prio_rng;
	struct rng dedupe_rng;             /* dedupe_percentage's draws (worker.c, dedupe_fill) */
	uint64_t dedupe_unique, dedupe_ws; /* unique writes so far; the working set's writes */
	unsigned epoch_seen;
	/* fio's latency_target (job/lat_target.h): lt_cap is the depth fill_queue may reach
	 * (w->depth without a target; 0 once the search has ended the thread) */
	bool lt_on;
	unsigned lt_cap;
	uint64_t lt_ios; /* I/Os completed, the search's count */
	struct lat_target lt;
	/* io_source: an I/O it gave that is not issued yet (its time has not come) */
	struct llmio_io pending;
	bool has_pending;
	bool src_done;   /* the source has no more I/O for this thread */
	bool sync_asked; /* the source asked for an fsync of pending.file (LLMIO_IO_SYNC) */

	/* read by the control thread for the progress line and the one-second samples, per
	 * direction (0 read, 1 write); written relaxed, no lock */
	_Atomic uint64_t live_ios[2], live_bytes[2];
	atomic_int state; /* 0 starting, 1 ready, 2 failed, 3 finished */
	/* set by the worker, polled by the control thread while the worker runs */
	atomic_int err;
	char errmsg[512]; /* read only once the worker has failed or finished (state) or joined */
	bool err_at_end;  /* err is the engine's finish(): reported when no thread's I/O failed */
};

struct job {
	struct llmio_job_opts o;
	const struct engine_ops *engine;
	void *engine_opts;
	struct target target;
	uint64_t total_blocks;
	uint64_t *file_first_block; /* prefix sums, nfiles + 1 entries */
	uint64_t zipf_mult;         /* bijection scattering zipf ranks over blocks */
	/* fio's bssplit with more than one size: each I/O draws its size (o.bs is the smallest) */
	struct job_bssplit bss;
	/* fio's random map (norandommap=0) for uniform random offsets of one size; with
	 * map_sliced (verify of random writes by several threads) each thread maps its slice */
	bool use_map, map_sliced;
	struct job_zones zones; /* fio's zoned / zoned_abs distribution (zones.n 0: none) */
	bool bss_on;
	struct cmdprio_table *cmdprio_bss; /* fio's cmdprio_bssplit (job/cmdprio.h), or NULL */
	uint8_t pattern[64]; /* buffer_pattern's bytes (pattern_len of them), or none */
	size_t pattern_len;
	uint8_t vpattern[64]; /* verify_pattern's bytes (vpattern_len of them), or none */
	size_t vpattern_len;
	uint64_t align_blocks; /* fio's blockalign in blocks (o.blockalign / o.bs), or 0 */
	int64_t skip_blocks;   /* fio's rw=TYPE:N in blocks (o.rw_skip / o.bs) */
	uint64_t io_max;       /* the largest I/O: o.bs, or bssplit's largest size (buffers) */
	/*
	 * fio's rw=trim / randtrim: the job runs as rw=write / randwrite, whose I/Os the engine
	 * makes trims (engine_setup.trims); the result says trim again (fill_result).
	 */
	bool trims;
	/* fio's zonemode=strided in blocks: zonerange, zonesize, zonerange + zoneskip (0: off) */
	uint64_t zone_range, zone_size, zone_step;
	struct zipf zipf;
	unsigned nworkers;
	struct worker *workers;
	struct iolog *logs; /* one per worker when a log is asked (iolog_wanted), else NULL */
	unsigned nlogs;
	cpu_set_t cpus; /* cpus_allowed, parsed; empty = no pinning */
	int wake_fd;    /* eventfd a worker writes when it ends, waking the control thread */
	bool cpus_split;
	struct cpu_mempolicy mpol; /* numa_mem_policy, parsed; mode MPOL_DEFAULT: none */

	atomic_int go;      /* 1: start issuing; -1: abort */
	atomic_int stop;    /* 1: stop now */
	atomic_uint epoch;  /* bumped when measuring starts (after ramp) */
	uint64_t t_measure; /* start of the measured window, ns */
	/* one-second samples (control thread only): the last sample's time and counts, and
	 * running sums per direction of IOPS [d][0] and bandwidth [d][1] (Welford) */
	uint64_t samp_t, samp_ios[2], samp_bytes[2];
	uint8_t *verify_written; /* verify: a bit per block written (job/verify.c), or NULL */
	uint8_t *verify_ref;     /* verify=meta: verify_pattern's block (bs bytes), or NULL */
	struct {
		uint64_t n;
		double mean, m2, min, max;
	} samp[2][2];
	/* fio's steadystate (job/ss.c), checked with the one-second samples */
	struct job_ss {
		uint64_t *iops, *bw; /* dur entries, a ring: the oldest at head once n == dur */
		unsigned dur, n, head;
		bool attained;
		double criterion, deviation, slope;
		uint64_t t, ios, bytes; /* the previous check */
	} ss;
};

/* job/ss.c: fio's steadystate of o (ss_dur_ns), the window allocated; 0 or -ENOMEM. */
int job_ss_init(struct job *j, struct llmio_error *e);
/* A one-second check at now with the job's I/Os and bytes so far; attained: j->stop set. */
void job_ss_check(struct job *j, uint64_t now, uint64_t ios, uint64_t bytes);
/* The outcome into r->ss (the window moves to the result). */
void job_ss_result(struct job *j, struct llmio_result *r);
void job_ss_release(struct job *j);

void *worker_main(void *arg);

#endif
