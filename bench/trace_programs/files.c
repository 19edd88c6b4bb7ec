// SPDX-License-Identifier: MIT
/*
 * The data loader's pattern without the interpreter: open a small file, fstat it, read it
 * whole (a read of more than it holds, then one that returns 0), close it; N times over the
 * files DIR/f0 ... DIR/f(K-1).  Prints the process's CPU time (user + system) per file in ns,
 * which a busy machine disturbs much less than wall time: bench/trace_suite.sh runs it
 * untraced and traced, interleaved, for the tracer's cost per file and per traced call.
 *
 *   files DIR K N
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char buf[1 << 16];

/* a positive count, or -1 */
static long count(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	return errno || end == s || *end || v <= 0 ? -1 : v;
}

int main(int argc, char **argv)
{
	struct timespec a, b;
	char p[4096];
	long k, n;

	if (argc != 4 || (k = count(argv[2])) <= 0 || (n = count(argv[3])) <= 0) {
		fprintf(stderr, "usage: files DIR K N\n");
		return 2;
	}
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
	for (long i = 0; i < n; i++) {
		struct stat st;
		int fd;

		snprintf(p, sizeof(p), "%s/f%ld", argv[1], i % k);
		fd = open(p, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st) || read(fd, buf, sizeof(buf)) < 0 ||
		    read(fd, buf, sizeof(buf)) != 0 || close(fd)) {
			perror(p);
			return 1;
		}
	}
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
	printf("%.0f\n",
	       ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / n);
	return 0;
}
