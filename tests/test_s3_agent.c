/* SPDX-License-Identifier: MIT */
/*
 * s3-agent, the off-host client stand-in, driven through its engine_ops against a tiny S3
 * server this test runs on loopback (HEAD and Range GETs of one object with a known pattern):
 * the bytes the agent process's GETs put in the shared buffers are the object's, exactly; the
 * agent's CPU and the wire figures come back as counters; an agent killed mid-run fails the
 * I/Os in flight with one reason instead of hanging.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/error.h"
#include "engine/engine.h"
#include "s3_loopback.h"
#include "engine/s3.h"

#define OBJ_SIZE (256u * 1024 + 123) /* an odd tail: the last block is short of bs */
#define BS       (64u * 1024)

static unsigned char obj[OBJ_SIZE];

/* One keep-alive connection: HEAD gives the size, GET with Range the bytes. */
static void write_all(int fd, const unsigned char *p, size_t n)
{
	(void)!write(fd, p, n);
}

static void *conn(void *arg)
{
	s3_loopback_object((int)(intptr_t)arg, obj, OBJ_SIZE, write_all);
	return NULL;
}

struct rig {
	const struct engine_ops *eng;
	void *opts;
	struct engine_target t;
	void *bufs[2];
	struct engine_ctx ctx;
	struct io_req io[2];
};

static void rig_up(struct rig *g)
{
	const struct engine_target_req rq = {.name = "s3://b/obj", .bs = BS};
	struct engine_setup s = {0};
	struct llmio_error e = {0};

	g->eng = engine_find("s3-agent");
	assert_non_null(g->eng);
	g->opts = calloc(1, g->eng->opts_size);
	assert_int_equal(engine_opts_parse(g->eng, "", g->opts, &e), 0);
	assert_int_equal(g->eng->target_resolve(g->opts, &rq, &g->t, &e), 0);
	assert_int_equal(g->t.n, 1);
	assert_int_equal(g->t.sizes[0], OBJ_SIZE); /* from the HEAD */
	for (int i = 0; i < 2; i++)
		assert_int_equal(g->eng->buf_alloc(g->opts, &g->bufs[i], BS, NULL, &e), 0);
	s.names = (const char *const *)g->t.names;
	s.file_sizes = g->t.sizes;
	s.nfiles = 1;
	s.bufs = g->bufs;
	s.nbufs = 2;
	s.buf_len = BS;
	s.iodepth = 2;
	s.nworkers = 1;
	s.opts = g->opts;
	if (g->eng->init(&g->ctx, &s, &e))
		fail_msg("init: %s", e.msg);
	assert_non_null(strstr(g->ctx.notes, "STAND-IN"));
}

static void rig_down(struct rig *g)
{
	g->eng->cleanup(&g->ctx);
	for (int i = 0; i < 2; i++)
		g->eng->buf_free(g->opts, g->bufs[i]);
	free(g->t.names[0]);
	free(g->t.names);
	free(g->t.sizes);
	free(g->opts);
}

/* Read blocks a and b (offsets in BS) into buffers 0 and 1; the results. */
static int read2(struct rig *g, unsigned a, unsigned b, int64_t res[2])
{
	struct io_req *evs[2];
	int got = 0;

	for (unsigned i = 0; i < 2; i++) {
		g->io[i] = (struct io_req){.buf = g->bufs[i],
		                           .off = (uint64_t)(i ? b : a) * BS,
		                           .len = BS,
		                           .buf_idx = i,
		                           .op = ENGINE_OP_READ};
		assert_int_equal(g->eng->queue(&g->ctx, &g->io[i]), ENGINE_Q_QUEUED);
	}
	assert_int_equal(g->eng->commit(&g->ctx), 0);
	while (got < 2) {
		int n = g->eng->reap(&g->ctx, 1, evs, 2);

		assert_true(n > 0);
		got += n;
	}
	res[0] = g->io[0].res;
	res[1] = g->io[1].res;
	return got;
}

