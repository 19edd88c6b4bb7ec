/* SPDX-License-Identifier: MIT */
/*
 * The program tests/cli_trace_edge.sh runs untraced and under `llmio trace`: the edge cases of
 * the calls the tracer wraps, where a wrapper could hand the program something other than
 * what the kernel and libc give it.  One line per case: what the call returned, errno, and a
 * checksum of the bytes it read; the test compares the lines of the traced runs with the
 * untraced one's (the witness: the kernel without the tracer).  Not linked to libllmio.
 *
 *   trace_edge DIR
 *
 * The cases: end of file, short reads, reads that fail (a write-only descriptor, a directory,
 * a negative offset, a count over SSIZE_MAX), reads of a file whose page cache holds only some
 * of its pages (the tracer asks the page cache first and must finish the read itself), pipes
 * (empty and non-blocking, partial, at their end), a descriptor number closed without close()
 * (close_range) and given to a pipe, blocking calls interrupted by a signal without SA_RESTART
 * (the program must see EINTR, not a call made again), and errno left as it was by calls that
 * succeed.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "trace_check.h"

#define PAGE      4096
#define FILE_SIZE (16 * PAGE)

static char dir[3000];
static char buf[FILE_SIZE + PAGE];
/* out-of-range arguments, hidden from the compiler's checks of constant ones */
static volatile size_t size_max = SIZE_MAX;
static volatile int minus_one = -1;

static const char *path(const char *name)
{
	static char p[4096];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return p;
}

static uint32_t sum(const void *p, ssize_t n)
{
	const unsigned char *c = p;
	uint32_t h = 2166136261u;

	for (ssize_t i = 0; i < n; i++)
		h = (h ^ c[i]) * 16777619u;
	return h;
}

/* One case's line: the result, errno when it failed, the bytes' checksum when it read some. */
static void say(const char *name, ssize_t r, const void *data)
{
	int err = errno;

	if (r < 0)
		printf("%s -1 %s\n", name, strerrorname_np(err));
	else if (data && r > 0)
		printf("%s %zd %08x\n", name, r, sum(data, r));
	else
		printf("%s %zd\n", name, r);
}

/* A file of FILE_SIZE bytes, each byte its offset's low bits mixed. */
static void make_file(const char *name)
{
	int fd = open(path(name), O_CREAT | O_WRONLY | O_TRUNC, 0644);

	CHECK(fd >= 0);
	for (int i = 0; i < FILE_SIZE; i++)
		buf[i] = (char)(i * 7 + i / 251);
	CHECK(write(fd, buf, FILE_SIZE) == FILE_SIZE);
	CHECK(fsync(fd) == 0);
	CHECK(close(fd) == 0);
}

/*
 * Leave only the even pages of the file in the page cache (its odd ones are read from the
 * disk): drop it all, then read the even pages with readahead off.  Where the kernel keeps
 * pages anyway the cases still compare the same; the test checks in the trace that a read was
 * served partly from the device.
 */
static int open_half_cached(const char *name)
{
	int fd = open(path(name), O_RDONLY);

	CHECK(fd >= 0);
	CHECK(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0);
	CHECK(posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM) == 0);
	for (off_t off = 0; off < FILE_SIZE; off += 2 * PAGE)
		CHECK(syscall(SYS_pread64, fd, buf, 1, off) == 1); /* not the traced pread */
	return fd;
}

