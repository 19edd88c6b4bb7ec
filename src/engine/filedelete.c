/* SPDX-License-Identifier: MIT */
/*
 * filedelete: each I/O is one unlink(2) of its file; no data moves.  What removing a dataset of
 * many small files costs per file (fio's filedelete engine, engines/fileoperations.c).  llmio
 * removes only what it made: the job's files must be ones its layout created for this run
 * (ENGINE_CAP_NEW_FILES: the job refuses an existing one before its layout; init checks again).
 * With bs = the file's size each file is removed by one I/O; a second I/O on a removed file (a
 * second pass, or two threads on one file) fails with ENOENT, as it does in fio.
 */
#include <errno.h>
#include <unistd.h>

#include "engine/fileop.h"
#include "base/error.h"

static int filedelete_init(struct engine_ctx *ctx, const struct engine_setup *s,
                           struct llmio_error *e)
{
	for (unsigned i = 0; i < s->nfiles; i++)
		if (!s->created || !s->created[i])
			return llmio_err(
			        e, -EPERM,
			        "filedelete removes only files this job created, and %s was "
			        "there before it (llmio never removes what it did not make): "
			        "remove it yourself, or give the job a directory where its "
			        "files do not exist yet",
			        s->names[i]);
	return fileop_init(ctx, s, e);
}

static int filedelete_queue(struct engine_ctx *ctx, struct io_req *io)
{
	const struct fileop *f = ctx->priv;

	if (io->file >= f->nfiles)
		io->res = -EBADF;
	else /* an unlink moves no data; it counts as the block it stands for, as in fio */
		io->res = unlink(f->names[io->file]) ? -errno : (int64_t)io->len;
	return ENGINE_Q_COMPLETED;
}

const struct engine_ops engine_filedelete = {
        .abi_version = ENGINE_ABI_VERSION,
        .name = "filedelete",
        .summary = "one unlink of the file per I/O, of files the job created: removal cost",
        .caps = ENGINE_CAP_FILE_OPS | ENGINE_CAP_NEW_FILES,
        .probe = fileop_probe,
        .init = filedelete_init,
        .queue = filedelete_queue,
        .cleanup = fileop_cleanup,
};