static void bytes_identical(void **state)
{
	struct rig g = {0};
	int64_t res[2];

	(void)state;
	rig_up(&g);
	read2(&g, 0, 3, res);
	assert_int_equal(res[0], BS);
	assert_int_equal(res[1], BS);
	assert_memory_equal(g.bufs[0], obj, BS);
	assert_memory_equal(g.bufs[1], obj + 3 * BS, BS);
	read2(&g, 2, 1, res);
	assert_memory_equal(g.bufs[0], obj + 2 * BS, BS);
	assert_memory_equal(g.bufs[1], obj + BS, BS);
	/* the wire figures are the agent's, and so is the CPU it reports */
	assert_true(g.ctx.counters.known);
	assert_int_equal(g.ctx.counters.requests, 4);
	assert_true(g.ctx.counters.wire_rx > 4 * BS);
	assert_true(g.ctx.counters.agent_cpu_ns > 0);
	rig_down(&g);
}

/*
 * The agent is a fresh process (posix_spawn of this program in its agent mode), not a fork of
 * this one: this test's server threads run, and a forked child would have inherited their
 * locks.  A program that cannot be the agent fails init with one line naming the fix.
 */
static void agent_spawned(void **state)
{
	struct rig g = {0};
	struct engine_ctx ctx = {0};
	struct llmio_error e = {0};
	char path[64], cmd[256] = "";
	const char *p;
	FILE *f;
	size_t n;

	(void)state;
	rig_up(&g);
	p = strstr(g.ctx.notes, "agent process ");
	assert_non_null(p);
	snprintf(path, sizeof(path), "/proc/%ld/cmdline", strtol(p + 14, NULL, 10));
	f = fopen(path, "r");
	assert_non_null(f);
	n = fread(cmd, 1, sizeof(cmd) - 1, f);
	fclose(f);
	/* argv is NUL-separated: argv[1] follows argv[0] */
	assert_true(n > strlen(cmd) + 1);
	assert_string_equal(cmd + strlen(cmd) + 1, S3_AGENT_ARG);
	rig_down(&g);

	/* /bin/true starts and exits at once: the application is told, not left waiting */
	{
		const struct engine_ops *eng = engine_find("s3-agent");
		const char *names[] = {"s3://b/obj"};
		const uint64_t sizes[] = {OBJ_SIZE};
		void *opts = calloc(1, eng->opts_size), *buf = NULL;
		struct engine_setup s = {.names = names,
		                         .file_sizes = sizes,
		                         .nfiles = 1,
		                         .bufs = &buf,
		                         .nbufs = 1,
		                         .buf_len = BS,
		                         .iodepth = 1,
		                         .nworkers = 1,
		                         .opts = opts};

		assert_non_null(opts);
		assert_int_equal(engine_opts_parse(eng, "", opts, &e), 0);
		assert_int_equal(eng->buf_alloc(opts, &buf, BS, NULL, &e), 0);
		setenv("LLMIO_AGENT_EXE", "/bin/true", 1);
		assert_true(eng->init(&ctx, &s, &e) < 0);
		unsetenv("LLMIO_AGENT_EXE");
		assert_non_null(strstr(e.msg, "exited at start"));
		assert_non_null(strstr(e.msg, "LLMIO_AGENT_EXE"));
		eng->buf_free(opts, buf);
		free(opts);
	}
}

static void agent_killed(void **state)
{
	struct rig g = {0};
	const char *p;
	int64_t res[2];

	(void)state;
	rig_up(&g);
	p = strstr(g.ctx.notes, "agent process ");
	assert_non_null(p);
	assert_int_equal(kill((pid_t)strtol(p + 14, NULL, 10), SIGKILL), 0);
	read2(&g, 0, 1, res); /* returns: the I/Os fail, nothing hangs */
	assert_int_equal(res[0], -EPIPE);
	assert_int_equal(res[1], -EPIPE);
	assert_non_null(strstr(g.ctx.ioerr, "exited with I/Os in flight"));
	rig_down(&g);
}

int main(int argc, char **argv)
{
	/* the agent process: s3-agent starts this program again */
	if (argc == 2 && !strcmp(argv[1], S3_AGENT_ARG))
		return s3_agent_serve(S3_AGENT_FD);
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(bytes_identical),
	        cmocka_unit_test(agent_spawned),
	        cmocka_unit_test(agent_killed),
	};

	s3_loopback_pattern(obj, sizeof(obj));
	s3_loopback_serve(conn);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
