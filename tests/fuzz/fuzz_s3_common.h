/* SPDX-License-Identifier: MIT */
/*
 * A loopback HTTP server for the s3 harnesses (fuzz_s3_response.c, fuzz_s3_agent.c), in the
 * harness process: fuzz_s3_serve(answer) listens on 127.0.0.1 at a free port, points the AWS_*
 * variables at it (credentials the engine signs with; nothing checks them) and drops any proxy
 * the environment names, so that libcurl talks to this server and nothing else.  Each
 * connection has a thread of its own: it reads a request (its headers, then its body, which
 * it discards, after a "100 Continue" when the client expects one) and hands the request to
 * answer(fd, request), which writes the response and says whether the connection stays open;
 * a connection idle for half a second is closed.  fuzz_s3_quiesce() waits until every
 * connection of the last input is over, so that one input's requests are never answered from
 * the next one's responses.
 */
#ifndef LLMIO_FUZZ_S3_COMMON_H
#define LLMIO_FUZZ_S3_COMMON_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>

#include "fuzz_common.h"

#include "engine/engine.h"

#define FUZZ_S3_REQ_MAX  16384
#define FUZZ_S3_BODY_MAX (64ull << 20) /* a request body larger than this closes the connection */

/* Write the response to fd; true to keep the connection open for another request. */
typedef bool (*fuzz_s3_answer_fn)(int fd, const char *req);

static fuzz_s3_answer_fn fuzz_s3_answer;
static pthread_mutex_t fuzz_s3_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t fuzz_s3_idle = PTHREAD_COND_INITIALIZER;
static unsigned fuzz_s3_conns; /* connections open */

static void fuzz_s3_send(int fd, const void *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w <= 0)
			return; /* the client went away: its error, not the server's */
		p = (const char *)p + w;
		n -= (size_t)w;
	}
}

/* A header's value as a number (0 when absent), looked for in the request's headers only. */
static unsigned long long fuzz_s3_header_num(const char *req, const char *name)
{
	size_t len = strlen(name);

	for (const char *l = strstr(req, "\r\n"); l && l[2] != '\r'; l = strstr(l + 2, "\r\n"))
		if (!strncasecmp(l + 2, name, len) && l[2 + len] == ':')
			return strtoull(l + 3 + len, NULL, 10);
	return 0;
}

static bool fuzz_s3_expects_continue(const char *req)
{
	for (const char *l = strstr(req, "\r\n"); l && l[2] != '\r'; l = strstr(l + 2, "\r\n"))
		if (!strncasecmp(l + 2, "Expect: 100-continue", 20))
			return true;
	return false;
}

static void *fuzz_s3_conn(void *arg)
{
	/* a client that sends nothing more (TLS after a redirect to https://) is dropped soon */
	const struct timeval idle = {.tv_usec = 500000};
	int fd = (int)(intptr_t)arg;
	char *req = malloc(FUZZ_S3_REQ_MAX + 1);
	size_t used = 0;
	bool open = req != NULL;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &idle, sizeof(idle));

	while (open) {
		char *end = used ? strstr(req, "\r\n\r\n") : NULL;
		unsigned long long body;
		size_t head, inbuf;

		if (!end) {
			ssize_t n = used < FUZZ_S3_REQ_MAX
			                    ? read(fd, req + used, FUZZ_S3_REQ_MAX - used)
			                    : -1;

			if (n <= 0)
				break;
			used += (size_t)n;
			req[used] = '\0';
			continue;
		}
		head = (size_t)(end + 4 - req);
		body = fuzz_s3_header_num(req, "Content-Length");
		if (body > FUZZ_S3_BODY_MAX)
			break;
		if (body > used - head && fuzz_s3_expects_continue(req))
			fuzz_s3_send(fd, "HTTP/1.1 100 Continue\r\n\r\n", 25);
		/* the body is discarded: what is in the buffer, then what is still to come */
		inbuf = body < used - head ? (size_t)body : used - head;
		for (body -= inbuf; body && open;) {
			char sink[65536];
			ssize_t n =
			        read(fd, sink, body < sizeof(sink) ? (size_t)body : sizeof(sink));

			open = n > 0;
			body -= open ? (unsigned long long)n : 0;
		}
		if (!open)
			break;
		end[2] = '\0'; /* the request's line and headers, for answer() */
		open = fuzz_s3_answer(fd, req);
		head += inbuf;
		memmove(req, req + head, used - head);
		used -= head;
		req[used] = '\0';
	}
	free(req);
	close(fd);
	pthread_mutex_lock(&fuzz_s3_lock);
	if (!--fuzz_s3_conns)
		pthread_cond_broadcast(&fuzz_s3_idle);
	pthread_mutex_unlock(&fuzz_s3_lock);
	return NULL;
}

