/* SPDX-License-Identifier: MIT */
/*
 * libaio: Linux native AIO (io_setup / io_submit / io_getevents) through libaio.
 *
 * Each instance owns one AIO context of iodepth slots and iodepth preallocated iocbs kept on a
 * free stack, so nothing is allocated per I/O.  queue() prepares an iocb and parks it on the
 * pending list; commit() hands every pending iocb to the kernel in as few io_submit() calls as
 * the kernel accepts; reap() waits with io_getevents().
 *
 * Native AIO is only asynchronous for O_DIRECT.  With buffered files io_submit() performs the
 * copy before it returns, in the submitting thread, so queue depth buys nothing; the notes
 * say so.
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <libaio.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/engine.h"
#include "base/error.h"

/* How long reap() keeps retrying an io_submit() that says -EAGAIN with nothing in flight. */
#define EAGAIN_RETRY_NS 100000L
#define EAGAIN_RETRIES  10000u /* 1 s in all */

struct aio_eng {
	io_context_t aio;
	const int *fds;
	unsigned nfiles;
	unsigned depth;
	unsigned nfree;          /* iocbs on the free stack */
	unsigned npending;       /* prepared, not yet accepted by io_submit() */
	unsigned nsubmitted;     /* accepted by the kernel, completion not yet reaped */
	unsigned nrefused;       /* refused by io_submit(): failed I/Os waiting for reap() */
	struct iocb *iocbs;      /* depth */
	struct iocb **freel;     /* depth */
	struct iocb **pending;   /* depth, in queue order */
	struct io_req **refused; /* depth */
	struct io_event *events; /* depth */
	/*
	 * Completions fetched from the kernel but not yet handed out (O_DIRECT hands them out
	 * one per reap, so that each freed slot goes straight back to the device).
	 */
	unsigned stash_pos, stash_n;
	bool one_at_a_time;
};

/* Explain an io_setup() failure: the errno alone does not tell an operator what to change. */
static void explain_io_setup(int err, unsigned nr, struct llmio_error *e)
{
	unsigned long max_nr = 0, cur_nr = 0;

	switch (err) {
	case ENOSYS:
		llmio_err(e, -err,
		          "libaio: io_setup: ENOSYS: this kernel is built without native AIO "
		          "(CONFIG_AIO=n) or a seccomp filter blocks it; use io_uring or psync");
		break;
	case EAGAIN:
		/* The kernel reserves about 2 x max(nr, 4 x CPUs) events against fs.aio-max-nr. */
		if (engine_read_proc_ulong("/proc/sys/fs/aio-max-nr", &max_nr) == 0 &&
		    engine_read_proc_ulong("/proc/sys/fs/aio-nr", &cur_nr) == 0)
			llmio_err(e, -err,
			          "libaio: io_setup(%u): EAGAIN: not enough AIO events left "
			          "system-wide (fs.aio-nr %lu of fs.aio-max-nr %lu in use); raise "
			          "/proc/sys/fs/aio-max-nr or lower iodepth/numjobs",
			          nr, cur_nr, max_nr);
		else
			llmio_err(e, -err,
			          "libaio: io_setup(%u): EAGAIN: not enough AIO events left "
			          "system-wide (/proc/sys/fs/aio-max-nr); raise it or lower "
			          "iodepth/numjobs",
			          nr);
		break;
	case EINVAL:
		llmio_err(e, -err,
		          "libaio: io_setup(%u): EINVAL: iodepth exceeds what the kernel allows "
		          "(/proc/sys/fs/aio-max-nr); lower iodepth",
		          nr);
		break;
	default:
		llmio_err(e, -err, "libaio: io_setup(%u): %s", nr, strerror(err));
		break;
	}
}

/*
 * Set once io_setup() worked in this process: native AIO does not go away, and the probe's
 * io_destroy() waits for an RCU grace period (36 ms on a busy 2-CPU machine), which a sweep
 * paid again before every libaio point.  A later io_setup() that fails (the AIO event limit
 * reached) is still explained, by aio_init.  A failed probe is tried again next time.
 */
