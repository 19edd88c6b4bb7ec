// SPDX-License-Identifier: MIT
/* The tracer's stdio wrappers, recorded at the stdio call (see preload.c). */
#include "trace/preload_internal.h"

/* The stream's descriptor, or -1 (a memory stream has none: fileno says EBADF, which a call
 * that succeeds must not leave in errno). */
static int stream_fd(FILE *f)
{
	int err = errno, fd = fileno_unlocked(f);

	errno = err;
	return fd;
}

static FILE *fopen_end(FILE *f, uint64_t t0, int flags_hint)
{
	uint64_t t1 = now_ns(); /* the call's own time, not the resolution of its path */
	int err = errno;
	struct fdent *e;
	int fd;

	if (f) {
		fd = fileno(f);
		e = fd_opened(fd, flags_hint, NULL);
		if (e)
			emit(TR_FOPEN, fd, e->path, 0, TRACE_OFF_NONE, 0, fd, t0, t1);
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
		if (!fd_begin(stream_fd(f), &c_))                                                  \
			return call;                                                               \
		r_ = call;                                                                         \
		fd_end(&c_, type, OFF_CUR, (uint64_t)(size) * (n),                                 \
		       r_ == 0 && (size) && (n) && ferror_unlocked(f) ? -(int64_t)errno            \
		                                                      : (int64_t)(r_ * (size)));   \
		return r_;                                                                         \
	} while (0)

/*
 * fread and fwrite: X(name, (parameters), record type, real function).  The real function
 * takes the same arguments.
 */
#define STDIO_WRAPPERS(X)                                                                          \
	X(fread, (void *p, size_t size, size_t n, FILE *f), TR_FREAD, fread)                       \
	X(fread_unlocked, (void *p, size_t size, size_t n, FILE *f), TR_FREAD, fread_unlocked)     \
	X(fwrite, (const void *p, size_t size, size_t n, FILE *f), TR_FWRITE, fwrite)              \
	X(fwrite_unlocked, (const void *p, size_t size, size_t n, FILE *f), TR_FWRITE,             \
	  fwrite_unlocked)

#define STDIO_WRAPPER(name, params, type, real)                                                    \
	EXPORT size_t name params                                                                  \
	{                                                                                          \
		STDIO_CALL(type, f, size, n, REAL(real)(p, size, n, f));                           \
	}
STDIO_WRAPPERS(STDIO_WRAPPER)

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

EXPORT int fflush(FILE *f)
{
	if (!f)
		return REAL(fflush)(f);
	FD_CALL(TR_FFLUSH, stream_fd(f), TRACE_OFF_NONE, 0, REAL(fflush)(f));
}

EXPORT int fclose(FILE *f)
{
	struct fdcall c;
	int fd = f ? stream_fd(f) : -1;
	int r;

	if (!fd_begin(fd, &c)) {
		fd_forget(fd); /* before the close, as close() does (preload_open.c) */
		return REAL(fclose)(f);
	}
	fd_forget(fd);
	r = REAL(fclose)(f);
	fd_end(&c, TR_FCLOSE, TRACE_OFF_NONE, 0, ret_of(r));
	return r;
}

/* fseek: not a record of its own kind; it moves the stream's tracked position. */
static int fseek_common(FILE *f, off_t off, int whence)
{
	struct fdcall c;
	int r;

	if (!f || !fd_begin(stream_fd(f), &c))
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
