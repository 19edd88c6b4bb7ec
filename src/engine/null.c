/* SPDX-License-Identifier: MIT */
/*
 * null: no I/O at all.  I/Os are queued, "submitted" and completed by the same loop every
 * other async engine goes through, so its IOPS is the ceiling of llmio's own per-I/O overhead
 * (offset generation, timing, histograms) at a given iodepth.
 */
#include <errno.h>
#include <stdlib.h>

#include "engine/engine.h"
#include "base/error.h"

struct null_data {
	unsigned depth;
	unsigned nqueued; /* queued, not yet committed */
	unsigned ndone;   /* committed, not yet reaped */
	struct io_req **queued;
	struct io_req **done;
};

static int null_probe(char *why, size_t len)
{
	(void)why;
	(void)len;
	return 0;
}

static int null_init(struct engine_ctx *ctx, const struct engine_setup *s, struct llmio_error *e)
{
	struct null_data *d = calloc(1, sizeof(*d));

	(void)e;
	if (!d)
		return -ENOMEM;
	d->depth = s->iodepth;
	d->queued = calloc(s->iodepth, sizeof(*d->queued));
	if (!d->queued)
		goto err_free_data;
	d->done = calloc(s->iodepth, sizeof(*d->done));
	if (!d->done)
		goto err_free_queued;
	ctx->priv = d;
	return 0;

err_free_queued:
	free(d->queued);
err_free_data:
	free(d);
	return -ENOMEM;
}

static int null_queue(struct engine_ctx *ctx, struct io_req *io)
{
	struct null_data *d = ctx->priv;

	if (d->nqueued + d->ndone >= d->depth)
		return ENGINE_Q_BUSY;
	io->res = io->len;
	d->queued[d->nqueued++] = io;
	return ENGINE_Q_QUEUED;
}

/* queue() of n I/Os in one call: the worker's batched path runs through null as through io_uring */
static int null_queue_batch(struct engine_ctx *ctx, struct io_req *const *ios, unsigned n)
{
	struct null_data *d = ctx->priv;
	const unsigned room = d->depth - d->nqueued - d->ndone;

	if (n > room)
		n = room;
	for (unsigned i = 0; i < n; i++) {
		ios[i]->res = ios[i]->len;
		d->queued[d->nqueued++] = ios[i];
	}
	return (int)n;
}

static int null_commit(struct engine_ctx *ctx)
{
	struct null_data *d = ctx->priv;

	for (unsigned i = 0; i < d->nqueued; i++)
		d->done[d->ndone++] = d->queued[i];
	d->nqueued = 0;
	return 0;
}

static int null_reap(struct engine_ctx *ctx, unsigned min, struct io_req **evs, unsigned max)
{
	struct null_data *d = ctx->priv;
	unsigned n;

	(void)min; /* everything committed is already complete */
	null_commit(ctx);
	n = d->ndone < max ? d->ndone : max;
	for (unsigned i = 0; i < n; i++)
		evs[i] = d->done[--d->ndone];
	return (int)n;
}

static int null_sync(struct engine_ctx *ctx, unsigned file)
{
	(void)ctx;
	(void)file;
	return 0;
}

static void null_cleanup(struct engine_ctx *ctx)
{
	struct null_data *d = ctx->priv;

	if (!d)
		return;
	free(d->queued);
	free(d->done);
	free(d);
	ctx->priv = NULL;
}

/* fio's cpp_null is its null engine written in C++: the same no I/O */
static const char *const null_aliases[] = {"cpp_null", NULL};

const struct engine_ops engine_null = {
        .abi_version = ENGINE_ABI_VERSION,
        .name = "null",
        .aliases = null_aliases,
        .summary = "no I/O at all: measures llmio's own per-I/O overhead",
        .caps = ENGINE_CAP_ASYNC | ENGINE_CAP_DIRECT | ENGINE_CAP_NO_IO,
        .probe = null_probe,
        .init = null_init,
        .queue = null_queue,
        .commit = null_commit,
        .reap = null_reap,
        .sync = null_sync,
        .cleanup = null_cleanup,
        .queue_batch = null_queue_batch,
};