static void *fuzz_s3_accept(void *arg)
{
	int lfd = (int)(intptr_t)arg, fd;
	pthread_attr_t a;
	pthread_t t;

	if (pthread_attr_init(&a) || pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED))
		abort();
	while ((fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
		pthread_mutex_lock(&fuzz_s3_lock);
		fuzz_s3_conns++;
		pthread_mutex_unlock(&fuzz_s3_lock);
		if (pthread_create(&t, &a, fuzz_s3_conn, (void *)(intptr_t)fd))
			abort();
	}
	return NULL;
}

/* Start the server (once per process) and point the s3 engine at it. */
static void fuzz_s3_serve(fuzz_s3_answer_fn answer)
{
	static const char *const unset[] = {
	        "AWS_ENDPOINT_URL_S3", "AWS_SESSION_TOKEN", "AWS_CA_BUNDLE",
	        "http_proxy",          "HTTP_PROXY",        "https_proxy",
	        "HTTPS_PROXY",         "all_proxy",         "ALL_PROXY"};
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof(sa);
	int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	char url[64];
	const char *const set[][2] = {{"AWS_ENDPOINT_URL", url},
	                              {"AWS_ACCESS_KEY_ID", "AKIDFUZZ"},
	                              {"AWS_SECRET_ACCESS_KEY", "secret"},
	                              {"AWS_REGION", "us-east-1"},
	                              {"no_proxy", "*"}};
	pthread_t t;

	fuzz_s3_answer = answer;
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 64) ||
	    getsockname(lfd, (struct sockaddr *)&sa, &sl))
		abort();
	snprintf(url, sizeof(url), "http://127.0.0.1:%u", ntohs(sa.sin_port));
	for (size_t i = 0; i < sizeof(set) / sizeof(set[0]); i++)
		setenv(set[i][0], set[i][1], 1);
	for (size_t i = 0; i < sizeof(unset) / sizeof(unset[0]); i++)
		unsetenv(unset[i]);
	if (pthread_create(&t, NULL, fuzz_s3_accept, (void *)(intptr_t)lfd))
		abort();
	pthread_detach(t);
}

/* Wait (10 s at most) until no connection is open. */
static void fuzz_s3_quiesce(void)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 10;
	pthread_mutex_lock(&fuzz_s3_lock);
	while (fuzz_s3_conns && !pthread_cond_timedwait(&fuzz_s3_idle, &fuzz_s3_lock, &until))
		;
	pthread_mutex_unlock(&fuzz_s3_lock);
}

/* A worker's setup: nfiles objects, depth buffers of bs bytes, one worker. */
static inline struct engine_setup fuzz_s3_setup(const char *const *names, const uint64_t *sizes,
                                                unsigned nfiles, void *const *bufs, unsigned depth,
                                                size_t bs, bool write, const void *opts)
{
	return (struct engine_setup){.names = names,
	                             .file_sizes = sizes,
	                             .nfiles = nfiles,
	                             .bufs = bufs,
	                             .nbufs = depth,
	                             .buf_len = bs,
	                             .iodepth = depth,
	                             .nworkers = 1,
	                             .writable = write,
	                             .opts = opts};
}

#endif
