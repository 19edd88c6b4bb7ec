// SPDX-License-Identifier: MIT
/*
 * The tracer's wrappers of calls on a descriptor or a name: data transfer, sync and space,
 * memory mappings, rename and unlink.  Most are one line of a table below, which names the
 * libc function, its parameters, the kind of record it makes (trace_format.h) with the offset
 * and size it records, and the call through to the real function; the few that need more
 * (fortify checks, lseek, posix_fallocate's error return, mappings) follow the tables.
 */
#include <sys/stat.h>

#include "trace/preload_internal.h"

/* preadv2 with offset -1 reads at (and moves) the current offset, like readv. */
#define POS(off) ((off) == -1 ? OFF_CUR : (uint64_t)(off))

/*
 * Calls on a descriptor: X(return type, name, (parameters), record type, offset, bytes asked,
 * real function, (its arguments)).  A call whose descriptor is not traced goes straight through.
 */
#define FD_WRAPPERS(X)                                                                             \
	X(ssize_t, preadv2, (int fd, const struct iovec *iov, int cnt, off_t off, int flags),      \
	  TR_PREADV, POS(off), iov_bytes(iov, cnt), preadv2, (fd, iov, cnt, off, flags))           \
	X(ssize_t, write, (int fd, const void *buf, size_t n), TR_WRITE, OFF_CUR, n, write,        \
	  (fd, buf, n))                                                                            \
	X(ssize_t, pwrite, (int fd, const void *buf, size_t n, off_t off), TR_PWRITE,              \
	  (uint64_t)off, n, pwrite, (fd, buf, n, off))                                             \
	X(ssize_t, writev, (int fd, const struct iovec *iov, int cnt), TR_WRITEV, OFF_CUR,         \
	  iov_bytes(iov, cnt), writev, (fd, iov, cnt))                                             \
	X(ssize_t, pwritev, (int fd, const struct iovec *iov, int cnt, off_t off), TR_PWRITEV,     \
	  (uint64_t)off, iov_bytes(iov, cnt), pwritev2, (fd, iov, cnt, off, 0))                    \
	X(ssize_t, pwritev2, (int fd, const struct iovec *iov, int cnt, off_t off, int flags),     \
	  TR_PWRITEV, POS(off), iov_bytes(iov, cnt), pwritev2, (fd, iov, cnt, off, flags))         \
	X(int, fsync, (int fd), TR_FSYNC, TRACE_OFF_NONE, 0, fsync, (fd))                          \
	X(int, fdatasync, (int fd), TR_FDATASYNC, TRACE_OFF_NONE, 0, fdatasync, (fd))              \
	X(int, sync_file_range, (int fd, off_t off, off_t n, unsigned int flags), TR_SYNC_RANGE,   \
	  (uint64_t)off, (uint64_t)n, sync_file_range, (fd, off, n, flags))                        \
	X(int, fallocate, (int fd, int mode, off_t off, off_t len), TR_FALLOCATE, (uint64_t)off,   \
	  (uint64_t)len, fallocate, (fd, mode, off, len))                                          \
	X(int, ftruncate, (int fd, off_t len), TR_FTRUNCATE, TRACE_OFF_NONE, (uint64_t)len,        \
	  ftruncate, (fd, len))

#define FD_WRAPPER(ret, name, params, type, off, req, real, args)                                  \
	EXPORT ret name params                                                                     \
	{                                                                                          \
		FD_CALL(type, fd, off, req, REAL(real) args);                                      \
	}
FD_WRAPPERS(FD_WRAPPER)

/*
 * Calls on names, recorded with absolute paths when the (first) path is in scope:
 * X(name, (parameters), record type, dirfd and path, second dirfd and path (or NULL), real
 * function, (its arguments)).
 */
#define NAME_WRAPPERS(X)                                                                           \
	X(rename, (const char *from, const char *to), TR_RENAME, AT_FDCWD, from, AT_FDCWD, to,     \
	  rename, (from, to))                                                                      \
	X(renameat, (int d1, const char *from, int d2, const char *to), TR_RENAME, d1, from, d2,   \
	  to, renameat, (d1, from, d2, to))                                                        \
	X(renameat2, (int d1, const char *from, int d2, const char *to, unsigned int flags),       \
	  TR_RENAME, d1, from, d2, to, renameat2, (d1, from, d2, to, flags))                       \
	X(unlink, (const char *path), TR_UNLINK, AT_FDCWD, path, AT_FDCWD, NULL, unlink, (path))   \
	X(unlinkat, (int dirfd, const char *path, int flags), TR_UNLINK, dirfd, path, AT_FDCWD,    \
	  NULL, unlinkat, (dirfd, path, flags))

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

#define NAME_WRAPPER(name, params, type, d1, p1, d2, p2, real, args)                               \
	EXPORT int name params                                                                     \
	{                                                                                          \
		NAME_CALL(type, d1, p1, d2, p2, REAL(real) args);                                  \
	}
NAME_WRAPPERS(NAME_WRAPPER)

/*
 * On LP64 glibc off_t is 64 bits, so each *64 entry point takes exactly the arguments of its
 * plain twin: it is the same function under a second name.  X(return type, name, (parameters),
 * the twin).
 */