static int aio_probed;

static int aio_probe(char *why, size_t len)
{
	io_context_t aio = 0;
	int ret;

	if (__atomic_load_n(&aio_probed, __ATOMIC_RELAXED))
		return 0;
	/* libaio's wrappers return -errno themselves. */
	ret = io_setup(1, &aio);
	if (ret < 0) {
		struct llmio_error e;

		llmio_error_init(&e);
		explain_io_setup(-ret, 1, &e);
		snprintf(why, len, "%s", e.msg); /* the probe's why: a caller's buffer */
		return ret;
	}
	io_destroy(aio);
	__atomic_store_n(&aio_probed, 1, __ATOMIC_RELAXED);
	return 0;
}

/*
 * Destroying a context waits for an RCU grace period even when nothing is in flight (43 ms
 * on a busy 2-CPU machine): the job's control thread waited for it in every libaio worker's
 * teardown, so a sweep paid it between every two points.  A context with nothing in flight is
 * destroyed by a detached thread instead, which only sleeps (no I/O, no CPU) while the next
 * job starts.  io_setup() that finds the AIO event limit reached waits for those first.
 */
static pthread_mutex_t aio_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t aio_gone = PTHREAD_COND_INITIALIZER;
static unsigned aio_dying; /* contexts handed to a destroying thread, not yet destroyed */

static void *aio_destroy_thread(void *arg)
{
	io_destroy((io_context_t)arg);
	pthread_mutex_lock(&aio_lock);
	aio_dying--;
	pthread_cond_broadcast(&aio_gone);
	pthread_mutex_unlock(&aio_lock);
	return NULL;
}

static void aio_destroy_later(io_context_t aio)
{
	pthread_attr_t a;
	pthread_t t;
	int ret = pthread_attr_init(&a);

	if (!ret) {
		pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
		pthread_mutex_lock(&aio_lock);
		ret = pthread_create(&t, &a, aio_destroy_thread, (void *)aio);
		aio_dying += !ret;
		pthread_mutex_unlock(&aio_lock);
		pthread_attr_destroy(&a);
	}
	if (ret)
		io_destroy(aio); /* no thread: here, as before */
}

/* io_setup(), waiting once for the contexts still being destroyed if it finds no room. */
static int aio_setup(unsigned depth, io_context_t *aio)
{
	int ret = io_setup((int)depth, aio);

	if (ret != -EAGAIN)
		return ret;
	pthread_mutex_lock(&aio_lock);
	if (!aio_dying) {
		pthread_mutex_unlock(&aio_lock);
		return ret;
	}
	while (aio_dying)
		pthread_cond_wait(&aio_gone, &aio_lock);
	pthread_mutex_unlock(&aio_lock);
	return io_setup((int)depth, aio);
}

static void aio_free(struct aio_eng *p)
{
	free(p->events);
	free(p->refused);
	free(p->pending);
	free(p->freel);
	free(p->iocbs);
	free(p);
}

