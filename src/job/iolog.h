/* SPDX-License-Identifier: MIT */
/*
 * fio's logs (write_bw_log, write_lat_log, write_iops_log), kept per thread without a lock, an
 * allocation or a write per I/O.  Two kinds, as fio has them:
 *
 *  - log_avg_msec=0 (fio's default): one entry per I/O, in fio's per-I/O layout.  Each thread
 *    appends its completions to a buffer allocated before the run (IOLOG_IO_CAP entries, at
 *    most IOLOG_IO_CAP x 40 bytes = 10 MiB per thread, touched only as it fills); a full buffer
 *    is written out to the thread's files by the worker itself between two I/Os, as fio
 *    flushes its logs, and the rest at the end.  Memory is bounded; the logs are not.  The
 *    files are opened before the run starts, so a log that cannot be written fails the job
 *    before any I/O.
 *  - log_avg_msec=N: completions add to the current interval; when a completion falls past
 *    its end, the interval is appended to a buffer sized before the run (runtime /
 *    log_avg_msec, or IOLOG_DEFAULT_CAP intervals without a runtime).  A full buffer drops the
 *    later intervals and says so (log_truncated).  Intervals are aligned on the measured
 *    window's start, so interval k holds exactly the I/Os that completed in [k, k+1) x
 *    log_avg_msec.  The report layer writes them (report/fio_log.h).
 */
#ifndef LLMIO_STATS_IOLOG_H
#define LLMIO_STATS_IOLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "llmio/common.h"
#include "llmio/job.h"
#include "llmio/result.h"

/* intervals kept by a job without a runtime: 4.5 hours at 1 s */
#define IOLOG_DEFAULT_CAP 16384u
/* I/Os a thread keeps before it writes them out (log_avg_msec=0): 10 MiB of entries */
#define IOLOG_IO_CAP (1u << 18)

/* One I/O of a per-I/O log. */
struct iolog_io {
	uint64_t t;          /* completion, ns since the measured window's start */
	uint64_t off;        /* offset in its file */
	uint64_t slat, clat; /* ns; lat = slat + clat */
	uint32_t bs;         /* bytes moved */
	uint16_t op;         /* 0 read, 1 write */
	uint16_t prio;       /* its I/O priority value (ioprio), 0 = none */
};

/* The files of a per-I/O log, in this order (NAME_<kind>.N.log). */
enum iolog_kind { IOLOG_BW, IOLOG_IOPS, IOLOG_SLAT, IOLOG_CLAT, IOLOG_LAT, IOLOG_KINDS };
extern const char *const iolog_kind_name[IOLOG_KINDS];

struct iolog {
	/* averaged (log_avg_msec > 0) */
	struct llmio_log_sample *buf;
	size_t n, cap;
	bool truncated;
	uint64_t t0, step, next; /* ns; next == 0: no completion yet in this window */
	struct llmio_log_sample cur;
	/* per I/O (log_avg_msec = 0): ios != NULL */
	struct iolog_io *ios;
	size_t nio, iocap;
	FILE *f[IOLOG_KINDS];          /* NULL: that log was not asked for */
	const char *name[IOLOG_KINDS]; /* its NAME (the job's options) */
	unsigned idx;                  /* the log's number - 1 (o->log_index + thread) */
	bool slat;              /* the engine submits apart from queueing: slat lines (as fio) */
	bool offset;            /* log_offset: the offset column */
	bool prio;              /* log_prio: the priority column holds the value (else 1 for RT) */
	struct llmio_error err; /* the first failed write; later entries are dropped */
};

/* Does o ask for a log?  Per I/O (log_avg_msec 0)?  The averaged interval in ns. */
bool iolog_wanted(const struct llmio_job_opts *o);
bool iolog_per_io(const struct llmio_job_opts *o);
uint64_t iolog_step_ns(const struct llmio_job_opts *o);

/* NAME_<kind>.N.log for thread idx (0-based) into buf.  0 or -ENAMETOOLONG (e says so). */
int iolog_path(char *buf, size_t len, const char *name, const char *kind, unsigned idx,
               struct llmio_error *e);

/*
 * The log of thread idx (0-based) for o: the averaged buffer, or the per-I/O buffer and its
 * files (created in the current directory, as fio does).  slat: the engine has a submission
 * latency.  0, -ENOMEM, or -errno with e naming the file.  Release even after a failure.
 */
int iolog_init(struct iolog *l, const struct llmio_job_opts *o, unsigned idx, bool slat,
               struct llmio_error *e);
/* Free the buffers and close the files (without writing out what is buffered). */
void iolog_release(struct iolog *l);

/* A new measured window (the ramp ended): start over. */
void iolog_reset(struct iolog *l);

/* Close the intervals that ended before t (t0: the window's start). */
void iolog_roll(struct iolog *l, uint64_t t, uint64_t t0);

/* Write the buffered I/Os out to the files and empty the buffer (l->err on failure). */
void iolog_flush(struct iolog *l);

/* One completion at t (ns) of op (0 read, 1 write) at off; t0: the window's start. */
static inline void iolog_add(struct iolog *l, uint64_t t0, int op, uint64_t t, uint64_t bytes,
                             uint64_t off, uint64_t slat, uint64_t clat, uint16_t prio)
{
	if (l->ios) {
		struct iolog_io *x;

		if (l->nio == l->iocap)
			iolog_flush(l); /* between two I/Os: the bound on memory */
		x = &l->ios[l->nio++];
		x->t = t - t0;
		x->off = off;
		x->slat = slat;
		x->clat = clat;
		x->bs = (uint32_t)bytes;
		x->op = (uint16_t)op;
		x->prio = prio;
		return;
	}
	if (t >= l->next)
		iolog_roll(l, t, t0);
	l->cur.ios[op]++;
	l->cur.bytes[op] += bytes;
	l->cur.slat_ns[op] += slat;
	l->cur.clat_ns[op] += clat;
	l->cur.lat_ns[op] += slat + clat;
}

/*
 * The thread ended at t_end: the averaged log's last, partial interval, or the per-I/O log's
 * last entries written out and its files closed.  0, or the first write error (-errno, e
 * naming the file).
 */
int iolog_finish(struct iolog *l, uint64_t t_end, struct llmio_error *e);

#endif