#define ALIASES(X)                                                                                 \
	X(ssize_t, pread64, (int fd, void *buf, size_t n, off_t off), pread)                       \
	X(ssize_t, __pread64_chk, (int fd, void *buf, size_t n, off_t off, size_t buflen),         \
	  __pread_chk)                                                                             \
	X(ssize_t, preadv64, (int fd, const struct iovec *iov, int cnt, off_t off), preadv)        \
	X(ssize_t, preadv64v2, (int fd, const struct iovec *iov, int cnt, off_t off, int flags),   \
	  preadv2)                                                                                 \
	X(ssize_t, pwrite64, (int fd, const void *buf, size_t n, off_t off), pwrite)               \
	X(ssize_t, pwritev64, (int fd, const struct iovec *iov, int cnt, off_t off), pwritev)      \
	X(ssize_t, pwritev64v2, (int fd, const struct iovec *iov, int cnt, off_t off, int flags),  \
	  pwritev2)                                                                                \
	X(off_t, lseek64, (int fd, off_t off, int whence), lseek)                                  \
	X(int, fallocate64, (int fd, int mode, off_t off, off_t len), fallocate)                   \
	X(int, posix_fallocate64, (int fd, off_t off, off_t len), posix_fallocate)                 \
	X(int, ftruncate64, (int fd, off_t len), ftruncate)                                        \
	X(void *, mmap64, (void *addr, size_t len, int prot, int flags, int fd, off_t off), mmap)

/* ---- reads: from the page cache, or the device? ---- */

#define SERVED_IOV_MAX 64 /* a readv of more buffers is read as it is (served unknown) */

/* Set when the kernel has no preadv2 (ENOSYS): this process asks no more. */
static int nowait_refused;

/*
 * A read of a regular file (off -1: at the descriptor's offset, as preadv2 takes it), asked of
 * the page cache first: RWF_NOWAIT returns only what it holds, or EAGAIN when that is nothing
 * (an O_DIRECT read, which would block on the device, too).  All of it, or the file's end: a
 * hit, one call as untraced.  Nothing: the read as usual, the device's.  Part of it: the page
 * cache is asked again for the rest, and a 0 there is the file's end (a hit in two calls, the
 * common short answer: Python's read() of a whole file asks its size + 1); otherwise the rest
 * is read as usual, and was the device's.  The program gets the same bytes, offset and errors
 * (a call that fails fails again the usual way, and that is what it sees).
 *
 * Only reads the kernel takes whole are asked (at most MAX_RW_COUNT, TRACE_IO_MAX: a larger
 * count is cut there by read but not by the sum of two calls, and read with a count over
 * SSIZE_MAX fails with EFAULT where preadv2 says EINVAL).  A filesystem without RWF_NOWAIT
 * (EOPNOTSUPP: procfs, some FUSE) is not asked again for that descriptor.
 */
static bool can_ask_cache(const struct fdcall *c, const struct iovec *iov, int cnt)
{
	uint64_t want = 0;

	if (!(__atomic_load_n(&c->e->flags, __ATOMIC_RELAXED) & FDF_ASK) || cnt < 0 ||
	    cnt > SERVED_IOV_MAX || __atomic_load_n(&nowait_refused, __ATOMIC_RELAXED))
		return false;
	for (int i = 0; i < cnt; i++) {
		if (iov[i].iov_len > TRACE_IO_MAX)
			return false;
		want += iov[i].iov_len;
	}
	return want <= TRACE_IO_MAX;
}

/*
 * Must the rest of a short read be waited for?  Yes for a regular file (or a block device),
 * whose read stops short only at its end.  Anything else returns what it holds: a descriptor
 * opened by name that is a FIFO or a device, or an entry gone stale (its number closed without
 * close(), by close_range or a raw system call, and given to a pipe or a socket), where the
 * rest could be waited for for ever.  Such an entry is forgotten: the descriptor is looked at
 * again, by its kind, at its next use.
 */
static bool rest_is_due(struct fdcall *c)
{
	struct stat st;

	if (!syscall(SYS_fstat, c->fd, &st) && (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode)))
		return true;
	fd_forget(c->fd);
	return false;
}

/* The buffers past the first skip bytes of iov, in rest. \return how many. */
static int iov_tail(const struct iovec *iov, int cnt, size_t skip, struct iovec *rest)
{
	int k = 0;

	while (k < cnt && skip >= iov[k].iov_len)
		skip -= iov[k++].iov_len;
	for (int i = k; i < cnt; i++)
		rest[i - k] = iov[i];
	if (k < cnt) {
		rest[0].iov_base = (char *)rest[0].iov_base + skip;
		rest[0].iov_len -= skip;
	}
	return cnt - k;
}

