/* SPDX-License-Identifier: MIT */
/*
 * gds: GPUDirect Storage through cuFile, between the files and GPU memory.
 *
 * Three ways to issue I/O (option mode):
 *   sync   cuFileRead / cuFileWrite, one at a time per thread (what fio and elbencho do);
 *   batch  cuFileBatchIOSubmit / cuFileBatchIOGetStatus: iodepth I/Os really in flight per
 *          thread, like libaio for the GPU;
 *   async  cuFileReadAsync / cuFileWriteAsync on one CUDA stream per slot, completion seen
 *          through a CUDA event per slot;
 *   auto   (default) batch when iodepth > 1 and the library has it, else async when it has
 *          that, else sync.
 * Buffers are cudaMalloc'd on GPU `gpu` by the engine (gpu_buf_alloc); register=1 also
 * registers them with cuFileBufRegister (pinned BAR mappings; no per-I/O pinning).  The notes
 * say whether cuFile ran in compat (POSIX) mode or true GDS mode, and why.
 */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/cuda_loader.h"
#include "base/error.h"
#include "engine/engine.h"

enum gds_mode { GDS_AUTO, GDS_SYNC, GDS_BATCH, GDS_ASYNC };

struct gds_opts {
	int gpu; /* first: gpu_buf_alloc reads it */
	int reg;
	int mode;
	int sched;
};

static const struct llmio_optdesc gds_options[] = {
        CUDA_GPU_OPTION(struct gds_opts),
        {
                .name = "register",
                .type = OPTD_BOOL,
                OPTD_FIELD(struct gds_opts, reg),
                .scope = OPTD_SCOPE_ENGINE,
                .def = "0",
                .help = "register the buffers with cuFileBufRegister",
        },
        {
                .name = "mode",
                .type = OPTD_ENUM,
                OPTD_FIELD(struct gds_opts, mode),
                .scope = OPTD_SCOPE_ENGINE,
                .def = "auto",
                .help = "sync (cuFileRead/Write), batch (cuFileBatchIO*: iodepth in flight), "
                        "async (cuFileRead/WriteAsync on streams); auto picks batch, then "
                        "async, when iodepth > 1",
                .choices = "auto|sync|batch|async",
        },
        CUDA_SCHED_OPTION(struct gds_opts),
        {.name = NULL},
};

/* One in-flight I/O of the async mode. */
struct gds_slot {
	struct io_req *io;
	size_t size;
	off_t file_off, buf_off;
	ssize_t bytes; /* written by cuFile when the stream runs the I/O */
	cudaStream_t stream;
	cudaEvent_t done;
};

struct gds_eng {
	const struct cudart *rt;
	const struct cufile *cf;
	enum gds_mode mode;
	unsigned depth;
	CUfileHandle_t *fh;
	unsigned nfiles;
	void *const *reg_bufs; /* registered with cuFileBufRegister, nreg of them */
	unsigned nreg;

	struct io_req **ready; /* finished but not yet reaped (failed submissions, async) */
	unsigned nready;
	struct io_req **todo; /* sync: queued, run by reap() */
	unsigned ntodo;

	/* batch */
	CUfileBatchHandle_t batch;
	bool have_batch;
	CUfileIOParams_t *params; /* queued since the last commit */
	unsigned nparams;
	CUfileIOEvents_t *events;
	unsigned inflight;

	/* async: slot per buffer index */
	struct gds_slot *slots;
	unsigned *pending; /* slot indexes in submission order */
	unsigned npending;

	char first_err[200]; /* the first cuFile failure of the run, for the notes */
};

/*
 * cuFile handles, shared by every thread of the process that uses the same fd: cuFile refuses
 * to register an fd twice, and threads share the job's fds when they do not open their own.
 */
static pthread_mutex_t handles_lock = PTHREAD_MUTEX_INITIALIZER;
static struct shared_handle {
	int fd;
	unsigned refs;
	CUfileHandle_t fh;
} handles[256];

