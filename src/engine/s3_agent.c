/* SPDX-License-Identifier: MIT */
/*
 * s3-agent: a STAND-IN for an object-storage client moved off the host (a DPU, as OS2G
 * does).  The s3 engine runs in a separate agent process pinned to its own CPU; the
 * application's buffers are shared memory both processes map, so the agent's Range GETs land
 * in them and its PUTs send from them, and the application never copies a payload.  What the
 * application does per I/O is what it would do with a DPU: post a request, wait for its
 * completion.  The result reports the application's CPU (cpu.proc_s, the process) and the
 * agent's (wire.agent_s) apart: the agent's is the CPU a DPU would take off the host.  It is
 * a stand-in: the agent still runs on this host's CPUs and memory bus.
 *
 *  - buffers: buf_alloc makes each a memfd mapped MAP_SHARED; init passes the memfds to the
 *    agent over its socket (SCM_RIGHTS), and the agent maps the same pages;
 *  - the agent is a fresh process: posix_spawn of this program (/proc/self/exe, or
 *    LLMIO_AGENT_EXE) as `PROGRAM __s3-agent`, its socket on fd 3 (s3_agent_serve()), never a
 *    fork of this multithreaded process, whose other threads may hold locks (OpenSSL's, the
 *    loader's) that a forked child would find held forever;
 *  - requests and completions travel as SOCK_SEQPACKET messages on a socketpair, one message
 *    per commit or per batch of completions (the doorbell a DPU queue would ring); each
 *    completion message carries the agent's CPU time and wire counters since the last one;
 *  - the agent's death is seen as the socket's end: every I/O in flight fails with one line.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/error.h"
#include "engine/engine.h"
#include "engine/s3.h"
#include "engine/s3_agent.h"

extern char **environ;

struct agent_opts {
	int cpu; /* the agent's CPU; -1: the last CPU this thread may use */
};

static const struct llmio_optdesc agent_options[] = {
        {
                .name = "agent_cpu",
                .type = OPTD_INT,
                OPTD_FIELD(struct agent_opts, cpu),
                .scope = OPTD_SCOPE_ENGINE,
                .def = "-1",
                .help = "CPU the agent process (the off-host client stand-in) is pinned to; "
                        "the worker thread leaves it; -1: the last CPU the thread may use",
                .min = -1,
                .max = CPU_SETSIZE - 1,
                .fio_kind = OPTD_FIO_NONE,
                .fio_note = "fio has no off-host client: its http engine runs in the job's "
                            "own threads",
        },
        {.name = NULL},
};

struct agent {
	pid_t pid;
	int sock;
	int cpu;
	unsigned depth, nflight, nbatch;
	struct agent_req *batch;
	struct io_req **flight; /* by buffer index */
	struct agent_hdr *msg;  /* received messages: header + depth records */
	size_t msglen;
	uint32_t mpos;    /* records of msg already handed out */
	size_t notes_len; /* the s3 engine's notes at init: its final notes add to them */
	bool ready;       /* init's message is in: a failure from now on is the agent's */
	bool dead;
	const atomic_int *stop; /* the job's stop flag (engine_setup.stop), or NULL */
	bool stop_sent;         /* the agent was told (SIGUSR1) to abandon what is in flight */
	char why[256];          /* what the agent broke of the protocol, when it did */
};

