/* SPDX-License-Identifier: MIT */
/*
 * filestat: each I/O is one stat(2) (or lstat, statx) of its file's path; no data moves.  The
 * cost of a lookup and getattr per file, which a dataset of many small files pays before its
 * first byte (fio's filestat engine, engines/fileoperations.c).  The job lays its files out as
 * for any engine; with bs = the file's size each file is looked up once per pass.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "engine/fileop.h"

struct filestat_opts {
	int stat_type;
};

enum { STAT_STAT, STAT_LSTAT, STAT_STATX };

static const struct llmio_optdesc filestat_options[] = {
        {
                .name = "stat_type",
                .type = OPTD_ENUM,
                OPTD_FIELD(struct filestat_opts, stat_type),
                .scope = OPTD_SCOPE_ENGINE,
                .def = "stat",
                .help = "the call each I/O makes: stat, lstat (a link itself) or statx "
                        "(every field, STATX_ALL)",
                .choices = "stat|lstat|statx",
                .fio_kind = OPTD_FIO_VALUE,
        },
        {.name = NULL},
};

static int filestat_queue(struct engine_ctx *ctx, struct io_req *io)
{
	const struct fileop *f = ctx->priv;
	const struct filestat_opts *o = f->opts;
	struct statx stx;
	struct stat st;
	int r;

	if (io->file >= f->nfiles) {
		io->res = -EBADF;
		return ENGINE_Q_COMPLETED;
	}
	if (o->stat_type == STAT_STATX)
		r = statx(AT_FDCWD, f->names[io->file], 0, STATX_ALL, &stx);
	else if (o->stat_type == STAT_LSTAT)
		r = lstat(f->names[io->file], &st);
	else
		r = stat(f->names[io->file], &st);
	/* a lookup moves no data; it counts as the block it stands for, as in fio */
	io->res = r ? -errno : (int64_t)io->len;
	return ENGINE_Q_COMPLETED;
}

const struct engine_ops engine_filestat = {
        .abi_version = ENGINE_ABI_VERSION,
        .name = "filestat",
        .summary = "one stat/lstat/statx of the file per I/O, no data: lookup cost per file",
        .caps = ENGINE_CAP_FILE_OPS,
        .opts = filestat_options,
        .opts_size = sizeof(struct filestat_opts),
        .probe = fileop_probe,
        .init = fileop_init,
        .queue = filestat_queue,
        .cleanup = fileop_cleanup,
};
