/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "workload/segsrc.h"

static int seg_next(void *arg, unsigned t, struct llmio_io *io)
{
	struct segsrc *s = arg;
	struct segsrc_thread *th = &s->thr[t];
	const struct seg *g;
	uint64_t start, end, seg_end;

	while (th->cur < th->count &&
	       th->pos >= s->segs[th->first + th->cur].off + s->segs[th->first + th->cur].len) {
		th->cur++;
		if (th->cur < th->count)
			th->pos = s->segs[th->first + th->cur].off;
	}
	if (th->cur >= th->count)
		return 0;
	g = &s->segs[th->first + th->cur];
	seg_end = (g->off + g->len + s->align - 1) / s->align * s->align;
	start = th->pos / s->align * s->align;
	end = start + s->chunk < seg_end ? start + s->chunk : seg_end;
	*io = (struct llmio_io){
	        .file = g->file, .off = start, .len = (uint32_t)(end - start), .write = s->write};
	th->pos = end;
	if (!th->t_first)
		th->t_first = now_ns();
	return 1;
}

static void seg_done(void *arg, unsigned t, const struct llmio_io *io, int64_t res, uint64_t lat_ns)
{
	struct segsrc *s = arg;
	struct segsrc_thread *th = &s->thr[t];

	(void)io;
	(void)lat_ns;
	th->t_last = now_ns();
	if (res > 0)
		th->bytes += (uint64_t)res;
	th->ios++;
}

static void seg_end(void *arg, unsigned t)
{
	struct segsrc *s = arg;

	/* the thread's true end: after its fsync, which a checkpoint's duration includes */
	if (s->thr[t].t_first)
		s->thr[t].t_last = now_ns();
}

int segsrc_init(struct segsrc *s, unsigned nthreads, uint32_t chunk, uint32_t align, int write)
{
	memset(s, 0, sizeof(*s));
	s->thr = calloc(nthreads ? nthreads : 1, sizeof(*s->thr));
	if (!s->thr)
		return -ENOMEM;
	s->nthreads = nthreads;
	s->chunk = chunk;
	s->align = align ? align : 1;
	s->write = write;
	s->src = (struct llmio_io_source){
	        .next = seg_next, .done = seg_done, .end = seg_end, .arg = s};
	return 0;
}

void segsrc_release(struct segsrc *s)
{
	free(s->segs);
	free(s->thr);
	memset(s, 0, sizeof(*s));
}

int segsrc_add(struct segsrc *s, unsigned thread, uint32_t file, uint64_t off, uint64_t len)
{
	struct segsrc_thread *th = &s->thr[thread];

	if (!len)
		return 0;
	if (s->nsegs == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		struct seg *n = realloc(s->segs, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		s->segs = n;
		s->cap = cap;
	}
	if (!th->count) {
		th->first = s->nsegs;
		th->pos = off;
	}
	s->segs[s->nsegs++] = (struct seg){.file = file, .off = off, .len = len};
	th->count++;
	return 0;
}

uint64_t segsrc_bytes(const struct segsrc *s)
{
	uint64_t b = 0;

	for (size_t i = 0; i < s->nsegs; i++)
		b += s->segs[i].len;
	return b;
}

double segsrc_thread_s(const struct segsrc *s, unsigned t)
{
	const struct segsrc_thread *th = &s->thr[t];

	return th->t_first && th->t_last > th->t_first ? (double)(th->t_last - th->t_first) / 1e9
	                                               : 0;
}
