/* SPDX-License-Identifier: MIT */
/*
 * The queue / commit / reap cycle that the engine conformance tests (host engines in
 * test_engines.c, GPU engines in test_gpu.c) drive an engine through, exactly as the worker
 * does: queue while slots are free, commit what was queued, reap at least one.  An I/O the
 * engine completes inside queue() is handed to done() at once.  drive_ios_batched(): an engine
 * that has queue_batch() gets every free slot's I/O in one call, as the worker's batched
 * path does.
 */
#ifndef LLMIO_TEST_ENGINE_DRIVE_H
#define LLMIO_TEST_ENGINE_DRIVE_H

#include "engine/engine.h"

#define DRIVE_MAX_DEPTH 64

struct drive {
	const struct engine_ops *e;
	struct engine_ctx *ctx;
	struct io_req *ios; /* depth requests, buffers attached */
	unsigned depth;
	/* fill io for I/O number i (off, len, op, data); check the completion of I/O i */
	void (*prep)(void *arg, struct io_req *io, unsigned i);
	void (*done)(void *arg, struct io_req *io, unsigned i);
	void *arg;
};

/* The setup of a test rig: one file, depth buffers of buf_len, no device polling. */
static inline struct engine_setup drive_setup(const int *fd, const uint64_t *size,
                                              void *const *bufs, unsigned depth, size_t buf_len,
                                              bool direct, bool writable, const void *opts)
{
	return (struct engine_setup){
	        .fds = fd,
	        .file_sizes = size,
	        .nfiles = 1,
	        .bufs = bufs,
	        .nbufs = depth,
	        .buf_len = buf_len,
	        .iodepth = depth,
	        .direct = direct,
	        .writable = writable,
	        .dev_io_poll = 0,
	        .devname = "test",
	        .opts = opts,
	};
}

/* Run I/Os 0 .. n-1 with up to d->depth in flight; batch: through queue_batch() if any. */
static inline void drive_ios_batched(const struct drive *d, unsigned n, bool batch)
{
	unsigned number[DRIVE_MAX_DEPTH], next = 0, inflight = 0, nfree = d->depth;
	struct io_req *freel[DRIVE_MAX_DEPTH], *evs[DRIVE_MAX_DEPTH];

	assert_true(d->depth <= DRIVE_MAX_DEPTH);
	for (unsigned i = 0; i < d->depth; i++)
		freel[i] = &d->ios[i];
	while (next < n || inflight) {
		unsigned queued = 0;

		if (batch && d->e->queue_batch) {
			struct io_req *b[DRIVE_MAX_DEPTH];
			unsigned m = 0;
			int k;

			for (; m < nfree && next + m < n; m++) {
				struct io_req *io = freel[nfree - 1 - m];

				io->file = 0;
				io->res = -12345;
				d->prep(d->arg, io, next + m);
				number[io->buf_idx] = next + m;
				b[m] = io;
			}
			k = m ? d->e->queue_batch(d->ctx, b, m) : 0;
			assert_true(k >= 0 && (unsigned)k <= m);
			/* the slots past k were not taken: prepared again next round */
			nfree -= (unsigned)k;
			next += (unsigned)k;
			queued += (unsigned)k;
			inflight += (unsigned)k;
		}
		while (nfree && next < n && !(batch && d->e->queue_batch)) {
			struct io_req *io = freel[nfree - 1];
			int q;

			io->file = 0;
			io->res = -12345;
			d->prep(d->arg, io, next);
			number[io->buf_idx] = next;
			q = d->e->queue(d->ctx, io);
			if (q == ENGINE_Q_BUSY)
				break;
			nfree--;
			next++;
			if (q == ENGINE_Q_COMPLETED) {
				d->done(d->arg, io, number[io->buf_idx]);
				freel[nfree++] = io;
				continue;
			}
			assert_int_equal(q, ENGINE_Q_QUEUED);
			queued++;
			inflight++;
		}
		if (queued)
			assert_true(d->e->commit(d->ctx) >= 0);
		if (inflight) {
			int got = d->e->reap(d->ctx, 1, evs, d->depth);

			assert_true(got >= 1);
			for (int i = 0; i < got; i++) {
				d->done(d->arg, evs[i], number[evs[i]->buf_idx]);
				freel[nfree++] = evs[i];
			}
			inflight -= (unsigned)got;
		}
	}
}

/* Run I/Os 0 .. n-1 with up to d->depth in flight, one queue() each. */
static inline void drive_ios(const struct drive *d, unsigned n)
{
	drive_ios_batched(d, n, false);
}

#endif