static int agent_probe(char *why, size_t len)
{
	return engine_find("s3")->probe(why, len);
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The agent's side of a message: the header with what was counted since the last one. */
static void agent_send(int sock, struct agent_hdr *h, struct engine_ctx *ctx, uint64_t *cpu0)
{
	uint64_t now = cpu_ns();

	h->c = ctx->counters;
	ctx->counters = (struct engine_counters){.known = true};
	h->cpu_ns = now - *cpu0;
	*cpu0 = now;
	(void)!send(sock, h, sizeof(*h) + h->n * sizeof(struct agent_done), MSG_NOSIGNAL);
	h->n = 0;
	h->text[0] = '\0';
}

static void agent_done_io(struct agent_hdr *h, struct engine_ctx *ctx, const struct io_req *io)
{
	struct agent_done *d = (struct agent_done *)(h + 1);

	d[h->n++] = (struct agent_done){.res = io->res, .idx = io->buf_idx};
	if (io->res < 0 && !h->text[0])
		memcpy(h->text, ctx->ioerr, sizeof(ctx->ioerr));
}

/*
 * Is request r one the setup allows?  The application side is not trusted: an index past the
 * buffers, a length past a buffer (a GET of 8 MiB into a 1 MiB buffer) or a second request on
 * a buffer in flight would have the s3 engine write where no buffer is.  NULL, or the reason.
 */
static const char *bad_request(const struct agent_req *r, const struct engine_setup *s,
                               const bool *busy, char *why, size_t len)
{
	if (r->idx >= s->nbufs || r->idx >= s->iodepth)
		snprintf(why, len, "buffer %u of %u", r->idx,
		         s->nbufs < s->iodepth ? s->nbufs : s->iodepth);
	else if (busy[r->idx])
		snprintf(why, len, "buffer %u, which is in flight already", r->idx);
	else if (r->file >= s->nfiles)
		snprintf(why, len, "object %u of %u", r->file, s->nfiles);
	else if (r->op != ENGINE_OP_READ && r->op != ENGINE_OP_WRITE)
		snprintf(why, len, "operation %u", r->op);
	else if (r->op == ENGINE_OP_WRITE && !s->writable)
		snprintf(why, len, "a write to a job that only reads");
	else if (!r->len || r->len > s->buf_len)
		snprintf(why, len, "%u bytes into a buffer of %zu", r->len, s->buf_len);
	else if (r->off > UINT64_MAX - r->len)
		snprintf(why, len, "offset %llu", (unsigned long long)r->off);
	else
		return NULL;
	return why;
}

/* The agent process: the s3 engine on the shared buffers, driven by the socket. */
/*
 * The agent's copy of the job's stop flag: the application raises SIGUSR1 when its job must end
 * (runtime, Ctrl-C), and the agent's s3 engine then abandons what it has in flight, as it does
 * in the application's own process (engine_setup.stop).
 */
static atomic_int agent_stop;

static void on_stop_signal(int sig)
{
	(void)sig;
	atomic_store(&agent_stop, 1);
}

static int agent_main(int sock, const struct engine_setup *s, int cpu)
{
	const struct engine_ops *s3 = engine_find("s3");
	struct engine_setup hs = *s;
	struct engine_ctx ctx = {0};
	struct llmio_error e = {0};
	const size_t msglen = sizeof(struct agent_hdr) + s->iodepth * sizeof(struct agent_done);
	struct agent_hdr *h = calloc(1, msglen);
	struct agent_req *rq = calloc(s->iodepth, sizeof(*rq));
	struct io_req *ios = calloc(s->iodepth, sizeof(*ios));
	struct io_req **evs = calloc(s->iodepth, sizeof(*evs));
	bool *busy = calloc(s->iodepth, sizeof(*busy));
	void *opts = calloc(1, s3->opts_size ? s3->opts_size : 1);
	uint64_t cpu0 = cpu_ns();
	unsigned nflight = 0;
	char why[128];
	cpu_set_t set;
	int ret = 1;

	if (!h || !rq || !ios || !evs || !busy || !opts)
		goto free_all;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	h->rc = sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
	if (h->rc)
		llmio_err(&e, h->rc, "s3-agent: pinning the agent to CPU %d: %s", cpu,
		          strerror(-h->rc));
	if (!h->rc)
		h->rc = engine_opts_parse(s3, "", opts, &e);
	hs.opts = opts;
	hs.stop = &agent_stop;
	if (!h->rc) {
		struct sigaction sa = {.sa_handler = on_stop_signal};

		sigemptyset(&sa.sa_mask);
		h->rc = sigaction(SIGUSR1, &sa, NULL) ? -errno : 0;
	}
	if (!h->rc)
		h->rc = s3->init(&ctx, &hs, &e);
	snprintf(h->text, sizeof(h->text), "%s", h->rc ? e.msg : ctx.notes);
	agent_send(sock, h, &ctx, &cpu0);
	if (h->rc)
		goto free_all;
	for (;;) {
		ssize_t got = recv(sock, rq, s->iodepth * sizeof(*rq), nflight ? MSG_DONTWAIT : 0);

		if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR))
			break; /* the application is done (or gone) */
		if (got == (ssize_t)sizeof(*rq) && rq->op == AGENT_FINISH) {
			/* everything is reaped: the answer is one message of no completions */
			h->rc = AGENT_RC_FINISHED;
			h->result = s3->finish(&ctx);
			memcpy(h->text, ctx.ioerr, sizeof(ctx.ioerr));
			agent_send(sock, h, &ctx, &cpu0);
			h->rc = 0;
			continue;
		}
		if (got > 0 && got % (ssize_t)sizeof(*rq)) {
			snprintf(why, sizeof(why), "a message of %zd bytes, not whole requests",
			         got);
			goto refuse;
		}
		for (unsigned i = 0; got > 0 && i < (size_t)got / sizeof(*rq); i++) {
			struct io_req *io;

			if (bad_request(&rq[i], s, busy, why, sizeof(why)))
				goto refuse;
			io = &ios[rq[i].idx];
			*io = (struct io_req){.buf = s->bufs[rq[i].idx],
			                      .off = rq[i].off,
			                      .len = rq[i].len,
			                      .file = rq[i].file,
			                      .buf_idx = rq[i].idx,
			                      .op = (enum engine_op)rq[i].op};
			if (s3->queue(&ctx, io) == ENGINE_Q_COMPLETED) {
				agent_done_io(h, &ctx, io);
			} else {
				busy[io->buf_idx] = true;
				nflight++;
			}
		}
		if (got > 0 && s3->commit(&ctx) < 0)
			break;
		if (nflight) {
			/* new requests may be waiting: look again before blocking */
			int n = s3->reap(&ctx, got > 0 ? 0 : 1, evs, s->iodepth);

			if (n < 0)
				break;
			for (int i = 0; i < n; i++) {
				busy[evs[i]->buf_idx] = false;
				agent_done_io(h, &ctx, evs[i]);
			}
			nflight -= (unsigned)n;
		}
		if (h->n)
			agent_send(sock, h, &ctx, &cpu0);
	}
	s3->cleanup(&ctx); /* aborts an unfinished upload; cleanup=1 deletes */
	h->rc = 1;
	snprintf(h->text, sizeof(h->text), "%s", ctx.notes);
	agent_send(sock, h, &ctx, &cpu0);
	ret = 0;
	goto free_all;

