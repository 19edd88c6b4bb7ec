/* SPDX-License-Identifier: MIT */
/*
 * cuda-bounce: the CPU-mediated path that GPUDirect Storage replaces.  A read goes from the
 * file into pinned host memory through a host engine (io_uring by default,
 * option host), then cudaMemcpyAsync copies it to the GPU buffer on a CUDA stream; the I/O is
 * complete when the copy is.  A write is the reverse: device-to-host copy, then the host write.
 *
 * Every I/O slot (iodepth of them) has its own pinned buffer, so while one slot's data is being
 * copied the others are reading: storage and copies overlap from iodepth 2 on (double
 * buffering and more).  At iodepth 1 each copy waits for its read, and the notes say so.
 *
 * Copies run on one stream, so they finish in the order they were issued: a FIFO of slots is
 * all the bookkeeping needed.  Each copy is bracketed by two CUDA events, which give the time
 * the GPU spent copying; storage time is measured around the host engine's I/Os.  Both are
 * reported separately in the notes when the engine is cleaned up (thread 0, whole run).
 *
 * Pinned memory is page-aligned host memory registered with cudaHostRegister, not
 * cudaHostAlloc: CUDA documents only 256-byte alignment for the latter, and the host engines
 * use these buffers with O_DIRECT, which needs the logical block size.
 */
#include <unistd.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/error.h"
#include "engine/cuda_loader.h"
#include "engine/s3.h"
#include "engine/engine.h"

static const char *const host_names[] = {"io_uring", "libaio", "psync", "s3", NULL};

struct bounce_opts {
	int gpu; /* first: gpu_buf_alloc reads it */
	int host;
	int sched;
};

static const struct llmio_optdesc bounce_options[] = {
        CUDA_GPU_OPTION(struct bounce_opts),
        {
                .name = "host",
                .type = OPTD_ENUM,
                OPTD_FIELD(struct bounce_opts, host),
                .scope = OPTD_SCOPE_ENGINE,
                .def = "io_uring",
                .help = "host engine that moves data between the target and pinned memory "
                        "(with its default options); s3: objects from s3://bucket/key",
                .choices = "io_uring|libaio|psync|s3",
        },
        CUDA_SCHED_OPTION(struct bounce_opts),
        {.name = NULL},
};

enum slot_state { SLOT_IDLE, SLOT_STORAGE, SLOT_COPY };

struct slot {
	struct io_req inner; /* the host engine's I/O, on the pinned buffer */
	struct io_req *outer;
	enum slot_state state;
	uint64_t t0;        /* storage I/O queued */
	cudaEvent_t c0, c1; /* around the copy */
};

struct bounce {
	const struct cudart *rt;
	const struct engine_ops *host;
	struct engine_ctx hctx;
	void *hopts;
	cudaStream_t stream;
	unsigned depth;
	void **pinned;
	struct slot *slots;
	struct io_req **hev;   /* host engine completions */
	unsigned *fifo;        /* slots copying, in stream order */
	unsigned fhead, nfifo; /* ring */
	struct io_req **ready; /* outer I/Os done, not yet reaped */
	unsigned nready;
	unsigned nstorage; /* host I/Os queued or in flight */
	bool host_dirty;   /* host I/Os queued since the host's last commit */
	int err;           /* a CUDA failure that stops the engine */

	/* accounting (whole run) */
	double copy_ms;
	uint64_t copy_bytes, copies[2]; /* [ENGINE_OP_READ] host-to-device, [WRITE] back */
	uint64_t storage_ns, storage_ios;
};

static int bounce_probe(char *why, size_t len)
{
	struct llmio_error e = {0};
	const struct cudart *rt = cuda_runtime(&e);

	if (!rt) {
		msgf(why, len, "%s", e.msg); /* the probe answers in the caller's buffer */
		return -ENODEV;
	}
	why[0] = '\0';
	engine_appendf(why, len, "%s (CUDA runtime %d.%d, driver %d.%d, %d GPU%s)", rt->path,
	               rt->runtime_version / 1000, rt->runtime_version % 1000 / 10,
	               rt->driver_version / 1000, rt->driver_version % 1000 / 10, rt->ndevices,
	               rt->ndevices == 1 ? "" : "s");
	return 0;
}

