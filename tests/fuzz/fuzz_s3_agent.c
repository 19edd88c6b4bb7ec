/* SPDX-License-Identifier: MIT */
/*
 * The s3-agent protocol (src/engine/s3_agent.c): the messages between the application side
 * (the engine's init / queue / commit / reap / cleanup) and the agent process
 * (s3_agent_serve()) over their SOCK_SEQPACKET socket.  Bit 0 of byte 0 chooses the side the
 * harness plays; the rest of the input is records, each a 16-bit little-endian length and that
 * many bytes, one record a message:
 *
 *  - the agent's side (bit 0 clear): s3_agent_serve() runs in a thread of this process on one
 *    end of a socketpair, and the harness sends it the records as the application would: the
 *    setup, one record per object, one per buffer (the harness attaches a memfd of the
 *    record's mapping length, as the application does, when it is 1 byte to 6 MiB), then
 *    batches of requests; then it closes its end, as the application does when it is done.
 *    The agent's s3 engine talks to a loopback server (fuzz_s3_common.h) that serves any
 *    range of any object, PUTs and multipart uploads.
 *  - the application's side (bit 0 set): byte 1 sets the job (iodepth 1 + bits 0-1, writes
 *    with bit 2, two objects with bit 3); the engine starts its agent as LLMIO_AGENT_EXE,
 *    which is fuzz_s3_agent_relay: it hands the agent's socket to this process and exits, and
 *    the harness reads the application's setup, then sends the records as the agent's
 *    messages, then their end (shutdown), and closes when the application is done.  A record
 *    is sent as it is when bit 15 of its length is set, else in a compact form: the header's
 *    fields before its text (struct agent_hdr), a byte t and t bytes of text (the harness pads
 *    the text to its 1024 bytes), then completion records.  The job queues what its buffers
 *    allow and reaps, for 8 rounds at most, then cleans up.
 *
 * s3_agent_serve() is an agent process's main: what it allocates and maps stays until the
 * process exits.  In this process the harness does what the exit would: it frees what the
 * agent's thread allocated and did not free (tracked with the sanitizer's allocation hooks;
 * not leaks, so LeakSanitizer is off in that thread) and unmaps the agent's buffers.
 */
#include "fuzz_s3_common.h"

#include <poll.h>
#include <sanitizer/allocator_interface.h>
#include <sanitizer/lsan_interface.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/eventfd.h>
#include <sys/un.h>

#include "base/error.h"
#include "engine/engine.h"
#include "engine/s3.h"
#include "engine/s3_agent.h" /* the protocol's messages */

#define HDR_FIELDS offsetof(struct agent_hdr, text)

#define APP_BS      4096u
#define MAX_DEPTH   4
#define MAP_MAX     (6u << 20)
#define BUF_NAME    "llmio-fuzz-agent-buf"
#define RECORD_MAX  0x7fffu
#define WAIT_MS     10000
#define OBJECT_SIZE (1u << 20)

/* ---- the loopback server the agent's s3 engine talks to: every object exists ---- */

static bool object_answer(int fd, const char *req)
{
	static const char zeros[65536];
	unsigned long long a = 0, b = 0;
	const char *r = strcasestr(req, "\r\nRange: bytes=");
	char hdr[512];
	int n;

	if (!strncmp(req, "HEAD ", 5)) {
		n = snprintf(hdr, sizeof(hdr), "HTTP/1.1 200 OK\r\nContent-Length: %u\r\n\r\n",
		             OBJECT_SIZE);
	} else if (!strncmp(req, "GET ", 4)) {
		if (!r || sscanf(r + 15, "%llu-%llu", &a, &b) != 2 || b < a || b - a >= MAP_MAX) {
			static const char no[] = "HTTP/1.1 416 Range Not Satisfiable\r\n"
			                         "Content-Length: 0\r\n\r\n";

			fuzz_s3_send(fd, no, sizeof(no) - 1);
			return true;
		}
		n = snprintf(hdr, sizeof(hdr),
		             "HTTP/1.1 206 Partial Content\r\nContent-Length: %llu\r\n\r\n",
		             b - a + 1);
		fuzz_s3_send(fd, hdr, (size_t)n);
		for (unsigned long long left = b - a + 1; left;) {
			size_t k = left < sizeof(zeros) ? (size_t)left : sizeof(zeros);

			fuzz_s3_send(fd, zeros, k);
			left -= k;
		}
		return true;
	} else if (!strncmp(req, "POST ", 5) && strstr(req, "?uploads")) {
		static const char body[] =
		        "<InitiateMultipartUploadResult><UploadId>up-1</UploadId>"
		        "</InitiateMultipartUploadResult>";

		n = snprintf(hdr, sizeof(hdr), "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n%s",
		             sizeof(body) - 1, body);
	} else if (!strncmp(req, "DELETE ", 7)) {
		n = snprintf(hdr, sizeof(hdr), "HTTP/1.1 204 No Content\r\n\r\n");
	} else { /* PUT, a part, completing an upload */
		n = snprintf(hdr, sizeof(hdr),
		             "HTTP/1.1 200 OK\r\nETag: \"e\"\r\nContent-Length: 0\r\n\r\n");
	}
	fuzz_s3_send(fd, hdr, (size_t)n);
	return true;
}

