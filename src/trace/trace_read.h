/* SPDX-License-Identifier: MIT */
/*
 * Reading a merged trace (src/trace/trace_format.h): the records in time order, globally and
 * per thread, their paths, the process table and the phases.  This is the API that
 * `llmio trace report` and replay use.
 *
 * The whole file is read into memory and checked once in trace_open(): afterwards every
 * offset and index in it is valid and every record lies within the limits of trace_format.h
 * (sizes, offsets, times), so the accessors below never fail and no consumer sizes anything
 * from an unchecked number.  A trace without phase
 * markers gets inferred phases (trace_infer_phases) unless TRACE_OPEN_RAW_PHASES is given.
 * A struct trace is read-only after trace_open() apart from the thread index, which
 * trace_threads() builds once; use one trace per thread or build the index first.
 */
#ifndef LLMIO_TRACE_READ_H
#define LLMIO_TRACE_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/trace_format.h"
#include "base/error.h"

struct trace_thread {
	uint32_t pid, tid;
	size_t n;            /* records of this thread */
	const uint32_t *idx; /* their indexes in trace->rec, in time order */
};

struct trace {
	struct trace_file_hdr hdr;
	struct trace_rec *rec; /* sorted by ts (stable per thread) */
	size_t nrec;
	const char *str;
	size_t str_len;
	const struct trace_proc *proc;
	size_t nproc;
	struct trace_phase *phase; /* phase[0] is "no phase" */
	const char **phase_name;
	size_t nphase;
	const struct trace_phase_ev *pev;
	size_t npev;
	bool inferred; /* phases were inferred, not marked */
	/* per-thread index, built by trace_threads() */
	struct trace_thread *thr;
	size_t nthr;
	uint32_t *thr_idx;
	void *buf; /* the file */
	size_t size;
};

#define TRACE_OPEN_RAW_PHASES 1u

/*
 * Open and check a merged trace.  \return 0 and *out; -ENOENT/-EACCES/... when it cannot be
 * read, -EINVAL when it is not a valid llmio trace (the reason is in e), -ENOMEM.
 */
int trace_open(const char *path, unsigned flags, struct trace **out, struct llmio_error *e);
/*
 * The same for a trace held in memory (size bytes at buf, copied: the caller keeps buf);
 * name is used in messages (NULL: "trace").  No global state: fuzzers and tests call it.
 */
int trace_open_mem(const void *buf, size_t size, const char *name, unsigned flags,
                   struct trace **out, struct llmio_error *e);
void trace_close(struct trace *t);

/* The string at blob offset off ("" for 0). */
const char *trace_str(const struct trace *t, uint32_t off);
/* The file a record is about ("" when none: munmap of an unknown mapping, a pipe...). */
const char *trace_rec_path(const struct trace *t, const struct trace_rec *r);
/* How a read was served (TRACE_SERVED_*): "page cache", "device", or NULL when not known. */
const char *trace_rec_served(const struct trace_rec *r);
/* The process entry of pid, or NULL. */
const struct trace_proc *trace_proc_find(const struct trace *t, uint32_t pid);
/* Build (once) and return the per-thread index; *n threads.  NULL: out of memory. */
const struct trace_thread *trace_threads(struct trace *t, size_t *n);

/* Name of a call type ("read", "pwrite", ...); "?" when unknown. */
const char *trace_type_name(unsigned type);
/* Calls that move file data: reads (read/pread/readv/preadv/fread) and writes. */
bool trace_type_is_read(unsigned type);
bool trace_type_is_write(unsigned type);

/*
 * Is r within the limits of trace_format.h (TRACE_IO_MAX, TRACE_STDIO_MAX, TRACE_POS_MAX,
 * TRACE_TIME_MAX)?  \return 0, or -ERANGE with the field and its bad value in why (e.g.
 * "read result 281474976710656 is over 2147479552, the most one call can move").  Only the
 * numbers are checked, not the string or phase indexes (trace_open does those).
 */
int trace_rec_check(const struct trace_rec *r, char *why, size_t len);

/*
 * Label records by what their file looks like, for traces without phase markers:
 *   checkpoint  files written with >= 1 MiB, or fsynced / renamed after being written;
 *   data        files read by two or more processes, read more than once over, or one of
 *               8 or more files read in the same directory (dataset shards, samples);
 *   load        other files read with >= 1 MiB (model weights, tokenizer, config);
 *   other       the rest.
 * The phases are marked inferred.  \return 0 or -ENOMEM.
 */
int trace_infer_phases(struct trace *t);

#endif
