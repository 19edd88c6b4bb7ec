/* SPDX-License-Identifier: MIT */
/*
 * libllmio_trace.so: records file I/O at the libc boundary, loaded with LD_PRELOAD by
 * `llmio trace`.  No dependency on libllmio or anything but libc.
 *
 * Design
 * - Each wrapper finds the real function with dlsym(RTLD_NEXT) and, when the descriptor is a
 *   traced file, times the call and appends one 64-byte record (src/trace/trace_format.h).
 * - Records go to a per-process file DIR/<pid>.<n>.trace ($LLMIO_TRACE_DIR) through a
 *   MAP_SHARED mapping: stores land in the page cache at once, so _exit, os._exit and SIGKILL
 *   lose at most the record being written.  The file grows in chunks; each thread takes a
 *   whole chunk with one atomic add and fills it alone, so no call takes a lock.
 * - Paths are resolved once per open (readlink of /proc/self/fd/N gives the absolute,
 *   canonical name) and kept in a fixed per-fd table with the tracked offset.  Descriptors
 *   opened before tracing or by calls not wrapped (pipe, socket) are resolved lazily the first
 *   time they are used.  Paths are interned as string records, one per open.
 * - A thread-local guard keeps the tracer's own calls, and calls made from inside a wrapped
 *   call, out of the trace.  Calls before the constructor has run pass through.
 * - fork: a pthread_atfork child handler starts a new file for the child, in the parent's
 *   phase; exec and spawn: the library, $LLMIO_TRACE_* and the current phase
 *   ($LLMIO_TRACE_PHASE) stay in the environment, restored by the wrappers of the calls that
 *   take an environment when the program passes one without them; the new image starts in
 *   that phase.
 * - stdio (fopen/fread/fwrite/...) is recorded at the stdio call: glibc's own read and write
 *   system calls inside stdio do not go through the PLT, so nothing is counted twice.
 */
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
#define GROW      (16u * TRACE_CHUNK) /* file growth step: one ftruncate per 16 chunks */
#define SLOTS     (TRACE_CHUNK / sizeof(struct trace_rec))
#define OFF_CUR   (UINT64_MAX - 1) /* "at the descriptor's current offset" */

enum { FD_UNKNOWN = 0, FD_TRACED, FD_EXCLUDED, FD_BUSY };
#define FDF_APPEND 1u
#define FDF_NOSEEK 2u

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

static struct {
	int on; /* tracing: set once the constructor has opened the file */
	int fd;
	uint32_t pid, ppid;
	uint64_t nchunks, fsize;
	int grow_lock;
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
} P = {.fd = -1};

static struct fdent fds[FD_MAX];
static struct mapping maps[MAP_MAX];

static TLS struct {
	int guard;
	uint32_t tid;
	char *chunk;
	unsigned used;
} T;

/* ---- real functions ---- */

static void *resolve(const char *name)
{
	void *p;

	T.guard++;
	p = dlsym(RTLD_NEXT, name);
	T.guard--;
	return p;
}

#define REAL_DECL(ret, name, ...) static ret (*real_##name)(__VA_ARGS__)
#define REAL(name)                                                                                 \
	(*({                                                                                       \
		if (!real_##name)                                                                  \
			real_##name = (__typeof__(real_##name))resolve(#name);                     \
		real_##name;                                                                       \
	}))

REAL_DECL(int, openat, int, const char *, int, ...);
REAL_DECL(int, close, int);
REAL_DECL(int, dup, int);
REAL_DECL(int, dup2, int, int);
REAL_DECL(int, dup3, int, int, int);
REAL_DECL(int, fcntl, int, int, ...);
REAL_DECL(ssize_t, read, int, void *, size_t);
REAL_DECL(ssize_t, pread, int, void *, size_t, off_t);
REAL_DECL(ssize_t, readv, int, const struct iovec *, int);
REAL_DECL(ssize_t, preadv2, int, const struct iovec *, int, off_t, int);
REAL_DECL(ssize_t, write, int, const void *, size_t);
REAL_DECL(ssize_t, pwrite, int, const void *, size_t, off_t);
REAL_DECL(ssize_t, writev, int, const struct iovec *, int);
REAL_DECL(ssize_t, pwritev2, int, const struct iovec *, int, off_t, int);
REAL_DECL(off_t, lseek, int, off_t, int);
REAL_DECL(int, fsync, int);
REAL_DECL(int, fdatasync, int);
REAL_DECL(int, sync_file_range, int, off_t, off_t, unsigned int);
REAL_DECL(void *, mmap, void *, size_t, int, int, int, off_t);
REAL_DECL(int, munmap, void *, size_t);
REAL_DECL(int, msync, void *, size_t, int);
REAL_DECL(int, fallocate, int, int, off_t, off_t);
REAL_DECL(int, posix_fallocate, int, off_t, off_t);
REAL_DECL(int, ftruncate, int, off_t);
REAL_DECL(int, renameat2, int, const char *, int, const char *, unsigned int);
REAL_DECL(int, rename, const char *, const char *);
REAL_DECL(int, renameat, int, const char *, int, const char *);
REAL_DECL(int, unlink, const char *);
REAL_DECL(int, unlinkat, int, const char *, int);
REAL_DECL(FILE *, fopen, const char *, const char *);
REAL_DECL(FILE *, fopen64, const char *, const char *);
REAL_DECL(FILE *, fdopen, int, const char *);
REAL_DECL(size_t, fread, void *, size_t, size_t, FILE *);
REAL_DECL(size_t, fread_unlocked, void *, size_t, size_t, FILE *);
REAL_DECL(size_t, fwrite, const void *, size_t, size_t, FILE *);
REAL_DECL(size_t, fwrite_unlocked, const void *, size_t, size_t, FILE *);
REAL_DECL(int, fflush, FILE *);
REAL_DECL(int, fclose, FILE *);
REAL_DECL(int, fseeko, FILE *, off_t, int);
REAL_DECL(int, execve, const char *, char *const[], char *const[]);

/* ---- small helpers (no allocation, no stdio) ---- */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint32_t tid(void)
{
	if (!T.tid)
		T.tid = (uint32_t)syscall(SYS_gettid);
	return T.tid;
}

static void spin_lock(int *l)
{
	while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE))
		;
}

static void spin_unlock(int *l)
{
	__atomic_store_n(l, 0, __ATOMIC_RELEASE);
}

/*
 * Scope.  User excludes win; with includes, only paths under them are traced; otherwise the
 * defaults of trace_scope.c apply (unless --all).
 */
static bool excluded(const char *p)
{
	for (unsigned i = 0; i < P.nexc; i++)
		if (trace_path_under(p, P.exc[i]))
			return true;
	if (P.ninc) {
		for (unsigned i = 0; i < P.ninc; i++)
			if (trace_path_under(p, P.inc[i]))
				return false;
		return true;
	}
	return !P.all && trace_path_default_excluded(p);
}

