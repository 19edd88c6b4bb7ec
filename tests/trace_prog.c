/* SPDX-License-Identifier: MIT */
/*
 * The program tests/cli_trace.sh runs under `llmio trace`: every interposed call with known
 * sizes, offsets and errors, threads, a forked child that ends with _exit, stdio and phase
 * markers.  Not linked to libllmio (it must run untraced too).
 *   trace_prog DIR        the calls below (the test knows each expected record)
 *   trace_prog DIR kill   a child writes 1000 one-byte records, then SIGKILLs itself
 *   trace_prog DIR exec   phase "train": children started with execv, execvp, execve (an
 *                         environment without the tracer), execle, posix_spawn (a stale copy
 *                         of the environment, as Python's os.environ is) and system(); then
 *                         phase "final" and an exec of this process itself.  Each image
 *                         writes 256 KiB to DIR/exec-<how> (trace_prog DIR child HOW).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "trace_check.h"

#include "llmio/trace.h"

static char dir[3000];
static char buf[65536];

static const char *path(const char *name)
{
	static char p[4][4096];
	static int k;

	k = (k + 1) % 4;
	snprintf(p[k], sizeof(p[k]), "%s/%s", dir, name);
	return p[k];
}

static void *thread_main(void *arg)
{
	char p[4096];
	int fd;

	/* its own buffer: path()'s rotating static ones are not for concurrent threads */
	snprintf(p, sizeof(p), "%s/%s", dir, (const char *)arg);
	fd = open(p, O_CREAT | O_WRONLY | O_TRUNC, 0644);

	CHECK(fd >= 0);
	for (int i = 0; i < 10; i++)
		CHECK(write(fd, buf, 4096) == 4096);
	CHECK(close(fd) == 0);
	return NULL;
}

static void data_calls(void)
{
	struct iovec iov[3] = {{buf, 10}, {buf, 20}, {buf, 0}};
	int fd, fd2, fd3, fd4;
	void *m;

	fd = open(path("a"), O_CREAT | O_RDWR | O_TRUNC, 0644);
	CHECK(fd >= 0);
	CHECK(write(fd, buf, 1000) == 1000);      /* off 0 */
	CHECK(write(fd, buf, 24) == 24);          /* off 1000 */
	CHECK(pwrite(fd, buf, 512, 4096) == 512); /* off 4096 */
	CHECK(lseek(fd, 0, SEEK_SET) == 0);
	CHECK(read(fd, buf, 100) == 100);      /* off 0 */
	CHECK(read(fd, buf, 200) == 200);      /* off 100 */
	CHECK(pread(fd, buf, 50, 4000) == 50); /* off 4000 */
	CHECK(readv(fd, iov, 2) == 30);        /* off 300 */
	CHECK(preadv(fd, iov, 2, 10) == 30);   /* off 10 */
	iov[0].iov_len = 1, iov[1].iov_len = 2, iov[2].iov_len = 3;
	CHECK(writev(fd, iov, 3) == 6);        /* off 330 */
	CHECK(pwritev(fd, iov, 3, 8192) == 6); /* off 8192 */
	iov[0].iov_len = 16;
	CHECK(preadv2(fd, iov, 1, -1, 0) == 16);    /* off 336 (current) */
	CHECK(pwritev2(fd, iov, 1, 9000, 0) == 16); /* off 9000 */
	CHECK(fsync(fd) == 0);
	CHECK(fdatasync(fd) == 0);
	CHECK(sync_file_range(fd, 0, 4096, SYNC_FILE_RANGE_WRITE) == 0);
	CHECK(fallocate(fd, 0, 0, 65536) == 0);
	CHECK(posix_fallocate(fd, 0, 65536) == 0);
	CHECK(ftruncate(fd, 10000) == 0);
	m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 4096);
	CHECK(m != MAP_FAILED);
	CHECK(msync(m, 8192, MS_SYNC) == 0);
	CHECK(munmap(m, 8192) == 0);
	fd2 = dup(fd);
	CHECK(fd2 >= 0);
	CHECK(lseek(fd2, 5000, SEEK_SET) == 5000);
	CHECK(write(fd2, buf, 7) == 7); /* dup'd: off 5000 */
	fd3 = dup2(fd, 100);
	CHECK(fd3 == 100);
	fd4 = fcntl(fd, F_DUPFD_CLOEXEC, 200);
	CHECK(fd4 >= 200);
	CHECK(pwrite(fd3, buf, 3, 1) == 3); /* via dup2: off 1 */
	CHECK(pwrite(fd4, buf, 5, 2) == 5); /* via F_DUPFD: off 2 */
	CHECK(close(fd4) == 0 && close(fd3) == 0 && close(fd2) == 0 && close(fd) == 0);

	/* errors */
	errno = 0;
	CHECK(open(path("missing"), O_RDONLY) == -1 && errno == ENOENT);
	fd = open(path("a"), O_RDONLY);
	CHECK(fd >= 0);
	CHECK(write(fd, buf, 10) == -1 && errno == EBADF);
	CHECK(pread(fd, buf, 10, -5) == -1 && errno == EINVAL);
	CHECK(close(fd) == 0);
	fd = creat(path("c"), 0644);
	CHECK(fd >= 0 && close(fd) == 0);
	CHECK(rename(path("a"), path("b")) == 0);
	CHECK(unlink(path("b")) == 0);
	CHECK(unlinkat(AT_FDCWD, path("c"), 0) == 0);
}