static void regular_files(void)
{
	struct iovec iov[5];
	int fd, r;

	fd = open(path("f"), O_RDONLY);
	CHECK(fd >= 0);
	CHECK(lseek(fd, FILE_SIZE - 100, SEEK_SET) == FILE_SIZE - 100);
	say("read_short", read(fd, buf, sizeof(buf)), buf);
	say("read_at_end", read(fd, buf, sizeof(buf)), buf);
	say("pread_past_end", pread(fd, buf, 10, FILE_SIZE + 5), buf);
	say("pread_negative", pread(fd, buf, 10, -1), buf);
	say("read_count_max", read(fd, buf, size_max), buf);
	iov[0] = (struct iovec){buf, size_max};
	say("readv_len_max", readv(fd, iov, 1), buf);
	say("readv_count_negative", readv(fd, iov, minus_one), buf);
	say("read_bad_fd", read(1000, buf, 10), buf);
	CHECK(close(fd) == 0);

	fd = open(path("f"), O_WRONLY);
	CHECK(fd >= 0);
	say("read_write_only", read(fd, buf, 10), buf);
	CHECK(close(fd) == 0);
	fd = open(dir, O_RDONLY | O_DIRECTORY);
	CHECK(fd >= 0);
	say("read_directory", read(fd, buf, 10), buf);
	CHECK(close(fd) == 0);

	/* half in the page cache: what the tracer's first, cache-only, read cannot give */
	fd = open_half_cached("f");
	CHECK(lseek(fd, 100, SEEK_SET) == 100);
	say("read_half_cached", read(fd, buf, 3 * PAGE), buf);
	say("read_half_cached_offset", lseek(fd, 0, SEEK_CUR), NULL);
	CHECK(close(fd) == 0);
	fd = open_half_cached("f");
	/* buffers of odd sizes, so that the cached part ends inside the second of them */
	iov[0] = (struct iovec){buf, 1000};
	iov[1] = (struct iovec){buf + 1000, 5000};
	iov[2] = (struct iovec){buf + 6000, 3};
	iov[3] = (struct iovec){buf + 6003, 9000};
	iov[4] = (struct iovec){buf + 15003, 10000};
	memset(buf, 0, sizeof(buf));
	r = (int)readv(fd, iov, 5);
	say("readv_half_cached", r, buf);
	say("readv_half_cached_offset", lseek(fd, 0, SEEK_CUR), NULL);
	memset(buf, 0, sizeof(buf));
	say("preadv_half_cached", preadv(fd, iov, 5, 3 * PAGE + 10), buf);
	say("pread_half_cached_to_end", pread(fd, buf, sizeof(buf), PAGE / 2), buf);
	CHECK(close(fd) == 0);
}

/* ---- a watcher: calls that must not block, or must end at a signal ---- */

static volatile sig_atomic_t handled;
static int done;

static void on_signal(int sig)
{
	(void)sig;
	handled = 1;
}

/* Read /proc/self/task/TID/NAME into line (len bytes, ends in NUL). \return its length, or -1. */
static ssize_t task_file(pid_t tid, const char *name, char *line, size_t len)
{
	char p[64];
	ssize_t n;
	int fd;

	snprintf(p, sizeof(p), "/proc/self/task/%d/%s", (int)tid, name);
	fd = open(p, O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, line, len - 1);
	close(fd);
	if (n >= 0)
		line[n] = '\0';
	return n;
}

/*
 * The system call the thread sleeps in (/proc/self/task/TID/stat and .../syscall), or -1 when
 * it runs, or is runnable: a thread preempted inside a call does not count as blocked in it.
 */
static long sleeping_in(pid_t tid)
{
	char line[512], *st;

	if (task_file(tid, "stat", line, sizeof(line)) <= 0)
		return -1;
	st = strrchr(line, ')'); /* "pid (comm) S ...": the state follows the name */
	if (!st || st[1] != ' ' || st[2] != 'S')
		return -1;
	if (task_file(tid, "syscall", line, sizeof(line)) <= 0 || line[0] < '0' || line[0] > '9')
		return -1;
	return strtol(line, NULL, 10);
}

struct watch {
	pid_t tid;             /* the thread making the call */
	long nr[2];            /* the system calls it may sleep in */
	bool signal;           /* interrupt the call with SIGUSR1 first */
	void (*unblock)(void); /* makes the call return */
};

/*
 * When the thread is seen sleeping in its call: with w->signal, send SIGUSR1 once; if, after
 * the handler has run, the thread sleeps in the call again (made again, by someone else than
 * the program), or without w->signal at once, unblock it.  The program then gets a result
 * where it would have had EINTR, or more than the call returns untraced, which the
 * comparison shows, instead of waiting for ever.
 */
