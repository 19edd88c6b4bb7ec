/* SPDX-License-Identifier: MIT */
/*
 * io_uring's queue() builds each SQE from a per-op template (src/engine/io_uring.c) instead of
 * liburing's prep helpers, one at a time (queue) or a batch at once (queue_batch): every byte
 * of the SQE it writes must be the one
 * io_uring_prep_read / _write / _read_fixed / _write_fixed, IOSQE_FIXED_FILE and
 * io_uring_sqe_set_data would write, with and without registered buffers and files.  The
 * ring's SQE memory is filled with garbage first, so a field the template forgot shows.
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "base/error.h"
#include "engine/engine.h"
#include "engine_drive.h"

#define BS    4096
#define DEPTH 4

static int open_file(void)
{
	char path[] = "/tmp/llmio_uring_sqe_XXXXXX";
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(ftruncate(fd, 16 * BS), 0);
	return fd;
}

/* The SQE liburing's helpers make for io on descriptor / index fd. */
static void liburing_sqe(struct io_uring_sqe *sqe, const struct io_req *io, int fd, bool fixedbufs,
                         bool regfiles)
{
	memset(sqe, 0x5a, sizeof(*sqe)); /* the helpers must write all of it too */
	if (fixedbufs && io->op == ENGINE_OP_WRITE)
		io_uring_prep_write_fixed(sqe, fd, io->buf, io->len, io->off, io->buf_idx);
	else if (fixedbufs)
		io_uring_prep_read_fixed(sqe, fd, io->buf, io->len, io->off, io->buf_idx);
	else if (io->op == ENGINE_OP_WRITE)
		io_uring_prep_write(sqe, fd, io->buf, io->len, io->off);
	else
		io_uring_prep_read(sqe, fd, io->buf, io->len, io->off);
	if (regfiles)
		sqe->flags |= IOSQE_FIXED_FILE;
	io_uring_sqe_set_data(sqe, (void *)io);
}

/* How the SQEs of one_mode() are queued: one queue() each, or all with one queue_batch(). */
enum way { ONE_BY_ONE, BATCH };

static void one_mode(const struct engine_ops *e, int fd, bool fixedbufs, bool regfiles,
                     enum way way)
{
	const uint64_t size = 16 * BS;
	void *bufs[DEPTH];
	struct io_req ios[DEPTH];
	struct engine_ctx ctx = {0};
	struct llmio_error err = {0};
	struct engine_setup s;
	struct io_uring *ring;
	char eopts[64];
	void *opts = calloc(1, e->opts_size);

	assert_non_null(opts);
	snprintf(eopts, sizeof(eopts), "fixedbufs=%d,regfiles=%d", fixedbufs, regfiles);
	assert_int_equal(engine_opts_parse(e, eopts, opts, &err), 0);
	memset(ios, 0, sizeof(ios));
	for (unsigned i = 0; i < DEPTH; i++) {
		assert_int_equal(posix_memalign(&bufs[i], 4096, BS), 0);
		ios[i] = (struct io_req){.buf = bufs[i],
		                         .off = (uint64_t)(3 + i) * BS,
		                         .len = BS - 512 * i,
		                         .buf_idx = (uint16_t)i,
		                         .op = i % 2 ? ENGINE_OP_WRITE : ENGINE_OP_READ};
	}
	s = drive_setup(&fd, &size, bufs, DEPTH, BS, false, true, opts);
	if (e->init(&ctx, &s, &err)) {
		print_message("io_uring unavailable: %s\n", err.msg);
		free(opts);
		for (unsigned i = 0; i < DEPTH; i++)
			free(bufs[i]);
		skip();
	}
	/* the engine's state starts with its ring (struct uring_eng, first member) */
	ring = ctx.priv;
	/* whether registration worked is in the notes; the SQE must match what the engine uses */
	bool fb = fixedbufs && strstr(ctx.notes, "fixedbufs on");
	bool rf = regfiles && strstr(ctx.notes, "regfiles on");

