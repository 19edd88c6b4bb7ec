/* SPDX-License-Identifier: MIT */
/*
 * The s3 engine's datapath against a server (this test's own, on loopback) that trickles each
 * GET's body in 4 KiB writes: with rcvlowat (the default, 256 KiB) the worker wakes up once
 * per 256 KiB of body, not once per write; the bytes are the object's exactly, including a
 * last piece shorter than rcvlowat; the one connection serves every GET in turn (a socket left
 * with a large SO_RCVLOWAT would stall the next response's status line).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "base/error.h"
#include "engine/engine.h"
#include "s3_loopback.h"

#define BS       (1024u * 1024 - 5000) /* not a multiple of rcvlowat: a short last piece */
#define OBJ_SIZE (3 * BS)
#define PIECE    4096u

static unsigned char obj[OBJ_SIZE];

/* Write n bytes as PIECE-byte writes 200 us apart: a segment per write, as a slow server. */
static void trickle(int fd, const unsigned char *p, size_t n)
{
	const struct timespec gap = {.tv_nsec = 200000};

	for (size_t at = 0; at < n; at += PIECE) {
		size_t len = n - at < PIECE ? n - at : PIECE;

		if (write(fd, p + at, len) != (ssize_t)len)
			return;
		nanosleep(&gap, NULL);
	}
}

/* One keep-alive connection: GET with Range, the body trickled. */
static void *conn(void *arg)
{
	int fd = (int)(intptr_t)arg, one = 1;

	setsockopt(fd, IPPROTO_TCP, 1 /* TCP_NODELAY */, &one, sizeof(one));
	s3_loopback_object(fd, obj, OBJ_SIZE, trickle);
	return NULL;
}

/* Voluntary context switches of this thread: its sleeps, one per wake-up. */
static long sleeps(void)
{
	struct rusage ru;

	assert_int_equal(getrusage(RUSAGE_THREAD, &ru), 0);
	return ru.ru_nvcsw;
}

/* Read the object block by block on the s3 engine with `opts`; the worker's sleeps. */
static long read_all(const char *opts, unsigned char *into)
{
	const struct engine_ops *eng = engine_find("s3");
	const char *names[] = {"s3://b/obj"};
	const uint64_t sizes[] = {OBJ_SIZE};
	struct engine_setup s = {0};
	struct engine_ctx ctx = {0};
	struct llmio_error e = {0};
	void *o, *buf = malloc(BS), *bufs[1] = {buf};
	long slept;

	assert_non_null(eng);
	assert_non_null(buf);
	o = calloc(1, eng->opts_size);
	assert_non_null(o);
	assert_int_equal(engine_opts_parse(eng, opts, o, &e), 0);
	s.names = names;
	s.file_sizes = sizes;
	s.nfiles = 1;
	s.bufs = bufs;
	s.nbufs = 1;
	s.buf_len = BS;
	s.iodepth = 1;
	s.nworkers = 1;
	s.opts = o;
	if (eng->init(&ctx, &s, &e))
		fail_msg("init: %s", e.msg);
	slept = sleeps();
	for (unsigned i = 0; i < OBJ_SIZE / BS; i++) {
		struct io_req io = {.buf = buf, .off = (uint64_t)i * BS, .len = BS};
		struct io_req *ev;

		assert_int_equal(eng->queue(&ctx, &io), ENGINE_Q_QUEUED);
		assert_int_equal(eng->commit(&ctx), 0);
		assert_int_equal(eng->reap(&ctx, 1, &ev, 1), 1);
		if (io.res != BS)
			fail_msg("GET %u: %lld: %s", i, (long long)io.res, ctx.ioerr);
		memcpy(into + (size_t)i * BS, buf, BS);
	}
	slept = sleeps() - slept;
	eng->cleanup(&ctx);
	free(o);
	free(buf);
	return slept;
}

static void wakes_per_lowat(void **state)
{
	static unsigned char got[OBJ_SIZE];
	unsigned before = s3_loopback_accepts;
	long slept;

	(void)state;
	slept = read_all("", got);
	assert_memory_equal(got, obj, OBJ_SIZE);
	/* one connection for the three GETs: the socket's SO_RCVLOWAT was put back each time */
	assert_int_equal(s3_loopback_accepts - before, 1);
	/*
	 * 3 bodies of ~1 MiB in 768 writes: about 4 wake-ups a body with rcvlowat=256k, one for
	 * the status line, one for the short last piece; every write without it.  The bound
	 * leaves room for a busy machine.
	 */
	if (slept > 48)
		fail_msg("%ld sleeps for 3 GETs of %u bytes in %u-byte writes: the worker woke up "
		         "per write, not per rcvlowat",
		         slept, BS, PIECE);
}

static void lowat_off_same_bytes(void **state)
{
	static unsigned char got[OBJ_SIZE];

	(void)state;
	read_all("rcvlowat=0", got);
	assert_memory_equal(got, obj, OBJ_SIZE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(wakes_per_lowat),
	        cmocka_unit_test(lowat_off_same_bytes),
	};

	s3_loopback_pattern(obj, sizeof(obj));
	s3_loopback_serve(conn);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