/* ---- the record file ---- */

static int grow_to(uint64_t need)
{
	int ret = 0;

	spin_lock(&P.grow_lock);
	if (P.fsize < need) {
		uint64_t size = need + GROW;

		if (syscall(SYS_ftruncate, P.fd, (off_t)size) == 0)
			P.fsize = size;
		else
			ret = -1;
	}
	spin_unlock(&P.grow_lock);
	return ret;
}

/* Give the calling thread a fresh chunk; slot 0 names its thread. */
static int new_chunk(void)
{
	uint64_t idx = __atomic_fetch_add(&P.nchunks, 1, __ATOMIC_RELAXED);
	uint64_t off = TRACE_RAW_HDR + idx * TRACE_CHUNK;
	struct trace_rec *r;
	void *p;

	if (__atomic_load_n(&P.fsize, __ATOMIC_ACQUIRE) < off + TRACE_CHUNK &&
	    grow_to(off + TRACE_CHUNK))
		return -1;
	p = REAL(mmap)(NULL, TRACE_CHUNK, PROT_READ | PROT_WRITE, MAP_SHARED, P.fd, (off_t)off);
	if (p == MAP_FAILED)
		return -1;
	if (T.chunk)
		REAL(munmap)(T.chunk, TRACE_CHUNK);
	T.chunk = p;
	r = p;
	r->pid = P.pid;
	r->tid = tid();
	r->ts = now_ns();
	__atomic_store_n(&r->type, TR_RAW_CHUNK, __ATOMIC_RELEASE);
	T.used = 1;
	return 0;
}

static struct trace_rec *reserve(unsigned n)
{
	struct trace_rec *r;