refuse:
	/* what is in flight may still land in the buffers: nothing more is started */
	s3->cleanup(&ctx);
	h->n = 0;
	h->rc = -EPROTO;
	snprintf(h->text, sizeof(h->text),
	         "s3-agent: the application asked for %s; the agent refused it and stopped", why);
	agent_send(sock, h, &ctx, &cpu0);
free_all:
	free(opts);
	free(busy);
	free(evs);
	free(ios);
	free(rq);
	free(h);
	return ret;
}

/* One message and the fd it carries (SCM_RIGHTS), or -1; its length, or -1 / 0 at the end. */
static ssize_t recv_fd(int sock, void *buf, size_t len, int *fd)
{
	char ctl[CMSG_SPACE(sizeof(int))];
	struct iovec iov = {.iov_base = buf, .iov_len = len};
	struct msghdr m = {.msg_iov = &iov,
	                   .msg_iovlen = 1,
	                   .msg_control = ctl,
	                   .msg_controllen = sizeof(ctl)};
	struct cmsghdr *c;
	ssize_t n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);

	*fd = -1;
	c = n > 0 ? CMSG_FIRSTHDR(&m) : NULL;
	if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
	    c->cmsg_len == CMSG_LEN(sizeof(*fd)))
		memcpy(fd, CMSG_DATA(c), sizeof(*fd));
	return n;
}

static int send_fd(int sock, const void *buf, size_t len, int fd)
{
	char ctl[CMSG_SPACE(sizeof(int))] = {0};
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
	struct msghdr m = {.msg_iov = &iov,
	                   .msg_iovlen = 1,
	                   .msg_control = ctl,
	                   .msg_controllen = sizeof(ctl)};
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(fd));
	return sendmsg(sock, &m, MSG_NOSIGNAL) == (ssize_t)len ? 0 : -errno;
}

/* Is the setup one the application could mean?  (The agent trusts nothing it is sent.) */
static bool setup_sane(const struct agent_setup *su)
{
	return su->nfiles && su->nfiles <= AGENT_MAX_FILES && su->nbufs &&
	       su->nbufs <= AGENT_MAX_DEPTH && su->iodepth && su->iodepth <= AGENT_MAX_DEPTH &&
	       su->nworkers && su->nworkers <= AGENT_MAX_WORKERS && su->buf_len &&
	       su->buf_len <= AGENT_MAX_BUF && su->writable <= 1 && su->cpu >= 0 &&
	       su->cpu < CPU_SETSIZE;
}