static int aio_init(struct engine_ctx *ctx, const struct engine_setup *s, struct llmio_error *e)
{
	struct aio_eng *p;
	unsigned depth = s->iodepth ? s->iodepth : 1;
	unsigned i;
	int ret;

	ctx->priv = NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return llmio_err(e, -ENOMEM, "libaio: out of memory for the engine state");
	p->iocbs = calloc(depth, sizeof(*p->iocbs));
	p->freel = calloc(depth, sizeof(*p->freel));
	p->pending = calloc(depth, sizeof(*p->pending));
	p->refused = calloc(depth, sizeof(*p->refused));
	p->events = calloc(depth, sizeof(*p->events));
	if (!p->iocbs || !p->freel || !p->pending || !p->refused || !p->events) {
		ret = llmio_err(e, -ENOMEM, "libaio: out of memory for %u iocbs", depth);
		goto free_state;
	}
	ret = aio_setup(depth, &p->aio);
	if (ret < 0) {
		explain_io_setup(-ret, depth, e);
		goto free_state;
	}
	for (i = 0; i < depth; i++)
		p->freel[i] = &p->iocbs[i];
	p->nfree = depth;
	p->depth = depth;
	p->fds = s->fds;
	p->nfiles = s->nfiles;

	ctx->notes[0] = '\0';
	/*
	 * Under O_DIRECT the device is the limit: completions go back to the worker one at a
	 * time, so each freed slot is refilled and submitted at once instead of in bursts (10-20 %
	 * more IOPS at QD 32 on a virtio disk; docs/performance.md), as fio does.
	 */
	p->one_at_a_time = s->direct;
	if (s->direct)
		engine_appendf(ctx->notes, sizeof(ctx->notes),
		               "O_DIRECT, io_setup(%u); completions fetched in batches with "
		               "io_getevents and handed back one at a time, so each freed slot is "
		               "resubmitted at once",
		               depth);
	else {
		engine_appendf(
		        ctx->notes, sizeof(ctx->notes),
		        "buffered I/O: libaio submits synchronously (io_submit does the copy in "
		        "the calling thread), so iodepth adds no parallelism");
		ctx->depth_effective = 1;
	}
	ctx->priv = p;
	return 0;

free_state:
	aio_free(p);
	return ret;
}

/* the kernel's flag (linux/aio_abi.h) that libaio.h lacks: aio_reqprio holds a priority */
#ifndef IOCB_FLAG_IOPRIO
#define IOCB_FLAG_IOPRIO (1 << 1)
#endif

static int aio_queue(struct engine_ctx *ctx, struct io_req *io)
{
	struct aio_eng *p = ctx->priv;
	struct iocb *cb;

	if (io->file >= p->nfiles) {
		io->res = -EBADF;
		return ENGINE_Q_COMPLETED;
	}
	if (!p->nfree)
		return ENGINE_Q_BUSY;
	cb = p->freel[--p->nfree];
	if (io->op == ENGINE_OP_WRITE)
		io_prep_pwrite(cb, p->fds[io->file], io->buf, io->len, (long long)io->off);
	else
		io_prep_pread(cb, p->fds[io->file], io->buf, io->len, (long long)io->off);
	if (io->prio) { /* fio's cmdprio: this command's own priority */
		cb->aio_reqprio = (short)io->prio;
		cb->u.c.flags |= IOCB_FLAG_IOPRIO;
	}
	cb->data = io;
	p->pending[p->npending++] = cb;
	return ENGINE_Q_QUEUED;
}

/* Drop the first n pending iocbs (accepted or refused by the kernel), keeping queue order. */
static void pending_consume(struct aio_eng *p, unsigned n)
{
	p->npending -= n;
	if (p->npending)
		memmove(p->pending, p->pending + n, p->npending * sizeof(*p->pending));
}

/*
 * Hand every pending iocb to the kernel.  io_submit() stops at the first iocb it cannot take:
 * a positive count means the rest were not looked at; an error means the first one was
 * refused.  -EAGAIN is the kernel short of request slots (worth retrying once something
 * completes); any other error belongs to that one iocb (EBADF: the file is not open for that
 * direction, EINVAL, EFAULT) and is a failed I/O, returned by the next reap().
 * 0, or -EAGAIN with iocbs left pending.
 */
static int aio_flush(struct aio_eng *p)
{
	struct iocb *cb;
	int ret;

	while (p->npending) {
		ret = io_submit(p->aio, (long)p->npending, p->pending);
		if (ret > 0) {
			p->nsubmitted += (unsigned)ret;
			pending_consume(p, (unsigned)ret);
			continue;
		}
		if (ret == 0 || ret == -EAGAIN)
			return -EAGAIN;
		if (ret == -EINTR)
			continue;
		cb = p->pending[0];
		((struct io_req *)cb->data)->res = ret;
		p->refused[p->nrefused++] = cb->data;
		p->freel[p->nfree++] = cb;
		pending_consume(p, 1);
	}
	return 0;
}