	if ((!T.chunk || T.used + n > SLOTS) && new_chunk()) {
		__atomic_add_fetch(&P.hdr->dropped, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	r = (struct trace_rec *)T.chunk + T.used;
	T.used += n;
	return r;
}

static void emit(uint16_t type, int fd, uint32_t path, uint32_t path2, uint64_t off, uint64_t req,
                 int64_t res, uint64_t t0, uint64_t t1)
{
	struct trace_rec *r = reserve(1);

	if (!r)
		return;
	r->ts = t0;
	r->dur = t1 - t0;
	r->offset = off;
	r->req = req;
	r->result = res;
	r->pid = P.pid;
	r->tid = tid();
	r->fd = fd;
	r->path = path;
	r->path2 = path2;
	r->phase = __atomic_load_n(&P.phase, __ATOMIC_RELAXED);
	__atomic_store_n(&r->type, type, __ATOMIC_RELEASE);
}

/* Intern a string: one header slot, then the text. \return its id, 0 when it was dropped. */
static uint32_t emit_str(const char *s)
{
	size_t len = strnlen(s, PATH_MAX - 1);
	struct trace_rec *r = reserve(1 + (unsigned)((len + 1 + 63) / 64));
	uint32_t id;

	if (!r)
		return 0;
	id = __atomic_add_fetch(&P.next_str, 1, __ATOMIC_RELAXED);
	memcpy(r + 1, s, len);
	((char *)(r + 1))[len] = '\0';
	r->ts = now_ns();
	r->req = len;
	r->path = id;
	r->pid = P.pid;
	r->tid = tid();
	__atomic_store_n(&r->type, TR_RAW_STR, __ATOMIC_RELEASE);
	return id;
}

static void emit_phase(unsigned id, bool def_only)
{
	struct trace_rec *r;
	uint32_t s = emit_str(P.phases[id].name);

	r = reserve(1);
	if (!r)
		return;
	r->ts = now_ns();
	r->fd = (int32_t)id;
	r->path = s;
	r->req = def_only;
	r->pid = P.pid;
	r->tid = tid();
	__atomic_store_n(&r->type, TR_RAW_PHASE, __ATOMIC_RELEASE);
}

static void read_cmdline(char *buf, size_t len, uint32_t *out_len)
{
	int fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	ssize_t n = 0;

	if (fd >= 0) {
		n = syscall(SYS_read, fd, buf, len - 1);
		syscall(SYS_close, fd);
	}
	if (n < 0)
		n = 0;
	while (n > 0 && buf[n - 1] == '\0')
		n--;
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	buf[n] = '\0';
	*out_len = (uint32_t)n;
}

/* Start this process's file: DIR/<pid>.<n>.trace, n counting the images of one pid (exec). */
static int open_proc_file(void)
{
	char path[PATH_MAX + 64];
	struct timespec mono, real;
	struct trace_raw_hdr *h;
	int fd = -1;
	void *p;

	for (unsigned n = 0; n < 10000 && fd < 0; n++) {
		snprintf(path, sizeof(path), "%s/%u.%u.trace", P.dir, P.pid, n);
		fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC,
		                  0600);
		if (fd < 0 && errno != EEXIST)
			return -1;
	}
	if (fd < 0)
		return -1;
	if (syscall(SYS_ftruncate, fd, (off_t)(TRACE_RAW_HDR + GROW)))
		goto fail;
	p = REAL(mmap)(NULL, TRACE_RAW_HDR, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		goto fail;
	P.fd = fd;
	P.fsize = TRACE_RAW_HDR + GROW;
	P.nchunks = 0;
	P.next_str = 0;
	P.hdr = h = p;
	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &real);
	h->version = TRACE_VERSION;
	h->chunk_size = TRACE_CHUNK;
	h->pid = P.pid;
	h->ppid = P.ppid;
	h->mono_anchor = (uint64_t)mono.tv_sec * 1000000000ull + (uint64_t)mono.tv_nsec;
	h->real_anchor = (uint64_t)real.tv_sec * 1000000000ull + (uint64_t)real.tv_nsec;
	read_cmdline(h->cmdline, sizeof(h->cmdline), &h->cmdline_len);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	memcpy(h->magic, TRACE_RAW_MAGIC, 8); /* last: a file with its magic is complete */
	return 0;
fail:
	syscall(SYS_close, fd);
	return -1;
}

/* ---- per-descriptor state ---- */

static int fd_path(int fd, char *buf, size_t len)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = syscall(SYS_readlinkat, AT_FDCWD, link, buf, len - 1);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

/*
 * Bind fd to its file.  known_flags < 0: the descriptor was not seen opening (lazy), so its
 * offset and flags are asked of the kernel.  The caller holds e->state == FD_BUSY.
 */
static void fd_bind(int fd, struct fdent *e, int known_flags)
{
	char path[PATH_MAX];
	int hwm, fl = known_flags;

	if (fd_path(fd, path, sizeof(path))) {
		__atomic_store_n(&e->state, FD_UNKNOWN, __ATOMIC_RELEASE);
		return;
	}
	if (excluded(path)) {
		__atomic_store_n(&e->state, FD_EXCLUDED, __ATOMIC_RELEASE);
		goto hwm;
	}
	e->path = emit_str(path);
	e->flags = 0;
	e->off = 0;
	if (fl < 0) {
		off_t pos = (off_t)syscall(SYS_lseek, fd, (off_t)0, SEEK_CUR);

		fl = (int)syscall(SYS_fcntl, fd, F_GETFL);
		if (pos < 0)
			e->flags |= FDF_NOSEEK;
		else
			e->off = (uint64_t)pos;
	}
	if (fl >= 0 && (fl & O_APPEND))
		e->flags |= FDF_APPEND;
	__atomic_store_n(&e->state, FD_TRACED, __ATOMIC_RELEASE);
hwm:
	hwm = __atomic_load_n(&P.fd_hwm, __ATOMIC_RELAXED);
	while (fd > hwm && !__atomic_compare_exchange_n(&P.fd_hwm, &hwm, fd, false,
	                                                __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/* The traced entry of fd, resolving a descriptor seen for the first time; NULL: not traced. */
static struct fdent *fd_get(int fd)
{
	struct fdent *e;
	uint32_t st;

	if (fd < 0 || fd >= FD_MAX)
		return NULL;
	e = &fds[fd];
	st = __atomic_load_n(&e->state, __ATOMIC_ACQUIRE);
	if (st == FD_TRACED)
		return e;
	if (st != FD_UNKNOWN || !__atomic_compare_exchange_n(&e->state, &st, FD_BUSY, false,
	                                                     __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return NULL;
	fd_bind(fd, e, -1);
	return __atomic_load_n(&e->state, __ATOMIC_ACQUIRE) == FD_TRACED ? e : NULL;
}

/* The entry of fd if it is already known to be traced (close: no lazy resolution). */
static struct fdent *fd_peek(int fd)
{
	if (fd < 0 || fd >= FD_MAX ||
	    __atomic_load_n(&fds[fd].state, __ATOMIC_ACQUIRE) != FD_TRACED)
		return NULL;
	return &fds[fd];
}

static void fd_forget(int fd)
{
	if (fd >= 0 && fd < FD_MAX)
		__atomic_store_n(&fds[fd].state, FD_UNKNOWN, __ATOMIC_RELEASE);
}

/* A descriptor just opened with flags: bind it now (the open record needs its path). */
static struct fdent *fd_opened(int fd, int flags)
{
	struct fdent *e;

	if (fd < 0 || fd >= FD_MAX)
		return NULL;
	e = &fds[fd];
	__atomic_store_n(&e->state, FD_BUSY, __ATOMIC_RELAXED);
	fd_bind(fd, e, flags);
	return __atomic_load_n(&e->state, __ATOMIC_ACQUIRE) == FD_TRACED ? e : NULL;
}

static void fd_copy(int from, int to)
{
	struct fdent *e = fd_peek(from);

	if (to < 0 || to >= FD_MAX)
		return;
	if (!e) {
		fd_forget(to);
		return;
	}
	fds[to].path = e->path;
	fds[to].off = e->off;
	fds[to].flags = e->flags;
	__atomic_store_n(&fds[to].state, FD_TRACED, __ATOMIC_RELEASE);
}

/* ---- call bracketing ---- */

struct fdcall {
	struct fdent *e;
	uint64_t t0;
	int fd;
};

static bool enter(void)
{
	if (!P.on || T.guard)
		return false;
	T.guard = 1;
	return true;
}

static void leave(void)
{
	T.guard = 0;
}

/* Start a call on fd: false when it is not traced (the caller then just calls through). */
static bool fd_begin(int fd, struct fdcall *c)
{
	if (!enter())
		return false;
	c->e = fd_get(fd);
	if (!c->e) {
		leave();
		return false;
	}
	c->fd = fd;
	c->t0 = now_ns();
	return true;
}

static bool is_write(uint16_t type)
{
	return type == TR_WRITE || type == TR_WRITEV || type == TR_FWRITE;
}

/* Finish a call begun with fd_begin: record it and move the tracked offset. */
static void fd_end(struct fdcall *c, uint16_t type, uint64_t off, uint64_t req, int64_t res)
{
	int saved = errno;
	uint64_t t1 = now_ns();
	struct fdent *e = c->e;

	if (off == OFF_CUR) {
		off = (e->flags & FDF_NOSEEK) ? TRACE_OFF_NONE : e->off;
		if (res > 0 && (e->flags & FDF_APPEND) && is_write(type) &&
		    !(e->flags & FDF_NOSEEK)) {
			off_t pos = (off_t)syscall(SYS_lseek, c->fd, (off_t)0, SEEK_CUR);

			/* stdio appends reach the file later; its end is the best guess */
			off = pos >= res ? (uint64_t)(pos - res) : TRACE_OFF_NONE;
			if (type == TR_FWRITE && pos >= 0)
				off = (uint64_t)pos;
			e->off = pos >= 0 ? (uint64_t)pos : e->off;
		} else if (res > 0 && off != TRACE_OFF_NONE) {
			e->off = off + (uint64_t)res;
		}
	}
	emit(type, c->fd, e->path, 0, off, req, res, c->t0, t1);
	errno = saved;
	leave();
}

static int64_t ret_of(ssize_t r)
{
	return r < 0 ? -(int64_t)errno : (int64_t)r;
}

static uint64_t iov_bytes(const struct iovec *iov, int n)
{
	uint64_t sum = 0;

	for (int i = 0; iov && i < n; i++)
		sum += iov[i].iov_len;
	return sum;
}

/* ---- open family ---- */

/* An absolute form of a path given to a call (relative to dirfd or the cwd). */
static void abs_path(int dirfd, const char *p, char *out, size_t len)
{
	char base[PATH_MAX];

	if (!p) {
		snprintf(out, len, "?");
		return;
	}
	if (p[0] == '/') {
		snprintf(out, len, "%s", p);
		return;
	}
	if (dirfd == AT_FDCWD) {
		if (syscall(SYS_getcwd, base, sizeof(base)) < 0)
			base[0] = '\0';
	} else if (fd_path(dirfd, base, sizeof(base))) {
		base[0] = '\0';
	}
	/* longer than a path can be: the call fails with ENAMETOOLONG, its path is unknown */
	if (snprintf(out, len, "%s/%s", base, p) >= (int)len)
		snprintf(out, len, "?");
}

static int open_common(int dirfd, const char *path, int flags, mode_t mode)
{
	char abs[PATH_MAX];
	struct fdent *e;
	uint64_t t0;
	int fd, err;

	if (!enter())
		return REAL(openat)(dirfd, path, flags, mode);
	t0 = now_ns();
	fd = REAL(openat)(dirfd, path, flags, mode);
	err = errno;
	if (fd >= 0) {
		e = fd_opened(fd, flags);
		if (e)
			emit(TR_OPEN, fd, e->path, 0, TRACE_OFF_NONE, (uint64_t)flags, fd, t0,
			     now_ns());
	} else {
		abs_path(dirfd, path, abs, sizeof(abs));
		if (!excluded(abs))
			emit(TR_OPEN, -1, emit_str(abs), 0, TRACE_OFF_NONE, (uint64_t)flags, -err,
			     t0, now_ns());
	}
	errno = err;
	leave();
	return fd;
}

static mode_t open_mode(int flags, va_list ap)
{
	if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE)
		return (mode_t)va_arg(ap, int);
	return 0;
}

#define OPEN_WRAPPER(name)                                                                         \
	EXPORT int name(const char *path, int flags, ...)                                          \
	{                                                                                          \
		va_list ap;                                                                        \
		mode_t mode;                                                                       \
                                                                                                   \
		va_start(ap, flags);                                                               \
		mode = open_mode(flags, ap);                                                       \
		va_end(ap);                                                                        \
		return open_common(AT_FDCWD, path, flags, mode);                                   \
	}
#define OPENAT_WRAPPER(name)                                                                       \
	EXPORT int name(int dirfd, const char *path, int flags, ...)                               \
	{                                                                                          \
		va_list ap;                                                                        \
		mode_t mode;                                                                       \
                                                                                                   \
		va_start(ap, flags);                                                               \
		mode = open_mode(flags, ap);                                                       \
		va_end(ap);                                                                        \
		return open_common(dirfd, path, flags, mode);                                      \
	}
OPEN_WRAPPER(open)
OPEN_WRAPPER(open64)
OPENAT_WRAPPER(openat)
OPENAT_WRAPPER(openat64)

EXPORT int creat(const char *path, mode_t mode)
{
	return open_common(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode);
}

/*
 * On LP64 glibc off_t is 64 bits, so each *64 entry point takes exactly the arguments of its
 * plain twin: it is the same function under a second name.
 */
EXPORT int creat64(const char *path, mode_t mode) __attribute__((alias("creat")));

EXPORT int __open_2(const char *path, int flags)
{
	return open_common(AT_FDCWD, path, flags, 0);
}

EXPORT int __open64_2(const char *path, int flags) __attribute__((alias("__open_2")));

EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
	return open_common(dirfd, path, flags, 0);
}

EXPORT int __openat64_2(int dirfd, const char *path, int flags)
        __attribute__((alias("__openat_2")));

EXPORT int close(int fd)
{
	struct fdcall c;
	int r;

	if (!enter())
		return REAL(close)(fd);
	c.e = fd_peek(fd);
	c.fd = fd;
	c.t0 = now_ns();
	r = REAL(close)(fd);
	if (!c.e) {
		fd_forget(fd);
		leave();
		return r;
	}
	fd_end(&c, TR_CLOSE, TRACE_OFF_NONE, 0, ret_of(r));
	fd_forget(fd);
	return r;
}

/* dup family: the new descriptor inherits the old one's path and offset. */
static int dup_end(struct fdcall *c, int r)
{
	if (r >= 0)
		fd_copy(c->fd, r);
	fd_end(c, TR_DUP, TRACE_OFF_NONE, 0, ret_of(r));
	return r;
}

EXPORT int dup(int fd)
{
	struct fdcall c;

	if (!fd_begin(fd, &c))
		return REAL(dup)(fd);
	return dup_end(&c, REAL(dup)(fd));
}

EXPORT int dup2(int fd, int fd2)
{
	struct fdcall c;
	int r;

	if (!fd_begin(fd, &c)) {
		r = REAL(dup2)(fd, fd2);
		if (r >= 0 && fd != fd2)
			fd_forget(fd2);
		return r;
	}
	return dup_end(&c, REAL(dup2)(fd, fd2));
}

EXPORT int dup3(int fd, int fd2, int flags)
{
	struct fdcall c;
	int r;

	if (!fd_begin(fd, &c)) {
		r = REAL(dup3)(fd, fd2, flags);
		if (r >= 0)
			fd_forget(fd2);
		return r;
	}
	return dup_end(&c, REAL(dup3)(fd, fd2, flags));
}

static int fcntl_common(int fd, int cmd, va_list ap)
{
	unsigned long arg = va_arg(ap, unsigned long);
	struct fdcall c;

	if ((cmd != F_DUPFD && cmd != F_DUPFD_CLOEXEC) || !fd_begin(fd, &c))
		return REAL(fcntl)(fd, cmd, arg);
	return dup_end(&c, REAL(fcntl)(fd, cmd, arg));
}

EXPORT int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	int r;

	va_start(ap, cmd);
	r = fcntl_common(fd, cmd, ap);
	va_end(ap);
	return r;
}

EXPORT int fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	int r;

	va_start(ap, cmd);
	r = fcntl_common(fd, cmd, ap);
	va_end(ap);
	return r;
}

/* ---- data transfer ---- */

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

EXPORT ssize_t read(int fd, void *buf, size_t n)
{
	FD_CALL(TR_READ, fd, OFF_CUR, n, REAL(read)(fd, buf, n));
}

EXPORT ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen)
{
	if (n > buflen)
		abort();
	FD_CALL(TR_READ, fd, OFF_CUR, n, REAL(read)(fd, buf, n));
}

EXPORT ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
	FD_CALL(TR_PREAD, fd, (uint64_t)off, n, REAL(pread)(fd, buf, n, off));
}