static void bounce_free(struct bounce *p)
{
	if (p->hctx.priv)
		p->host->cleanup(&p->hctx);
	for (unsigned i = 0; p->slots && i < p->depth; i++) {
		if (p->slots[i].c0)
			p->rt->EventDestroy(p->slots[i].c0);
		if (p->slots[i].c1)
			p->rt->EventDestroy(p->slots[i].c1);
	}
	for (unsigned i = 0; p->pinned && i < p->depth; i++)
		if (p->pinned[i]) {
			p->rt->HostUnregister(p->pinned[i]);
			free(p->pinned[i]);
		}
	if (p->stream)
		p->rt->StreamDestroy(p->stream);
	free(p->ready);
	free(p->fifo);
	free(p->hev);
	free(p->slots);
	free(p->pinned);
	free(p->hopts);
	free(p);
}

/* Pinned buffers (page-aligned, registered), events and the stream. */
static int cuda_setup(struct bounce *p, size_t len, unsigned evflags, struct llmio_error *e)
{
	const size_t page = (size_t)sysconf(_SC_PAGESIZE);
	const size_t alloc = (len + page - 1) / page * page;
	char cerr[256];
	int ret = p->rt->StreamCreateWithFlags(&p->stream, cudaStreamNonBlocking);

	for (unsigned i = 0; !ret && i < p->depth; i++) {
		void *buf = NULL;

		if (posix_memalign(&buf, page, alloc))
			return llmio_err(e, -ENOMEM,
			                 "cuda-bounce: no host memory for pinned buffer %u (%zu "
			                 "bytes); lower bs or iodepth",
			                 i, alloc);
		ret = p->rt->HostRegister(buf, alloc, cudaHostRegisterDefault);
		if (ret) {
			free(buf);
			return llmio_err(
			        e, -ENOMEM,
			        "cudaHostRegister(%zu) for pinned buffer %u: %s; lower bs or "
			        "iodepth, or raise the locked-memory limit (ulimit -l)",
			        alloc, i, cuda_strerror(p->rt, ret, cerr, sizeof(cerr)));
		}
		p->pinned[i] = buf;
		ret = p->rt->EventCreateWithFlags(&p->slots[i].c0, evflags);
		if (!ret)
			ret = p->rt->EventCreateWithFlags(&p->slots[i].c1, evflags);
	}
	if (ret)
		return llmio_err(e, -EIO, "cuda-bounce: creating the copy stream or events: %s",
		                 cuda_strerror(p->rt, ret, cerr, sizeof(cerr)));
	return 0;
}

/* The host engine, on the pinned buffers, with its default options. */
static int host_setup(struct bounce *p, const struct engine_setup *s, int host,
                      struct llmio_error *e)
{
	struct engine_setup hs = *s;
	char why[512];
	int ret;

	p->host = engine_find(host_names[host]);
	if (!p->host || p->host->probe(why, sizeof(why))) {
		return llmio_err(e, -ENOTSUP,
		                 "cuda-bounce host=%s cannot run here: %s; choose another host",
		                 host_names[host], p->host ? why : "unknown engine");
	}
	p->hopts = calloc(1, p->host->opts_size ? p->host->opts_size : 1);
	if (!p->hopts)
		return -ENOMEM;
	ret = engine_opts_parse(p->host, "", p->hopts, e);
	if (ret)
		return ret;
	hs.bufs = p->pinned;
	hs.opts = p->hopts;
	ret = p->host->init(&p->hctx, &hs, e);
	if (ret && !llmio_err_msg(e)[0])
		llmio_err(e, ret, "cuda-bounce: host engine %s could not start", p->host->name);
	return ret;
}

