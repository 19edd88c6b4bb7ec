/* SPDX-License-Identifier: MIT */
/*
 * The store's I/O thread: one engine instance driven like the worker loop (queue, commit,
 * reap), fed by the operations the caller pushes on the cmd ring.
 *
 * Operations not fully issued wait in two FIFOs: reads (get, prefetch, drop) and writes (put,
 * flush).  Reads start first: a get issued behind queued puts is not held behind them (it waits
 * only for the I/Os already in flight, and for its own tensor's put through its dependency).
 * Each operation is cut into pieces, one per stripe unit, and each piece takes a staging
 * buffer and an I/O slot.  When the head of a FIFO cannot go on (no buffer, no slot, or an
 * operation it depends on is not done) nothing behind it in that FIFO starts, so each kind
 * keeps its order; the writes go on meanwhile.  A flush is a barrier for both: it waits for
 * every operation taken before it, and no read taken after it starts until it is done.  A put
 * copies each piece into its buffer as it is issued; a get copies each piece out as it lands; a
 * prefetch keeps its buffers until a get or a drop consumes them.  Every completion's byte count is
 * checked: a short or failed I/O fails its operation with the cause, and the remaining pieces
 * are not issued.  A borrowed put or a get whose caller memory lines up with the file (a put is
 * placed at a file offset congruent to its address) skips staging: the engine moves the piece's
 * whole alignment units straight from or into the caller's buffer, and only the partial units
 * at the tensor's head and tail go through a staging buffer (no read or write outside the
 * tensor).
 * Nothing here allocates, locks or logs; the clock is read only when the number of I/Os in flight
 * leaves or reaches zero (for io_busy_ns).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "base/clock.h"
#include "job/cpu.h"
#include "store/store_internal.h"

enum { Q_READ, Q_WRITE };

struct op_fifo {
	uint32_t slot[STORE_OPS];
	uint32_t head, n;
};

struct io_state {
	struct llmio_store *s;
	struct io_req *ios;   /* depth slots */
	struct io_req **free; /* free slots */
	struct io_req **evs;
	unsigned nfree;
	struct op_fifo q[2];     /* Q_READ, Q_WRITE */
	uint64_t seq[STORE_OPS]; /* per slot: when it was taken (the order of the cmd ring) */
	uint64_t next_seq;
	uint64_t barrier;  /* seq of the oldest flush queued (UINT64_MAX: none) */
	uint32_t nflush;   /* flushes queued */
	unsigned inflight; /* queued to the engine, not reaped */
	bool dirty;        /* queued since the last commit */
	uint64_t busy_t0;
	int broken; /* the engine failed (commit or reap): -errno, every operation fails */
	/*
	 * Operations whose last piece is done, completed (pushed on done) only once nothing on
	 * this thread will touch them again: the caller reuses a slot as soon as it reaps it.
	 */
	uint32_t fin[STORE_OPS];
	uint32_t nfin;
};

static void eventfd_kick(int fd)
{
	uint64_t one = 1;

	while (write(fd, &one, sizeof(one)) < 0 && errno == EINTR)
		;
}

void store_wake_io(struct llmio_store *s)
{
	if (__atomic_load_n(&s->io_sleeping, __ATOMIC_SEQ_CST))
		eventfd_kick(s->wake_fd);
}

void store_hold_io(struct llmio_store *s, bool hold)
{
	__atomic_store_n(&s->hold, hold, __ATOMIC_SEQ_CST);
	if (!hold)
		eventfd_kick(s->wake_fd);
}

static void wake_caller(struct llmio_store *s)
{
	if (__atomic_load_n(&s->caller_waiting, __ATOMIC_SEQ_CST))
		eventfd_kick(s->done_fd);
}

static void complete(struct io_state *st, uint32_t idx)
{
	struct llmio_store *s = st->s;
	struct store_op *op = &s->ops[idx];
	bool event = op->event; /* read before the push: the caller may reuse the slot at once */

	/* A failed prefetch gives its buffers back now: no get will consume them. */
	if (op->type == STORE_OP_PREFETCH && op->res)
		for (uint32_t k = 0; k < op->ext.npieces; k++)
			if (op->bufs[k] != STORE_NO_BUF) {
				staging_put(&s->stg, op->bufs[k]);
				op->bufs[k] = STORE_NO_BUF;
			}
	op->io_done = true;
	op->live = false;
	store_ring_push(&s->done, idx);
	wake_caller(s);
	if (event && __atomic_load_n(&s->ev_armed, __ATOMIC_RELAXED))
		eventfd_kick(s->ev_fd);
}

