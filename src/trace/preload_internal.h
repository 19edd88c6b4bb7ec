/* SPDX-License-Identifier: MIT */
/*
 * What the files of libllmio_trace.so share: the process's tracing state, the table of the
 * libc functions the wrappers call through to, and the helpers every wrapper uses.  The design
 * is described in preload.c.  Internal to src/trace/preload*.c (the library is built with
 * hidden visibility: only the wrappers, marked EXPORT, are seen by the program).
 */
#ifndef LLMIO_PRELOAD_INTERNAL_H
#define LLMIO_PRELOAD_INTERNAL_H

#undef _FORTIFY_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "llmio/trace.h"
#include "trace/trace_format.h"
#include "trace/trace_scope.h"

/* glibc defines these as macros when optimising; the wrappers need the names */
#undef fread_unlocked
#undef fwrite_unlocked

#define EXPORT __attribute__((visibility("default")))
#define TLS    __thread __attribute__((tls_model("initial-exec")))

_Static_assert(sizeof(off_t) == 8, "the tracer needs a 64-bit off_t (LP64)");

/* glibc's fortify entry points (declared by its headers only under _FORTIFY_SOURCE) */
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);
ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen);
ssize_t __pread_chk(int fd, void *buf, size_t n, off_t off, size_t buflen);
ssize_t __pread64_chk(int fd, void *buf, size_t n, off_t off, size_t buflen);
size_t __fread_chk(void *ptr, size_t ptrlen, size_t size, size_t n, FILE *f);
size_t __fread_unlocked_chk(void *ptr, size_t ptrlen, size_t size, size_t n, FILE *f);

#define FD_MAX    65536
#define MAP_MAX   512
#define PHASE_MAX 255
#define LIST_MAX  32
#define ENV_MAX   5
#define GROW      (16u * TRACE_CHUNK) /* file growth step: one fallocate per 16 chunks */
#define SLOTS     (TRACE_CHUNK / sizeof(struct trace_rec))
#define OFF_CUR   (UINT64_MAX - 1) /* "at the descriptor's current offset" */

enum { FD_UNKNOWN = 0, FD_TRACED, FD_EXCLUDED, FD_BUSY };
#define FDF_APPEND 1u
#define FDF_NOSEEK 2u
/* reads can be asked of the page cache first: a regular file, or one opened by its name that
 * was not seen to be something else (preload_io.c checks where it matters) */
#define FDF_ASK 4u

struct fdent {
	uint32_t state;
	uint32_t path;
	uint64_t off;
	uint32_t flags;
};

struct mapping {
	uintptr_t addr;
	size_t len;
	uint32_t path;
};

/* The process's tracing state (preload.c). */
struct preload_state {
	int on; /* tracing: set once the constructor has opened the file */
	int fd;
	uint32_t pid, ppid;
	uint64_t nchunks, fsize;
	int grow_lock;
	int stopped; /* the file could not grow: recording has stopped (trace_raw_hdr.stop_errno) */
	struct trace_raw_hdr *hdr;
	uint32_t next_str;
	uint16_t phase; /* current phase id */
	int phase_lock;
	unsigned nphase;
	struct {
		char name[64];
	} phases[PHASE_MAX + 1]; /* id 0 = none */
	int fd_hwm;
	unsigned nmaps;
	/* filesystems out of the default scope as a whole (preload_fd.c, out_by_kind) */
	dev_t pipefs_dev, shm_dev;
	int pipefs_known;
	bool shm_known;
	char dir[PATH_MAX];
	char lib[PATH_MAX];
	/* filters: prefix lists ("a:b:c" split in place) */
	char inc_buf[4096], exc_buf[4096];
	const char *inc[LIST_MAX], *exc[LIST_MAX];
	unsigned ninc, nexc;
	bool all;
	/* NAME=VALUE strings that exec must pass on */
	char env[ENV_MAX][4096];
	unsigned nenv;
	char phase_env[sizeof("LLMIO_TRACE_PHASE=") + 64]; /* in environ: see set_phase_env */
};

struct preload_tls {
	int guard;
	uint32_t tid;
	char *chunk;
	unsigned used;
};

extern struct preload_state P;
extern struct fdent fds[FD_MAX];
extern struct mapping maps[MAP_MAX];
extern TLS struct preload_tls T;

/*
 * The libc functions the wrappers call through to, each found with dlsym(RTLD_NEXT) on first
 * use through REAL(name) and typed as libc declares it.
 */
/* clang-format off */
#define REAL_FUNCS(X)                                                                              \
	X(openat) X(close) X(close_range) X(closefrom) X(dup) X(dup2) X(dup3) X(fcntl) \
	X(read) X(pread) X(readv) X(preadv2) X(write) X(pwrite) X(writev) X(pwritev2) X(lseek)     \
	X(fsync) X(fdatasync) X(sync_file_range) X(fallocate) X(posix_fallocate) X(ftruncate)      \
	X(mmap) X(munmap) X(msync)                                                                 \
	X(rename) X(renameat) X(renameat2) X(unlink) X(unlinkat)                                   \
	X(fopen) X(fopen64) X(fdopen) X(fread) X(fread_unlocked) X(fwrite) X(fwrite_unlocked)      \
	X(fflush) X(fclose) X(fseeko)                                                              \
	X(execve) X(execvpe) X(fexecve) X(posix_spawn) X(posix_spawnp)
