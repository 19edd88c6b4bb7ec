// SPDX-License-Identifier: MIT
/*
 * The tracer's table of descriptors (path id, tracked offset, flags; resolved once per open or
 * lazily on first use) and the bracketing of a call on a descriptor: time it, record it, move
 * the offset.
 */
#include <linux/openat2.h>
#include <sys/stat.h>

#include "trace/preload_internal.h"

/* ---- per-descriptor state ---- */

int fd_path(int fd, char *buf, size_t len)
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

/* fds[0..fd_hwm] holds every descriptor with a state (what a forked child resets). */
static void raise_hwm(int fd)
{
	int hwm = __atomic_load_n(&P.fd_hwm, __ATOMIC_RELAXED);

	while (fd > hwm && !__atomic_compare_exchange_n(&P.fd_hwm, &hwm, fd, false,
	                                                __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/* A name without an empty, "." or ".." component and without a trailing '/' ("/" itself is one)? */
static bool clean_name(const char *p)
{
	const char *c = p;

	if (*c == '/' && !*++c)
		return true;
	if (!*c)
		return false;
	for (;;) {
		const char *end = strchrnul(c, '/');
		size_t len = (size_t)(end - c);

		if (!len || (c[0] == '.' && (len == 1 || (len == 2 && c[1] == '.'))))
			return false;
		if (!*end)
			return true;
		c = end + 1;
	}
}

/* Set when openat2 is missing or refused (old kernel, seccomp): every open is the program's. */
static int openat2_refused;

/* canon = the current directory (getcwd: its canonical path) + "/" + a relative name, or "". */
static void cwd_join(const char *name, char *canon, size_t len)
{
	size_t n;

	if (syscall(SYS_getcwd, canon, len) < 0 || canon[0] != '/') { /* "(unreachable)/..." */
		canon[0] = '\0';
		return;
	}
	n = strlen(canon);
	if (snprintf(canon + n, len - n, "%s%s", n > 1 ? "/" : "", name) >= (int)(len - n))
		canon[0] = '\0';
}

/*
 * Could the program's own openat succeed, or fail otherwise, where openat2 failed with err?  A
 * symbolic link on the way (ELOOP), flags or a mode openat2 refuses where openat ignores them
 * (EINVAL), openat2 itself refused (ENOSYS, EPERM, E2BIG, and EAGAIN, EXDEV of the RESOLVE_*
 * flags).  Any other error is the open's own (no such file, no access, a full disk), and one
 * that a signal caused (EINTR: an open of a FIFO that no writer opened) must reach the
 * program as it is: made again, the open would wait for ever where the program expects to
 * stop waiting.
 */
static bool may_differ(int err)
{
	return err == ELOOP || err == EINVAL || err == ENOSYS || err == EPERM || err == E2BIG ||
	       err == EAGAIN || err == EXDEV;
}

/*
 * The program's open, made so that the file's canonical path comes with it whenever the name
 * already is that path, without asking /proc (readlink of /proc/self/fd/N makes an inode for
 * the descriptor at each lookup and checks access to the process: several times the open's
 * own cost).  A name that is absolute or relative to the current directory, with no ".", ".."
 * or empty component, is opened as the program asked (same directory, flags and mode) by
 * openat2 with RESOLVE_NO_SYMLINKS: if that succeeds, no symbolic link was on the way, so the
 * name (after the current directory's canonical path, for a relative one) is the canonical
 * path, canon, and the descriptor is the one openat would have given.  Otherwise (a link on the
 * way, any error, flags openat2 refuses where openat ignores them) the program's own call is
 * made, as it is, and canon is "": the caller resolves the path through /proc.  *t0: when the
 * call whose result is returned began (the open's own time starts there).  \return the
 * descriptor, or -1 with errno from the program's own call.
 */
int fd_open(int dirfd, const char *path, int flags, mode_t mode, char *canon, size_t len,
            uint64_t *t0)
{
	struct open_how how = {.flags = (uint64_t)(unsigned)flags, .resolve = RESOLVE_NO_SYMLINKS};
	int fd;

	canon[0] = '\0';
	if (path && (path[0] == '/' || dirfd == AT_FDCWD) && clean_name(path) &&
	    !__atomic_load_n(&openat2_refused, __ATOMIC_RELAXED)) {
		/* what openat passes on: the mode only with O_CREAT or O_TMPFILE, its low 12 bits
		 */
		if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE)
			how.mode = mode & 07777;
		*t0 = now_ns();
		fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
		if (fd >= 0) {
			if (path[0] != '/')
				cwd_join(path, canon, len);
			else if (snprintf(canon, len, "%s", path) >= (int)len)
				canon[0] = '\0';
			return fd;
		}
		if (errno == ENOSYS || errno == EPERM || errno == E2BIG)
			__atomic_store_n(&openat2_refused, 1, __ATOMIC_RELAXED);
		else if (!may_differ(errno))
			return fd; /* what the program's openat would have said: never made again */
	}
	*t0 = now_ns();
	return REAL(openat)(dirfd, path, flags, mode);
}

/*
 * Is a descriptor out of scope by its kind alone, without its path (a readlink of /proc costs
 * several times an fstat, and a program not seen opening them uses many: the sockets and the
 * shared-memory files that DataLoader's workers pass their batches in)?  Unless --all: a
 * socket (its name is "socket:[N]", never a path), an anonymous pipe (one on the filesystem of
 * pipes: its device learnt from the first one resolved), and, without --include, a file of the
 * filesystem mounted at /dev/shm (tracer_init; a file of it seen through another mount of the
 * same filesystem is left out too: docs/tracing.md, "Scope").
 */
static bool out_by_kind(const struct stat *st)
{
	if (P.all)
		return false;
	if (S_ISSOCK(st->st_mode))
		return true;
	if (S_ISFIFO(st->st_mode))
		return __atomic_load_n(&P.pipefs_known, __ATOMIC_ACQUIRE) &&
		       st->st_dev == P.pipefs_dev;
	return P.shm_known && !P.ninc && st->st_dev == P.shm_dev;
}

/* An anonymous pipe resolved: remember the pipes' filesystem (out_by_kind). */
static void learn_pipefs(const struct stat *st, const char *path)
{
	if (S_ISFIFO(st->st_mode) && !strncmp(path, "pipe:[", 6) &&
	    !__atomic_load_n(&P.pipefs_known, __ATOMIC_RELAXED)) {
		P.pipefs_dev = st->st_dev;
		__atomic_store_n(&P.pipefs_known, 1, __ATOMIC_RELEASE);
	}
}

/*
 * Bind fd to its file.  known_flags < 0: the descriptor was not seen opening (lazy), so its
 * offset and flags are asked of the kernel.  canon: its canonical path when fd_open knew it,
 * else NULL (asked of /proc, unless its kind already leaves it out).  The caller holds
 * e->state == FD_BUSY.
 */
static void fd_bind(int fd, struct fdent *e, int known_flags, const char *canon)
{
	char buf[PATH_MAX];
	const char *path = canon;
	int fl = known_flags;
	bool have_st = false;
	struct stat st;

	if (!path || !path[0]) {
		have_st = !syscall(SYS_fstat, fd, &st);
		if (have_st && out_by_kind(&st)) {
			__atomic_store_n(&e->state, FD_EXCLUDED, __ATOMIC_RELEASE);
			goto hwm;
		}
		if (fd_path(fd, buf, sizeof(buf))) {
			__atomic_store_n(&e->state, FD_UNKNOWN, __ATOMIC_RELEASE);
			return;
		}
		path = buf;
		if (have_st)
			learn_pipefs(&st, path);
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
	/* opened by its name (canon): a file, unless its flags say otherwise; no fstat, the first
	 * short read looks (preload_io.c, rest_is_due) */
	if (have_st ? S_ISREG(st.st_mode) : !(fl >= 0 && (fl & (O_DIRECTORY | O_PATH))))
		e->flags |= FDF_ASK;
	__atomic_store_n(&e->state, FD_TRACED, __ATOMIC_RELEASE);
hwm:
	raise_hwm(fd);
}

/* The traced entry of fd, resolving a descriptor seen for the first time; NULL: not traced. */
struct fdent *fd_get(int fd)
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
	fd_bind(fd, e, -1, NULL);
	return __atomic_load_n(&e->state, __ATOMIC_ACQUIRE) == FD_TRACED ? e : NULL;
}

/* The entry of fd if it is already known to be traced (close: no lazy resolution). */
struct fdent *fd_peek(int fd)
{
	if (fd < 0 || fd >= FD_MAX ||
	    __atomic_load_n(&fds[fd].state, __ATOMIC_ACQUIRE) != FD_TRACED)
		return NULL;
	return &fds[fd];
}

void fd_forget(int fd)
{
	if (fd >= 0 && fd < FD_MAX)
		__atomic_store_n(&fds[fd].state, FD_UNKNOWN, __ATOMIC_RELEASE);
}

/* A descriptor just opened with flags (canon: its path from fd_open, or NULL): bind it now (the
 * open record needs its path). */
struct fdent *fd_opened(int fd, int flags, const char *canon)
{
	struct fdent *e;

	if (fd < 0 || fd >= FD_MAX)
		return NULL;
	e = &fds[fd];
	__atomic_store_n(&e->state, FD_BUSY, __ATOMIC_RELAXED);
	fd_bind(fd, e, flags, canon);
	return __atomic_load_n(&e->state, __ATOMIC_ACQUIRE) == FD_TRACED ? e : NULL;
}

/* A descriptor just opened that is known to be out of scope: no path is resolved. */
void fd_excluded(int fd)
{
	if (fd < 0 || fd >= FD_MAX)
		return;
	__atomic_store_n(&fds[fd].state, FD_EXCLUDED, __ATOMIC_RELEASE);
	raise_hwm(fd);
}

void fd_copy(int from, int to)
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
	raise_hwm(to); /* a forked child forgets it with the rest: its path id is this file's */
}

/* ---- call bracketing ---- */

/* Start a call on fd: false when it is not traced (the caller then just calls through). */
bool fd_begin(int fd, struct fdcall *c)
{
	int err;

	if (!enter())
		return false;
	err = errno; /* resolving a descriptor seen for the first time makes system calls */
	c->e = fd_get(fd);
	errno = err;
	if (!c->e) {
		leave();
		return false;
	}
	c->fd = fd;
	c->served = TRACE_SERVED_UNKNOWN;
	c->t0 = now_ns();
	return true;
}

static bool is_write(uint16_t type)
{
	return type == TR_WRITE || type == TR_WRITEV || type == TR_FWRITE;
}

/* Finish a call begun with fd_begin: record it and move the tracked offset. */
void fd_end(struct fdcall *c, uint16_t type, uint64_t off, uint64_t req, int64_t res)
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
	emit(type, c->fd, e->path, c->served, off, req, res, c->t0, t1);
	errno = saved;
	leave();
}

/* An absolute form of a path given to a call (relative to dirfd or the cwd). */
void abs_path(int dirfd, const char *p, char *out, size_t len)
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