static int bounce_init(struct engine_ctx *ctx, const struct engine_setup *s, struct llmio_error *e)
{
	const struct bounce_opts *o = s->opts;
	char bus[32] = "?", sched[160] = "";
	unsigned evflags;
	struct bounce *p;
	int ret;

	ctx->priv = NULL;
	ctx->notes[0] = '\0';
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->rt = cuda_runtime(e);
	if (!p->rt) {
		free(p);
		return -ENODEV;
	}
	p->depth = s->iodepth ? s->iodepth : 1;
	ret = cuda_use_gpu(p->rt, o->gpu, e);
	if (ret)
		goto fail;
	ret = -ENOMEM;
	p->pinned = calloc(p->depth, sizeof(*p->pinned));
	p->slots = calloc(p->depth, sizeof(*p->slots));
	p->hev = calloc(p->depth, sizeof(*p->hev));
	p->fifo = calloc(p->depth, sizeof(*p->fifo));
	p->ready = calloc(p->depth, sizeof(*p->ready));
	if (!p->pinned || !p->slots || !p->hev || !p->fifo || !p->ready)
		goto fail;
	evflags = cuda_set_sched(p->rt, o->sched, sched, sizeof(sched));
	ret = cuda_setup(p, s->buf_len, evflags, e);
	if (ret)
		goto fail;
	ret = host_setup(p, s, o->host, e);
	if (ret)
		goto fail;
	p->rt->DeviceGetPCIBusId(bus, sizeof(bus), o->gpu);
	engine_appendf(
	        ctx->notes, sizeof(ctx->notes),
	        "CUDA %d.%d; GPU %d (%s); host engine %s (%s); %u pinned buffers (page-aligned, "
	        "cudaHostRegister), copies on one stream%s%s",
	        p->rt->runtime_version / 1000, p->rt->runtime_version % 1000 / 10, o->gpu, bus,
	        p->host->name, p->hctx.notes[0] ? p->hctx.notes : "defaults", p->depth,
	        p->depth > 1 ? " overlapping storage"
	                     : "; iodepth=1: each copy waits for its read, use iodepth>=2 to "
	                       "overlap storage and copies",
	        sched);
	ctx->priv = p;
	return 0;

fail:
	if (ret == -ENOMEM && !llmio_err_msg(e)[0])
		llmio_err(e, ret, "cuda-bounce: out of memory for the engine state");
	bounce_free(p);
	return ret;
}

static void finish(struct bounce *p, struct slot *sl, int64_t res)
{
	sl->outer->res = res;
	sl->state = SLOT_IDLE;
	p->ready[p->nready++] = sl->outer;
}

/* Start a copy on the stream: to the GPU after a read, to pinned memory before a write. */
static void start_copy(struct bounce *p, struct slot *sl, size_t n)
{
	struct io_req *io = sl->outer;
	unsigned idx = io->buf_idx;
	int ret;

	ret = p->rt->EventRecord(sl->c0, p->stream);
	if (!ret)
		ret = io->op == ENGINE_OP_READ
		              ? p->rt->MemcpyAsync(io->buf, p->pinned[idx], n,
		                                   cudaMemcpyHostToDevice, p->stream)
		              : p->rt->MemcpyAsync(p->pinned[idx], io->buf, n,
		                                   cudaMemcpyDeviceToHost, p->stream);
	if (!ret)
		ret = p->rt->EventRecord(sl->c1, p->stream);
	if (ret) {
		p->err = ret;
		finish(p, sl, -EIO);
		return;
	}
	sl->state = SLOT_COPY;
	p->fifo[(p->fhead + p->nfifo++) % p->depth] = idx;
	p->copy_bytes += n;
	p->copies[io->op]++;
}

static void storage_done(struct bounce *p, struct slot *sl)
{
	p->storage_ns += now_ns() - sl->t0;
	p->storage_ios++;
	if (sl->outer->op == ENGINE_OP_READ && sl->inner.res > 0)
		start_copy(p, sl, (size_t)sl->inner.res);
	else
		finish(p, sl, sl->inner.res);
}