int s3_agent_serve(int sock)
{
	const size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct agent_setup su;
	struct engine_setup s = {0};
	struct agent_file *f = NULL;
	char **names = NULL;
	uint64_t *sizes = NULL, *maps = NULL;
	void **bufs = NULL;
	uint32_t nnames = 0, nmaps = 0;
	int fd, ret = 1;

	prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive the application */
	if (recv(sock, &su, sizeof(su), 0) != (ssize_t)sizeof(su) || !setup_sane(&su))
		return 1;
	f = calloc(1, sizeof(*f));
	names = calloc(su.nfiles, sizeof(*names));
	sizes = calloc(su.nfiles, sizeof(*sizes));
	bufs = calloc(su.nbufs, sizeof(*bufs));
	maps = calloc(su.nbufs, sizeof(*maps));
	if (!f || !names || !sizes || !bufs || !maps)
		goto out;
	for (; nnames < su.nfiles; nnames++) {
		ssize_t n = recv(sock, f, sizeof(*f) - 1, 0);

		if (n <= (ssize_t)sizeof(f->size) || f->size > AGENT_MAX_OBJECT)
			goto out;
		((char *)f)[n] = '\0';
		sizes[nnames] = f->size;
		names[nnames] = strdup(f->name);
		if (!names[nnames])
			goto out;
	}
	for (; nmaps < su.nbufs; nmaps++) {
		struct agent_buf_head head;
		struct stat st;
		char *p;

		if (recv_fd(sock, &head, sizeof(head), &fd) != (ssize_t)sizeof(head) || fd < 0)
			goto out;
		/* the memfd's own size, not the one the message claims, and room for buf_len */
		if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
		    (uint64_t)st.st_size < page + su.buf_len) {
			close(fd);
			goto out;
		}
		p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		close(fd);
		if (p == MAP_FAILED)
			goto out;
		maps[nmaps] = (uint64_t)st.st_size;
		bufs[nmaps] = p + page;
	}
	s.names = (const char *const *)names;
	s.file_sizes = sizes;
	s.nfiles = su.nfiles;
	s.bufs = bufs;
	s.nbufs = su.nbufs;
	s.buf_len = su.buf_len;
	s.iodepth = su.iodepth;
	s.nworkers = su.nworkers;
	s.writable = su.writable;
	ret = agent_main(sock, &s, su.cpu);
out:
	for (uint32_t i = 0; i < nmaps; i++)
		munmap((char *)bufs[i] - page, maps[i]);
	for (uint32_t i = 0; i < nnames; i++)
		free(names[i]);
	free(maps);
	free(bufs);
	free(sizes);
	free(names);
	free(f);
	return ret;
}

/* The last CPU in this thread's mask, and the mask less it (the application's). */
static int pick_cpu(int want, cpu_set_t *app, struct llmio_error *e)
{
	int last = -1;

	if (sched_getaffinity(0, sizeof(*app), app))
		return llmio_err(e, -errno, "s3-agent: reading this thread's CPUs: %s",
		                 strerror(errno));
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, app))
			last = c;
	if (want < 0)
		want = last;
	if (!CPU_ISSET(want, app))
		return llmio_err(
		        e, -EINVAL,
		        "s3-agent: agent_cpu=%d is not a CPU this thread may use (the last "
		        "one is %d); choose one of them",
		        want, last);
	CPU_CLR(want, app);
	return want;
}

/* The agent broke the protocol: it is treated as gone, and the I/Os in flight fail saying so. */
static int agent_broke(struct agent *a, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(a->why, sizeof(a->why), fmt, ap);
	va_end(ap);
	a->dead = true;
	a->msg->n = 0;
	a->mpos = 0;
	return -EPROTO;
}

/*
 * The next message from the agent, checked before anything in it is used: the agent side is
 * not trusted either (a fake agent, or a broken one, must not crash the application).
 * 1, 0 when none is waiting (!wait), or -EPIPE / -EPROTO: the agent is gone or broke the
 * protocol (a->dead).
 */