static void *watcher(void *arg)
{
	const struct watch *w = arg;
	const struct timespec ms = {0, 1000000};
	bool sent = false;

	while (!__atomic_load_n(&done, __ATOMIC_ACQUIRE)) {
		long nr = sleeping_in(w->tid);

		if (nr >= 0 && (nr == w->nr[0] || nr == w->nr[1])) {
			if (w->signal && !sent) {
				syscall(SYS_tgkill, getpid(), w->tid, SIGUSR1);
				sent = true;
			} else if (!w->signal || handled) {
				w->unblock();
				return NULL;
			}
		}
		nanosleep(&ms, NULL);
	}
	return NULL;
}

static pthread_t watcher_thread;
static struct watch watching;

static void watch_start(long nr0, long nr1, bool signal, void (*unblock)(void))
{
	watching = (struct watch){(pid_t)syscall(SYS_gettid), {nr0, nr1}, signal, unblock};
	handled = 0;
	__atomic_store_n(&done, 0, __ATOMIC_RELEASE);
	CHECK(pthread_create(&watcher_thread, NULL, watcher, &watching) == 0);
}

static void watch_end(void)
{
	__atomic_store_n(&done, 1, __ATOMIC_RELEASE);
	CHECK(pthread_join(watcher_thread, NULL) == 0);
}

static int unblock_fd = -1;

static void open_fifo_writer(void)
{
	unblock_fd = open(path("fifo"), O_WRONLY | O_NONBLOCK);
}

static int pipe_w = -1;

static void write_pipe(void)
{
	static const char more[100] = "more";

	(void)!write(pipe_w, more, sizeof(more));
}

/* ---- descriptors that are not regular files ---- */

/*
 * A regular file's number closed without close() (close_range, as Python's os.closerange does,
 * or raw: the system call itself) and given to a pipe or a socket (kind: SOCK_STREAM, or 0 for a
 * pipe): a read of it must return what it holds, not wait for the rest as a read of the file would
 * be finished.
 */
static void on_closed_file_number(const char *name, int kind, bool raw)
{
	int p[2], fd = open(path("f"), O_RDONLY);

	CHECK(fd >= 0);
	CHECK(read(fd, buf, 10) == 10);
	CHECK(raw ? syscall(SYS_close, fd) == 0 : close_range((unsigned)fd, (unsigned)fd, 0) == 0);
	CHECK(kind ? socketpair(AF_UNIX, kind, 0, p) == 0 : pipe(p) == 0);
	if (p[0] != fd) { /* it is the lowest free number: the file's, unless a thread took it */
		CHECK(dup2(p[0], fd) == fd);
		CHECK(close(p[0]) == 0);
		p[0] = fd;
	}
	CHECK(write(p[1], "abc", 3) == 3);
	pipe_w = p[1];
	watch_start(SYS_read, SYS_preadv2, false, write_pipe);
	say(name, read(p[0], buf, 100), buf);
	watch_end();
	CHECK(close(p[0]) == 0 && close(p[1]) == 0);
}

static void pipes(void)
{
	int p[2];

	CHECK(pipe2(p, O_NONBLOCK) == 0);
	say("pipe_empty_nonblocking", read(p[0], buf, 10), buf);
	CHECK(write(p[1], "0123456789", 10) == 10);
	say("pipe_partial", read(p[0], buf, 100), buf);
	CHECK(close(p[1]) == 0);
	say("pipe_at_end", read(p[0], buf, 100), buf);
	CHECK(close(p[0]) == 0);
	on_closed_file_number("pipe_on_closed_range", 0, false);
	on_closed_file_number("socket_on_closed_range", SOCK_STREAM, false);
	on_closed_file_number("pipe_on_raw_closed_file", 0, true);
	on_closed_file_number("socket_on_raw_closed_file", SOCK_STREAM, true);
}

/* ---- interrupted calls: a signal handler without SA_RESTART, so EINTR ---- */