EXPORT ssize_t pread64(int fd, void *buf, size_t n, off_t off) __attribute__((alias("pread")));

EXPORT ssize_t __pread_chk(int fd, void *buf, size_t n, off_t off, size_t buflen)
{
	if (n > buflen)
		abort();
	FD_CALL(TR_PREAD, fd, (uint64_t)off, n, REAL(pread)(fd, buf, n, off));
}

EXPORT ssize_t __pread64_chk(int fd, void *buf, size_t n, off_t off, size_t buflen)
        __attribute__((alias("__pread_chk")));

EXPORT ssize_t readv(int fd, const struct iovec *iov, int cnt)
{
	FD_CALL(TR_READV, fd, OFF_CUR, iov_bytes(iov, cnt), REAL(readv)(fd, iov, cnt));
}

/* preadv2 with offset -1 reads at (and moves) the current offset, like readv. */
#define POS(off) ((off) == -1 ? OFF_CUR : (uint64_t)(off))

EXPORT ssize_t preadv(int fd, const struct iovec *iov, int cnt, off_t off)
{
	FD_CALL(TR_PREADV, fd, (uint64_t)off, iov_bytes(iov, cnt),
	        REAL(preadv2)(fd, iov, cnt, off, 0));
}

EXPORT ssize_t preadv64(int fd, const struct iovec *iov, int cnt, off_t off)
        __attribute__((alias("preadv")));