static ssize_t served_read(struct fdcall *c, const struct iovec *iov, int cnt, off_t off)
{
	struct iovec rest[SERVED_IOV_MAX];
	size_t want = (size_t)iov_bytes(iov, cnt);
	int err = errno, nrest;
	ssize_t n, m;

	n = REAL(preadv2)(c->fd, iov, cnt, off, RWF_NOWAIT);
	if (n >= 0 && ((size_t)n == want || n == 0)) {
		c->served = TRACE_SERVED_CACHE; /* all of it, or the file's end: no I/O */
		return n;
	}
	if (n < 0) {
		if (errno == ENOSYS)
			__atomic_store_n(&nowait_refused, 1, __ATOMIC_RELAXED);
		else if (errno == EOPNOTSUPP)
			__atomic_and_fetch(&c->e->flags, ~FDF_ASK, __ATOMIC_RELAXED);
		if (errno != EAGAIN) { /* not a question it can answer: the read as it is */
			m = REAL(preadv2)(c->fd, iov, cnt, off, 0);
			if (m >= 0)
				errno = err;
			return m;
		}
		n = 0;
	} else {
		/* part of it: the rest, if the page cache has it (0: the file's end) */
		nrest = iov_tail(iov, cnt, (size_t)n, rest);
		m = REAL(preadv2)(c->fd, rest, nrest, off < 0 ? -1 : off + n, RWF_NOWAIT);
		if (m == 0)
			c->served = TRACE_SERVED_CACHE;
		/* the file's end, an error (the next call has it: a short read is what a read may
		 * return), or not a file, whose read returns what it holds */
		if (m == 0 || (m < 0 && errno != EAGAIN) || !rest_is_due(c)) {
			errno = err;
			return n + (m > 0 ? m : 0);
		}
		if (m > 0 && (size_t)(n += m) == want) {
			c->served = TRACE_SERVED_CACHE;
			errno = err;
			return n;
		}
	}
	nrest = iov_tail(iov, cnt, (size_t)n, rest);
	m = REAL(preadv2)(c->fd, rest, nrest, off < 0 ? -1 : off + n, 0);
	if (m < 0 && !n)
		return m;
	if (m < 0)
		m = 0; /* a short read is what a read may return */
	else
		c->served = m ? TRACE_SERVED_DEVICE : TRACE_SERVED_CACHE;
	errno = err; /* a read that succeeds leaves errno as it was (the EAGAIN above) */
	return n + m;
}

/*
 * A read: the call itself (CALL, the program's own function) when the descriptor is out of
 * scope or is not a regular file (pipes, sockets, devices: not every kind takes preadv2, and a
 * read of one is not served from the page cache), else asked of the page cache first.
 */
#define READ_CALL(type, fd, off, req, iov, cnt, pos, call)                                         \
	do {                                                                                       \
		struct fdcall c_;                                                                  \
		ssize_t r_;                                                                        \
                                                                                                   \
		if (!fd_begin(fd, &c_))                                                            \
			return call;                                                               \
		r_ = can_ask_cache(&c_, iov, cnt) ? served_read(&c_, iov, cnt, pos) : call;        \
		fd_end(&c_, type, off, req, ret_of(r_));                                           \
		return r_;                                                                         \
	} while (0)

static ssize_t read_common(int fd, void *buf, size_t n)
{
	const struct iovec v = {buf, n};

	READ_CALL(TR_READ, fd, OFF_CUR, n, &v, 1, -1, REAL(read)(fd, buf, n));
}

static ssize_t pread_common(int fd, void *buf, size_t n, off_t off)
{
	const struct iovec v = {buf, n};

	if (off < 0) { /* preadv2 would read at the current offset: the real error instead */
		FD_CALL(TR_PREAD, fd, (uint64_t)off, n, REAL(pread)(fd, buf, n, off));
	}
	READ_CALL(TR_PREAD, fd, (uint64_t)off, n, &v, 1, off, REAL(pread)(fd, buf, n, off));
}

EXPORT ssize_t read(int fd, void *buf, size_t n)
{
	return read_common(fd, buf, n);
}

EXPORT ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
	return pread_common(fd, buf, n, off);
}

EXPORT ssize_t readv(int fd, const struct iovec *iov, int cnt)
{
	READ_CALL(TR_READV, fd, OFF_CUR, iov_bytes(iov, cnt), iov, cnt, -1,
	          REAL(readv)(fd, iov, cnt));
}

EXPORT ssize_t preadv(int fd, const struct iovec *iov, int cnt, off_t off)
{
	if (off < 0) {
		FD_CALL(TR_PREADV, fd, (uint64_t)off, iov_bytes(iov, cnt),
		        REAL(preadv2)(fd, iov, cnt, off, 0));
	}
	READ_CALL(TR_PREADV, fd, (uint64_t)off, iov_bytes(iov, cnt), iov, cnt, off,
	          REAL(preadv2)(fd, iov, cnt, off, 0));
}

/* ---- the calls that need more than a table row ---- */

EXPORT ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen)
{
	if (n > buflen)
		abort();
	return read_common(fd, buf, n);
}

EXPORT ssize_t __pread_chk(int fd, void *buf, size_t n, off_t off, size_t buflen)
{
	if (n > buflen)
		abort();
	return pread_common(fd, buf, n, off);
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

#define ALIAS(ret, name, params, twin) EXPORT ret name params __attribute__((alias(#twin)));
ALIASES(ALIAS)
