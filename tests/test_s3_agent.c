/* SPDX-License-Identifier: MIT */
/*
 * s3-agent, the off-host client stand-in, driven through its engine_ops against a tiny S3
 * server this test runs on loopback (HEAD and Range GETs of one object with a known pattern):
 * the bytes the agent process's GETs put in the shared buffers are the object's, exactly; the
 * agent's CPU and the wire figures come back as counters; an agent killed mid-run fails the
 * I/Os in flight with one reason instead of hanging; and neither side trusts the other: a
 * hostile application (this test, on the agent's socket) and a fake agent (this program in
 * its fake mode) break the protocol field by field, and each side refuses with its reason.
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
#include <sched.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "base/error.h"
#include "engine/engine.h"
#include "s3_loopback.h"
#include "engine/s3.h"
#include "engine/s3_agent.h"

extern char **environ;

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
 * init of an s3-agent of one object and one buffer with environment variable `var` set to
 * `val` for the agent it starts; cleaned up when it succeeds.  \return what init returned.
 */
static int init_with(const char *var, const char *val, struct llmio_error *e)
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
	struct engine_ctx ctx = {0};
	int ret;

	assert_non_null(opts);
	assert_int_equal(engine_opts_parse(eng, "", opts, e), 0);
	assert_int_equal(eng->buf_alloc(opts, &buf, BS, NULL, e), 0);
	setenv(var, val, 1);
	ret = eng->init(&ctx, &s, e);
	unsetenv(var);
	if (!ret)
		eng->cleanup(&ctx);
	eng->buf_free(opts, buf);
	free(opts);
	return ret;
}

/*
 * The agent is a fresh process (posix_spawn of this program in its agent mode), not a fork of
 * this one: this test's server threads run, and a forked child would have inherited their
 * locks.  A program that cannot be the agent fails init with one line naming the fix.
 */