static int aio_commit(struct engine_ctx *ctx)
{
	struct aio_eng *p = ctx->priv;

	/* Left-over iocbs after -EAGAIN are retried by reap(), after completions free slots. */
	aio_flush(p);
	return 0;
}

static int aio_reap(struct engine_ctx *ctx, unsigned min, struct io_req **evs, unsigned max)
{
	static const struct timespec backoff = {.tv_sec = 0, .tv_nsec = EAGAIN_RETRY_NS};
	struct aio_eng *p = ctx->priv;
	struct timespec nowait = {0, 0};
	unsigned n = 0, tries = 0, want, i;
	int ret;

	if (p->one_at_a_time && max > 1)
		max = 1;
	if (min > max)
		min = max;
	for (;;) {
		while (p->stash_pos < p->stash_n && n < max)
			evs[n++] = p->events[p->stash_pos++].data;
		if (n >= min && n)
			return (int)n;
		if (p->npending && aio_flush(p) == -EAGAIN && !p->nsubmitted && !p->nrefused &&
		    n < min) {
			/* Nothing in the kernel will free a slot: back off. */
			if (++tries > EAGAIN_RETRIES)
				return -EAGAIN;
			nanosleep(&backoff, NULL);
			continue;
		}
		while (p->nrefused && n < max)
			evs[n++] = p->refused[--p->nrefused];

		if (p->nsubmitted && n < max) {
			want = n < min ? min - n : 0;
			if (want > p->nsubmitted)
				want = p->nsubmitted;
			/* the stash is empty here: fetch everything that completed */
			ret = io_getevents(p->aio, (long)want, (long)p->depth, p->events,
			                   want ? NULL : &nowait);
			if (ret == -EINTR)
				continue;
			if (ret < 0)
				return ret;
			for (i = 0; i < (unsigned)ret; i++) {
				struct io_req *io = p->events[i].data;

				/* res is the byte count, or -errno stored in an unsigned long. */
				io->res = (long)p->events[i].res;
				p->freel[p->nfree++] = p->events[i].obj;
			}
			p->nsubmitted -= (unsigned)ret;
			p->stash_pos = 0;
			p->stash_n = (unsigned)ret;
			while (p->stash_pos < p->stash_n && n < max)
				evs[n++] = p->events[p->stash_pos++].data;
		}
		if (n >= min)
			return (int)n;
		/* The caller asked for more than it has in flight: do not block forever. */
		if (!p->nsubmitted && !p->npending && !p->nrefused)
			return (int)n;
	}
}

static void aio_cleanup(struct engine_ctx *ctx)
{
	struct aio_eng *p = ctx->priv;

	if (!p)
		return;
	/* io_destroy() waits for any I/O still in flight, so the buffers outlive it; with none,
	 * only the grace period is left to wait for, and nobody needs to. */
	if (p->nsubmitted)
		io_destroy(p->aio);
	else
		aio_destroy_later(p->aio);
	aio_free(p);
	ctx->priv = NULL;
}

const struct engine_ops engine_libaio = {
        .abi_version = ENGINE_ABI_VERSION,
        .name = "libaio",
        .summary = "Linux native AIO (io_submit/io_getevents); asynchronous only with O_DIRECT",
        .caps = ENGINE_CAP_ASYNC | ENGINE_CAP_DIRECT | ENGINE_CAP_CMDPRIO,
        .opts = NULL,
        .opts_size = 0,
        .probe = aio_probe,
        .init = aio_init,
        .queue = aio_queue,
        .commit = aio_commit,
        .reap = aio_reap,
        .sync = NULL,
        .cleanup = aio_cleanup,
};
