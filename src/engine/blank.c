/* SPDX-License-Identifier: MIT */
/*
 * blank: reads return zeros and writes are dropped, synchronously, with no file.  The smallest
 * engine there is: it exists to show what adding an engine takes (docs/engines.md, "Adding an
 * engine"): this file, its line in registry.c, its section in the docs.
 */
#include <string.h>

#include "engine/engine.h"

static int blank_probe(char *why, size_t len)
{
	(void)why;
	(void)len;
	return 0;
}

static int blank_init(struct engine_ctx *ctx, const struct engine_setup *s, struct llmio_error *e)
{
	(void)ctx;
	(void)s;
	(void)e;
	return 0;
}

static int blank_queue(struct engine_ctx *ctx, struct io_req *io)
{
	(void)ctx;
	if (io->op == ENGINE_OP_READ)
		memset(io->buf, 0, io->len);
	io->res = io->len;
	return ENGINE_Q_COMPLETED;
}

static int blank_sync(struct engine_ctx *ctx, unsigned file)
{
	(void)ctx;
	(void)file;
	return 0;
}

static void blank_cleanup(struct engine_ctx *ctx)
{
	(void)ctx;
}

const struct engine_ops engine_blank = {
        .abi_version = ENGINE_ABI_VERSION,
        .name = "blank",
        .summary = "reads return zeros, writes are dropped: no file, synchronous",
        .caps = ENGINE_CAP_NO_IO,
        .probe = blank_probe,
        .init = blank_init,
        .queue = blank_queue,
        .sync = blank_sync,
        .cleanup = blank_cleanup,
};