static void agent_spawned(void **state)
{
	struct rig g = {0};
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
	assert_true(init_with("LLMIO_AGENT_EXE", "/bin/true", &e) < 0);
	assert_non_null(strstr(e.msg, "exited at start"));
	assert_non_null(strstr(e.msg, "LLMIO_AGENT_EXE"));
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

/* ---- hostile peers ---- */

/* The fake agent's misdeeds, chosen by LLMIO_TEST_FAKE_AGENT in the spawned process. */
enum fake {
	FAKE_IDX,      /* completes buffer 1000 */
	FAKE_COUNT,    /* says 1000 completions, sends one */
	FAKE_RES,      /* a result of 2^40 bytes for a 64 KiB read */
	FAKE_TWICE,    /* completes the same buffer twice in one message */
	FAKE_REFUSED,  /* refuses the request, as the real agent does (rc -EPROTO) */
	FAKE_LONGTEXT, /* a failure whose text fills its field without a NUL */
	FAKE_N,
	FAKE_INIT_RC = FAKE_N, /* answers init with rc 7: no errno, no success */
};

/* A fake agent: takes the setup, answers init, then answers the first requests falsely. */
static int fake_agent(int sock, enum fake kind)
{
	struct agent_setup su;
	char junk[sizeof(struct agent_file)];
	struct agent_req rq[64];
	struct {
		struct agent_hdr h;
		struct agent_done d[2];
	} m;
	size_t len = sizeof(m.h) + sizeof(m.d[0]);
	ssize_t got;

	if (recv(sock, &su, sizeof(su), 0) != (ssize_t)sizeof(su))
		return 1;
	for (uint32_t i = 0; i < su.nfiles + su.nbufs; i++) /* the fds are dropped unread */
		if (recv(sock, junk, sizeof(junk), 0) <= 0)
			return 1;
	memset(&m, 0, sizeof(m));
	snprintf(m.h.text, sizeof(m.h.text), "fake agent");
	m.h.rc = kind == FAKE_INIT_RC ? 7 : 0;
	send(sock, &m.h, sizeof(m.h), MSG_NOSIGNAL);
	got = recv(sock, rq, sizeof(rq), 0);
	if (got < (ssize_t)sizeof(rq[0]))
		return 1;
	memset(&m, 0, sizeof(m));
	m.h.n = 1;
	m.d[0] = (struct agent_done){.res = rq[0].len, .idx = rq[0].idx};
	switch (kind) {
	case FAKE_IDX:
		m.d[0].idx = 1000;
		break;
	case FAKE_COUNT:
		m.h.n = 1000;
		break;
	case FAKE_RES:
		m.d[0].res = 1ll << 40;
		break;
	case FAKE_TWICE:
		m.h.n = 2;
		m.d[1] = m.d[0];
		len += sizeof(m.d[0]);
		break;
	case FAKE_REFUSED:
		m.h.n = 0;
		m.h.rc = -EPROTO;
		snprintf(m.h.text, sizeof(m.h.text), "s3-agent: fake refusal");
		len = sizeof(m.h);
		break;
	case FAKE_LONGTEXT: /* both requests fail, with a reason of 1024 non-NUL bytes */
		m.h.n = 2;
		m.d[0].res = -EIO;
		m.d[1] = (struct agent_done){.res = -EIO, .idx = rq[1].idx};
		len += sizeof(m.d[0]);
		memset(m.h.text, 'x', sizeof(m.h.text));
		break;
	default:
		return 1;
	}
	send(sock, &m, len, MSG_NOSIGNAL);
	while (recv(sock, rq, sizeof(rq), 0) > 0) /* until the application lets go */
		;
	return 0;
}

/* A fake agent breaks the protocol: the application fails the I/Os, never crashes or hangs. */
static void fake_agent_refused(void **state)
{
	static const char *const want[FAKE_N] = {
	        [FAKE_IDX] = "completed buffer 1000 with 65536: no such I/O in flight",
	        [FAKE_COUNT] = "for 1000 completions (at most 2)",
	        [FAKE_RES] = "with 1099511627776: not a result of that I/O",
	        [FAKE_TWICE] = "no such I/O in flight",
	        [FAKE_REFUSED] = "s3-agent: fake refusal",
	        [FAKE_LONGTEXT] = "xxxxxxxx",
	};

	struct llmio_error e = {0};
	char v[8];

	(void)state;
	for (int k = 0; k < FAKE_N; k++) {
		struct rig g = {0};
		int64_t res[2];

		snprintf(v, sizeof(v), "%d", k);
		setenv("LLMIO_TEST_FAKE_AGENT", v, 1);
		rig_up(&g);
		unsetenv("LLMIO_TEST_FAKE_AGENT");
		assert_int_equal(read2(&g, 0, 1, res), 2); /* both end, one way or the other */
		if (k == FAKE_LONGTEXT) {
			assert_int_equal(res[0], -EIO);
			assert_int_equal(res[1], -EIO);
			assert_int_equal(strlen(g.ctx.ioerr), sizeof(g.ctx.ioerr) - 1);
		} else {
			assert_true(res[0] == -EPROTO || res[1] == -EPROTO);
		}
		if (!strstr(g.ctx.ioerr, want[k]))
			fail_msg("fake agent %d: ioerr '%s', wanted '%s'", k, g.ctx.ioerr, want[k]);
		rig_down(&g); /* kills the fake agent: nothing to wait for */
	}

	/* an init answer that is neither success nor -errno fails init, as a broken protocol */
	snprintf(v, sizeof(v), "%d", FAKE_INIT_RC);
	assert_int_equal(init_with("LLMIO_TEST_FAKE_AGENT", v, &e), -EPROTO);
	assert_non_null(strstr(e.msg, "fake agent"));
}

/* The agent process on a socket of ours, as s3-agent's init starts it. */
static pid_t agent_start(int *sock)
{
	char *argv[] = {(char *)"test-s3-agent", (char *)S3_AGENT_ARG, NULL};
	posix_spawn_file_actions_t fa;
	int sv[2];
	pid_t pid;

	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(posix_spawn_file_actions_init(&fa), 0);
	assert_int_equal(posix_spawn_file_actions_adddup2(&fa, sv[1], S3_AGENT_FD), 0);
	assert_int_equal(posix_spawn(&pid, "/proc/self/exe", &fa, NULL, argv, environ), 0);
	posix_spawn_file_actions_destroy(&fa);
	close(sv[1]);
	*sock = sv[0];
	return pid;
}

/* A memfd of a page (the head) plus len bytes, passed as the application passes a buffer. */
static int send_buf(int sock, size_t len)
{
	const size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct agent_buf_head head = {.map = page + len};
	char ctl[CMSG_SPACE(sizeof(int))] = {0};
	struct iovec iov = {.iov_base = &head, .iov_len = sizeof(head)};
	struct msghdr m = {.msg_iov = &iov,
	                   .msg_iovlen = 1,
	                   .msg_control = ctl,
	                   .msg_controllen = sizeof(ctl)};
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	int fd = memfd_create("hostile", MFD_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)(page + len)), 0);
	head.fd = fd;
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(fd));
	assert_int_equal(sendmsg(sock, &m, MSG_NOSIGNAL), (ssize_t)sizeof(head));
	return fd;
}

