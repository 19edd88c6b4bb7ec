/* SPDX-License-Identifier: MIT */
/*
 * psync: pread/pwrite, one I/O at a time per thread.  iodepth has no effect (each call
 * completes before the next is issued); use numjobs for parallelism, as with fio's psync.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "engine/engine.h"
#include "base/error.h"

struct psync_data {
	const int *fds;
};

static int psync_probe(char *why, size_t len)
{
	(void)why;
	(void)len;
	return 0;
}

static int psync_init(struct engine_ctx *ctx, const struct engine_setup *s, struct llmio_error *e)
{
	struct psync_data *d = calloc(1, sizeof(*d));

	(void)e;
	if (!d)
		return -ENOMEM;
	d->fds = s->fds;
	ctx->priv = d;
	return 0;
}

static int psync_queue(struct engine_ctx *ctx, struct io_req *io)
{
	struct psync_data *d = ctx->priv;
	ssize_t r;

	if (io->op == ENGINE_OP_READ)
		r = pread(d->fds[io->file], io->buf, io->len, (off_t)io->off);
	else
		r = pwrite(d->fds[io->file], io->buf, io->len, (off_t)io->off);
	io->res = r < 0 ? -errno : r;
	return ENGINE_Q_COMPLETED;
}

static void psync_cleanup(struct engine_ctx *ctx)
{
	free(ctx->priv);
	ctx->priv = NULL;
}

/* fio's names for its pread/pwrite engines, so fio habits carry over */
/* fio's sync, pvsync, vsync and pvsync2 do the same reads and writes, one at a time */
static const char *const psync_aliases[] = {"sync", "pvsync", "vsync", "pvsync2", NULL};

const struct engine_ops engine_psync = {
        .abi_version = ENGINE_ABI_VERSION,
        .name = "psync",
        .aliases = psync_aliases,
        .summary = "pread/pwrite, one I/O at a time per thread",
        .caps = ENGINE_CAP_DIRECT,
        .probe = psync_probe,
        .init = psync_init,
        .queue = psync_queue,
        .cleanup = psync_cleanup,
};