EXPORT ssize_t preadv2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
	FD_CALL(TR_PREADV, fd, POS(off), iov_bytes(iov, cnt),
	        REAL(preadv2)(fd, iov, cnt, off, flags));
}

EXPORT ssize_t preadv64v2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
	FD_CALL(TR_PREADV, fd, POS(off), iov_bytes(iov, cnt),
	        REAL(preadv2)(fd, iov, cnt, off, flags));
}

EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
	FD_CALL(TR_WRITE, fd, OFF_CUR, n, REAL(write)(fd, buf, n));
}

EXPORT ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	FD_CALL(TR_PWRITE, fd, (uint64_t)off, n, REAL(pwrite)(fd, buf, n, off));
}

EXPORT ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off)
        __attribute__((alias("pwrite")));

EXPORT ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
	FD_CALL(TR_WRITEV, fd, OFF_CUR, iov_bytes(iov, cnt), REAL(writev)(fd, iov, cnt));
}

EXPORT ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off)
{
	FD_CALL(TR_PWRITEV, fd, (uint64_t)off, iov_bytes(iov, cnt),
	        REAL(pwritev2)(fd, iov, cnt, off, 0));
}

EXPORT ssize_t pwritev64(int fd, const struct iovec *iov, int cnt, off_t off)
        __attribute__((alias("pwritev")));

EXPORT ssize_t pwritev2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
	FD_CALL(TR_PWRITEV, fd, POS(off), iov_bytes(iov, cnt),
	        REAL(pwritev2)(fd, iov, cnt, off, flags));
}

EXPORT ssize_t pwritev64v2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
	FD_CALL(TR_PWRITEV, fd, POS(off), iov_bytes(iov, cnt),
	        REAL(pwritev2)(fd, iov, cnt, off, flags));
}

static off_t lseek_common(int fd, off_t off, int whence)
{
	struct fdcall c;
	off_t r;

	if (!fd_begin(fd, &c))
		return REAL(lseek)(fd, off, whence);
	r = REAL(lseek)(fd, off, whence);
	if (r >= 0)
		c.e->off = (uint64_t)r;
	fd_end(&c, TR_LSEEK, r >= 0 ? (uint64_t)r : TRACE_OFF_NONE, (uint64_t)off, ret_of(r));
	return r;
}

EXPORT off_t lseek(int fd, off_t off, int whence)
{
	return lseek_common(fd, off, whence);
}

EXPORT off_t lseek64(int fd, off_t off, int whence) __attribute__((alias("lseek")));

/* ---- sync, space, truncate ---- */

EXPORT int fsync(int fd)
{
	FD_CALL(TR_FSYNC, fd, TRACE_OFF_NONE, 0, REAL(fsync)(fd));
}

EXPORT int fdatasync(int fd)
{
	FD_CALL(TR_FDATASYNC, fd, TRACE_OFF_NONE, 0, REAL(fdatasync)(fd));
}

EXPORT int sync_file_range(int fd, off_t off, off_t n, unsigned int flags)
{
	FD_CALL(TR_SYNC_RANGE, fd, (uint64_t)off, (uint64_t)n,
	        REAL(sync_file_range)(fd, off, n, flags));
}

EXPORT int fallocate(int fd, int mode, off_t off, off_t len)
{
	FD_CALL(TR_FALLOCATE, fd, (uint64_t)off, (uint64_t)len,
	        REAL(fallocate)(fd, mode, off, len));
}

EXPORT int fallocate64(int fd, int mode, off_t off, off_t len) __attribute__((alias("fallocate")));

/* posix_fallocate returns an error number instead of setting errno. */
static int posix_fallocate_common(int fd, off_t off, off_t len)
{
	struct fdcall c;
	int r;

	if (!fd_begin(fd, &c))
		return REAL(posix_fallocate)(fd, off, len);
	r = REAL(posix_fallocate)(fd, off, len);
	fd_end(&c, TR_FALLOCATE, (uint64_t)off, (uint64_t)len, -(int64_t)r);
	return r;
}

EXPORT int posix_fallocate(int fd, off_t off, off_t len)
{
	return posix_fallocate_common(fd, off, len);
}

EXPORT int posix_fallocate64(int fd, off_t off, off_t len)
        __attribute__((alias("posix_fallocate")));

EXPORT int ftruncate(int fd, off_t len)
{
	FD_CALL(TR_FTRUNCATE, fd, TRACE_OFF_NONE, (uint64_t)len, REAL(ftruncate)(fd, len));
}

EXPORT int ftruncate64(int fd, off_t len) __attribute__((alias("ftruncate")));

/* ---- memory mappings ---- */

static struct mapping *map_find(uintptr_t addr, bool containing)
{
	if (!__atomic_load_n(&P.nmaps, __ATOMIC_RELAXED))
		return NULL;
	for (unsigned i = 0; i < MAP_MAX; i++) {
		uintptr_t a = __atomic_load_n(&maps[i].addr, __ATOMIC_ACQUIRE);

		if (a && (a == addr || (containing && addr > a && addr < a + maps[i].len)))
			return &maps[i];
	}
	return NULL;
}

static void map_add(uintptr_t addr, size_t len, uint32_t path)
{
	for (unsigned i = 0; i < MAP_MAX; i++) {
		uintptr_t zero = 0;

		if (!__atomic_load_n(&maps[i].addr, __ATOMIC_RELAXED) &&
		    __atomic_compare_exchange_n(&maps[i].addr, &zero, ~(uintptr_t)0, false,
		                                __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
			maps[i].len = len;
			maps[i].path = path;
			__atomic_store_n(&maps[i].addr, addr, __ATOMIC_RELEASE);
			__atomic_add_fetch(&P.nmaps, 1, __ATOMIC_RELAXED);
			return;
		}
	}
}

static void *mmap_common(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	struct fdcall c;
	void *r;

	if ((flags & MAP_ANONYMOUS) || fd < 0 || !fd_begin(fd, &c))
		return REAL(mmap)(addr, len, prot, flags, fd, off);
	r = REAL(mmap)(addr, len, prot, flags, fd, off);
	if (r != MAP_FAILED)
		map_add((uintptr_t)r, len, c.e->path);
	fd_end(&c, TR_MMAP, (uint64_t)off, len,
	       r == MAP_FAILED ? -(int64_t)errno : (int64_t)(uintptr_t)r);
	return r;
}

EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return mmap_common(addr, len, prot, flags, fd, off);
}

EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
        __attribute__((alias("mmap")));