/* The op's pieces are all done: complete it at the next safe point (complete_finished). */
static void finish(struct io_state *st, uint32_t idx)
{
	st->fin[st->nfin++] = idx;
}

/* How many were completed: an operation waiting on one of them may go on now. */
static uint32_t complete_finished(struct io_state *st)
{
	uint32_t n = st->nfin;

	for (uint32_t i = 0; i < n; i++)
		complete(st, st->fin[i]);
	st->nfin = 0;
	return n;
}

static void fail(struct store_op *op, int res, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
static void fail(struct store_op *op, int res, const char *fmt, ...)
{
	va_list ap;

	if (op->res)
		return; /* the first cause is the one to read */
	op->res = res;
	va_start(ap, fmt);
	vsnprintf(op->msg, sizeof(op->msg), fmt, ap);
	va_end(ap);
}

/*
 * The tag of an I/O: the piece number, and which part of the piece it moves.  A piece whose
 * caller memory lines up with the file (the caller's address of every aligned logical offset is
 * aligned: the put placed the data at an offset congruent to its address) moves its whole
 * alignment units straight between the caller's buffer and the device (DIRECT); the partial
 * unit at its head (the extent's pad before the data) and at its tail (the data ends inside its
 * last unit) go through one staging buffer (HEAD, TAIL), so nothing reads or writes outside the
 * caller's tensor.  Other pieces take a staging buffer whole (no flag).  Byte j of a piece's
 * staging buffer is logical byte lo + j of the piece.
 */
#define TAG_DIRECT (1ull << 32)
#define TAG_HEAD   (1ull << 33)
#define TAG_TAIL   (1ull << 34)

/* The caller's memory: logical data byte d is at mem + (d - first). */
static char *caller_mem(const struct store_op *op)
{
	return op->type == STORE_OP_PUT   ? (char *)(uintptr_t)op->src
	       : op->type == STORE_OP_GET ? (char *)op->dst
	                                  : NULL;
}

/* The piece's I/O is done (or failed): check its bytes, move the data, free what it held. */
static void piece_done(struct io_state *st, struct io_req *io)
{
	struct llmio_store *s = st->s;
	uint32_t idx = (uint32_t)io->priv, k = (uint32_t)io->tag;
	struct store_op *op = &s->ops[idx];
	uint64_t lo, hi, d0, d1, ilo, c0, c1;
	uint16_t b = io->buf_idx;
	bool keep = false;

	store_piece(s, &op->ext, op->len, k, &lo, &hi, &d0, &d1);
	ilo = io->tag & TAG_TAIL ? hi - io->len : lo; /* a staged I/O's logical start */
	c0 = d0 > ilo ? d0 : ilo;                     /* and the data bytes it holds */
	c1 = d1 < ilo + io->len ? d1 : ilo + io->len;
	if (io->res > 0)
		store_add(io->op == ENGINE_OP_WRITE ? &s->dev_written : &s->dev_read,
		          (uint64_t)io->res);
	if (io->res != (int64_t)io->len) {
		const char *what = io->op == ENGINE_OP_WRITE ? "write" : "read";
		const char *path = s->tg[io->file].path;

		if (io->res < 0)
			fail(op, (int)io->res, "%s of %u bytes at offset %llu of %s failed: %s",
			     what, io->len, (unsigned long long)io->off, path,
			     strerror((int)-io->res));
		else
			fail(op, -EIO,
			     "%s of %u bytes at offset %llu of %s moved %lld bytes: the target "
			     "lost its space (truncated, removed or full?)",
			     what, io->len, (unsigned long long)io->off, path, (long long)io->res);
	} else if (io->tag & TAG_DIRECT) {
		store_add(&s->direct_bytes, io->len); /* no copy: the engine used the caller's */
	} else if (op->type == STORE_OP_GET && !op->res && c1 > c0) {
		char *dst = (char *)op->dst + (c0 - (op->ext.start + op->ext.pad));

		if (staging_out(s, b, c0 - lo, dst, c1 - c0))
			fail(op, -EIO, "copying %llu bytes out of GPU staging memory failed",
			     (unsigned long long)(c1 - c0));
		store_add(&s->staged_bytes, c1 - c0);
	} else if (op->type == STORE_OP_PREFETCH) {
		op->bufs[k] = b;
		keep = true;
	}
	/* a head and a tail share their buffer: it is free once both are done */
	if (b != STORE_NO_BUF && --s->stg.users[b] == 0 && !keep)
		staging_put(&s->stg, b);
	st->free[st->nfree++] = io;
	op->ndone++;
	op->inflight--;
	if (op->issued == op->ext.npieces && !op->inflight)
		finish(st, idx);
}

static void busy_edge(struct io_state *st, bool up)
{
	if (up && st->inflight++ == 0)
		st->busy_t0 = now_ns();
	else if (!up && --st->inflight == 0)
		store_add(&st->s->io_busy_ns, now_ns() - st->busy_t0);
}

/*
 * Queue one I/O on the engine (an I/O the engine refuses completes failed).  Its operation
 * counts it in flight already: a piece's first I/O completing at once must not finish the
 * operation before its second one is queued.
 */
static void submit(struct io_state *st, struct io_req *io)
{
	struct llmio_store *s = st->s;
	int q;

	busy_edge(st, true);
	q = s->eng->queue(&s->ctx, io);
	if (q == ENGINE_Q_QUEUED) {
		st->dirty = true;
		return;
	}
	busy_edge(st, false);
	if (q == ENGINE_Q_BUSY)
		io->res = -EAGAIN; /* the engine has iodepth slots and we use no more */
	else if (q < 0)
		io->res = q;
	piece_done(st, io);
}

static struct io_req *io_new(struct io_state *st, uint32_t idx, uint64_t tag, uint64_t lo,
                             uint64_t len, void *buf, uint16_t b)
{
	struct llmio_store *s = st->s;
	struct io_req *io = st->free[--st->nfree];

	io->len = (uint32_t)len;
	store_place(s, lo, &io->file, &io->off);
	io->priv = idx;
	io->tag = tag;
	io->res = 0;
	io->op = s->ops[idx].type == STORE_OP_PUT ? ENGINE_OP_WRITE : ENGINE_OP_READ;
	io->buf = buf;
	io->buf_idx = b;
	if (b != STORE_NO_BUF)
		s->stg.users[b]++;
	return io;
}

/*
 * Fill staging buffer b for the logical run [r0, r1) of a put's piece starting at lo: the data
 * bytes of the run copied in, the rest (alignment padding) zeros, never another tensor's bytes.
 */
static int stage_in(struct llmio_store *s, const struct store_op *op, uint16_t b, uint64_t lo,
                    uint64_t r0, uint64_t r1, uint64_t d0, uint64_t d1)
{
	uint64_t c0 = d0 > r0 ? d0 : r0, c1 = d1 < r1 ? d1 : r1;

	if (c1 <= c0) {
		staging_zero(s, b, r0 - lo, r1 - lo);
		return 0;
	}
	if (staging_in(s, b, c0 - lo, (const char *)op->src + (c0 - (op->ext.start + op->ext.pad)),
	               c1 - c0))
		return -EIO;
	staging_zero(s, b, r0 - lo, c0 - lo);
	staging_zero(s, b, c1 - lo, r1 - lo);
	store_add(&s->staged_bytes, c1 - c0);
	return 0;
}

/*
 * Issue one piece of a PUT, GET or PREFETCH.  false: no slot or buffer now.
 *
 * The piece [lo, hi) with data [d0, d1) is cut at the alignment units of its data: head [lo, hb)
 * (the extent's pad and the first data bytes), body [hb, tb) (whole units), tail [tb, hi) (the
 * last data bytes and padding).  The body goes direct when the caller's memory lines up with the
 * file (a borrowed put or a get from host memory; a COPY put's caller has its buffer back once
 * every piece is issued, a prefetch fills staging); head and tail share one staging buffer.
 * Otherwise, or with fewer I/O slots than the parts need, the whole piece is staged.
 */
static bool issue_piece(struct io_state *st, uint32_t idx)
{
	struct llmio_store *s = st->s;
	struct store_op *op = &s->ops[idx];
	uint32_t k = op->issued;
	uint64_t lo, hi, d0, d1, hb = 0, tb = 0, first = op->ext.start + op->ext.pad;
	struct io_req *io[3];
	unsigned nio = 0, need;
	char *mem = caller_mem(op);
	uint16_t b = STORE_NO_BUF;
	bool body = false;

	store_piece(s, &op->ext, op->len, k, &lo, &hi, &d0, &d1);
	if (mem && !s->stg.engine_mem && !op->wait_copy &&
	    ((uintptr_t)mem - first) % s->align == 0) {
		hb = (d0 + s->align - 1) / s->align * s->align;
		tb = d1 / s->align * s->align;
		body = tb > hb;
	}
	need = body ? 1u + (hb > lo) + (tb < hi) : 1u;
	if (need > s->depth) { /* the parts of one piece must be in flight together */
		body = false;
		need = 1;
	}
	/* all or nothing: the slots and the buffer the piece needs */
	if (st->nfree < need || ((!body || need > 1) && !staging_get(&s->stg, &b)))
		return false;
	if (op->type == STORE_OP_PUT) {
		int rc = body ? 0 : stage_in(s, op, b, lo, lo, hi, d0, d1);

		if (body && hb > lo)
			rc = stage_in(s, op, b, lo, lo, hb, d0, d1);
		if (body && tb < hi && !rc)
			rc = stage_in(s, op, b, lo, tb, hi, d0, d1);
		if (rc) {
			fail(op, -EIO, "copying %llu bytes into GPU staging memory failed",
			     (unsigned long long)(d1 - d0));
			staging_put(&s->stg, b);
			return true; /* advance() sees op->res */
		}
	}
	if (!body) {
		io[nio++] = io_new(st, idx, k, lo, hi - lo, s->stg.buf[b], b);
	} else {
		if (hb > lo)
			io[nio++] = io_new(st, idx, k | TAG_HEAD, lo, hb - lo, s->stg.buf[b], b);
		io[nio++] = io_new(st, idx, k | TAG_DIRECT, hb, tb - hb, mem + (hb - first),
		                   STORE_NO_BUF);
		if (tb < hi)
			io[nio++] = io_new(st, idx, k | TAG_TAIL, tb, hi - tb,
			                   (char *)s->stg.buf[b] + (tb - lo), b);
	}
	op->issued++;
	op->inflight += nio;
	for (unsigned i = 0; i < nio; i++)
		submit(st, io[i]);
	return true;
}

/* A get served from a prefetch's buffers, or a drop of them. */
static void consume_prefetch(struct io_state *st, uint32_t idx)
{
	struct llmio_store *s = st->s;
	struct store_op *op = &s->ops[idx], *pf = &s->ops[op->dep - 1];
	uint64_t lo, hi, d0, d1;

	if (op->type == STORE_OP_GET && pf->res) {
		op->res = pf->res;
		memcpy(op->msg, pf->msg, sizeof(op->msg));
	}
	for (uint32_t k = 0; k < pf->ext.npieces && !pf->res; k++) {
		if (op->type == STORE_OP_GET && !op->res) {
			store_piece(s, &pf->ext, pf->len, k, &lo, &hi, &d0, &d1);
			if (staging_out(s, pf->bufs[k], d0 - lo,
			                (char *)op->dst + (d0 - (pf->ext.start + pf->ext.pad)),
			                d1 - d0))
				fail(op, -EIO,
				     "copying %llu bytes out of GPU staging memory failed",
				     (unsigned long long)(d1 - d0));
			store_add(&s->staged_bytes, d1 - d0);
		}
		staging_put(&s->stg, pf->bufs[k]);
		pf->bufs[k] = STORE_NO_BUF;
	}
	op->issued = op->ext.npieces;
	complete(st, idx);
}

static int sync_all(struct llmio_store *s, struct store_op *op)
{
	for (unsigned i = 0; i < s->ntg; i++) {
		int rc = s->eng->sync ? s->eng->sync(&s->ctx, i) : (fsync(s->fds[i]) ? -errno : 0);

		if (rc) {
			fail(op, rc, "syncing %s failed: %s", s->tg[i].path, strerror(-rc));
			return rc;
		}
	}
	return 0;
}

/* Move a FIFO's head operation on; first: nothing taken before it is still queued (a flush
 * waits for that).  true: it is fully issued (leaves its FIFO). */
static bool advance(struct io_state *st, uint32_t idx, bool first)
{
	struct llmio_store *s = st->s;
	struct store_op *op = &s->ops[idx];

	if (op->dep && !s->ops[op->dep - 1].io_done)
		return false;
	/* A get or prefetch after a put that failed: there is nothing to read (never zeros). */
	if (op->dep && s->ops[op->dep - 1].type == STORE_OP_PUT && s->ops[op->dep - 1].res) {
		fail(op, s->ops[op->dep - 1].res, "its put failed: %s", s->ops[op->dep - 1].msg);
		op->issued = op->ext.npieces;
		complete(st, idx);
		return true;
	}
	switch (op->type) {
	case STORE_OP_FLUSH:
		if (!first || st->inflight)
			return false;
		sync_all(s, op);
		complete(st, idx);
		return true;
	case STORE_OP_DROP:
		consume_prefetch(st, idx);
		return true;
	case STORE_OP_GET:
		if (op->dep && s->ops[op->dep - 1].type == STORE_OP_PREFETCH) {
			consume_prefetch(st, idx);
			return true;
		}
		break;
	default:
		break;
	}
	while (op->issued < op->ext.npieces) {
		if (op->res) { /* a piece failed: issue no more */
			op->issued = op->ext.npieces;
			if (!op->inflight)
				finish(st, idx);
			break;
		}
		if (!issue_piece(st, idx))
			return false;
	}
	if (op->wait_copy && !__atomic_load_n(&op->copied, __ATOMIC_RELAXED)) {
		__atomic_store_n(&op->copied, 1, __ATOMIC_SEQ_CST);
		wake_caller(s);
	}
	return true;
}

static void take_commands(struct io_state *st)
{
	uint32_t idx;

	if (__atomic_load_n(&st->s->hold, __ATOMIC_ACQUIRE))
		return;
	while (store_ring_pop(&st->s->cmd, &idx)) {
		struct store_op *op = &st->s->ops[idx];

		op->issued = op->inflight = op->ndone = 0;
		op->res = 0;
		op->msg[0] = '\0';
		op->io_done = false;
		op->live = true;
		if (st->broken) {
			fail(op, st->broken, "engine %s failed earlier: %s", st->s->eng->name,
			     strerror(-st->broken));
			complete(st, idx);
			continue;
		}
		bool wr = op->type == STORE_OP_PUT || op->type == STORE_OP_FLUSH;
		struct op_fifo *q = &st->q[wr ? Q_WRITE : Q_READ];

		st->seq[idx] = st->next_seq++;
		if (op->type == STORE_OP_FLUSH && !st->nflush++)
			st->barrier = st->seq[idx];
		q->slot[(q->head + q->n++) % STORE_OPS] = idx;
	}
}

/*
 * The engine itself failed (not one I/O: commit or reap did): the I/Os in flight are lost, so
 * every operation not complete fails with the cause, and so does every later one.
 */
static void engine_broke(struct io_state *st, int rc)
{
	struct llmio_store *s = st->s;

	st->broken = rc;
	st->nfin = 0; /* live still: completed below */
	for (uint32_t i = 0; i < STORE_OPS; i++) {
		struct store_op *op = &s->ops[i];

		if (!op->live)
			continue;
		fail(op, rc, "engine %s failed with I/O in flight: %s", s->eng->name,
		     strerror(-rc));
		op->issued = op->ext.npieces;
		op->inflight = 0;
		complete(st, i);
	}
	st->q[Q_READ].n = st->q[Q_WRITE].n = 0;
	st->nflush = 0;
	st->barrier = UINT64_MAX;
	st->inflight = 0;
}

static uint32_t fifo_head(const struct op_fifo *q)
{
	return q->slot[q->head % STORE_OPS];
}

/* The seq of the first flush in the write FIFO (one is there: nflush > 0). */
static uint64_t next_flush(const struct io_state *st)
{
	const struct op_fifo *w = &st->q[Q_WRITE];

	for (uint32_t i = 0; i < w->n; i++) {
		uint32_t idx = w->slot[(w->head + i) % STORE_OPS];

		if (st->s->ops[idx].type == STORE_OP_FLUSH)
			return st->seq[idx];
	}
	return UINT64_MAX;
}

static void progress(struct io_state *st)
{
	struct op_fifo *r = &st->q[Q_READ], *w = &st->q[Q_WRITE];

	while (r->n) {
		uint32_t idx = fifo_head(r);

		if (st->seq[idx] > st->barrier || !advance(st, idx, true))
			break;
		r->head++;
		r->n--;
	}
	while (w->n) {
		uint32_t idx = fifo_head(w);
		/* read before advance(): a completed flush's slot is the caller's again */
		bool flush = st->s->ops[idx].type == STORE_OP_FLUSH;

		/* a flush waits for the reads taken before it as well */
		if (!advance(st, idx, !r->n || st->seq[fifo_head(r)] > st->seq[idx]))
			break;
		w->head++;
		w->n--;
		if (flush)
			st->barrier = --st->nflush ? next_flush(st) : UINT64_MAX;
	}
}

static int reap(struct io_state *st, unsigned min)
{
	struct llmio_store *s = st->s;
	int n = s->eng->reap(&s->ctx, min, st->evs, s->depth);

	if (n < 0)
		return n;
	for (int i = 0; i < n; i++) {
		busy_edge(st, false);
		piece_done(st, st->evs[i]);
	}
	return 0;
}

/* Sleep until the caller pushes something (or asks us to stop). */
static void idle(struct llmio_store *s)
{
	uint64_t v;

	__atomic_store_n(&s->io_sleeping, 1, __ATOMIC_SEQ_CST);
	if ((store_ring_empty(&s->cmd) || __atomic_load_n(&s->hold, __ATOMIC_SEQ_CST)) &&
	    !__atomic_load_n(&s->stop, __ATOMIC_SEQ_CST))
		while (read(s->wake_fd, &v, sizeof(v)) < 0 && errno == EINTR)
			;
	__atomic_store_n(&s->io_sleeping, 0, __ATOMIC_SEQ_CST);
}

static int start(struct llmio_store *s, struct io_state *st, struct store_op *op)
{
	struct llmio_error e = {0};
	struct engine_setup su;
	int rc;

	st->s = s;
	st->barrier = UINT64_MAX;
	st->ios = calloc(s->depth, sizeof(*st->ios));
	st->free = calloc(s->depth, sizeof(*st->free));
	st->evs = calloc(s->depth, sizeof(*st->evs));
	if (!st->ios || !st->free || !st->evs)
		return -ENOMEM;
	for (unsigned i = 0; i < s->depth; i++)
		st->free[st->nfree++] = &st->ios[i];
	/* Buffers and engine on this thread, as the worker does (GPU contexts, io_uring). */
	rc = staging_alloc(s, &e);
	if (rc) {
		snprintf(op->msg, sizeof(op->msg), "%.*s", (int)sizeof(op->msg) - 1, e.msg);
		return rc;
	}
	su = (struct engine_setup){
	        .fds = s->fds,
	        .file_sizes = s->sizes,
	        .nfiles = s->ntg,
	        .bufs = s->stg.buf,
	        .nbufs = s->stg.nbufs,
	        .buf_len = s->stg.buf_len,
	        /* GPU engines keep a slot per buffer, indexed by buf_idx */
	        .iodepth = s->stg.nbufs,
	        .nworkers = 1,
	        .direct = s->o.direct,
	        .writable = true,
	        .dev_io_poll = -1,
	        .devname = s->tg[0].t.dev.name,
	        .opts = s->eng_opts,
	};
	rc = s->eng->init(&s->ctx, &su, &e);
	if (rc)
		snprintf(op->msg, sizeof(op->msg), "engine %s: %.300s", s->eng->name, e.msg);
	return rc;
}

void *store_io_main(void *arg)
{
	struct llmio_store *s = arg;
	struct io_state st = {0};
	uint32_t idx;
	int rc;

	/* The first command is the start-up: its result tells create() whether we run. */
	while (!store_ring_pop(&s->cmd, &idx))
		idle(s);
	rc = start(s, &st, &s->ops[idx]);
	s->ops[idx].res = rc;
	s->ops[idx].io_done = true;
	store_ring_push(&s->done, idx);
	eventfd_kick(s->done_fd);
	if (rc)
		goto out;

	for (;;) {
		uint32_t completed;

		take_commands(&st);
		progress(&st);
		completed = complete_finished(&st);
		if (st.dirty && s->eng->commit) {
			rc = s->eng->commit(&s->ctx);
			if (rc < 0)
				engine_broke(&st, rc);
		}
		st.dirty = false;
		if (st.inflight) {
			rc = reap(&st, 1);
			complete_finished(&st);
			if (rc < 0)
				engine_broke(&st, rc);
			continue;
		}
		if (completed ||
		    (!store_ring_empty(&s->cmd) && !__atomic_load_n(&s->hold, __ATOMIC_SEQ_CST)))
			continue;
		if (!st.q[Q_READ].n && !st.q[Q_WRITE].n &&
		    __atomic_load_n(&s->stop, __ATOMIC_SEQ_CST))
			break;
		idle(s);
	}
	s->eng->cleanup(&s->ctx);
out:
	staging_release(s);
	free(st.ios);
	free(st.free);
	free(st.evs);
	return NULL;
}