static int agent_recv(struct engine_ctx *ctx, struct agent *a, bool wait)
{
	struct engine_counters *c = &ctx->counters;
	ssize_t n;

	/* a message already waiting costs one call, as without the stop; only a wait polls, so
	 * that the job's stop is passed on within 200 ms, whatever the agent's server does */
	n = recv(a->sock, a->msg, a->msglen, MSG_DONTWAIT);
	if (wait && n < 0 && errno == EAGAIN) {
		while (a->stop && !a->stop_sent) {
			struct pollfd p = {.fd = a->sock, .events = POLLIN};
			const int r = poll(&p, 1, 200);

			if (r > 0 || (r < 0 && errno != EINTR))
				break;
			if (atomic_load(a->stop) && a->pid > 0) {
				kill(a->pid, SIGUSR1);
				a->stop_sent = true;
			}
		}
		n = recv(a->sock, a->msg, a->msglen, 0);
	}

	a->mpos = 0;
	if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
		a->msg->n = 0;
		return 0;
	}
	if (n < (ssize_t)sizeof(*a->msg)) {
		a->dead = true;
		a->msg->n = 0;
		return -EPIPE;
	}
	a->msg->text[sizeof(a->msg->text) - 1] = '\0';
	if (a->msg->n > a->depth ||
	    (size_t)n != sizeof(*a->msg) + a->msg->n * sizeof(struct agent_done))
		return agent_broke(a,
		                   "s3-agent: the agent process %d sent %zd bytes for %u "
		                   "completions (at most %u)",
		                   (int)a->pid, n, a->msg->n, a->depth);
	if (a->ready && a->msg->rc < 0) /* the agent refused a request of ours */
		return agent_broke(a, "%s", a->msg->text);
	c->known = true;
	c->wire_rx += a->msg->c.wire_rx;
	c->wire_tx += a->msg->c.wire_tx;
	c->requests += a->msg->c.requests;
	c->retries += a->msg->c.retries;
	c->hash_ns += a->msg->c.hash_ns;
	c->copy_ns += a->msg->c.copy_ns;
	c->agent_cpu_ns += a->msg->cpu_ns;
	if (a->msg->text[0] && a->msg->n)
		snprintf(ctx->ioerr, sizeof(ctx->ioerr), "%.*s", (int)sizeof(ctx->ioerr) - 1,
		         a->msg->text);
	return 1;
}

static void agent_free(struct agent *a)
{
	if (a->sock >= 0)
		close(a->sock);
	if (a->pid > 0) {
		kill(a->pid, SIGKILL);
		waitpid(a->pid, NULL, 0);
	}
	free(a->batch);
	free(a->flight);
	free(a->msg);
	free(a);
}

/* The program the agent runs: this one, unless LLMIO_AGENT_EXE names another. */
static const char *agent_exe(void)
{
	const char *exe = getenv("LLMIO_AGENT_EXE");

	return exe && *exe ? exe : "/proc/self/exe";
}

static int agent_gone(struct llmio_error *e)
{
	return llmio_err(e, -EIO,
	                 "s3-agent: the agent process exited at start: it runs as `%s " S3_AGENT_ARG
	                 "`; a program other than llmio sets LLMIO_AGENT_EXE to llmio's path",
	                 agent_exe());
}

