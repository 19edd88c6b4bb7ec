/* SPDX-License-Identifier: MIT */
/*
 * falloc: each I/O is one fallocate(2) of its range; no data moves (fio's falloc engine,
 * engines/falloc.c).  A write allocates the range and extends the file past its end (mode 0);
 * a read allocates it without changing the file's size (FALLOC_FL_KEEP_SIZE), and a trim
 * (rw=trim, randtrim) punches a hole (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE), as fio's.
 *
 * fallocate needs a descriptor open for writing, and a read job's are read-only: a read job's
 * thread opens its own, O_RDWR, of files this job created (its layout made them), and refuses
 * any other, for a read job leaves a file it did not make as it is, its allocation included.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/fileop.h"
#include "base/error.h"

struct falloc_data {
	const int *fds; /* the job's descriptors, or own */
	unsigned nfiles;
	int *own;       /* a read job's own O_RDWR descriptors, or NULL */
	int write_mode; /* fallocate's mode of a write: 0, or a trim's punch (fio's) */
};

static void falloc_cleanup(struct engine_ctx *ctx)
{
	struct falloc_data *d = ctx->priv;

	if (!d)
		return;
	for (unsigned i = 0; d->own && i < d->nfiles; i++)
		if (d->own[i] >= 0)
			close(d->own[i]);
	free(d->own);
	free(d);
	ctx->priv = NULL;
}

/* A read job's descriptors of its own, O_RDWR, of the files it created; 0 or -errno in e. */
static int open_own(struct falloc_data *d, const struct engine_setup *s, struct llmio_error *e)
{
	d->own = malloc(s->nfiles * sizeof(*d->own));
	if (!d->own)
		return -ENOMEM;
	for (unsigned i = 0; i < s->nfiles; i++)
		d->own[i] = -1;
	for (unsigned i = 0; i < s->nfiles; i++) {
		if (!s->created || !s->created[i])
			return llmio_err(
			        e, -EPERM,
			        "falloc allocates space, and %s was there before this read "
			        "job (which leaves a file it did not make as it is): use "
			        "rw=write, or a file the job creates",
			        s->names[i]);
		d->own[i] = open(s->names[i], O_RDWR | O_CLOEXEC);
		if (d->own[i] < 0)
			return llmio_err(e, -errno, "cannot open %s for writing: %s", s->names[i],
			                 strerror(errno));
	}
	d->fds = d->own;
	return 0;
}

static int falloc_init(struct engine_ctx *ctx, const struct engine_setup *s, struct llmio_error *e)
{
	struct falloc_data *d = calloc(1, sizeof(*d));
	int ret = 0;

	if (!d)
		return -ENOMEM;
	d->fds = s->fds;
	d->nfiles = s->nfiles;
	d->write_mode = s->trims ? FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE : 0;
	ctx->priv = d;
	if (!s->writable)
		ret = open_own(d, s, e);
	if (ret)
		falloc_cleanup(ctx);
	return ret;
}

static int falloc_queue(struct engine_ctx *ctx, struct io_req *io)
{
	const struct falloc_data *d = ctx->priv;
	const int mode = io->op == ENGINE_OP_WRITE ? d->write_mode : FALLOC_FL_KEEP_SIZE;

	if (io->file >= d->nfiles)
		io->res = -EBADF;
	else /* space is allocated, no data moves: it counts as the block it stands for */
		io->res = fallocate(d->fds[io->file], mode, (off_t)io->off, (off_t)io->len)
		                  ? -errno
		                  : (int64_t)io->len;
	return ENGINE_Q_COMPLETED;
}

const struct engine_ops engine_falloc = {
        .abi_version = ENGINE_ABI_VERSION,
        .name = "falloc",
        .summary = "each I/O fallocates its range (a read keeps the file's size); no data moves",
        .caps = ENGINE_CAP_FILE_OPS | ENGINE_CAP_DIRECT | ENGINE_CAP_TRIM,
        .probe = fileop_probe,
        .init = falloc_init,
        .queue = falloc_queue,
        .cleanup = falloc_cleanup,
};