/* ---- what an exit would free: the agent thread's allocations (an open-addressed set) ---- */

#define TRACK_SLOTS (1u << 16)
#define TOMBSTONE   ((uintptr_t)1)

static uintptr_t track[TRACK_SLOTS];
static unsigned track_used;
static atomic_flag track_lock = ATOMIC_FLAG_INIT;
static atomic_bool track_active;
static __thread bool track_me;

static unsigned slot_of(uintptr_t p)
{
	return (unsigned)((p >> 4) * 2654435761u) & (TRACK_SLOTS - 1);
}

static void on_malloc(const volatile void *p, size_t n)
{
	(void)n;
	if (!track_me || !p)
		return;
	while (atomic_flag_test_and_set(&track_lock))
		;
	if (track_used < TRACK_SLOTS / 4 * 3) { /* beyond: left to leak, never a wrong free */
		unsigned i = slot_of((uintptr_t)p);

		while (track[i] > TOMBSTONE)
			i = (i + 1) & (TRACK_SLOTS - 1);
		track_used += !track[i];
		track[i] = (uintptr_t)p;
	}
	atomic_flag_clear(&track_lock);
}

static void on_free(const volatile void *p)
{
	if (!atomic_load(&track_active) || !p)
		return;
	while (atomic_flag_test_and_set(&track_lock))
		;
	for (unsigned i = slot_of((uintptr_t)p); track[i]; i = (i + 1) & (TRACK_SLOTS - 1))
		if (track[i] == (uintptr_t)p) {
			track[i] = TOMBSTONE;
			break;
		}
	atomic_flag_clear(&track_lock);
}

/* The agent's end: free what it kept, unmap the buffers it mapped. */
static void agent_exit(void)
{
	char line[512];
	FILE *maps;

	atomic_store(&track_active, false);
	for (unsigned i = 0; i < TRACK_SLOTS; i++)
		if (track[i] > TOMBSTONE)
			free((void *)track[i]);
	memset(track, 0, sizeof(track));
	track_used = 0;
	maps = fopen("/proc/self/maps", "re");
	if (!maps)
		abort();
	while (fgets(line, sizeof(line), maps)) {
		unsigned long lo, hi;

		if (strstr(line, "/memfd:" BUF_NAME) && sscanf(line, "%lx-%lx", &lo, &hi) == 2)
			munmap((void *)lo, hi - lo);
	}
	fclose(maps);
}

/* ---- records ---- */

/* The next record: its bytes and length; false at the end of the input. */
static bool record(const uint8_t **p, size_t *left, const uint8_t **rec, size_t *len, bool *raw)
{
	size_t n;

	if (*left < 2)
		return false;
	n = (size_t)((*p)[0] | (*p)[1] << 8);
	*raw = n & 0x8000;
	n &= RECORD_MAX;
	*p += 2;
	*left -= 2;
	n = n < *left ? n : *left;
	*rec = *p;
	*len = n;
	*p += n;
	*left -= n;
	return true;
}

/* Wait for fd to be ready for `events`, or for stop (when >= 0); false on stop or timeout. */
static bool wait_for(int fd, short events, int stop)
{
	struct pollfd pf[2] = {{.fd = fd, .events = events}, {.fd = stop, .events = POLLIN}};

	return poll(pf, stop >= 0 ? 2 : 1, WAIT_MS) > 0 && !(pf[1].revents & POLLIN) &&
	       pf[0].revents;
}

/* ---- the agent's side ---- */

static void *agent_thread(void *arg)
{
	int sock = (int)(intptr_t)arg;

	__lsan_disable();
	track_me = true;
	s3_agent_serve(sock);
	track_me = false;
	__lsan_enable();
	close(sock); /* the process's end: the application sees it */
	return NULL;
}

