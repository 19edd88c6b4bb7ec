/* SPDX-License-Identifier: MIT */
/*
 * filecreate: each I/O makes its file, open(2) with O_CREAT and close(2); no data moves.  What
 * writing a dataset of many small files costs per file before its first byte (fio's filecreate
 * engine, engines/fileoperations.c, with create_on_open).  The job names the files but does not
 * make them (ENGINE_CAP_MAKES_FILES), so the run times their creation; each file is one block,
 * made once per pass.  A file that is already there is opened and closed as it is (no O_TRUNC),
 * so nothing of anyone's is changed; the files stay after the run, empty, as fio leaves them.
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "engine/fileop.h"

static int filecreate_queue(struct engine_ctx *ctx, struct io_req *io)
{
	const struct fileop *f = ctx->priv;
	int fd;

	if (io->file >= f->nfiles) {
		io->res = -EBADF;
		return ENGINE_Q_COMPLETED;
	}
	fd = open(f->names[io->file], O_CREAT | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0) {
		io->res = -errno;
		return ENGINE_Q_COMPLETED;
	}
	/* the file is made and no data moves: it counts as the block it stands for, as in fio */
	io->res = close(fd) ? -errno : (int64_t)io->len;
	return ENGINE_Q_COMPLETED;
}

/* Nothing to make durable: the job holds no descriptor of the files, each I/O closed its own. */
static int filecreate_sync(struct engine_ctx *ctx, unsigned file)
{
	(void)ctx;
	(void)file;
	return 0;
}

const struct engine_ops engine_filecreate = {
        .abi_version = ENGINE_ABI_VERSION,
        .name = "filecreate",
        .summary = "each I/O creates its file (open O_CREAT + close), no data: creation cost",
        .caps = ENGINE_CAP_FILE_OPS | ENGINE_CAP_MAKES_FILES,
        .probe = fileop_probe,
        .init = fileop_init,
        .queue = filecreate_queue,
        .sync = filecreate_sync,
        .cleanup = fileop_cleanup,
};
