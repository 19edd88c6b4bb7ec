/* SPDX-License-Identifier: MIT */
/*
 * Building a merged trace file (src/trace/trace_format.h) in memory: from the preload
 * library's per-process files (trace_merge_dir), from an strace log (trace_import_strace),
 * or record by record (tests, synthetic traces).  Functions return 0 or -errno.
 */
#ifndef LLMIO_TRACE_WRITE_H
#define LLMIO_TRACE_WRITE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trace/trace_format.h"
#include "trace/trace_map.h"
#include "base/error.h"

struct trace_builder {
	char *str; /* blob: "" at 0, then NUL-terminated strings */
	size_t str_len, str_cap;
	uint32_t *hash; /* open addressing: string offsets, 0 = empty */
	size_t hash_cap, hash_n;
	struct trace_rec *rec;
	size_t nrec, rec_cap;
	struct trace_proc *proc;
	size_t nproc, proc_cap;
	struct tmap pidmap;        /* pid -> index in proc (rebuilt when proc was sorted) */
	struct trace_phase *phase; /* [0] is the "" phase */
	size_t nphase, phase_cap;
	struct trace_phase_ev *pev;
	size_t npev, pev_cap;
	uint32_t flags;
	int32_t exit_status;
	int64_t real_minus_mono;
	uint64_t dropped;
	unsigned nstopped; /* processes that stopped recording early (TRACE_F_STOPPED) */
	int stop_errno;    /* why the first of them did */
	unsigned nlost;    /* processes whose file holds no header (no space even for it) */
};

int trace_builder_init(struct trace_builder *b);
void trace_builder_release(struct trace_builder *b);

/* Intern s; *off is its offset in the blob (equal strings share one). */
int trace_builder_str(struct trace_builder *b, const char *s, uint32_t *off);
/* The index of phase `name` (added if new); "" is 0. */
int trace_builder_phase(struct trace_builder *b, const char *name, uint32_t flags, uint32_t *idx);
/* Append a record whose path/path2 are blob offsets and phase a phase index. */
int trace_builder_rec(struct trace_builder *b, const struct trace_rec *r);
int trace_builder_phase_ev(struct trace_builder *b, uint64_t ts, uint32_t pid, uint32_t tid,
                           uint32_t phase);
/*
 * The process entry of pid, created (with ppid, cmd and start) if new.  An existing entry
 * keeps the earlier start and parent and takes the command of the image that started later
 * (exec).  \return NULL when out of memory.
 */
struct trace_proc *trace_builder_proc(struct trace_builder *b, uint32_t pid, uint32_t ppid,
                                      const char *cmd, uint64_t start);

/* Sort, fill the process table's end/nrec and write the whole file to f. */
int trace_builder_write(struct trace_builder *b, FILE *f);

/*
 * Merge the per-process raw files in dir (written by libllmio_trace.so) into b.
 * \return 0; -ENOENT when dir holds no trace file; other -errno with a message in e.
 */
int trace_merge_dir(struct trace_builder *b, const char *dir, struct llmio_error *e);
/*
 * Merge one raw per-process file held in memory (size bytes at buf; name for messages) into
 * b.  *first is the earliest clock anchor seen so far (start with UINT64_MAX): the process
 * that started first gives the trace its CLOCK_REALTIME offset.  A file too short for its
 * header or without the raw magic is skipped (0); buf must be 8-byte aligned (malloc, mmap).
 * \return 0; -EINVAL with the slot and the bad value in e when a record is out of the limits of
 * trace_format.h; -ENOMEM.  No global state: fuzzers and tests call it.
 */
int trace_merge_raw(struct trace_builder *b, const void *buf, size_t size, const char *name,
                    uint64_t *first, struct llmio_error *e);

/*
 * Import an `strace -f -y [-tt|-ttt] [-T]` log.  \return 0, -EINVAL with the line and the
 * reason in e when the log is not strace output, other -errno.
 */
int trace_import_strace(struct trace_builder *b, FILE *in, struct llmio_error *e);

#endif