static CUfileError_t handle_get(const struct cufile *cf, int fd, CUfileHandle_t *fh)
{
	struct shared_handle *free_slot = NULL;
	CUfileError_t st = {CU_FILE_SUCCESS, 0};

	pthread_mutex_lock(&handles_lock);
	for (size_t i = 0; i < sizeof(handles) / sizeof(handles[0]); i++) {
		if (handles[i].refs && handles[i].fd == fd) {
			handles[i].refs++;
			*fh = handles[i].fh;
			goto out;
		}
		if (!handles[i].refs && !free_slot)
			free_slot = &handles[i];
	}
	if (!free_slot) {
		st.err = -EMFILE; /* no room: said by the caller */
		goto out;
	}
	{
		CUfileDescr_t d = {.type = CU_FILE_HANDLE_TYPE_OPAQUE_FD, .handle.fd = fd};

		st = cf->HandleRegister(fh, &d);
	}
	if (st.err == CU_FILE_SUCCESS)
		*free_slot = (struct shared_handle){.fd = fd, .refs = 1, .fh = *fh};
out:
	pthread_mutex_unlock(&handles_lock);
	return st;
}

static void handle_put(const struct cufile *cf, CUfileHandle_t fh)
{
	pthread_mutex_lock(&handles_lock);
	for (size_t i = 0; i < sizeof(handles) / sizeof(handles[0]); i++)
		if (handles[i].refs && handles[i].fh == fh) {
			if (--handles[i].refs == 0)
				cf->HandleDeregister(fh);
			break;
		}
	pthread_mutex_unlock(&handles_lock);
}

static int gds_probe(char *why, size_t len)
{
	struct llmio_error e = {0};
	const struct cufile *cf = cuda_cufile(&e);
	const struct cudart *rt = cf ? cuda_runtime(&e) : NULL;

	if (!cf || !rt) {
		msgf(why, len, "%s", e.msg); /* the probe answers in the caller's buffer */
		return -ENODEV;
	}
	why[0] = '\0';
	engine_appendf(why, len, "%s (version %d%s%s), %s; %s", cf->path, cf->version,
	               cf->has_batch ? ", batch API" : "", cf->has_async ? ", stream API" : "",
	               cf->mode, rt->path);
	return 0;
}

/*
 * A byte count or error of cuFileRead/Write as io->res: -1 means errno (set by this thread),
 * below that a cuFile error (-5xxx), kept in the notes.
 */
static int64_t cufile_res(struct gds_eng *p, const char *call, ssize_t r)
{
	int saved = errno;

	if (r >= 0)
		return r;
	if (r == -1)
		return saved ? -saved : -EIO;
	if (!p->first_err[0]) {
		char e[160];
		CUfileError_t st = {(int)-r, 0};

		snprintf(p->first_err, sizeof(p->first_err), "%s: %s", call,
		         cufile_strerror(st, e, sizeof(e)));
	}
	return -EIO;
}

/*
 * The same for the batch and stream APIs, whose I/Os run on cuFile's own threads: a -1 there
 * means an I/O error whose errno belongs to another thread, never this thread's errno (which
 * could say 0 and turn a failure into "0 bytes, end of file").
 */
static int64_t cufile_remote_res(struct gds_eng *p, const char *call, ssize_t r)
{
	if (r == -1) {
		if (!p->first_err[0])
			snprintf(p->first_err, sizeof(p->first_err),
			         "%s: an I/O failed (-1; its errno is cuFile's thread's, see "
			         "cufile.log)",
			         call);
		return -EIO;
	}
	return cufile_res(p, call, r);
}

/* A failed cuFile call, kept for the notes when it is the first. */
static void cufile_failed(struct gds_eng *p, const char *call, CUfileError_t st)
{
	char e[160];

	if (!p->first_err[0])
		snprintf(p->first_err, sizeof(p->first_err), "%s: %s", call,
		         cufile_strerror(st, e, sizeof(e)));
}

static void gds_free(struct gds_eng *p)
{
	if (p->slots)
		for (unsigned i = 0; i < p->depth; i++) {
			if (p->slots[i].done)
				p->rt->EventDestroy(p->slots[i].done);
			if (p->slots[i].stream)
				p->rt->StreamDestroy(p->slots[i].stream);
		}
	if (p->have_batch)
		p->cf->BatchIODestroy(p->batch);
	for (unsigned i = 0; i < p->nreg; i++)
		p->cf->BufDeregister(p->reg_bufs[i]);
	for (unsigned f = 0; p->fh && f < p->nfiles; f++)
		if (p->fh[f])
			handle_put(p->cf, p->fh[f]);
	free(p->pending);
	free(p->slots);
	free(p->events);
	free(p->params);
	free(p->ready);
	free(p->todo);
	free(p->fh);
	free(p);
}