/* Start the agent: this program anew, `PROGRAM __s3-agent`, with sock as its fd 3. */
static int agent_spawn(struct agent *a, int sock, struct llmio_error *e)
{
	char *argv[] = {(char *)"llmio-s3-agent", (char *)S3_AGENT_ARG, NULL};
	posix_spawn_file_actions_t fa;
	int ret;

	ret = posix_spawn_file_actions_init(&fa);
	/* dup2 onto fd 3 clears its close-on-exec; sock is never 3 itself (fds 0-2 are open) */
	if (!ret)
		ret = posix_spawn_file_actions_adddup2(&fa, sock, S3_AGENT_FD);
	if (!ret)
		ret = posix_spawn(&a->pid, agent_exe(), &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (ret) {
		a->pid = 0;
		return llmio_err(e, -ret, "s3-agent: starting the agent process (%s): %s",
		                 agent_exe(), strerror(ret));
	}
	return 0;
}

/* Tell the agent its job: the setup, each object, each buffer's memfd. */
static int agent_hello(struct agent *a, const struct engine_setup *s, struct llmio_error *e)
{
	const size_t page = (size_t)sysconf(_SC_PAGESIZE);
	const struct agent_setup su = {.buf_len = s->buf_len,
	                               .iodepth = a->depth,
	                               .nfiles = s->nfiles,
	                               .nbufs = s->nbufs,
	                               .nworkers = s->nworkers,
	                               .writable = s->writable,
	                               .cpu = a->cpu};
	struct agent_file f;
	int ret = 0;

	if (send(a->sock, &su, sizeof(su), MSG_NOSIGNAL) != (ssize_t)sizeof(su))
		ret = -errno;
	for (unsigned i = 0; !ret && i < s->nfiles; i++) {
		size_t len = strlen(s->names[i]);

		if (len >= sizeof(f.name))
			return llmio_err(e, -ENAMETOOLONG, "s3-agent: %s: the name is too long",
			                 s->names[i]);
		f.size = s->file_sizes[i];
		memcpy(f.name, s->names[i], len);
		if (send(a->sock, &f, sizeof(f.size) + len, MSG_NOSIGNAL) < 0)
			ret = -errno;
	}
	for (unsigned i = 0; !ret && i < s->nbufs; i++) {
		const struct agent_buf_head *head = (const void *)((const char *)s->bufs[i] - page);

		ret = send_fd(a->sock, head, sizeof(*head), head->fd);
	}
	return ret ? agent_gone(e) : 0;
}

static int agent_init(struct engine_ctx *ctx, const struct engine_setup *s, struct llmio_error *e)
{
	const struct agent_opts *o = s->opts;
	struct agent *a = calloc(1, sizeof(*a));
	cpu_set_t app;
	int sv[2], ret;

	ctx->priv = NULL;
	if (!a)
		return llmio_err(e, -ENOMEM, "s3-agent: out of memory for the engine state");
	a->sock = -1;
	a->depth = s->iodepth ? s->iodepth : 1;
	a->msglen = sizeof(*a->msg) + a->depth * sizeof(struct agent_done);
	a->batch = calloc(a->depth, sizeof(*a->batch));
	a->flight = calloc(a->depth, sizeof(*a->flight));
	a->msg = calloc(1, a->msglen);
	if (!a->batch || !a->flight || !a->msg) {
		ret = llmio_err(e, -ENOMEM, "s3-agent: out of memory for the engine state");
		goto fail;
	}
	a->cpu = ret = pick_cpu(o->cpu, &app, e);
	if (ret < 0)
		goto fail;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		ret = llmio_err(e, -errno, "s3-agent: socketpair: %s", strerror(errno));
		goto fail;
	}
	a->sock = sv[0];
	ret = agent_spawn(a, sv[1], e);
	close(sv[1]);
	if (!ret)
		ret = agent_hello(a, s, e);
	if (ret)
		goto fail;
	ret = agent_recv(ctx, a, true);
	if (ret < 0 || a->msg->rc) {
		/* init's failure is -errno: anything else from the agent is a broken protocol */
		ret = a->why[0] ? llmio_err(e, -EPROTO, "%s", a->why)
		      : ret < 0 ? agent_gone(e)
		                : llmio_err(e, a->msg->rc < 0 ? a->msg->rc : -EPROTO, "%s",
		                            a->msg->text);
		goto fail;
	}
	a->notes_len = strlen(a->msg->text);
	a->msg->n = 0;
	a->stop = s->stop;
	a->ready = true;
	/* the agent's CPU is its own: the application thread leaves it, when it has others */
	if (CPU_COUNT(&app))
		sched_setaffinity(0, sizeof(app), &app);
	engine_appendf(ctx->notes, sizeof(ctx->notes),
	               "off-host client STAND-IN (for a DPU, as in OS2G): agent process %d on CPU "
	               "%d%s, buffers in shared memory, requests over a socketpair; %s",
	               (int)a->pid, a->cpu,
	               CPU_COUNT(&app) ? " (the worker thread leaves it)"
	                               : " (shared with the worker)",
	               a->msg->text);
	ctx->priv = a;
	return 0;

fail:
	agent_free(a);
	return ret;
}

static int agent_queue(struct engine_ctx *ctx, struct io_req *io)
{
	struct agent *a = ctx->priv;

	if (a->dead) {
		io->res = -EPIPE;
		return ENGINE_Q_COMPLETED;
	}
	a->flight[io->buf_idx] = io;
	a->batch[a->nbatch++] = (struct agent_req){
	        .off = io->off, .len = io->len, .idx = io->buf_idx, .file = io->file, .op = io->op};
	return ENGINE_Q_QUEUED;
}