/* Hand the slot's pinned buffer to the host engine. */
static void start_storage(struct bounce *p, struct slot *sl)
{
	struct io_req *io = sl->outer;
	int q;

	sl->inner = (struct io_req){
	        .buf = p->pinned[io->buf_idx],
	        .off = io->off,
	        .len = io->len,
	        .file = io->file,
	        .buf_idx = io->buf_idx,
	        .op = io->op,
	};
	sl->state = SLOT_STORAGE;
	sl->t0 = now_ns();
	q = p->host->queue(&p->hctx, &sl->inner);
	if (q == ENGINE_Q_COMPLETED) {
		storage_done(p, sl);
	} else if (q == ENGINE_Q_QUEUED) {
		p->nstorage++;
		p->host_dirty = true;
	} else {
		/* the host engine has a slot for each of ours: BUSY cannot happen */
		finish(p, sl, -EAGAIN);
	}
}

static int bounce_queue(struct engine_ctx *ctx, struct io_req *io)
{
	struct bounce *p = ctx->priv;
	struct slot *sl = &p->slots[io->buf_idx];

	sl->outer = io;
	if (io->op == ENGINE_OP_READ)
		start_storage(p, sl);
	else
		start_copy(p, sl, io->len);
	return ENGINE_Q_QUEUED;
}

static int host_commit(struct bounce *p)
{
	if (!p->host_dirty)
		return 0;
	p->host_dirty = false;
	return p->host->commit ? p->host->commit(&p->hctx) : 0;
}

static int bounce_commit(struct engine_ctx *ctx)
{
	return host_commit(ctx->priv);
}

/* Copies finished (in stream order); with `wait`, block for the oldest. */
static void poll_copies(struct bounce *p, bool wait)
{
	while (p->nfifo) {
		struct slot *sl = &p->slots[p->fifo[p->fhead]];
		int ret = p->rt->EventQuery(sl->c1);
		float ms = 0;

		if (ret == cudaErrorNotReady && wait)
			ret = p->rt->EventSynchronize(sl->c1);
		if (ret == cudaErrorNotReady)
			return;
		wait = false;
		p->fhead = (p->fhead + 1) % p->depth;
		p->nfifo--;
		if (ret) {
			p->err = ret;
			finish(p, sl, -EIO);
			continue;
		}
		if (p->rt->EventElapsedTime(&ms, sl->c0, sl->c1) == cudaSuccess)
			p->copy_ms += ms;
		if (sl->outer->op == ENGINE_OP_READ)
			finish(p, sl, sl->inner.res);
		else
			start_storage(p, sl);
	}
}

/*
 * What a host engine counts itself (s3: bytes on the wire, requests) is the job's: moved out
 * as deltas, because the worker zeroes ours when measuring starts.  A failed host I/O's
 * reason goes up with it.
 */
static void forward_counters(struct engine_ctx *ctx, struct bounce *p)
{
	struct engine_counters *c = &ctx->counters, *h = &p->hctx.counters;

	if (!h->known)
		return;
	c->known = true;
	c->wire_rx += h->wire_rx;
	c->wire_tx += h->wire_tx;
	c->requests += h->requests;
	c->retries += h->retries;
	c->hash_ns += h->hash_ns;
	c->copy_ns += h->copy_ns;
	*h = (struct engine_counters){.known = true};
	if (p->hctx.ioerr[0]) {
		memcpy(ctx->ioerr, p->hctx.ioerr, sizeof(ctx->ioerr));
		p->hctx.ioerr[0] = '\0';
	}
}

/* Host I/Os finished; with `wait`, block for one. */
static int poll_storage(struct bounce *p, bool wait)
{
	int n;

	if (!p->nstorage)
		return 0;
	n = p->host->reap(&p->hctx, wait ? 1 : 0, p->hev, p->depth);
	if (n < 0)
		return n;
	for (int i = 0; i < n; i++)
		storage_done(p, &p->slots[p->hev[i]->buf_idx]);
	p->nstorage -= (unsigned)n;
	return 0;
}

