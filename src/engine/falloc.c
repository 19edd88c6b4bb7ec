/* SPDX-License-Identifier: MIT */
/*
 * falloc: each I/O is one fallocate(2) of its range; no data moves (fio's falloc engine,
 * engines/falloc.c).  A write allocates the range and extends the file past its end (mode 0);
 * a read allocates it without changing the file's size (FALLOC_FL_KEEP_SIZE).  fio's trim,
 * which punches a hole, is not done: llmio has no trim I/O.
 */
#include <errno.h>
#include <fcntl.h>

#include "engine/fileop.h"

static int falloc_queue(struct engine_ctx *ctx, struct io_req *io)
{
	const struct fileop *f = ctx->priv;
	const int mode = io->op == ENGINE_OP_WRITE ? 0 : FALLOC_FL_KEEP_SIZE;

	if (io->file >= f->nfiles)
		io->res = -EBADF;
	else /* space is allocated, no data moves: it counts as the block it stands for */
		io->res = fallocate(f->fds[io->file], mode, (off_t)io->off, (off_t)io->len)
		                  ? -errno
		                  : (int64_t)io->len;
	return ENGINE_Q_COMPLETED;
}

const struct engine_ops engine_falloc = {
        .abi_version = ENGINE_ABI_VERSION,
        .name = "falloc",
        .summary = "each I/O fallocates its range (a read keeps the file's size); no data moves",
        .caps = ENGINE_CAP_FILE_OPS | ENGINE_CAP_DIRECT,
        .probe = fileop_probe,
        .init = fileop_init,
        .queue = falloc_queue,
        .cleanup = fileop_cleanup,
};