/* Pick the mode: what was asked if the library has it, else the best it has. */
static int pick_mode(struct gds_eng *p, const struct gds_opts *o, struct llmio_error *e)
{
	const struct cufile *cf = p->cf;

	switch (o->mode) {
	case GDS_BATCH:
		if (!cf->has_batch) {
			return llmio_err(
			        e, -ENOTSUP,
			        "gds mode=batch: %s has no usable batch API (cuFileBatchIOSetUp); "
			        "use mode=sync or async, or a libcufile from CUDA 12",
			        cf->path);
		}
		p->mode = GDS_BATCH;
		break;
	case GDS_ASYNC:
		if (!cf->has_async) {
			return llmio_err(
			        e, -ENOTSUP,
			        "gds mode=async: %s has no stream API (cuFileReadAsync); use "
			        "mode=sync or batch, or a libcufile from CUDA 12.2",
			        cf->path);
		}
		if (!cf->async_ok)
			return llmio_err(e, -ENOTSUP,
			                 "gds mode=async: %s; or use mode=sync or batch",
			                 cf->async_why);
		p->mode = GDS_ASYNC;
		break;
	case GDS_SYNC:
		p->mode = GDS_SYNC;
		break;
	default:
		p->mode = p->depth > 1 && cf->has_batch                   ? GDS_BATCH
		          : p->depth > 1 && cf->has_async && cf->async_ok ? GDS_ASYNC
		                                                          : GDS_SYNC;
		break;
	}
	if (p->mode == GDS_BATCH && cf->have_props && cf->props.max_batch_io_size &&
	    p->depth > cf->props.max_batch_io_size) {
		return llmio_err(
		        e, -EINVAL,
		        "gds mode=batch: iodepth %u exceeds cuFile's max_batch_io_size %u "
		        "(properties.io_batchsize in cufile.json); lower iodepth or raise it",
		        p->depth, cf->props.max_batch_io_size);
	}
	return 0;
}

static int setup_batch(struct gds_eng *p, struct llmio_error *e)
{
	char cerr[256];
	CUfileError_t st;

	p->params = calloc(p->depth, sizeof(*p->params));
	p->events = calloc(p->depth, sizeof(*p->events));
	if (!p->params || !p->events)
		return -ENOMEM;
	st = p->cf->BatchIOSetUp(&p->batch, p->depth);
	if (st.err != CU_FILE_SUCCESS) {
		return llmio_err(e, -EIO, "cuFileBatchIOSetUp(%u): %s; try mode=sync", p->depth,
		                 cufile_strerror(st, cerr, sizeof(cerr)));
	}
	p->have_batch = true;
	return 0;
}

static int setup_async(struct gds_eng *p, unsigned evflags, struct llmio_error *e)
{
	char cerr[256];
	int ret;

	p->slots = calloc(p->depth, sizeof(*p->slots));
	p->pending = calloc(p->depth, sizeof(*p->pending));
	if (!p->slots || !p->pending)
		return -ENOMEM;
	for (unsigned i = 0; i < p->depth; i++) {
		ret = p->rt->StreamCreateWithFlags(&p->slots[i].stream, cudaStreamNonBlocking);
		if (!ret)
			ret = p->rt->EventCreateWithFlags(&p->slots[i].done, evflags);
		if (ret)
			return llmio_err(e, -EIO, "gds mode=async: creating stream/event %u: %s", i,
			                 cuda_strerror(p->rt, ret, cerr, sizeof(cerr)));
	}
	return 0;
}

static void register_bufs(struct gds_eng *p, const struct engine_setup *s, char *notes, size_t nlen)
{
	char cerr[256];

	/* before the first call: a partial failure leaves nreg registered buffers to release */
	p->reg_bufs = s->bufs;
	for (unsigned i = 0; i < s->nbufs; i++) {
		CUfileError_t st = p->cf->BufRegister(s->bufs[i], s->buf_len, 0);

		if (st.err != CU_FILE_SUCCESS) {
			engine_appendf(
			        notes, nlen,
			        "; register=1 but cuFileBufRegister failed (%s): buffers %u.. "
			        "unregistered",
			        cufile_strerror(st, cerr, sizeof(cerr)), i);
			return;
		}
		p->nreg = i + 1;
	}
	engine_appendf(notes, nlen, "; %u buffers registered", p->nreg);
}