static int agent_commit(struct engine_ctx *ctx)
{
	struct agent *a = ctx->priv;

	if (!a->nbatch)
		return 0;
	if (!a->dead && send(a->sock, a->batch, a->nbatch * sizeof(*a->batch), MSG_NOSIGNAL) < 0)
		a->dead = true; /* reap fails what is in flight */
	a->nflight += a->nbatch;
	a->nbatch = 0;
	return 0;
}

/* The agent is gone (or broke the protocol): everything in flight fails, saying so. */
static int fail_flight(struct engine_ctx *ctx, struct agent *a, struct io_req **evs, unsigned max)
{
	unsigned n = 0;

	for (unsigned i = 0; i < a->depth && n < max; i++) {
		if (!a->flight[i])
			continue;
		a->flight[i]->res = a->why[0] ? -EPROTO : -EPIPE;
		evs[n++] = a->flight[i];
		a->flight[i] = NULL;
	}
	a->nflight -= n;
	if (a->why[0])
		snprintf(ctx->ioerr, sizeof(ctx->ioerr), "%s", a->why);
	else
		snprintf(ctx->ioerr, sizeof(ctx->ioerr),
		         "s3-agent: the agent process %d exited with I/Os in flight (killed, or "
		         "it crashed): see the system log, and run --engine s3 to see the "
		         "client's own error",
		         (int)a->pid);
	return (int)n;
}

static int agent_reap(struct engine_ctx *ctx, unsigned min, struct io_req **evs, unsigned max)
{
	struct agent *a = ctx->priv;
	const struct agent_done *d = (const struct agent_done *)(a->msg + 1);
	unsigned n = 0;
	int r;

	agent_commit(ctx);
	while (n < max) {
		/* a message's completions are handed out over as many reaps as evs needs */
		if (a->mpos < a->msg->n) {
			const struct agent_done *x = &d[a->mpos++];
			struct io_req *io = x->idx < a->depth ? a->flight[x->idx] : NULL;

			/* a completion of an I/O in flight, with a result it can have */
			if (!io || x->res > (int64_t)io->len || x->res < -4095) {
				agent_broke(
				        a,
				        "s3-agent: the agent process %d completed buffer %u with "
				        "%lld: %s",
				        (int)a->pid, x->idx, (long long)x->res,
				        io ? "not a result of that I/O" : "no such I/O in flight");
				return (int)n + fail_flight(ctx, a, evs + n, max - n);
			}
			evs[n] = io;
			evs[n++]->res = x->res;
			a->flight[x->idx] = NULL;
			a->nflight--;
			continue;
		}
		if (!a->nflight)
			break;
		r = a->dead ? -EPIPE : agent_recv(ctx, a, n < min);
		if (r < 0)
			return (int)n + fail_flight(ctx, a, evs + n, max - n);
		if (!r)
			break;
	}
	return (int)n;
}

static void agent_cleanup(struct engine_ctx *ctx)
{
	struct agent *a = ctx->priv;
	struct io_req *evs[64];

	if (!a)
		return;
	while (a->nflight && agent_reap(ctx, 1, evs, 64) > 0)
		;
	/* the end of our side tells the agent to clean up (abort uploads, delete) and report */
	shutdown(a->sock, SHUT_WR);
	while (!a->dead && agent_recv(ctx, a, true) > 0) {
		if (a->msg->rc != 1)
			continue;
		if (strlen(a->msg->text) > a->notes_len) /* what its cleanup added to its notes */
			engine_appendf(ctx->notes, sizeof(ctx->notes), "%s",
			               a->msg->text + a->notes_len);
		break;
	}
	/* an agent that broke the protocol is not waited for: agent_free() kills it */
	if (!a->why[0] && waitpid(a->pid, NULL, 0) == a->pid)
		a->pid = 0;
	agent_free(a);
	ctx->priv = NULL;
}

/*
 * Shared memory both processes map: a memfd, whose fd init passes to the agent.  The first
 * page of the mapping keeps the fd and the mapping's length (struct agent_buf_head).
 */
static int agent_buf_alloc(const void *opts, void **buf, size_t len, const void *init,
                           struct llmio_error *e)
{
	const size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct agent_buf_head head = {.map = page + (len + page - 1) / page * page};
	char *p = MAP_FAILED;