/* munmap / msync: recorded when they touch a mapping of a traced file. */
static int map_call(uint16_t type, void *addr, size_t len, int flags)
{
	struct mapping *m;
	uint64_t t0;
	uint32_t path;
	int r, err;

	if (!enter())
		goto through;
	m = map_find((uintptr_t)addr, type == TR_MSYNC);
	if (!m) {
		leave();
		goto through;
	}
	path = m->path;
	t0 = now_ns();
	r = type == TR_MUNMAP ? REAL(munmap)(addr, len) : REAL(msync)(addr, len, flags);
	err = errno;
	if (r == 0 && type == TR_MUNMAP && m->len <= len) {
		__atomic_store_n(&m->addr, 0, __ATOMIC_RELEASE);
		__atomic_sub_fetch(&P.nmaps, 1, __ATOMIC_RELAXED);
	}
	emit(type, -1, path, 0, TRACE_OFF_NONE, len, r < 0 ? -(int64_t)err : 0, t0, now_ns());
	errno = err;
	leave();
	return r;
through:
	return type == TR_MUNMAP ? REAL(munmap)(addr, len) : REAL(msync)(addr, len, flags);
}

EXPORT int munmap(void *addr, size_t len)
{
	return map_call(TR_MUNMAP, addr, len, 0);
}

EXPORT int msync(void *addr, size_t len, int flags)
{
	return map_call(TR_MSYNC, addr, len, flags);
}

/* ---- names ---- */

/* rename / unlink: recorded with absolute paths when the (first) path is in scope. */
static void name_end(uint16_t type, int d1, const char *p1, int d2, const char *p2, uint64_t t0,
                     int r)
{
	char a1[PATH_MAX], a2[PATH_MAX];
	int err = errno;
	uint64_t t1 = now_ns();
	uint32_t s2 = 0;

	abs_path(d1, p1, a1, sizeof(a1));
	if (p2)
		abs_path(d2, p2, a2, sizeof(a2));
	if (!excluded(a1) || (p2 && !excluded(a2))) {
		if (p2)
			s2 = emit_str(a2);
		emit(type, -1, emit_str(a1), s2, TRACE_OFF_NONE, 0, r < 0 ? -(int64_t)err : 0, t0,
		     t1);
	}
	errno = err;
	leave();
}

#define NAME_CALL(type, d1, p1, d2, p2, call)                                                      \
	do {                                                                                       \
		uint64_t t0_;                                                                      \
		int r_;                                                                            \
                                                                                                   \
		if (!enter())                                                                      \
			return call;                                                               \
		t0_ = now_ns();                                                                    \
		r_ = call;                                                                         \
		name_end(type, d1, p1, d2, p2, t0_, r_);                                           \
		return r_;                                                                         \
	} while (0)

EXPORT int rename(const char *from, const char *to)
{
	NAME_CALL(TR_RENAME, AT_FDCWD, from, AT_FDCWD, to, REAL(rename)(from, to));
}

EXPORT int renameat(int d1, const char *from, int d2, const char *to)
{
	NAME_CALL(TR_RENAME, d1, from, d2, to, REAL(renameat)(d1, from, d2, to));
}

EXPORT int renameat2(int d1, const char *from, int d2, const char *to, unsigned int flags)
{
	NAME_CALL(TR_RENAME, d1, from, d2, to, REAL(renameat2)(d1, from, d2, to, flags));
}

EXPORT int unlink(const char *path)
{
	NAME_CALL(TR_UNLINK, AT_FDCWD, path, AT_FDCWD, NULL, REAL(unlink)(path));
}

EXPORT int unlinkat(int dirfd, const char *path, int flags)
{
	NAME_CALL(TR_UNLINK, dirfd, path, AT_FDCWD, NULL, REAL(unlinkat)(dirfd, path, flags));
}

/* ---- stdio ---- */

static FILE *fopen_end(FILE *f, uint64_t t0, int flags_hint)
{
	int err = errno;
	struct fdent *e;
	int fd;

	if (f) {
		fd = fileno(f);
		e = fd_opened(fd, flags_hint);
		if (e)
			emit(TR_FOPEN, fd, e->path, 0, TRACE_OFF_NONE, 0, fd, t0, now_ns());
	}
	errno = err;
	leave();
	return f;
}

static int mode_flags(const char *mode)
{
	return mode && mode[0] == 'a' ? O_APPEND : 0;
}

EXPORT FILE *fopen(const char *path, const char *mode)
{
	uint64_t t0;

	if (!enter())
		return REAL(fopen)(path, mode);
	t0 = now_ns();
	return fopen_end(REAL(fopen)(path, mode), t0, mode_flags(mode));
}

EXPORT FILE *fopen64(const char *path, const char *mode)
{
	uint64_t t0;

	if (!enter())
		return REAL(fopen64)(path, mode);
	t0 = now_ns();
	return fopen_end(REAL(fopen64)(path, mode), t0, mode_flags(mode));
}

EXPORT FILE *fdopen(int fd, const char *mode)
{
	struct fdcall c;
	FILE *f;

	if (!fd_begin(fd, &c))
		return REAL(fdopen)(fd, mode);
	f = REAL(fdopen)(fd, mode);
	fd_end(&c, TR_FOPEN, TRACE_OFF_NONE, 0, f ? fd : -(int64_t)errno);
	return f;
}

/* fread/fwrite: bytes = items * size; the stream's position is tracked on its descriptor. */
#define STDIO_CALL(type, f, size, n, call)                                                         \
	do {                                                                                       \
		struct fdcall c_;                                                                  \
		size_t r_;                                                                         \
                                                                                                   \
		if (!fd_begin(fileno_unlocked(f), &c_))                                            \
			return call;                                                               \
		r_ = call;                                                                         \
		fd_end(&c_, type, OFF_CUR, (uint64_t)(size) * (n),                                 \
		       r_ == 0 && (size) && (n) && ferror_unlocked(f) ? -(int64_t)errno            \
		                                                      : (int64_t)(r_ * (size)));   \
		return r_;                                                                         \
	} while (0)

EXPORT size_t fread(void *p, size_t size, size_t n, FILE *f)
{
	STDIO_CALL(TR_FREAD, f, size, n, REAL(fread)(p, size, n, f));
}

EXPORT size_t fread_unlocked(void *p, size_t size, size_t n, FILE *f)
{
	STDIO_CALL(TR_FREAD, f, size, n, REAL(fread_unlocked)(p, size, n, f));
}

EXPORT size_t __fread_chk(void *p, size_t plen, size_t size, size_t n, FILE *f)
{
	if (size && n > plen / size)
		abort();
	STDIO_CALL(TR_FREAD, f, size, n, REAL(fread)(p, size, n, f));
}

EXPORT size_t __fread_unlocked_chk(void *p, size_t plen, size_t size, size_t n, FILE *f)
{
	if (size && n > plen / size)
		abort();
	STDIO_CALL(TR_FREAD, f, size, n, REAL(fread_unlocked)(p, size, n, f));
}

