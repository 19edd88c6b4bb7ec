/* SPDX-License-Identifier: MIT */
/*
 * ftruncate: each write is ftruncate(2) of its file to the I/O's offset; no data moves.  A
 * sequential job shrinks the file to its first block's offset (0) and grows it back block by
 * block; a random one sets it to random sizes.  Reads have no meaning here and fail with EINVAL
 * (fio's ftruncate engine, engines/ftruncate.c, does the same).
 */
#include <errno.h>
#include <unistd.h>

#include "engine/fileop.h"

static int ftruncate_queue(struct engine_ctx *ctx, struct io_req *io)
{
	const struct fileop *f = ctx->priv;

	if (io->file >= f->nfiles)
		io->res = -EBADF;
	else if (io->op != ENGINE_OP_WRITE)
		io->res = -EINVAL;
	else /* the size moves, no data: it counts as the block it stands for, as in fio */
		io->res = ftruncate(f->fds[io->file], (off_t)io->off) ? -errno : (int64_t)io->len;
	return ENGINE_Q_COMPLETED;
}

const struct engine_ops engine_ftruncate = {
        .abi_version = ENGINE_ABI_VERSION,
        .name = "ftruncate",
        .summary = "each write truncates the file to the I/O's offset; no data moves",
        .caps = ENGINE_CAP_FILE_OPS | ENGINE_CAP_DIRECT,
        .probe = fileop_probe,
        .init = fileop_init,
        .queue = ftruncate_queue,
        .cleanup = fileop_cleanup,
};
