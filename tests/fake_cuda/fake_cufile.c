/* SPDX-License-Identifier: MIT */
/*
 * A fake libcufile for the tests (see fake_cudart.c): cuFileRead/Write are pread/pwrite into
 * the fake "GPU" memory, the batch and stream APIs run each I/O synchronously at submission.
 * Like a real cuFile without the nvidia-fs module it reports compat mode (nvfs version 0).
 * Knobs: LLMIO_FAKE_CUFILE_OPEN_ERR=N makes cuFileDriverOpen fail with cuFile error N.
 * Built twice: the second time with FAKE_NO_BATCH, a library without batch and stream APIs.
 */
#include <errno.h>
#include <stdbool.h>
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

CUfileError_t cuFileDriverOpen(void)
{
	const char *e = getenv("LLMIO_FAKE_CUFILE_OPEN_ERR");
	CUfileError_t r = {e && e[0] ? (int)strtol(e, NULL, 10) : 0, 0};

	return r;
}

CUfileError_t cuFileDriverClose_v2(void)
{
	return ok;
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
	*v = param == CUFILE_PARAM_PROPERTIES_ALLOW_COMPAT_MODE;
	return ok;
}

CUfileError_t cuFileHandleRegister(CUfileHandle_t *h, CUfileDescr_t *d)
{
	struct fh *f;
	CUfileError_t bad = {5018, 0}; /* CU_FILE_INVALID_FILE_TYPE */

	if (d->type != CU_FILE_HANDLE_TYPE_OPAQUE_FD || d->handle.fd < 0)
		return bad;
	f = malloc(sizeof(*f));
	if (!f)
		return bad;
	f->fd = d->handle.fd;
	*h = f;
	return ok;
}

void cuFileHandleDeregister(CUfileHandle_t h)
{
	free(h);
}

CUfileError_t cuFileBufRegister(const void *p, size_t len, int flags)
{
	CUfileError_t bad = {5012, 0}; /* CU_FILE_CUDA_POINTER_INVALID */

	(void)flags;
	return fake_cuda_is_device(p, len) ? ok : bad;
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
};

CUfileError_t cuFileBatchIOSetUp(CUfileBatchHandle_t *h, unsigned nr)
{
	struct batch *b = calloc(1, sizeof(*b));
	CUfileError_t bad = {5041, 0};

	if (!b || !(b->ev = calloc(nr, sizeof(*b->ev)))) {
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

	(void)flags;
	if (b->n + nr > b->cap)
		return full;
	for (unsigned i = 0; i < nr; i++) {
		ssize_t r = rw(io[i].fh, io[i].u.batch.devPtr_base, io[i].u.batch.size,
		               io[i].u.batch.file_offset, io[i].u.batch.devPtr_offset,
		               io[i].opcode == CUFILE_WRITE);
		CUfileIOEvents_t *e = &b->ev[b->n++];

		e->cookie = io[i].cookie;
		e->status = r >= 0 ? CUFILE_COMPLETE : CUFILE_FAILED;
		e->ret = (size_t)(r == -1 ? -errno : r);
	}
	return ok;
}

CUfileError_t cuFileBatchIOGetStatus(CUfileBatchHandle_t h, unsigned min_nr, unsigned *nr,
                                     CUfileIOEvents_t *ev, struct timespec *t)
{
	struct batch *b = h;
	unsigned n = b->n < *nr ? b->n : *nr;

	(void)min_nr;
	(void)t;
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
	free(b);
}

static CUfileError_t async_rw(CUfileHandle_t h, void *base, size_t *size, off_t *off, off_t *boff,
                              ssize_t *bytes, bool write)
{
	ssize_t r = rw(h, base, *size, *off, *boff, write);

	*bytes = r == -1 ? -errno : r;
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