/* Read and drop what the agent sent. */
static void drain(int sock)
{
	char buf[4096];

	while (recv(sock, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
}

/* One message, with fd attached when >= 0; reading the agent's replies while it waits. */
static bool send_msg(int sock, const void *p, size_t len, int fd)
{
	char ctl[CMSG_SPACE(sizeof(int))] = {0};
	struct iovec iov = {.iov_base = (void *)p, .iov_len = len};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};

	if (fd >= 0) {
		struct cmsghdr *c;

		m.msg_control = ctl;
		m.msg_controllen = sizeof(ctl);
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(fd));
	}
	for (;;) {
		if (sendmsg(sock, &m, MSG_DONTWAIT | MSG_NOSIGNAL) >= 0)
			return true;
		if (errno != EAGAIN || !wait_for(sock, POLLOUT | POLLIN, -1))
			return false;
		drain(sock);
	}
}

static int buffer_fd(size_t map)
{
	int fd;

	if (!map || map > MAP_MAX)
		return -1;
	fd = memfd_create(BUF_NAME, MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, (off_t)map))
		abort();
	return fd;
}

static void agent_side(const uint8_t *p, size_t left)
{
	struct agent_setup su = {0};
	const uint8_t *rec;
	size_t len, nbufs = 0;
	bool raw;
	int sv[2];
	pthread_t t;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		abort();
	atomic_store(&track_active, true);
	if (pthread_create(&t, NULL, agent_thread, (void *)(intptr_t)sv[1]))
		abort();
	for (uint64_t i = 0; record(&p, &left, &rec, &len, &raw); i++) {
		int fd = -1;
		bool sent;

		if (!i && len >= sizeof(su)) {
			memcpy(&su, rec, sizeof(su));
			nbufs = su.nbufs < 64 ? su.nbufs : 64;
		} else if (i > su.nfiles && i <= su.nfiles + nbufs &&
		           len >= sizeof(struct agent_buf_head)) {
			struct agent_buf_head head;

			memcpy(&head, rec, sizeof(head));
			fd = buffer_fd(head.map);
		}
		sent = send_msg(sv[0], rec, len, fd);
		if (fd >= 0)
			close(fd);
		if (!sent)
			break;
	}
	shutdown(sv[0], SHUT_WR); /* the application is done */
	while (wait_for(sv[0], POLLIN, -1)) {
		char buf[4096];

		if (recv(sv[0], buf, sizeof(buf), 0) <= 0)
			break;
	}
	pthread_join(t, NULL);
	close(sv[0]);
	agent_exit();
}

/* ---- the application's side ---- */

static int relay_fd = -1; /* listening: fuzz_s3_agent_relay connects and hands over fd 3 */
static cpu_set_t cpus;    /* this thread's CPUs: agent init narrows them */

struct fake {
	const uint8_t *p;
	size_t left;
	int stop; /* eventfd: the job is over */
};

/* The agent's socket from the relay, or -1. */
static int relay_take(int stop)
{
	char ctl[CMSG_SPACE(sizeof(int))], byte;
	struct iovec iov = {.iov_base = &byte, .iov_len = 1};
	struct msghdr m = {.msg_iov = &iov,
	                   .msg_iovlen = 1,
	                   .msg_control = ctl,
	                   .msg_controllen = sizeof(ctl)};
	struct cmsghdr *c;
	int conn, fd = -1;

	if (!wait_for(relay_fd, POLLIN, stop))
		return -1;
	conn = accept4(relay_fd, NULL, NULL, SOCK_CLOEXEC);
	if (conn < 0)
		return -1;
	if (wait_for(conn, POLLIN, stop) && recvmsg(conn, &m, MSG_CMSG_CLOEXEC) == 1 &&
	    (c = CMSG_FIRSTHDR(&m)) && c->cmsg_type == SCM_RIGHTS)
		memcpy(&fd, CMSG_DATA(c), sizeof(fd));
	close(conn);
	return fd;
}

