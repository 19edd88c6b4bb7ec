/* SPDX-License-Identifier: MIT */
/*
 * A fake libcufile for the tests (see fake_cudart.c): cuFileRead/Write are pread/pwrite into
 * the fake "GPU" memory, the batch and stream APIs run each I/O synchronously at submission.
 * Like a real cuFile without the nvidia-fs module it reports compat mode (nvfs version 0).
 * Knobs: LLMIO_FAKE_CUFILE_OPEN_ERR=N makes cuFileDriverOpen fail with cuFile error N;
 * LLMIO_FAKE_IO_FAIL_AFTER=N makes every I/O after the first N fail (EIO);
 * LLMIO_FAKE_CUFILE_CRASH=1 makes cuFileDriverOpen abort the process.
 * Strict switches, the real library's contracts where the defaults are kinder (=1 each, or all
 * of them with LLMIO_FAKE_STRICT=1):
 *   LLMIO_FAKE_BATCH_PARTIAL     batch I/Os run when cuFileBatchIOGetStatus is called, and it
 *                                returns only max(min_nr, 1) of them
 *   LLMIO_FAKE_BATCH_ONE_SUBMIT  cuFileBatchIOSubmit refuses a handle with entries outstanding
 *                                ("a batch handle can only handle one submit at a time")
 *   LLMIO_FAKE_ASYNC_MINUS1      a failed async or batch I/O says -1 and the caller's errno
 *                                is that of another thread (0 here): the I/O ran elsewhere
 *   LLMIO_FAKE_REGISTER_FAIL_AFTER=N  cuFileBufRegister fails after N successful calls
 *   LLMIO_FAKE_HANDLE_DUP        cuFileHandleRegister refuses an fd that is registered
 *   LLMIO_FAKE_ASYNC_NEEDS_CONFIG  cuFileRead/WriteAsync refused (CU_FILE_IO_NOT_SUPPORTED)
 *                                unless CUFILE_ENV_PATH_JSON names a file with
 *                                "parallel_io": true (kvikio: the stream API needs the thread
 *                                pool); cuFileGetParameterBool reads the same file
 * At exit it says on stderr when cuFileDriverOpen was not matched by cuFileDriverClose.
 * Built twice: the second time with FAKE_NO_BATCH, a library without batch and stream APIs.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fake_cuda.h"
#include "engine/cuda_loader.h"

struct fh {
	int fd;
};

static CUfileError_t ok = {0, 0};
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int opens;
static int handle_fds[1024];
static unsigned nhandle_fds;

static long env_long(const char *name, long def)
{
	const char *v = getenv(name);

	return v && v[0] ? strtol(v, NULL, 10) : def;
}

/* A counted switch ("fail after N calls"): counting restarts whenever its value changes. */
struct counted {
	const char *env;
	char last[32];
	long calls;
};

static struct counted bufreg_sw = {"LLMIO_FAKE_REGISTER_FAIL_AFTER", "", 0};
static struct counted io_sw = {"LLMIO_FAKE_IO_FAIL_AFTER", "", 0};

/* Is this call past the first N the switch allows?  false when the switch is unset. */
static bool counted_fails(struct counted *c)
{
	const char *v = getenv(c->env);
	bool fails;

	pthread_mutex_lock(&lock);
	if (!v || !v[0]) {
		c->last[0] = '\0';
		pthread_mutex_unlock(&lock);
		return false;
	}
	if (strcmp(v, c->last)) {
		snprintf(c->last, sizeof(c->last), "%s", v);
		c->calls = 0;
	}
	fails = c->calls++ >= strtol(v, NULL, 10);
	pthread_mutex_unlock(&lock);
	return fails;
}

static bool config_is(const char *key, const char *value);

/*
 * Without nvidia-fs (never here) cuFile runs only in compat mode: a cufile.json that disallows
 * it makes the driver refuse to open, as the real one does.
 */
CUfileError_t cuFileDriverOpen(void)
{
	CUfileError_t r = {(int)env_long("LLMIO_FAKE_CUFILE_OPEN_ERR", 0), 0};

	if (getenv("LLMIO_FAKE_CUFILE_CRASH"))
		abort(); /* what cuFile does on some VMs (kvikio issue 97) */
	if (!r.err && config_is("allow_compat_mode", "false"))
		r.err = 5010; /* CU_FILE_NVFS_DRIVER_ERROR */
	if (!r.err)
		__atomic_add_fetch(&opens, 1, __ATOMIC_SEQ_CST);
	return r;
}

CUfileError_t cuFileDriverClose_v2(void)
{
	__atomic_sub_fetch(&opens, 1, __ATOMIC_SEQ_CST);
	return ok;
}