/* clang-format on */

#define REAL_EXTERN(name) extern __typeof__(name) *real_##name;
REAL_FUNCS(REAL_EXTERN)
#undef REAL_EXTERN

void *resolve(const char *name);

#define REAL(name)                                                                                 \
	(*({                                                                                       \
		if (!real_##name)                                                                  \
			real_##name = (__typeof__(real_##name))resolve(#name);                     \
		real_##name;                                                                       \
	}))

/* ---- small helpers (no allocation, no stdio) ---- */

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint32_t tid(void)
{
	if (!T.tid)
		T.tid = (uint32_t)syscall(SYS_gettid);
	return T.tid;
}

static inline void spin_lock(int *l)
{
	while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE))
		;
}

static inline void spin_unlock(int *l)
{
	__atomic_store_n(l, 0, __ATOMIC_RELEASE);
}

/* Enter a wrapped call: false before the constructor or inside another wrapped call. */
static inline bool enter(void)
{
	if (!P.on || T.guard)
		return false;
	T.guard = 1;
	return true;
}

static inline void leave(void)
{
	T.guard = 0;
}

static inline int64_t ret_of(ssize_t r)
{
	return r < 0 ? -(int64_t)errno : (int64_t)r;
}

static inline uint64_t iov_bytes(const struct iovec *iov, int n)
{
	uint64_t sum = 0;

	for (int i = 0; iov && i < n; i++)
		sum += iov[i].iov_len;
	return sum;
}

/* Is path outside the trace's scope (preload.c)? */
bool excluded(const char *p);
/* Is the name given to an open already enough to leave the file out (preload.c)? */
bool excluded_by_name(const char *given);

/* preload_record.c: the record file. */
void emit(uint16_t type, int fd, uint32_t path, uint32_t path2, uint64_t off, uint64_t req,
          int64_t res, uint64_t t0, uint64_t t1);
/* Intern a string: one header slot, then the text. \return its id, 0 when it was dropped. */
uint32_t emit_str(const char *s);
void emit_phase(unsigned id, bool def_only);
/* Start this process's file: DIR/<pid>.<n>.trace, n counting the images of one pid (exec). */
int open_proc_file(void);

/* preload_fd.c: per-descriptor state and call bracketing. */
struct fdcall {
	struct fdent *e;
	uint64_t t0;
	int fd;
	uint32_t served; /* TRACE_SERVED_*, recorded in the read's path2 */
};

int fd_path(int fd, char *buf, size_t len);
/* The traced entry of fd, resolving a descriptor seen for the first time; NULL: not traced. */
struct fdent *fd_get(int fd);
/* The entry of fd if it is already known to be traced (close: no lazy resolution). */
struct fdent *fd_peek(int fd);
void fd_forget(int fd);
/* The program's open, with the file's canonical path in canon when its name already is that
 * path ("" otherwise: resolve it through /proc). */
int fd_open(int dirfd, const char *path, int flags, mode_t mode, char *canon, size_t len,
            uint64_t *t0);
/* A descriptor just opened with flags (canon: its path from fd_open, or NULL): bind it now (the
 * open record needs its path). */
struct fdent *fd_opened(int fd, int flags, const char *canon);
/* A descriptor just opened that is known to be out of scope: no path is resolved. */
void fd_excluded(int fd);
void fd_copy(int from, int to);
/* Start a call on fd: false when it is not traced (the caller then just calls through). */
bool fd_begin(int fd, struct fdcall *c);
/* Finish a call begun with fd_begin: record it and move the tracked offset. */
void fd_end(struct fdcall *c, uint16_t type, uint64_t off, uint64_t req, int64_t res);
/* An absolute form of a path given to a call (relative to dirfd or the cwd). */
void abs_path(int dirfd, const char *p, char *out, size_t len);

/* One wrapper body: call through when fd is not traced, else time CALL and record it. */
#define FD_CALL(type, fd, off, req, call)                                                          \
	do {                                                                                       \
		struct fdcall c_;                                                                  \
		ssize_t r_;                                                                        \
                                                                                                   \
		if (!fd_begin(fd, &c_))                                                            \
			return call;                                                               \
		r_ = call;                                                                         \
		fd_end(&c_, type, off, req, ret_of(r_));                                           \
		return r_;                                                                         \
	} while (0)

/* preload.c: LLMIO_TRACE_PHASE=<name>, which exec and spawn pass on (preload_exec.c). */
#define PHASE_VAR     "LLMIO_TRACE_PHASE="
#define PHASE_VAR_LEN (sizeof(PHASE_VAR) - 1)

#endif