EXPORT size_t fwrite(const void *p, size_t size, size_t n, FILE *f)
{
	STDIO_CALL(TR_FWRITE, f, size, n, REAL(fwrite)(p, size, n, f));
}

EXPORT size_t fwrite_unlocked(const void *p, size_t size, size_t n, FILE *f)
{
	STDIO_CALL(TR_FWRITE, f, size, n, REAL(fwrite_unlocked)(p, size, n, f));
}

EXPORT int fflush(FILE *f)
{
	if (!f)
		return REAL(fflush)(f);
	FD_CALL(TR_FFLUSH, fileno_unlocked(f), TRACE_OFF_NONE, 0, REAL(fflush)(f));
}

EXPORT int fclose(FILE *f)
{
	struct fdcall c;
	int fd = f ? fileno_unlocked(f) : -1;
	int r;

	if (!fd_begin(fd, &c)) {
		r = REAL(fclose)(f);
		fd_forget(fd);
		return r;
	}
	r = REAL(fclose)(f);
	fd_end(&c, TR_FCLOSE, TRACE_OFF_NONE, 0, ret_of(r));
	fd_forget(fd);
	return r;
}

/* fseek: not a record of its own kind; it moves the stream's tracked position. */
static int fseek_common(FILE *f, off_t off, int whence)
{
	struct fdcall c;
	int r;

	if (!f || !fd_begin(fileno_unlocked(f), &c))
		return REAL(fseeko)(f, off, whence);
	r = REAL(fseeko)(f, off, whence);
	if (r == 0) {
		off_t pos = ftello(f);

		if (pos >= 0)
			c.e->off = (uint64_t)pos;
	}
	fd_end(&c, TR_LSEEK, r == 0 ? c.e->off : TRACE_OFF_NONE, (uint64_t)off, ret_of(r));
	return r;
}

EXPORT int fseek(FILE *f, long off, int whence)
{
	return fseek_common(f, off, whence);
}

EXPORT int fseeko(FILE *f, off_t off, int whence)
{
	return fseek_common(f, off, whence);
}

EXPORT int fseeko64(FILE *f, off_t off, int whence) __attribute__((alias("fseeko")));

/* ---- exec and spawn: keep the tracer and the phase in the environment ---- */

/*
 * What a new image must find in its environment: LD_PRELOAD and $LLMIO_TRACE_* (P.env, kept
 * at start) and LLMIO_TRACE_PHASE=<the current phase>, which the new image's constructor
 * reads (tracer_init).  The exec family without an envp argument (execv, execvp, execl,
 * execlp, system, popen, glibc's internal posix_spawn) passes `environ`, where P.phase_env
 * is kept up to date in place (llmio_trace_phase); calls that take an envp are wrapped and
 * get these entries added, or replaced: a program's copy of its environment (Python's
 * os.environ) holds the phase of the moment it was made, not the current one.
 */
#define PHASE_VAR     "LLMIO_TRACE_PHASE="
#define PHASE_VAR_LEN (sizeof(PHASE_VAR) - 1)

static bool env_is(const char *e, const char *kv)
{
	size_t n = (size_t)(strchr(kv, '=') - kv) + 1;

	return !strncmp(e, kv, n);
}

static size_t env_count(char *const envp[])
{
	size_t n = 0;

	while (envp && envp[n])
		n++;
	return n;
}

/*
 * Fill out (room for env_count(envp) + ENV_MAX + 2 entries) with envp, then what it lacks of
 * P.env (an LD_PRELOAD without the tracer is replaced), then the current phase, always (in
 * phase: PHASE_VAR_LEN + 64 bytes).
 */
static char *const *env_fix(char *const envp[], char **out, char *phase)
{
	unsigned id = __atomic_load_n(&P.phase, __ATOMIC_RELAXED);
	bool have[ENV_MAX] = {false};
	size_t k = 0;

	for (size_t i = 0; envp && envp[i]; i++) {
		bool keep = !env_is(envp[i], PHASE_VAR);

		for (unsigned j = 0; j < P.nenv && keep; j++)
			if (env_is(envp[i], P.env[j])) {
				keep = strncmp(envp[i], "LD_PRELOAD=", 11) ||
				       strstr(envp[i], P.lib);
				have[j] = keep;
			}
		if (keep)
			out[k++] = envp[i];
	}
	for (unsigned j = 0; j < P.nenv; j++)
		if (!have[j])
			out[k++] = P.env[j];
	snprintf(phase, PHASE_VAR_LEN + sizeof(P.phases[0].name), "%s%s", PHASE_VAR,
	         id ? P.phases[id].name : "");
	out[k++] = phase;
	out[k] = NULL;
	return out;
}

/* Declare the fixed environment of envp as `var` (a VLA on the caller's stack: vfork-safe). */
#define FIXED_ENV(var, envp)                                                                       \
	char *var##_v[env_count(envp) + ENV_MAX + 2];                                              \
	char var##_phase[PHASE_VAR_LEN + sizeof(P.phases[0].name)];                                \
	char *const *var = env_fix(envp, var##_v, var##_phase)

REAL_DECL(int, execvpe, const char *, char *const[], char *const[]);
REAL_DECL(int, fexecve, int, char *const[], char *const[]);
REAL_DECL(int, posix_spawn, pid_t *, const char *, const posix_spawn_file_actions_t *,
          const posix_spawnattr_t *, char *const[], char *const[]);
REAL_DECL(int, posix_spawnp, pid_t *, const char *, const posix_spawn_file_actions_t *,
          const posix_spawnattr_t *, char *const[], char *const[]);

EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	if (!P.on)
		return REAL(execve)(path, argv, envp);
	{
		FIXED_ENV(env, envp);

		return REAL(execve)(path, argv, env);
	}
}

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	if (!P.on)
		return REAL(execvpe)(file, argv, envp);
	{
		FIXED_ENV(env, envp);

		return REAL(execvpe)(file, argv, env);
	}
}

EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	if (!P.on)
		return REAL(fexecve)(fd, argv, envp);
	{
		FIXED_ENV(env, envp);

		return REAL(fexecve)(fd, argv, env);
	}
}

/* execle(path, arg0, ..., NULL, envp): glibc runs its internal execve, not the wrapper above */
EXPORT int execle(const char *path, const char *arg, ...)
{
	size_t n = 1;
	va_list ap;

	va_start(ap, arg);
	while (va_arg(ap, const char *))
		n++;
	va_end(ap);
	{
		char *argv[n + 1];
		char *const *envp;

		argv[0] = (char *)arg;
		va_start(ap, arg);
		for (size_t i = 1; i <= n; i++)
			argv[i] = va_arg(ap, char *);
		envp = va_arg(ap, char *const *);
		va_end(ap);
		return execve(path, argv, envp);
	}
}