__attribute__((destructor)) static void check_closed(void)
{
	if (opens > 0)
		fprintf(stderr, "fake cuFile: cuFileDriverOpen without cuFileDriverClose\n");
}

/* The config file's text holds "key": value (whitespace as cufile.json writes it). */
static bool config_is(const char *key, const char *value)
{
	const char *path = getenv("CUFILE_ENV_PATH_JSON");
	char buf[8192], pat[128];
	size_t n;
	FILE *f;

	if (!path || !(f = fopen(path, "r")))
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	snprintf(pat, sizeof(pat), "\"%s\": %s", key, value);
	return strstr(buf, pat) != NULL;
}

static bool config_true(const char *key)
{
	return config_is(key, "true");
}

CUfileError_t cuFileGetVersion(int *v)
{
	*v = 1130;
	return ok;
}

CUfileError_t cuFileDriverGetProperties(CUfileDrvProps_t *p)
{
	memset(p, 0, sizeof(*p));
	p->max_batch_io_size = 128;
#ifndef FAKE_NO_BATCH
	p->fflags = 1u << CU_FILE_BATCH_IO_SUPPORTED | 1u << CU_FILE_STREAMS_SUPPORTED;
#endif
	return ok;
}

CUfileError_t cuFileGetParameterBool(int param, bool *v)
{
	*v = (param == CUFILE_PARAM_PROPERTIES_ALLOW_COMPAT_MODE &&
	      !config_is("allow_compat_mode", "false")) ||
	     (param == CUFILE_PARAM_EXECUTION_PARALLEL_IO && config_true("parallel_io"));
	return ok;
}

CUfileError_t cuFileHandleRegister(CUfileHandle_t *h, CUfileDescr_t *d)
{
	struct fh *f;
	CUfileError_t bad = {5018, 0}; /* CU_FILE_INVALID_FILE_TYPE */

	CUfileError_t dup = {5030, 0}; /* what cuFile says for an fd registered twice */

	if (d->type != CU_FILE_HANDLE_TYPE_OPAQUE_FD || d->handle.fd < 0)
		return bad;
	pthread_mutex_lock(&lock);
	for (unsigned i = 0; i < nhandle_fds; i++)
		if (handle_fds[i] == d->handle.fd && fake_cuda_strict("LLMIO_FAKE_HANDLE_DUP")) {
			pthread_mutex_unlock(&lock);
			return dup;
		}
	if (nhandle_fds < sizeof(handle_fds) / sizeof(handle_fds[0]))
		handle_fds[nhandle_fds++] = d->handle.fd;
	pthread_mutex_unlock(&lock);
	f = malloc(sizeof(*f));
	if (!f)
		return bad;
	f->fd = d->handle.fd;
	*h = f;
	return ok;
}

void cuFileHandleDeregister(CUfileHandle_t h)
{
	struct fh *f = h;

	pthread_mutex_lock(&lock);
	for (unsigned i = 0; i < nhandle_fds; i++)
		if (handle_fds[i] == f->fd) {
			handle_fds[i] = handle_fds[--nhandle_fds];
			break;
		}
	pthread_mutex_unlock(&lock);
	free(h);
}

CUfileError_t cuFileBufRegister(const void *p, size_t len, int flags)
{
	CUfileError_t bad = {5012, 0};  /* CU_FILE_CUDA_POINTER_INVALID */
	CUfileError_t full = {5011, 0}; /* out of BAR space: a CUDA driver error */
	(void)flags;
	if (!fake_cuda_is_device(p, len))
		return bad;
	if (counted_fails(&bufreg_sw))
		return full;
	return ok;
}

CUfileError_t cuFileBufDeregister(const void *p)
{
	(void)p;
	return ok;
}

/* -1 with errno for a system error, -5012 for a buffer that is not GPU memory, as cuFile. */
static ssize_t rw(CUfileHandle_t h, const void *base, size_t size, off_t off, off_t boff,
                  bool write)
{
	const struct fh *f = h;
	char *p = (char *)base + boff;

	if (!fake_cuda_is_device(p, size))
		return -5012;
	if (counted_fails(&io_sw)) {
		errno = EIO;
		return -1;
	}
	return write ? pwrite(f->fd, p, size, off) : pread(f->fd, p, size, off);
}

ssize_t cuFileRead(CUfileHandle_t h, void *base, size_t size, off_t off, off_t boff)
{
	return rw(h, base, size, off, boff, false);
}

ssize_t cuFileWrite(CUfileHandle_t h, const void *base, size_t size, off_t off, off_t boff)
{
	return rw(h, base, size, off, boff, true);
}

#ifndef FAKE_NO_BATCH
struct batch {
	unsigned cap, n;
	CUfileIOEvents_t *ev;
	CUfileIOParams_t *todo; /* LLMIO_FAKE_BATCH_PARTIAL: submitted, not yet run */
	unsigned ntodo;
};

