/* SPDX-License-Identifier: MIT */
/*
 * A loopback HTTP server for the s3 engine's unit tests (test_s3_agent.c, test_s3_wake.c):
 * s3_loopback_serve(conn) listens on 127.0.0.1 at a free port, points the AWS_* variables at it
 * (credentials the engine signs with; nothing checks them), and runs conn(fd) on a thread of
 * its own for each connection it accepts; s3_loopback_accepts counts them.
 */
#ifndef LLMIO_TEST_S3_LOOPBACK_H
#define LLMIO_TEST_S3_LOOPBACK_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static unsigned s3_loopback_accepts;
static void *(*s3_loopback_conn)(void *);

static void *s3_loopback_accept(void *arg)
{
	int lfd = (int)(intptr_t)arg, fd;
	pthread_t t;

	while ((fd = accept(lfd, NULL, NULL)) >= 0) {
		__atomic_add_fetch(&s3_loopback_accepts, 1, __ATOMIC_SEQ_CST);
		if (!pthread_create(&t, NULL, s3_loopback_conn, (void *)(intptr_t)fd))
			pthread_detach(t);
	}
	return NULL;
}

static void s3_loopback_serve(void *(*conn)(void *))
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof(sa);
	int lfd = socket(AF_INET, SOCK_STREAM, 0);
	char url[64];
	pthread_t t;

	s3_loopback_conn = conn;
	assert_true(lfd >= 0);
	assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(lfd, 16), 0);
	assert_int_equal(getsockname(lfd, (struct sockaddr *)&sa, &sl), 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%u", ntohs(sa.sin_port));
	setenv("AWS_ENDPOINT_URL", url, 1);
	setenv("AWS_ACCESS_KEY_ID", "AKIDTEST", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "secret", 1);
	setenv("AWS_REGION", "us-east-1", 1);
	unsetenv("AWS_ENDPOINT_URL_S3");
	assert_int_equal(pthread_create(&t, NULL, s3_loopback_accept, (void *)(intptr_t)lfd), 0);
	pthread_detach(t);
}

/* The object's bytes: a fixed pattern, so that a byte served from the wrong offset shows. */
static inline void s3_loopback_pattern(unsigned char *obj, size_t size)
{
	for (size_t i = 0; i < size; i++)
		obj[i] = (unsigned char)(i * 2654435761u >> 13);
}

/*
 * Serve one keep-alive connection over an object of `size` bytes: HEAD gives its size, GET
 * with Range the bytes of the range, handed to send(fd, bytes, n) (a plain write, or one that
 * trickles them).  Returns when the client closes.
 */
static inline void s3_loopback_object(int fd, const unsigned char *obj, unsigned long size,
                                      void (*send)(int fd, const unsigned char *p, size_t n))
{
	char req[4096];
	size_t used = 0;

	for (;;) {
		char *end = strstr(req, "\r\n\r\n"), hdr[256];
		unsigned long a = 0, b = size - 1;
		const char *r;
		ssize_t n;
		int len;

		if (!used || !end) {
			n = read(fd, req + used, sizeof(req) - 1 - used);
			if (n <= 0)
				break;
			used += (size_t)n;
			req[used] = '\0';
			continue;
		}
		r = strstr(req, "Range: bytes=");
		if (!r)
			r = strstr(req, "range: bytes=");
		if (r && r < end)
			sscanf(r + 13, "%lu-%lu", &a, &b);
		if (b >= size)
			b = size - 1;
		if (!strncmp(req, "HEAD ", 5)) {
			len = snprintf(hdr, sizeof(hdr),
			               "HTTP/1.1 200 OK\r\nContent-Length: %lu\r\n\r\n", size);
			(void)!write(fd, hdr, (size_t)len);
		} else {
			len = snprintf(hdr, sizeof(hdr),
			               "HTTP/1.1 206 Partial Content\r\nContent-Length: %lu\r\n"
			               "Content-Range: bytes %lu-%lu/%lu\r\n\r\n",
			               b - a + 1, a, b, size);
			(void)!write(fd, hdr, (size_t)len);
			send(fd, obj + a, b - a + 1);
		}
		end += 4;
		used -= (size_t)(end - req);
		memmove(req, end, used);
		req[used] = '\0';
	}
	close(fd);
}

#endif