static void stdio_calls(void)
{
	FILE *f = fopen(path("s"), "w");
	int fd;

	CHECK(f);
	for (int i = 0; i < 3; i++)
		CHECK(fwrite(buf, 100, 1, f) == 1); /* 3 x 100 bytes, one write(2) inside */
	CHECK(fflush(f) == 0);
	CHECK(fclose(f) == 0);
	f = fopen(path("s"), "r");
	CHECK(f);
	CHECK(fread(buf, 1, 1000, f) == 300);
	CHECK(fclose(f) == 0);
	fd = open(path("s"), O_RDONLY);
	CHECK(fd >= 0);
	f = fdopen(fd, "r");
	CHECK(f);
	CHECK(fread(buf, 50, 2, f) == 2);
	CHECK(fclose(f) == 0);
}

static void fork_child(void)
{
	pid_t pid = fork();
	int st;

	CHECK(pid >= 0);
	if (pid == 0) {
		int fd = open(path("child"), O_CREAT | O_WRONLY | O_TRUNC, 0644);

		if (fd < 0 || write(fd, buf, 123) != 123)
			_exit(1);
		_exit(0); /* no atexit, no flushing: the records must already be in the trace */
	}
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static int killed_child(void)
{
	pid_t pid = fork();
	int st;

	CHECK(pid >= 0);
	if (pid == 0) {
		int fd = open(path("killed"), O_CREAT | O_WRONLY | O_TRUNC, 0644);

		for (int i = 0; fd >= 0 && i < 1000; i++)
			if (write(fd, buf, 1) != 1)
				_exit(1);
		kill(getpid(), SIGKILL);
		_exit(2);
	}
	CHECK(waitpid(pid, &st, 0) == pid);
	return WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL ? 0 : 1;
}

extern char **environ;

/* A started image: 4 writes of 64 KiB to exec-<how>. */
static int exec_child(const char *how)
{
	char name[64];
	int fd;

	snprintf(name, sizeof(name), "exec-%s", how);
	fd = open(path(name), O_CREAT | O_WRONLY | O_TRUNC, 0644);
	CHECK(fd >= 0);
	for (int i = 0; i < 4; i++)
		CHECK(write(fd, buf, 65536) == 65536);
	CHECK(close(fd) == 0);
	return 0;
}

static void wait_ok(pid_t pid)
{
	int st;

	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static int exec_children(const char *self)
{
	char *av[5] = {(char *)self, dir, "child", NULL, NULL};
	/* no LD_PRELOAD, no LLMIO_TRACE_*: the wrapper must add them and the phase */
	char *bare[] = {"PATH=/usr/bin:/bin", NULL};
	/* a copy made while the phase was "warmup" (Python's os.environ is such a copy) */
	char *stale[64] = {"LLMIO_TRACE_PHASE=warmup"};
	char cmd[8192];
	size_t n = 1;
	pid_t pid;

	llmio_trace_set_phase("warmup");
	for (char **e = environ; *e && n < 63; e++)
		if (strncmp(*e, "LLMIO_TRACE_PHASE=", 18))
			stale[n++] = strdup(*e);
	llmio_trace_set_phase("train");

	av[3] = "execv";
	if (!(pid = fork())) {
		execv(self, av);
		_exit(127);
	}
	wait_ok(pid);
	av[3] = "execvp";
	if (!(pid = fork())) {
		execvp(self, av);
		_exit(127);
	}
	wait_ok(pid);
	av[3] = "execve";
	if (!(pid = fork())) {
		execve(self, av, bare);
		_exit(127);
	}
	wait_ok(pid);
	if (!(pid = fork())) {
		execle(self, self, dir, "child", "execle", (char *)NULL, bare);
		_exit(127);
	}
	wait_ok(pid);
	av[3] = "spawn";
	CHECK(posix_spawn(&pid, self, NULL, NULL, av, stale) == 0);
	wait_ok(pid);
	snprintf(cmd, sizeof(cmd), "'%s' '%s' child system", self, dir);
	CHECK(system(cmd) == 0);
	/* the same process, a new image */
	llmio_trace_set_phase("final");
	av[3] = "self";
	execv(self, av);
	return 1;
}

int main(int argc, char **argv)
{
	pthread_t t[2];

	if (argc < 2) {
		fprintf(stderr, "usage: trace_prog DIR [kill | exec | child HOW]\n");
		return 2;
	}
	snprintf(dir, sizeof(dir), "%s", argv[1]);
	memset(buf, 'x', sizeof(buf));
	if (argc > 2 && !strcmp(argv[2], "kill"))
		return killed_child();
	if (argc > 3 && !strcmp(argv[2], "child"))
		return exec_child(argv[3]);
	if (argc > 2 && !strcmp(argv[2], "exec")) {
		static char self[4096];
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

		CHECK(n > 0);
		self[n] = '\0';
		return exec_children(self);
	}
	llmio_trace_set_phase("calls");
	data_calls();
	llmio_trace_set_phase("stdio");
	stdio_calls();
	llmio_trace_set_phase("threads");
	CHECK(pthread_create(&t[0], NULL, thread_main, "t0") == 0);
	CHECK(pthread_create(&t[1], NULL, thread_main, "t1") == 0);
	CHECK(pthread_join(t[0], NULL) == 0 && pthread_join(t[1], NULL) == 0);
	llmio_trace_set_phase("fork");
	fork_child();
	llmio_trace_set_phase("");
	return 0;
}