/* The result of one batch or async I/O as cuFile reports it from its own threads. */
static ssize_t remote_result(ssize_t r)
{
	if (r != -1)
		return r;
	if (fake_cuda_strict("LLMIO_FAKE_ASYNC_MINUS1")) {
		errno = 0; /* the caller's errno says nothing about an I/O run elsewhere */
		return -1;
	}
	return -errno;
}

static void run_one(struct batch *b, const CUfileIOParams_t *io)
{
	ssize_t r = rw(io->fh, io->u.batch.devPtr_base, io->u.batch.size, io->u.batch.file_offset,
	               io->u.batch.devPtr_offset, io->opcode == CUFILE_WRITE);
	CUfileIOEvents_t *e = &b->ev[b->n++];

	e->cookie = io->cookie;
	e->status = r >= 0 ? CUFILE_COMPLETE : CUFILE_FAILED;
	e->ret = (size_t)remote_result(r);
}

CUfileError_t cuFileBatchIOSetUp(CUfileBatchHandle_t *h, unsigned nr)
{
	struct batch *b = calloc(1, sizeof(*b));
	CUfileError_t bad = {5041, 0};

	if (!b || !(b->ev = calloc(nr, sizeof(*b->ev))) ||
	    !(b->todo = calloc(nr, sizeof(*b->todo)))) {
		if (b)
			free(b->ev);
		free(b);
		return bad;
	}
	b->cap = nr;
	*h = b;
	return ok;
}

CUfileError_t cuFileBatchIOSubmit(CUfileBatchHandle_t h, unsigned nr, CUfileIOParams_t *io,
                                  unsigned flags)
{
	struct batch *b = h;
	CUfileError_t full = {5035, 0}; /* CU_FILE_BATCH_FULL */

	CUfileError_t busy = {5034, 0}; /* a submit on a handle with entries outstanding */

	(void)flags;
	if (b->n + b->ntodo + nr > b->cap)
		return full;
	if ((b->n || b->ntodo) && fake_cuda_strict("LLMIO_FAKE_BATCH_ONE_SUBMIT"))
		return busy;
	for (unsigned i = 0; i < nr; i++) {
		if (fake_cuda_strict("LLMIO_FAKE_BATCH_PARTIAL"))
			b->todo[b->ntodo++] = io[i];
		else
			run_one(b, &io[i]);
	}
	return ok;
}

CUfileError_t cuFileBatchIOGetStatus(CUfileBatchHandle_t h, unsigned min_nr, unsigned *nr,
                                     CUfileIOEvents_t *ev, struct timespec *t)
{
	struct batch *b = h;
	unsigned n;

	(void)t;
	if (fake_cuda_strict("LLMIO_FAKE_BATCH_PARTIAL")) {
		/* what the caller waits for and no more: the rest stays in flight */
		unsigned run = min_nr ? min_nr : 1;

		for (; run && b->ntodo; run--) {
			run_one(b, &b->todo[0]);
			memmove(b->todo, b->todo + 1, --b->ntodo * sizeof(*b->todo));
		}
	}
	n = b->n < *nr ? b->n : *nr;
	memcpy(ev, b->ev, n * sizeof(*ev));
	memmove(b->ev, b->ev + n, (b->n - n) * sizeof(*ev));
	b->n -= n;
	*nr = n;
	return ok;
}

void cuFileBatchIODestroy(CUfileBatchHandle_t h)
{
	struct batch *b = h;

	free(b->ev);
	free(b->todo);
	free(b);
}

static CUfileError_t async_rw(CUfileHandle_t h, void *base, size_t *size, off_t *off, off_t *boff,
                              ssize_t *bytes, bool write)
{
	CUfileError_t refused = {5008, 0}; /* CU_FILE_IO_NOT_SUPPORTED */
	ssize_t r;

	if (fake_cuda_strict("LLMIO_FAKE_ASYNC_NEEDS_CONFIG") && !config_true("parallel_io"))
		return refused;
	r = rw(h, base, *size, *off, *boff, write);
	*bytes = remote_result(r);
	return ok;
}

CUfileError_t cuFileReadAsync(CUfileHandle_t h, void *base, size_t *size, off_t *off, off_t *boff,
                              ssize_t *bytes, void *stream)
{
	(void)stream;
	return async_rw(h, base, size, off, boff, bytes, false);
}

CUfileError_t cuFileWriteAsync(CUfileHandle_t h, void *base, size_t *size, off_t *off, off_t *boff,
                               ssize_t *bytes, void *stream)
{
	(void)stream;
	return async_rw(h, base, size, off, boff, bytes, true);
}
#endif
