// SPDX-License-Identifier: MIT
/*
 * The tracer's open family: open, creat, close (and close_range, closefrom), and the dup family
 * (dup, dup2, dup3, fcntl).
 */
#include <linux/close_range.h>

#include "trace/preload_internal.h"

static int open_common(int dirfd, const char *path, int flags, mode_t mode)
{
	char abs[PATH_MAX], canon[PATH_MAX];
	int fd, err, before = errno;
	struct fdent *e;
	uint64_t t0, t1;

	if (!enter())
		return REAL(openat)(dirfd, path, flags, mode);
	if (excluded_by_name(path)) {
		fd = REAL(openat)(dirfd, path, flags, mode);
		fd_excluded(fd); /* no syscall: errno stays the open's */
		leave();
		return fd;
	}
	fd = fd_open(dirfd, path, flags, mode, canon, sizeof(canon), &t0);
	t1 = now_ns(); /* the open's own time: resolving its path below is the tracer's */
	err = errno;
	if (fd >= 0) {
		e = fd_opened(fd, flags, canon);
		if (e)
			emit(TR_OPEN, fd, e->path, 0, TRACE_OFF_NONE, (uint64_t)flags, fd, t0, t1);
	} else {
		abs_path(dirfd, path, abs, sizeof(abs));
		if (!excluded(abs))
			emit(TR_OPEN, -1, emit_str(abs), 0, TRACE_OFF_NONE, (uint64_t)flags, -err,
			     t0, t1);
	}
	errno = fd < 0 ? err : before; /* an open that succeeds leaves errno as it was */
	leave();
	return fd;
}

static mode_t open_mode(int flags, va_list ap)
{
	if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE)
		return (mode_t)va_arg(ap, int);
	return 0;
}

/* The mode argument of a call whose last named parameter is flags (GNU statement expression). */
#define VA_MODE(flags)                                                                             \
	({                                                                                         \
		va_list ap_;                                                                       \
		mode_t mode_;                                                                      \
                                                                                                   \
		va_start(ap_, flags);                                                              \
		mode_ = open_mode(flags, ap_);                                                     \
		va_end(ap_);                                                                       \
		mode_;                                                                             \
	})
#define OPEN_WRAPPER(name)                                                                         \
	EXPORT int name(const char *path, int flags, ...)                                          \
	{                                                                                          \
		return open_common(AT_FDCWD, path, flags, VA_MODE(flags));                         \
	}
#define OPENAT_WRAPPER(name)                                                                       \
	EXPORT int name(int dirfd, const char *path, int flags, ...)                               \
	{                                                                                          \
		return open_common(dirfd, path, flags, VA_MODE(flags));                            \
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

/*
 * close: the descriptor's entry is forgotten before the real close, never after: once closed,
 * its number can be given to a pipe or a socket by another thread at once, and an entry still
 * saying "a traced regular file" would send that thread's reads through the page-cache
 * question (preload_io.c), which is for regular files only.
 */
EXPORT int close(int fd)
{
	struct fdent *e;
	uint32_t path = 0;
	uint64_t t0;
	int r, err;

	if (!enter())
		return REAL(close)(fd);
	e = fd_peek(fd);
	if (e)
		path = e->path;
	fd_forget(fd);
	t0 = now_ns();
	r = REAL(close)(fd);
	err = errno;
	if (e)
		emit(TR_CLOSE, fd, path, 0, TRACE_OFF_NONE, 0, r < 0 ? -(int64_t)err : 0, t0,
		     now_ns());
	errno = err;
	leave();
	return r;
}

/*
 * A child that shares its parent's memory until it execs (vfork: Python's subprocess; no
 * pthread_atfork handler runs in it): its table of descriptors is the parent's, whose
 * descriptors of the same numbers are others.
 */
static bool parents_memory(void)
{
	return (uint32_t)syscall(SYS_getpid) != P.pid;
}

/*
 * Closes of many descriptors at once (Python's os.closerange is close_range): their entries
 * are forgotten first, as close() does, so that none says "a traced regular file" once its
 * number is given to a pipe or a socket.  No records: the report counts the closes it sees.
 */
static void forget_range(unsigned int first, unsigned int last)
{
	int hwm = __atomic_load_n(&P.fd_hwm, __ATOMIC_RELAXED);

	if (parents_memory())
		return;
	for (unsigned int fd = first; fd <= last && fd <= (unsigned int)hwm; fd++)
		fd_forget((int)fd);
}

EXPORT int close_range(unsigned int first, unsigned int last, int flags)
{
	if (!(flags & CLOSE_RANGE_CLOEXEC))
		forget_range(first, last);
	return REAL(close_range)(first, last, flags);
}

EXPORT void closefrom(int first)
{
	if (first >= 0)
		forget_range((unsigned int)first, UINT_MAX);
	REAL(closefrom)(first);
}

/*
 * dup family: the new descriptor inherits the old one's path and offset.  Not in a child that
 * shares the parent's memory (its dup2 onto 0, 1 and 2 would write the parent's table).
 */
static int dup_end(struct fdcall *c, int r)
{
	if (parents_memory()) {
		leave();
		return r;
	}
	if (r >= 0)
		fd_copy(c->fd, r);
	fd_end(c, TR_DUP, TRACE_OFF_NONE, 0, ret_of(r));
	return r;
}

/* A new descriptor from an untraced one: its number's entry is forgotten. */
static int dup_through(int r)
{
	if (r >= 0)
		fd_forget(r);
	return r;
}

EXPORT int dup(int fd)
{
	struct fdcall c;

	if (!fd_begin(fd, &c))
		return dup_through(REAL(dup)(fd));
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

	if (cmd != F_DUPFD && cmd != F_DUPFD_CLOEXEC)
		return REAL(fcntl)(fd, cmd, arg);
	if (!fd_begin(fd, &c))
		return dup_through(REAL(fcntl)(fd, cmd, arg));
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

/* the same function under its LP64 twin's name, like the *64 entry points of open */
EXPORT int fcntl64(int fd, int cmd, ...) __attribute__((alias("fcntl")));