static int gds_init(struct engine_ctx *ctx, const struct engine_setup *s, struct llmio_error *e)
{
	static const char *const mode_text[] = {
	        [GDS_SYNC] = "sync cuFileRead/cuFileWrite, one I/O at a time per thread",
	        [GDS_BATCH] = "batch API (cuFileBatchIOSubmit/GetStatus)",
	        [GDS_ASYNC] = "stream API (cuFileReadAsync/WriteAsync, one stream per slot)",
	};
	const struct gds_opts *o = s->opts;
	char bus[32] = "?", cerr[256], sched[160] = "";
	unsigned evflags;
	struct gds_eng *p;
	int ret;

	ctx->priv = NULL;
	ctx->notes[0] = '\0';
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->cf = cuda_cufile(e);
	p->rt = cuda_runtime(e);
	if (!p->cf || !p->rt) {
		free(p);
		return -ENODEV;
	}
	p->depth = s->iodepth ? s->iodepth : 1;
	p->nfiles = s->nfiles;
	ret = cuda_use_gpu(p->rt, o->gpu, e);
	if (ret)
		goto fail;
	evflags = cuda_set_sched(p->rt, o->sched, sched, sizeof(sched));
	ret = pick_mode(p, o, e);
	if (ret)
		goto fail;
	ret = -ENOMEM;
	p->ready = calloc(p->depth, sizeof(*p->ready));
	p->todo = calloc(p->depth, sizeof(*p->todo));
	p->fh = calloc(s->nfiles ? s->nfiles : 1, sizeof(*p->fh));
	if (!p->ready || !p->todo || !p->fh)
		goto fail;
	for (unsigned f = 0; f < s->nfiles; f++) {
		CUfileError_t st = handle_get(p->cf, s->fds[f], &p->fh[f]);

		if (st.err != CU_FILE_SUCCESS) {
			p->fh[f] = NULL;
			if (st.err == -EMFILE)
				ret = llmio_err(e, -EIO,
				                "gds: more than %zu files open through cuFile",
				                sizeof(handles) / sizeof(handles[0]));
			else
				ret = llmio_err(e, -EIO, "cuFileHandleRegister (file %u%s%s): %s%s",
				                f, s->devname[0] ? " on " : "", s->devname,
				                cufile_strerror(st, cerr, sizeof(cerr)),
				                s->direct ? ""
				                          : "; cuFile may need O_DIRECT here: try "
				                            "--direct=1");
			goto fail;
		}
	}
	ret = p->mode == GDS_BATCH   ? setup_batch(p, e)
	      : p->mode == GDS_ASYNC ? setup_async(p, evflags, e)
	                             : 0;
	if (ret)
		goto fail;

	p->rt->DeviceGetPCIBusId(bus, sizeof(bus), o->gpu);
	engine_appendf(ctx->notes, sizeof(ctx->notes),
	               "cuFile %s (version %d); %s; GPU %d (%s); %s, iodepth %u%s%s%s", p->cf->path,
	               p->cf->version, p->cf->mode, o->gpu, bus, mode_text[p->mode],
	               p->mode == GDS_SYNC ? 1 : p->depth,
	               p->mode == GDS_SYNC && p->depth > 1
	                       ? " (sync mode: the iodepth asked for is not in flight)"
	                       : "",
	               p->mode == GDS_BATCH ? " (one submission in flight per thread, drained "
	                                      "before the next: cuFile's batch contract)"
	                                    : "",
	               s->direct ? ""
	                         : "; files without O_DIRECT: cuFile uses its POSIX path for them");
	engine_appendf(ctx->notes, sizeof(ctx->notes), "%s", sched);
	if (o->reg)
		register_bufs(p, s, ctx->notes, sizeof(ctx->notes));
	ctx->priv = p;
	return 0;

fail:
	if (ret == -ENOMEM && !llmio_err_msg(e)[0])
		llmio_err(e, ret, "gds: out of memory for the engine state");
	gds_free(p);
	return ret;
}

static void finish(struct gds_eng *p, struct io_req *io, int64_t res)
{
	io->res = res;
	p->ready[p->nready++] = io;
}