	memset(ring->sq.sqes, 0xa5, sizeof(struct io_uring_sqe) * ring->sq.ring_entries);
	if (way == BATCH) {
		struct io_req *ptrs[DEPTH];
		const unsigned tail = ring->sq.sqe_tail;

		for (unsigned i = 0; i < DEPTH; i++)
			ptrs[i] = &ios[i];
		assert_non_null(e->queue_batch);
		assert_int_equal(e->queue_batch(&ctx, ptrs, DEPTH), DEPTH);
		assert_int_equal(ring->sq.sqe_tail, tail + DEPTH);
		/* the ring is full: a batch gets no room, as queue() gets ENGINE_Q_BUSY */
		assert_int_equal(e->queue_batch(&ctx, ptrs, 1), 0);
		assert_int_equal(e->queue(&ctx, &ios[0]), ENGINE_Q_BUSY);
	}
	for (unsigned i = 0; i < DEPTH; i++) {
		struct io_uring_sqe want, *got;

		if (way == ONE_BY_ONE) {
			assert_int_equal(e->queue(&ctx, &ios[i]), ENGINE_Q_QUEUED);
			got = &ring->sq.sqes[(ring->sq.sqe_tail - 1) & ring->sq.ring_mask];
		} else {
			got = &ring->sq.sqes[(ring->sq.sqe_tail - DEPTH + i) & ring->sq.ring_mask];
		}
		liburing_sqe(&want, &ios[i], rf ? 0 : fd, fb, rf);
		assert_memory_equal(got, &want, sizeof(want));
	}
	e->cleanup(&ctx); /* the SQEs were never submitted: dropped with the ring */
	free(opts);
	for (unsigned i = 0; i < DEPTH; i++)
		free(bufs[i]);
}

/* one_mode() in all four register modes. */
static void all_modes(enum way way)
{
	const struct engine_ops *e = engine_find("io_uring");
	int fd = open_file();

	assert_non_null(e);
	for (int fb = 0; fb < 2; fb++)
		for (int rf = 0; rf < 2; rf++)
			one_mode(e, fd, fb, rf, way);
	close(fd);
}

static void template_equals_liburing(void **state)
{
	(void)state;
	all_modes(ONE_BY_ONE);
}

/* queue_batch() writes the very SQEs queue() writes, in order, and stops where the ring is full. */
static void batch_equals_liburing(void **state)
{
	(void)state;
	all_modes(BATCH);
}

/*
 * A file index past the job's files: queue() completes it at once with -EBADF; queue_batch()
 * cannot complete anything, so the same -EBADF must come back as that I/O's completion, with
 * registered files and without, and the I/Os beside it complete normally.
 */
static void batch_bad_file(void **state)
{
	const struct engine_ops *e = engine_find("io_uring");
	const uint64_t size = 16 * BS;
	int fd = open_file();

	(void)state;
	assert_non_null(e);
	for (int rf = 0; rf < 2; rf++) {
		struct engine_ctx ctx = {0};
		struct llmio_error err = {0};
		struct io_req ios[3], *ptrs[3], *evs[3];
		void *bufs[3];
		char eopts[64];
		void *opts = calloc(1, e->opts_size);
		unsigned got = 0;

		assert_non_null(opts);
		snprintf(eopts, sizeof(eopts), "regfiles=%d", rf);
		assert_int_equal(engine_opts_parse(e, eopts, opts, &err), 0);
		for (unsigned i = 0; i < 3; i++) {
			assert_int_equal(posix_memalign(&bufs[i], 4096, BS), 0);
			ios[i] = (struct io_req){.buf = bufs[i],
			                         .off = (uint64_t)i * BS,
			                         .len = BS,
			                         .file = i == 1 ? 7 : 0, /* the job has one file */
			                         .buf_idx = (uint16_t)i,
			                         .op = ENGINE_OP_READ,
			                         .res = 12345};
			ptrs[i] = &ios[i];
		}
		struct engine_setup s = drive_setup(&fd, &size, bufs, 3, BS, false, true, opts);

		if (e->init(&ctx, &s, &err)) {
			print_message("io_uring unavailable: %s\n", err.msg);
			skip();
		}
		assert_int_equal(e->queue_batch(&ctx, ptrs, 3), 3);
		assert_int_equal(e->commit(&ctx), 0);
		while (got < 3) {
			int n = e->reap(&ctx, 1, evs + got, 3 - got);

			assert_true(n > 0);
			got += (unsigned)n;
		}
		assert_int_equal(ios[0].res, BS);
		assert_int_equal(ios[1].res, -EBADF);
		assert_int_equal(ios[2].res, BS);
		e->cleanup(&ctx);
		free(opts);
		for (unsigned i = 0; i < 3; i++)
			free(bufs[i]);
	}
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(template_equals_liburing),
	        cmocka_unit_test(batch_equals_liburing),
	        cmocka_unit_test(batch_bad_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