/* Read the application's hello: the setup, its objects, its buffers (their fds closed). */
static bool read_hello(int sock, int stop)
{
	struct agent_setup su;
	char buf[4096];

	if (!wait_for(sock, POLLIN, stop) || recv(sock, &su, sizeof(su), 0) != sizeof(su))
		return false;
	for (uint64_t i = 0; i < (uint64_t)su.nfiles + su.nbufs; i++) {
		char ctl[CMSG_SPACE(sizeof(int))];
		struct iovec iov = {.iov_base = buf, .iov_len = sizeof(buf)};
		struct msghdr m = {.msg_iov = &iov,
		                   .msg_iovlen = 1,
		                   .msg_control = ctl,
		                   .msg_controllen = sizeof(ctl)};
		struct cmsghdr *c;
		int fd;

		if (!wait_for(sock, POLLIN, stop) || recvmsg(sock, &m, MSG_CMSG_CLOEXEC) <= 0)
			return false;
		for (c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
			if (c->cmsg_type == SCM_RIGHTS) {
				memcpy(&fd, CMSG_DATA(c), sizeof(fd));
				close(fd);
			}
	}
	return true;
}

/* A record as the agent's message: as it is, or expanded from the compact form. */
static size_t agent_msg(const uint8_t *rec, size_t len, bool raw, uint8_t *out)
{
	struct agent_hdr *h = (struct agent_hdr *)out;
	size_t f = len < HDR_FIELDS ? len : HDR_FIELDS, t;

	if (raw) {
		memcpy(out, rec, len);
		return len;
	}
	memset(h, 0, sizeof(*h));
	memcpy(h, rec, f);
	rec += f;
	len -= f;
	if (len) {
		t = rec[0] < len - 1 ? rec[0] : len - 1;
		memcpy(h->text, rec + 1, t);
		rec += 1 + t;
		len -= 1 + t;
	}
	memcpy(out + sizeof(*h), rec, len);
	return sizeof(*h) + len;
}

/* The agent, played with the input's messages. */
static void *fake_agent(void *arg)
{
	static uint8_t out[sizeof(struct agent_hdr) + RECORD_MAX];
	struct fake *fk = arg;
	const uint8_t *rec;
	size_t len;
	bool raw;
	int sock = relay_take(fk->stop);

	if (sock < 0)
		return NULL;
	if (read_hello(sock, fk->stop))
		while (record(&fk->p, &fk->left, &rec, &len, &raw)) {
			size_t n = agent_msg(rec, len, raw, out);

			if (!wait_for(sock, POLLOUT, fk->stop) ||
			    send(sock, out, n, MSG_NOSIGNAL) < 0)
				break;
		}
	/* Then the end of the agent's messages; the socket stays open until the application is
	 * done, as an agent's does while it cleans up, so that whether a send of the application
	 * fails never depends on how far it got (the input alone decides what happens). */
	shutdown(sock, SHUT_WR);
	while (wait_for(sock, POLLIN, fk->stop)) {
		char buf[4096];

		if (recv(sock, buf, sizeof(buf), 0) <= 0)
			break;
	}
	close(sock);
	return NULL;
}

/* A job on the s3-agent engine: init, I/Os on its buffers for a few rounds, cleanup. */
static void job(const struct engine_ops *eng, const void *opts, unsigned depth, bool write,
                unsigned nfiles)
{
	const char *const names[] = {"s3://b/k0", "s3://b/k1"};
	const uint64_t sizes[] = {4 * APP_BS, 4 * APP_BS};
	void *bufs[MAX_DEPTH] = {0};
	struct io_req io[MAX_DEPTH];
	bool busy[MAX_DEPTH] = {0};
	const struct engine_setup s =
	        fuzz_s3_setup(names, sizes, nfiles, bufs, depth, APP_BS, write, opts);
	struct engine_ctx ctx = {0};
	struct llmio_error e = {0};
	unsigned next = 0, b;

	for (b = 0; b < depth; b++)
		if (eng->buf_alloc(opts, &bufs[b], APP_BS, NULL, &e))
			goto out;
	if (eng->init(&ctx, &s, &e))
		goto out;
	for (unsigned round = 0; round < 8; round++) {
		struct io_req *evs[MAX_DEPTH];
		int n;

		for (b = 0; b < depth; b++, next++) {
			if (busy[b])
				continue;
			io[b] = (struct io_req){.buf = bufs[b],
			                        .off = (uint64_t)(next % 4) * APP_BS,
			                        .len = APP_BS,
			                        .file = (uint16_t)(next % nfiles),
			                        .buf_idx = (uint16_t)b,
			                        .op = write ? ENGINE_OP_WRITE : ENGINE_OP_READ};
			busy[b] = eng->queue(&ctx, &io[b]) != ENGINE_Q_COMPLETED;
		}
		if (eng->commit(&ctx) < 0)
			break;
		n = eng->reap(&ctx, 1, evs, depth);
		if (n <= 0)
			break;
		for (int i = 0; i < n; i++)
			if (evs[i]->buf_idx < depth)
				busy[evs[i]->buf_idx] = false;
	}
	eng->cleanup(&ctx);
out:
	for (b = 0; b < depth; b++)
		if (bufs[b])
			eng->buf_free(opts, bufs[b]);
}

static void app_side(const uint8_t *p, size_t left)
{
	const struct engine_ops *eng = engine_find("s3-agent");
	struct llmio_error e = {0};
	struct fake fk;
	uint8_t cfg;
	void *opts;
	pthread_t t;
	int c;

	if (!left)
		return;
	cfg = p[0];
	fk = (struct fake){.p = p + 1, .left = left - 1, .stop = eventfd(0, EFD_CLOEXEC)};
	opts = calloc(1, eng->opts_size);
	if (fk.stop < 0 || !opts || engine_opts_parse(eng, "", opts, &e) ||
	    pthread_create(&t, NULL, fake_agent, &fk))
		abort();
	job(eng, opts, 1 + (cfg & 3), cfg & 4, 1 + (cfg >> 3 & 1));
	if (eventfd_write(fk.stop, 1))
		abort();
	pthread_join(t, NULL);
	close(fk.stop);
	free(opts);
	/* a relay that connected too late is not the next input's */
	while ((c = accept4(relay_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0)
		close(c);
	sched_setaffinity(0, sizeof(cpus), &cpus);
}

/* The relay beside this program, and the abstract socket it connects to. */
static void relay_setup(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char exe[4096], name[64];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 64);
	char *slash;
	int len;

	if (n <= 0)
		abort();
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		abort();
	snprintf(slash + 1, 64, "fuzz_s3_agent_relay");
	if (access(exe, X_OK))
		abort(); /* built beside the harness (tests/fuzz/CMakeLists.txt) */
	setenv("LLMIO_AGENT_EXE", exe, 1);
	len = snprintf(name, sizeof(name), "llmio-fuzz-relay-%ld", (long)getpid());
	setenv("LLMIO_FUZZ_RELAY", name, 1);
	memcpy(sa.sun_path + 1, name, (size_t)len);
	relay_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (relay_fd < 0 ||
	    bind(relay_fd, (struct sockaddr *)&sa,
	         (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)len)) ||
	    listen(relay_fd, 16))
		abort();
}

/* One record of an input at p: its length, its bytes; where the next one goes. */
static uint8_t *put_record(uint8_t *p, const void *src, size_t n)
{
	p[0] = (uint8_t)n;
	p[1] = (uint8_t)(n >> 8);
	memcpy(p + 2, src, n);
	return p + 2 + n;
}

/* A request record: off, len, buffer 0, object 0, op. */
static uint8_t *put_request(uint8_t *p, uint64_t off, uint32_t len, uint32_t op)
{
	uint8_t req[24] = {0};

	memcpy(req, &off, 8);
	memcpy(req + 8, &len, 4);
	memcpy(req + 20, &op, 4);
	return put_record(p, req, sizeof(req));
}

/* An agent's session on one object: nreq requests of bs bytes, reads or writes. */
static void agent_session(uint32_t bs, bool write, unsigned nreq)
{
	uint8_t in[512], file[64], *p = in;
	struct agent_setup su = {.buf_len = bs,
	                         .iodepth = 1,
	                         .nfiles = 1,
	                         .nbufs = 1,
	                         .nworkers = 1,
	                         .writable = write,
	                         .cpu = -1};
	struct agent_buf_head head = {.map = 4096 + (size_t)bs};
	const uint64_t size = (uint64_t)bs * nreq;
	const char name[] = "s3://b/k";

	for (int c = 0; c < CPU_SETSIZE && su.cpu < 0; c++)
		if (CPU_ISSET(c, &cpus))
			su.cpu = c;
	p = put_record(p, &su, sizeof(su));
	memcpy(file, &size, 8);
	memcpy(file + 8, name, sizeof(name) - 1);
	p = put_record(p, file, 8 + sizeof(name) - 1);
	p = put_record(p, &head, sizeof(head));
	for (unsigned i = 0; i < nreq; i++)
		p = put_request(p, (uint64_t)i * bs, bs, write);
	agent_side(in, (size_t)(p - in));
}

/* Valid sessions of the agent, before any input: what its paths set up once for the process
 * (libcurl, OpenSSL's digests, the C library) is never freed as the agent's.  A GET, then a
 * multipart upload (its control requests hash their bodies). */
static void warm_up(void)
{
	agent_session(APP_BS, false, 1);
	agent_session(5u << 20, true, 2);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const struct engine_ops *eng = engine_find("s3");
	char why[256];

	(void)argc;
	(void)argv;
	if (!eng || eng->probe(why, sizeof(why)) || sched_getaffinity(0, sizeof(cpus), &cpus))
		abort();
	fuzz_s3_serve(object_answer);
	relay_setup();
	warm_up();
	if (!__sanitizer_install_malloc_and_free_hooks(on_malloc, on_free))
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size)
		return 0;
	if (data[0] & 1)
		app_side(data + 1, size - 1);
	else
		agent_side(data + 1, size - 1);
	fuzz_s3_quiesce();
	return 0;
}