static int queue_async(struct gds_eng *p, struct io_req *io)
{
	struct gds_slot *sl = &p->slots[io->buf_idx];
	CUfileHandle_t fh = p->fh[io->file];
	CUfileError_t st;
	int ret;

	sl->io = io;
	sl->size = io->len;
	sl->file_off = (off_t)io->off;
	sl->buf_off = 0;
	sl->bytes = 0;
	st = io->op == ENGINE_OP_READ ? p->cf->ReadAsync(fh, io->buf, &sl->size, &sl->file_off,
	                                                 &sl->buf_off, &sl->bytes, sl->stream)
	                              : p->cf->WriteAsync(fh, io->buf, &sl->size, &sl->file_off,
	                                                  &sl->buf_off, &sl->bytes, sl->stream);
	if (st.err != CU_FILE_SUCCESS) {
		cufile_failed(p, io->op == ENGINE_OP_READ ? "cuFileReadAsync" : "cuFileWriteAsync",
		              st);
		finish(p, io, -EIO);
		return ENGINE_Q_QUEUED;
	}
	ret = p->rt->EventRecord(sl->done, sl->stream);
	if (ret) {
		p->rt->StreamSynchronize(sl->stream);
		finish(p, io, cufile_remote_res(p, "cuFileReadAsync/WriteAsync", sl->bytes));
		return ENGINE_Q_QUEUED;
	}
	p->pending[p->npending++] = io->buf_idx;
	return ENGINE_Q_QUEUED;
}

static int gds_queue(struct engine_ctx *ctx, struct io_req *io)
{
	struct gds_eng *p = ctx->priv;

	if (io->file >= p->nfiles) {
		io->res = -EBADF;
		return ENGINE_Q_COMPLETED;
	}
	switch (p->mode) {
	case GDS_BATCH:
		/* a batch handle takes one submission at a time: drain before the next */
		if (p->inflight || p->nparams + p->nready >= p->depth)
			return ENGINE_Q_BUSY;
		p->params[p->nparams++] = (CUfileIOParams_t){
		        .mode = CUFILE_BATCH,
		        .u.batch = {.devPtr_base = io->buf,
		                    .file_offset = (off_t)io->off,
		                    .devPtr_offset = 0,
		                    .size = io->len},
		        .fh = p->fh[io->file],
		        .opcode = io->op == ENGINE_OP_READ ? CUFILE_READ : CUFILE_WRITE,
		        .cookie = io,
		};
		return ENGINE_Q_QUEUED;
	case GDS_ASYNC:
		return queue_async(p, io);
	default:
		/* run by reap(), in order: the worker keeps queueing while queue() completes */
		p->todo[p->ntodo++] = io;
		return ENGINE_Q_QUEUED;
	}
}

/* sync mode: the queued I/Os, one cuFileRead/Write after the other. */
static unsigned run_sync(struct gds_eng *p, struct io_req **evs, unsigned max)
{
	unsigned n = 0;

	for (; n < max && n < p->ntodo; n++) {
		struct io_req *io = p->todo[n];
		ssize_t r;

		if (io->op == ENGINE_OP_READ)
			r = p->cf->Read(p->fh[io->file], io->buf, io->len, (off_t)io->off, 0);
		else
			r = p->cf->Write(p->fh[io->file], io->buf, io->len, (off_t)io->off, 0);
		io->res = cufile_res(p, io->op == ENGINE_OP_READ ? "cuFileRead" : "cuFileWrite", r);
		evs[n] = io;
	}
	p->ntodo -= n;
	memmove(p->todo, p->todo + n, p->ntodo * sizeof(*p->todo));
	return n;
}

static int gds_commit(struct engine_ctx *ctx)
{
	struct gds_eng *p = ctx->priv;
	CUfileError_t st;

	if (p->mode != GDS_BATCH || !p->nparams)
		return 0;
	st = p->cf->BatchIOSubmit(p->batch, p->nparams, p->params, 0);
	if (st.err != CU_FILE_SUCCESS) {
		cufile_failed(p, "cuFileBatchIOSubmit", st);
		/* the whole submission failed: each I/O fails, the engine carries on */
		for (unsigned i = 0; i < p->nparams; i++)
			finish(p, p->params[i].cookie, -EIO);
	} else {
		p->inflight += p->nparams;
	}
	p->nparams = 0;
	return 0;
}