static int bounce_reap(struct engine_ctx *ctx, unsigned min, struct io_req **evs, unsigned max)
{
	struct bounce *p = ctx->priv;
	unsigned n = 0;
	bool wait = false;
	int ret;

	if (min > max)
		min = max;
	for (;;) {
		poll_copies(p, wait && p->nfifo);
		ret = host_commit(p);
		if (!ret)
			ret = poll_storage(p, wait && !p->nfifo);
		if (ret < 0)
			return ret;
		while (n < max && p->nready)
			evs[n++] = p->ready[--p->nready];
		forward_counters(ctx, p);
		if (p->err) {
			char cerr[256];

			engine_appendf(ctx->notes, sizeof(ctx->notes), "; CUDA copy failed: %s",
			               cuda_strerror(p->rt, p->err, cerr, sizeof(cerr)));
			p->err = 0;
		}
		if (n >= min || (!p->nfifo && !p->nstorage && !p->nready))
			return (int)n;
		wait = true;
	}
}

/* The job ended: the host engine's verdict on its writes (s3: every upload completed). */
static int bounce_finish(struct engine_ctx *ctx)
{
	struct bounce *p = ctx->priv;
	int ret = p->host->finish ? p->host->finish(&p->hctx) : 0;

	forward_counters(ctx, p); /* its requests, and the reason with a failure */
	return ret;
}

static void bounce_cleanup(struct engine_ctx *ctx)
{
	struct bounce *p = ctx->priv;
	struct io_req *evs[64];
	double storage_s, copy_s;

	if (!p)
		return;
	while (p->nfifo || p->nstorage)
		if (bounce_reap(ctx, 1, evs, 64) < 0)
			break;
	storage_s = (double)p->storage_ns / 1e9;
	copy_s = p->copy_ms / 1e3;
	engine_appendf(
	        ctx->notes, sizeof(ctx->notes),
	        "; thread 0, whole run: copies took %.3f ms of GPU time (%llu host-to-device, %llu "
	        "device-to-host, %.1f MiB, %.2f GB/s); storage %.3f ms summed over %llu host I/Os",
	        copy_s * 1e3, (unsigned long long)p->copies[ENGINE_OP_READ],
	        (unsigned long long)p->copies[ENGINE_OP_WRITE], (double)p->copy_bytes / 1048576.0,
	        copy_s > 0 ? (double)p->copy_bytes / 1e9 / copy_s : 0.0, storage_s * 1e3,
	        (unsigned long long)p->storage_ios);
	bounce_free(p);
	ctx->priv = NULL;
}

static const struct engine_ops *host_of(const void *opts)
{
	return engine_find(host_names[((const struct bounce_opts *)opts)->host]);
}

/* A host engine that resolves its own target (s3) makes the target this engine's. */
static bool bounce_owns_target(const void *opts)
{
	const struct engine_ops *h = host_of(opts);

	return h && (h->caps & ENGINE_CAP_OWN_TARGET);
}

/* The host engine resolves it, with its default options (those it runs with). */
static int bounce_target_resolve(const void *opts, const struct engine_target_req *rq,
                                 struct engine_target *t, struct llmio_error *e)
{
	return engine_target_resolve_defaults(host_of(opts), rq, t, e);
}

/* Each host engine (the default, io_uring, comes first; tests/test_gpu.c runs every one). */
static const char *const bounce_variants[] = {"host=libaio", "host=psync", NULL};

const struct engine_ops engine_cuda_bounce = {
        .abi_version = ENGINE_ABI_VERSION,
        .name = "cuda-bounce",
        .summary = "host engine into pinned memory + cudaMemcpyAsync to GPU memory (the "
                   "CPU-mediated path), pipelined",
        .caps = ENGINE_CAP_ASYNC | ENGINE_CAP_DIRECT,
        .opts = bounce_options,
        .opts_size = sizeof(struct bounce_opts),
        .probe = bounce_probe,
        .init = bounce_init,
        .queue = bounce_queue,
        .commit = bounce_commit,
        .reap = bounce_reap,
        .cleanup = bounce_cleanup,
        .buf_alloc = gpu_buf_alloc,
        .buf_free = gpu_buf_free,
        .test_variants = bounce_variants,
        .target_resolve = bounce_target_resolve,
        .owns_target = bounce_owns_target,
        .finish = bounce_finish,
        /* its one host that owns its targets is s3 (engine_objects() asks owns_target) */
        .objects = &s3_objects,
        .buf_copy_in = gpu_buf_copy_in,
        .buf_copy_out = gpu_buf_copy_out,
};