/* The exit status of agent pid once its socket is closed. */
static int agent_exit(int sock, pid_t pid)
{
	int st;

	close(sock);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

/* A setup of one object and one buffer of buf_len bytes, the agent on cpu. */
static struct agent_setup setup_of(uint64_t buf_len, int cpu)
{
	return (struct agent_setup){.buf_len = buf_len,
	                            .iodepth = 1,
	                            .nfiles = 1,
	                            .nbufs = 1,
	                            .nworkers = 1,
	                            .cpu = cpu};
}

/*
 * Start an agent and tell it su, the object (of size bytes; 0: not sent) and a buffer of map
 * bytes (0: not sent); its first message (init's) into *m when init is awaited.  The buffer's memfd
 * in *fd.
 */
static pid_t agent_told(const struct agent_setup *su, uint64_t size, size_t map, int *sock, int *fd,
                        struct agent_hdr *m)
{
	struct agent_file f = {.size = size, .name = "s3://b/obj"};
	pid_t pid = agent_start(sock);

	*fd = -1;
	assert_int_equal(send(*sock, su, sizeof(*su), MSG_NOSIGNAL), (ssize_t)sizeof(*su));
	if (size)
		assert_true(send(*sock, &f, sizeof(f.size) + strlen(f.name), MSG_NOSIGNAL) > 0);
	if (!map)
		return pid;
	*fd = send_buf(*sock, map);
	if (m) {
		assert_true(recv(*sock, m, sizeof(*m), 0) >= (ssize_t)sizeof(*m));
		assert_int_equal(m->rc, 0); /* init went well */
	}
	return pid;
}

/* The first CPU this thread may use. */
static int first_cpu(void)
{
	cpu_set_t set;
	int cpu = 0;

	assert_int_equal(sched_getaffinity(0, sizeof(set), &set), 0);
	while (!CPU_ISSET(cpu, &set))
		cpu++;
	return cpu;
}

/*
 * A hostile application: setups and requests past what the setup allows are refused by the
 * agent, which says why and stops, instead of writing where no buffer is (a GET of 8 MiB into
 * a buffer of 1 MiB, a buffer index past the buffers...).
 */
static void hostile_application(void **state)
{
	const struct {
		struct agent_req r;
		unsigned len; /* bytes of the request message; 0: the whole request */
		const char *want;
	} cases[] = {
	        {{.len = 8u << 20}, 0, "8388608 bytes into a buffer of 1048576"},
	        {{.len = BS, .idx = 5}, 0, "buffer 5 of 1"},
	        {{.len = BS, .file = 3}, 0, "object 3 of 1"},
	        {{.len = BS, .op = 7}, 0, "operation 7"},
	        {{.len = BS, .op = ENGINE_OP_WRITE}, 0, "a write to a job that only reads"},
	        {{.len = BS, .off = UINT64_MAX}, 0, "offset 18446744073709551615"},
	        {{.len = 0}, 0, "0 bytes into a buffer"},
	        {{.len = BS}, 3, "a message of 3 bytes, not whole requests"},
	};
	const int cpu = first_cpu();

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct agent_setup su = setup_of(1u << 20, cpu);
		struct agent_hdr h;
		int sock, fd;
		pid_t pid = agent_told(&su, OBJ_SIZE, su.buf_len, &sock, &fd, &h);

		assert_true(send(sock, &cases[i].r,
		                 cases[i].len ? cases[i].len : sizeof(cases[i].r), 0) > 0);
		memset(&h, 0, sizeof(h));
		assert_true(recv(sock, &h, sizeof(h), 0) >= (ssize_t)sizeof(h));
		if (h.rc != -EPROTO || !strstr(h.text, cases[i].want))
			fail_msg("case %zu: rc %d '%.200s', wanted '%s'", i, h.rc, h.text,
			         cases[i].want);
		assert_int_equal(agent_exit(sock, pid), 1);
		close(fd);
	}

	/*
	 * A fair session ends with exit 0: under ASan that also says that the agent freed what
	 * it held (LeakSanitizer makes a leak the exit status), as it did not.
	 */
	{
		const struct agent_setup su = setup_of(BS, cpu);
		const struct agent_req ok = {.len = BS, .op = ENGINE_OP_READ};
		struct {
			struct agent_hdr h;
			struct agent_done d;
		} m;
		int sock, fd;
		pid_t pid = agent_told(&su, OBJ_SIZE, su.buf_len, &sock, &fd, &m.h);

		assert_int_equal(send(sock, &ok, sizeof(ok), 0), (ssize_t)sizeof(ok));
		assert_int_equal(recv(sock, &m, sizeof(m), 0), (ssize_t)sizeof(m));
		assert_int_equal(m.h.n, 1);
		assert_int_equal(m.d.res, BS);
		shutdown(sock, SHUT_WR); /* the application is done: the agent reports and ends */
		assert_true(recv(sock, &m, sizeof(m), 0) >= (ssize_t)sizeof(m.h));
		assert_int_equal(m.h.rc, 1);
		assert_int_equal(agent_exit(sock, pid), 0);
		close(fd);
	}

	/* setups the agent cannot mean: it ends at once, touching nothing */
	for (int k = 0; k < 4; k++) {
		struct agent_setup su = setup_of(1u << 20, cpu);
		int sock, fd;
		pid_t pid;

		if (k == 0)
			su.iodepth = 0;
		if (k == 1)
			su.cpu = CPU_SETSIZE + 5;
		/* k == 2: a buffer smaller than buf_len, which mapping would fault past;
		 * k == 3: an object of 2^63 bytes */
		pid = agent_told(&su,
		                 k == 3   ? 1ull << 63
		                 : k == 2 ? OBJ_SIZE
		                          : 0,
		                 k == 2 ? 4096 : 0, &sock, &fd, NULL);
		assert_int_equal(agent_exit(sock, pid), 1);
		if (fd >= 0)
			close(fd);
	}
}

int main(int argc, char **argv)
{
	/* the agent process: s3-agent starts this program again */
	if (argc == 2 && !strcmp(argv[1], S3_AGENT_ARG)) {
		const char *fake = getenv("LLMIO_TEST_FAKE_AGENT");

		if (fake)
			return fake_agent(S3_AGENT_FD, (enum fake)strtol(fake, NULL, 10));
		return s3_agent_serve(S3_AGENT_FD);
	}
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(bytes_identical),     cmocka_unit_test(agent_spawned),
	        cmocka_unit_test(agent_killed),        cmocka_unit_test(fake_agent_refused),
	        cmocka_unit_test(hostile_application),
	};

	s3_loopback_pattern(obj, sizeof(obj));
	s3_loopback_serve(conn);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