typedef int spawn_fn(pid_t *, const char *, const posix_spawn_file_actions_t *,
                     const posix_spawnattr_t *, char *const[], char *const[]);

static int spawn_fixed(spawn_fn *fn, pid_t *pid, const char *path,
                       const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *attr,
                       char *const argv[], char *const envp[])
{
	if (!P.on)
		return fn(pid, path, fa, attr, argv, envp);
	{
		FIXED_ENV(env, envp);

		return fn(pid, path, fa, attr, argv, env);
	}
}

EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
                       const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	return spawn_fixed(&REAL(posix_spawn), pid, path, fa, attr, argv, envp);
}

EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
                        const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	return spawn_fixed(&REAL(posix_spawnp), pid, file, fa, attr, argv, envp);
}

/* ---- phases ---- */

/*
 * LLMIO_TRACE_PHASE=<the current phase's name> in P.phase_env, the string `environ` points at
 * (putenv in tracer_init): rewritten in place, so the environment array is never reallocated
 * behind a thread reading it.  The phase is read under the lock, so after two threads switch
 * at once the text names the phase that won.  A thread that execs during a switch may pass a
 * name cut short; the buffer always ends in NUL.
 */
static void set_phase_env(void)
{
	const char *name;
	unsigned id;
	size_t n;

	spin_lock(&P.phase_lock);
	id = __atomic_load_n(&P.phase, __ATOMIC_RELAXED);
	name = id ? P.phases[id].name : "";
	n = strnlen(name, sizeof(P.phases[0].name) - 1);
	memcpy(P.phase_env + PHASE_VAR_LEN, name, n);
	P.phase_env[PHASE_VAR_LEN + n] = '\0';
	spin_unlock(&P.phase_lock);
}

/* The phase id of name, defined if new (the table full: the last one). */
static unsigned phase_id(const char *name)
{
	unsigned id;

	spin_lock(&P.phase_lock);
	for (id = 1; id <= P.nphase; id++)
		if (!strncmp(P.phases[id].name, name, sizeof(P.phases[id].name) - 1))
			break;
	if (id > P.nphase && P.nphase < PHASE_MAX) {
		id = ++P.nphase;
		snprintf(P.phases[id].name, sizeof(P.phases[id].name), "%s", name);
	}
	spin_unlock(&P.phase_lock);
	return id > P.nphase ? P.nphase : id; /* table full: the last name takes the rest */
}

EXPORT void llmio_trace_phase(const char *name)
{
	unsigned id = 0;

	if (!enter())
		return;
	if (name && name[0])
		id = phase_id(name);
	__atomic_store_n(&P.phase, (uint16_t)id, __ATOMIC_RELAXED);
	set_phase_env();
	emit_phase(id, false);
	leave();
}

/* ---- process life ---- */

static void split_list(const char *env, char *buf, size_t len, const char **out, unsigned *n)
{
	char *save, *tok;

	*n = 0;
	if (!env)
		return;
	snprintf(buf, len, "%s", env);
	for (tok = strtok_r(buf, ":", &save); tok && *n < LIST_MAX;
	     tok = strtok_r(NULL, ":", &save))
		out[(*n)++] = tok;
}

static void keep_env(const char *name)
{
	const char *v = getenv(name);

	if (v && P.nenv < ENV_MAX)
		snprintf(P.env[P.nenv++], sizeof(P.env[0]), "%s=%s", name, v);
}

/* In a forked child: a new file; descriptors re-resolve lazily (their path ids belong to the
 * parent's file), phases are defined again. */
static void at_fork_child(void)
{
	int hwm;

	if (!P.on)
		return;
	P.on = 0;
	if (T.chunk)
		REAL(munmap)(T.chunk, TRACE_CHUNK);
	T.chunk = NULL;
	T.tid = 0;
	if (P.hdr)
		REAL(munmap)(P.hdr, TRACE_RAW_HDR);
	P.hdr = NULL;
	syscall(SYS_close, P.fd);
	P.grow_lock = 0;
	P.phase_lock = 0;
	P.ppid = P.pid;
	P.pid = (uint32_t)getpid();
	hwm = P.fd_hwm;
	for (int fd = 0; fd <= hwm && fd < FD_MAX; fd++)
		if (fds[fd].state != FD_UNKNOWN)
			fds[fd].state = FD_UNKNOWN;
	memset(maps, 0, sizeof(maps));
	P.nmaps = 0;
	if (open_proc_file())
		return;
	P.on = 1;
	T.guard = 1;
	for (unsigned id = 1; id <= P.nphase; id++)
		emit_phase(id, true);
	if (P.phase)
		emit_phase(P.phase, false);
	T.guard = 0;
}

__attribute__((constructor)) static void tracer_init(void)
{
	const char *dir = getenv("LLMIO_TRACE_DIR"), *phase;
	Dl_info info;

	/* resolve up front so that no wrapper looks a symbol up while the program runs */
	(void)REAL(openat);
	(void)REAL(close);
	(void)REAL(read);
	(void)REAL(write);
	(void)REAL(mmap);
	(void)REAL(munmap);
	if (!dir || !dir[0] || strlen(dir) >= sizeof(P.dir))
		return;
	T.guard = 1;
	snprintf(P.dir, sizeof(P.dir), "%s", dir);
	if (dladdr((void *)tracer_init, &info) && info.dli_fname)
		snprintf(P.lib, sizeof(P.lib), "%s", info.dli_fname);
	split_list(getenv("LLMIO_TRACE_INCLUDE"), P.inc_buf, sizeof(P.inc_buf), P.inc, &P.ninc);
	split_list(getenv("LLMIO_TRACE_EXCLUDE"), P.exc_buf, sizeof(P.exc_buf), P.exc, &P.nexc);
	P.all = getenv("LLMIO_TRACE_ALL") && !strcmp(getenv("LLMIO_TRACE_ALL"), "1");
	keep_env("LD_PRELOAD");
	keep_env("LLMIO_TRACE_DIR");
	keep_env("LLMIO_TRACE_INCLUDE");
	keep_env("LLMIO_TRACE_EXCLUDE");
	keep_env("LLMIO_TRACE_ALL");
	P.pid = (uint32_t)getpid();
	P.ppid = (uint32_t)getppid();
	/* the phase of the process that exec'd or spawned this image */
	phase = getenv("LLMIO_TRACE_PHASE");
	if (phase && phase[0])
		P.phase = (uint16_t)phase_id(phase);
	memcpy(P.phase_env, PHASE_VAR, PHASE_VAR_LEN);
	set_phase_env();
	if (open_proc_file() == 0) {
		pthread_atfork(NULL, NULL, at_fork_child);
		P.on = 1;
		putenv(P.phase_env);
		if (P.phase)
			emit_phase(P.phase, false);
	}
	T.guard = 0;
}