/* Completed batch I/Os into evs; blocks until `want` of them (bounded waits, retried). */
static int reap_batch(struct gds_eng *p, unsigned want, struct io_req **evs, unsigned max)
{
	struct timespec ts = {.tv_sec = 1, .tv_nsec = 0};
	unsigned nr = max < p->inflight ? max : p->inflight, n = 0;
	CUfileError_t st;

	if (want > nr)
		want = nr;
	st = p->cf->BatchIOGetStatus(p->batch, want, &nr, p->events, &ts);
	if (st.err != CU_FILE_SUCCESS) {
		cufile_failed(p, "cuFileBatchIOGetStatus", st);
		return -EIO;
	}
	for (unsigned i = 0; i < nr; i++) {
		struct io_req *io = p->events[i].cookie;
		ssize_t ret = (ssize_t)p->events[i].ret;

		if (p->events[i].status == CUFILE_COMPLETE)
			io->res = cufile_remote_res(p, "cuFileBatchIO", ret);
		else if (p->events[i].status &
		         (CUFILE_FAILED | CUFILE_CANCELED | CUFILE_INVALID | CUFILE_TIMEOUT))
			io->res = ret < 0 ? cufile_remote_res(p, "cuFileBatchIO", ret) : -EIO;
		else
			continue; /* still waiting or pending: reported again later */
		evs[n++] = io;
		p->inflight--;
	}
	return (int)n;
}

/* Completed async I/Os (in submission order) into evs; blocks for the first when `wait`. */
static unsigned reap_async(struct gds_eng *p, bool wait, struct io_req **evs, unsigned max)
{
	unsigned n = 0, kept = 0;

	for (unsigned i = 0; i < p->npending; i++) {
		struct gds_slot *sl = &p->slots[p->pending[i]];
		int ret = n < max ? p->rt->EventQuery(sl->done) : cudaErrorNotReady;

		if (ret == cudaErrorNotReady && wait && n == 0 && i == 0)
			ret = p->rt->EventSynchronize(sl->done);
		if (ret == cudaErrorNotReady) {
			p->pending[kept++] = p->pending[i];
			continue;
		}
		sl->io->res =
		        ret ? -EIO : cufile_remote_res(p, "cuFileReadAsync/WriteAsync", sl->bytes);
		evs[n++] = sl->io;
	}
	p->npending = kept;
	return n;
}

static int gds_reap(struct engine_ctx *ctx, unsigned min, struct io_req **evs, unsigned max)
{
	struct gds_eng *p = ctx->priv;
	unsigned n = 0;

	if (min > max)
		min = max;
	while (n < max && p->nready)
		evs[n++] = p->ready[--p->nready];
	for (;;) {
		if (p->mode == GDS_BATCH && p->inflight) {
			int got = reap_batch(p, n < min ? min - n : 0, evs + n, max - n);

			if (got < 0)
				return got;
			n += (unsigned)got;
		} else if (p->mode == GDS_ASYNC && p->npending) {
			n += reap_async(p, n < min, evs + n, max - n);
		} else if (p->ntodo) {
			n += run_sync(p, evs + n, max - n);
		}
		if (n >= min || (!p->inflight && !p->npending && !p->ntodo))
			return (int)n;
	}
}

static void gds_cleanup(struct engine_ctx *ctx)
{
	struct gds_eng *p = ctx->priv;
	struct io_req *evs[64];

	if (!p)
		return;
	/* I/O still in flight lands in buffers about to be freed: wait for it first */
	p->ntodo = 0; /* never started */
	while (p->inflight || p->npending)
		if (gds_reap(ctx, 1, evs, 64) < 0)
			break;
	if (p->first_err[0])
		engine_appendf(ctx->notes, sizeof(ctx->notes), "; first cuFile failure: %s",
		               p->first_err);
	gds_free(p);
	ctx->priv = NULL;
}

/* Each of its I/O modes, and registered buffers (tests/test_gpu.c runs every one). */
static const char *const gds_variants[] = {"mode=sync", "mode=batch", "mode=async,register=1",
                                           NULL};

const struct engine_ops engine_gds = {
        .abi_version = ENGINE_ABI_VERSION,
        .name = "gds",
        .summary = "GPUDirect Storage (cuFile) between files and GPU memory: sync, batch or "
                   "stream-async",
        .caps = ENGINE_CAP_ASYNC | ENGINE_CAP_DIRECT | ENGINE_CAP_GPU_DIRECT,
        .opts = gds_options,
        .opts_size = sizeof(struct gds_opts),
        .probe = gds_probe,
        .init = gds_init,
        .queue = gds_queue,
        .commit = gds_commit,
        .reap = gds_reap,
        .cleanup = gds_cleanup,
        .buf_alloc = gpu_buf_alloc,
        .buf_free = gpu_buf_free,
        .buf_copy_in = gpu_buf_copy_in,
        .buf_copy_out = gpu_buf_copy_out,
        .test_variants = gds_variants,
};