static void interrupted(void)
{
	struct sigaction sa = {.sa_handler = on_signal};
	int p[2], fd;

	CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
	/* an open of a FIFO that no writer opens */
	CHECK(mkfifo(path("fifo"), 0600) == 0);
	watch_start(SYS_openat, SYS_openat2, true, open_fifo_writer);
	fd = open(path("fifo"), O_RDONLY);
	say("open_fifo_interrupted", fd < 0 ? -1 : 0, NULL);
	watch_end();
	if (fd >= 0)
		close(fd);
	if (unblock_fd >= 0)
		close(unblock_fd);

	/* a read of an empty pipe */
	CHECK(pipe(p) == 0);
	pipe_w = p[1];
	watch_start(SYS_read, SYS_preadv2, true, write_pipe);
	say("read_pipe_interrupted", read(p[0], buf, 10), buf);
	watch_end();
	CHECK(close(p[0]) == 0 && close(p[1]) == 0);
}

/*
 * A traced file duplicated to a number above every other (dup2), then a fork: the child's write
 * through that number must be recorded with the file's path (the test reads it in the trace).
 */
static void fork_high_number(void)
{
	int fd = open(path("g"), O_CREAT | O_WRONLY | O_TRUNC, 0644), st;
	pid_t pid;

	CHECK(fd >= 0);
	CHECK(dup2(fd, 900) == 900);
	CHECK(close(fd) == 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
		_exit(write(900, "fork-child", 10) == 10 ? 0 : 1);
	CHECK(waitpid(pid, &st, 0) == pid);
	say("fork_high_number_child", WIFEXITED(st) ? WEXITSTATUS(st) : -1, NULL);
	CHECK(close(900) == 0);
}

/* ---- errno after calls that succeed: glibc leaves it as it was ---- */

#define KEEPS_ERRNO(name, call)                                                                    \
	do {                                                                                       \
		errno = 12345;                                                                     \
		CHECK((call) >= 0);                                                                \
		printf("errno_after_%s %d\n", name, errno);                                        \
	} while (0)

static void errno_kept(void)
{
	char *mem = NULL;
	size_t memlen = 0;
	FILE *f;
	int p[2], fd;

	CHECK(pipe(p) == 0); /* not seen opening: the tracer learns of it at its first use */
	KEEPS_ERRNO("write_new_pipe", write(p[1], "abc", 3));
	KEEPS_ERRNO("read_new_pipe", read(p[0], buf, 3));
	CHECK(close(p[0]) == 0 && close(p[1]) == 0);
	KEEPS_ERRNO("open", fd = open(path("f"), O_RDONLY));
	CHECK(close(fd) == 0);
	CHECK(symlink("f", path("link")) == 0);
	KEEPS_ERRNO("open_symlink", fd = open(path("link"), O_RDONLY));
	CHECK(close(fd) == 0);
	fd = open_half_cached("f");
	CHECK(lseek(fd, PAGE, SEEK_SET) == PAGE); /* an odd page: not in the page cache */
	KEEPS_ERRNO("read_half_cached", read(fd, buf, 4 * PAGE));
	KEEPS_ERRNO("lseek", lseek(fd, 0, SEEK_SET));
	KEEPS_ERRNO("close", close(fd));
	f = open_memstream(&mem, &memlen); /* a stream without a descriptor */
	CHECK(f != NULL);
	KEEPS_ERRNO("fwrite_memstream", (int)fwrite("abc", 1, 3, f) - 3);
	KEEPS_ERRNO("fflush_memstream", fflush(f));
	CHECK(fclose(f) == 0);
	free(mem);
}

int main(int argc, char **argv)
{
	if (argc != 2 || snprintf(dir, sizeof(dir), "%s", argv[1]) >= (int)sizeof(dir)) {
		fprintf(stderr, "usage: trace_edge DIR\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (access("/proc/self/syscall", R_OK)) {
		fprintf(stderr, "trace_edge: /proc/self/syscall cannot be read: %s\n",
		        strerror(errno));
		return 77;
	}
	make_file("f");
	pipes(); /* first: a read that fails below may turn the tracer's page-cache question off */
	regular_files();
	interrupted();
	fork_high_number();
	errno_kept();
	return 0;
}