	(void)opts;
	head.fd = memfd_create("llmio-s3-agent", MFD_CLOEXEC);
	if (head.fd >= 0 && !ftruncate(head.fd, (off_t)head.map))
		p = mmap(NULL, head.map, PROT_READ | PROT_WRITE, MAP_SHARED, head.fd, 0);
	if (p == MAP_FAILED) {
		int err = errno;

		if (head.fd >= 0)
			close(head.fd);
		return llmio_err(e, -err,
		                 "s3-agent: %zu bytes of shared memory: %s; lower bs or iodepth",
		                 len, strerror(err));
	}
	memcpy(p, &head, sizeof(head));
	if (init)
		memcpy(p + page, init, len);
	*buf = p + page;
	return 0;
}

static void agent_buf_free(const void *opts, void *buf)
{
	const size_t page = (size_t)sysconf(_SC_PAGESIZE);
	char *p = (char *)buf - page;
	struct agent_buf_head head;

	(void)opts;
	memcpy(&head, p, sizeof(head));
	close(head.fd);
	munmap(p, head.map);
}

/* The job ended: the agent's s3 engine says whether every object it began was written. */
static int agent_finish(struct engine_ctx *ctx)
{
	struct agent *a = ctx->priv;
	const struct agent_req rq = {.op = AGENT_FINISH};
	int r;

	if (a->dead || send(a->sock, &rq, sizeof(rq), MSG_NOSIGNAL) < 0)
		r = -EPIPE;
	else
		r = agent_recv(ctx, a, true);
	if (r < 0) {
		snprintf(ctx->ioerr, sizeof(ctx->ioerr),
		         "s3-agent: the agent process %d exited before the job's end: whether its "
		         "uploads completed is unknown",
		         (int)a->pid);
		return r;
	}
	if (a->msg->rc != AGENT_RC_FINISHED || a->msg->result > 0 || a->msg->result < -4095) {
		agent_broke(a, "s3-agent: the agent process %d answered the job's end with %d / %d",
		            (int)a->pid, a->msg->rc, a->msg->result);
		snprintf(ctx->ioerr, sizeof(ctx->ioerr), "%s", a->why);
		return -EPROTO;
	}
	if (a->msg->result)
		snprintf(ctx->ioerr, sizeof(ctx->ioerr), "%.*s", (int)sizeof(ctx->ioerr) - 1,
		         a->msg->text);
	return a->msg->result;
}

/* The agent's PUT returned 200 before the write completed: durable, nothing to flush. */
static int agent_sync(struct engine_ctx *ctx, unsigned file)
{
	(void)ctx;
	(void)file;
	return 0;
}

static int agent_target_resolve(const void *opts, const struct engine_target_req *rq,
                                struct engine_target *t, struct llmio_error *e)
{
	(void)opts;
	return engine_target_resolve_defaults(engine_find("s3"), rq, t, e);
}

/* `PROGRAM __s3-agent`, its socket on fd 3: this is the agent process (engine.h, process_main). */
static int agent_process_main(int argc, char *const *argv)
{
	int code;

	if (argc != 2 || strcmp(argv[1], S3_AGENT_ARG))
		return -1;
	code = s3_agent_serve(S3_AGENT_FD);
	return code < 0 ? 1 : code;
}

const struct engine_ops engine_s3_agent = {
        .abi_version = ENGINE_ABI_VERSION,
        .name = "s3-agent",
        .summary = "s3 in a separate agent process on its own CPU, data in shared memory: a "
                   "stand-in for an off-host (DPU) object client",
        .caps = ENGINE_CAP_ASYNC | ENGINE_CAP_OWN_TARGET | ENGINE_CAP_HOST_BUFS,
        .opts = agent_options,
        .opts_size = sizeof(struct agent_opts),
        .probe = agent_probe,
        .init = agent_init,
        .queue = agent_queue,
        .commit = agent_commit,
        .reap = agent_reap,
        .sync = agent_sync,
        .cleanup = agent_cleanup,
        .buf_alloc = agent_buf_alloc,
        .buf_free = agent_buf_free,
        .target_resolve = agent_target_resolve,
        .finish = agent_finish,
        .objects = &s3_objects, /* its objects are s3's, in the same store */
        .process_main = agent_process_main,
};
