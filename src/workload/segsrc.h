/* SPDX-License-Identifier: MIT */
/*
 * A segment source: each thread walks its own list of byte ranges (file, offset, length) in
 * order, in I/Os of at most `chunk` bytes, aligned for O_DIRECT when asked (the range is then
 * widened to the alignment, as fastsafetensors does for tensors that start mid-block).  It
 * also times each thread from its first issue to its last completion: a rank's checkpoint
 * duration, a loader thread's busy time.
 */
#ifndef LLMIO_SEGSRC_H
#define LLMIO_SEGSRC_H

#include <stddef.h>
#include <stdint.h>

#include "llmio/job.h"

struct seg {
	uint32_t file;
	uint64_t off, len;
};

struct segsrc_thread {
	size_t first, count; /* its segments */
	size_t cur;          /* next segment (relative) */
	uint64_t pos;        /* next byte within it */
	uint64_t t_first, t_last, bytes, ios;
};

struct segsrc {
	struct llmio_io_source src;
	struct seg *segs;
	size_t nsegs, cap;
	unsigned nthreads;
	struct segsrc_thread *thr;
	uint32_t chunk, align;
	int write;
};

/* Empty source for nthreads threads. 0 or -ENOMEM. */
int segsrc_init(struct segsrc *s, unsigned nthreads, uint32_t chunk, uint32_t align, int write);
void segsrc_release(struct segsrc *s);
/*
 * Append a segment for `thread`.  Segments must be added thread by thread (all of thread 0's,
 * then thread 1's ...).  0 or -ENOMEM.
 */
int segsrc_add(struct segsrc *s, unsigned thread, uint32_t file, uint64_t off, uint64_t len);
/* Bytes of all segments (what the phase promises to move, before alignment). */
uint64_t segsrc_bytes(const struct segsrc *s);
/* Duration of thread t: first issue to last completion, seconds (0 when it did nothing). */
double segsrc_thread_s(const struct segsrc *s, unsigned t);

#endif
