/* SPDX-License-Identifier: MIT */
/*
 * The tensor store's API (include/llmio/store.h; docs/store.md): the caller's side.  It owns
 * the handle table, the extent allocator and the read-ahead window, turns each call into an
 * operation slot pushed to the I/O thread (io_thread.c), and reaps the slots that come back:
 * tensor state, statistics and the public event queue are updated there, on the caller's
 * thread, so none of them needs a lock.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/error.h"
#include "store/store_internal.h"

#define DEF_CAPACITY (1ull << 30)
#define DEF_STRIPE   (1ull << 20)
#define DEF_STAGING  (64ull << 20)
#define DEF_IODEPTH  32u
#define ALIGN        4096u
#define MAX_STRIPE   (64ull << 20) /* one I/O (struct io_req.len is 32 bits) */
#define MAX_BUFS     4096u         /* staging buffers (buffer numbers are 16 bits) */
/* Slots kept free of read-ahead, so that a get or a put never waits for a prefetch's slot. */
#define RA_SLOT_RESERVE 16u

void llmio_store_opts_init(struct llmio_store_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->opts_size = sizeof(*o);
	o->capacity = DEF_CAPACITY;
	o->stripe_size = DEF_STRIPE;
	o->direct = true;
	o->iodepth = DEF_IODEPTH;
	o->staging_bytes = DEF_STAGING;
}

/* ---- tensors ------------------------------------------------------------------------- */

static void reap_all(struct llmio_store *s);

static struct store_tensor *lookup(struct llmio_store *s, uint64_t h)
{
	uint64_t i = (h & 0xffffffffu) - 1;

	if (!h || i >= s->ntensors || s->tensors[i].handle != h || s->tensors[i].released)
		return NULL;
	return &s->tensors[i];
}

/* The tensor an operation names (released or not: it lives until its operations are reaped). */
static struct store_tensor *tensor_of(struct llmio_store *s, const struct store_op *op)
{
	uint64_t i = (op->handle & 0xffffffffu) - 1;

	return i < s->ntensors && s->tensors[i].handle == op->handle ? &s->tensors[i] : NULL;
}

static int unknown(struct llmio_error *e, const char *what, uint64_t h)
{
	return llmio_err(e, -ENOENT,
	                 "%s of tensor %#llx: no such tensor (never put, or released); a handle "
	                 "is valid from its put until its release",
	                 what, (unsigned long long)h);
}

/* The live tensor a call names, after taking in what the I/O thread finished. */
static int tensor_arg(struct llmio_store *s, uint64_t h, const char *what, struct store_tensor **t,
                      struct llmio_error *e)
{
	if (!s)
		return llmio_err(e, -EINVAL, "%s: no store", what);
	reap_all(s);
	*t = lookup(s, h);
	return *t ? 0 : unknown(e, what, h);
}

static int tensor_new(struct llmio_store *s, uint32_t *idx)
{
	if (s->free_tensor) {
		*idx = s->free_tensor - 1;
		s->free_tensor = s->tensors[*idx].next;
		memset(&s->tensors[*idx], 0, sizeof(s->tensors[*idx]));
		return 0;
	}
	if (s->ntensors == s->cap_tensors) {
		size_t cap = s->cap_tensors ? s->cap_tensors * 2 : 256;
		struct store_tensor *t;

		if (cap > 0xffffffffu)
			return -ENOMEM;
		t = realloc(s->tensors, cap * sizeof(*t));
		if (!t)
			return -ENOMEM;
		s->tensors = t;
		s->cap_tensors = cap;
	}
	*idx = (uint32_t)s->ntensors++;
	memset(&s->tensors[*idx], 0, sizeof(s->tensors[*idx]));
	return 0;
}

/* Unlink a tensor from the put order (it will never be read ahead again). */
static void order_unlink(struct llmio_store *s, uint32_t i)
{
	struct store_tensor *t = &s->tensors[i];

	if (s->ra_from == i + 1)
		s->ra_from = t->prev;
	if (t->prev)
		s->tensors[t->prev - 1].next = t->next;
	else
		s->first = t->next;
	if (t->next)
		s->tensors[t->next - 1].prev = t->prev;
	else
		s->last = t->prev;
	t->prev = t->next = 0;
}

/* A released tensor whose operations are all reaped: its extent and slot are free again. */
static void tensor_maybe_free(struct llmio_store *s, struct store_tensor *t)
{
	uint32_t i = (uint32_t)(t - s->tensors);

	if (!t->released || t->pending)
		return;
	s->zombies--;
	extents_free(&s->ext, t->ext.start, t->ext.alen);
	free(t->errmsg);
	free(t->get_errmsg);
	memset(t, 0, sizeof(*t));
	t->next = s->free_tensor;
	s->free_tensor = i + 1;
}

static uint64_t staging_of(const struct llmio_store *s, const struct store_tensor *t)
{
	return (uint64_t)t->ext.npieces * s->stripe;
}

/* ---- operation slots ----------------------------------------------------------------- */

static void op_maybe_free(struct llmio_store *s, uint32_t idx)
{
	struct store_op *op = &s->ops[idx];

	if (op->reaped && !op->refs && !op->keep) {
		op->type = 0;
		s->free_ops[s->nfree_ops++] = idx;
	}
}

static void event_push(struct llmio_store *s, uint64_t h, int type, int res)
{
	struct store_event_queue *q = &s->evq;

	if (q->n == q->cap) {
		size_t cap = q->cap ? q->cap * 2 : 256;
		struct llmio_store_event *ev = malloc(cap * sizeof(*ev));

		if (!ev)
			return; /* cannot happen in practice; the tensor's state still says it */
		for (size_t i = 0; i < q->n; i++)
			ev[i] = q->ev[(q->head + i) % q->cap];
		free(q->ev);
		q->ev = ev;
		q->head = 0;
		q->cap = cap;
	}
	q->ev[(q->head + q->n++) % q->cap] = (struct llmio_store_event){h, type, res};
}

/* One slot came back from the I/O thread. */
static void reaped(struct llmio_store *s, uint32_t idx)
{
	struct store_op *op = &s->ops[idx];
	struct store_tensor *t = tensor_of(s, op);
	struct store_op *dep = op->dep ? &s->ops[op->dep - 1] : NULL;

	op->reaped = true;
	switch (op->type) {
	case STORE_OP_PUT:
		if (t && t->put_op == idx + 1)
			t->put_op = 0;
		if (op->res && t) {
			t->err = op->res;
			free(t->errmsg);
			t->errmsg = strdup(op->msg);
		}
		if (op->res && !s->flush_err) {
			s->flush_err = op->res;
			snprintf(s->flush_msg, sizeof(s->flush_msg), "put of tensor %#llx: %s",
			         (unsigned long long)op->handle, op->msg);
		}
		if (op->event)
			event_push(s, op->handle,
			           op->res ? LLMIO_STORE_EV_ERROR : LLMIO_STORE_EV_PUT, op->res);
		break;
	case STORE_OP_GET:
		if (!op->res)
			s->st.bytes_got += op->len;
		if (op->event && t) { /* wait = false: llmio_store_wait() may ask for it */
			t->gets_async--;
			if (op->res && !t->get_err) {
				t->get_err = op->res;
				free(t->get_errmsg);
				t->get_errmsg = strdup(op->msg);
			}
		}
		if (op->event)
			event_push(s, op->handle,
			           op->res ? LLMIO_STORE_EV_ERROR : LLMIO_STORE_EV_GOT, op->res);
		break;
	case STORE_OP_PREFETCH:
		if (op->res && t && t->pf_op == idx + 1) {
			/* nobody consumes it: its buffers are back in the pool, a get reads again
			 */
			t->pf_op = 0;
			t->pending--; /* the memory-tier copy it would have left */
			s->ra_used -= staging_of(s, t);
		}
		if (!t || t->pf_op != idx + 1)
			op->keep = op->refs > 0; /* freed now, or when its consumer is reaped */
		break;
	default:
		break;
	}
	if (dep) {
		dep->refs--;
		if (dep->type == STORE_OP_PREFETCH)
			dep->keep = false; /* its buffers were consumed (get, drop) */
		op_maybe_free(s, op->dep - 1);
	}
	if (t) {
		t->pending--;
		tensor_maybe_free(s, t);
	}
	op_maybe_free(s, idx);
}

static void reap_all(struct llmio_store *s)
{
	uint32_t idx;

	while (store_ring_pop(&s->done, &idx))
		reaped(s, idx);
}

/* Block until the I/O thread pushed something on done (or set a copied flag). */
static void wait_io(struct llmio_store *s, const int *flag)
{
	uint64_t v;

	__atomic_store_n(&s->caller_waiting, 1, __ATOMIC_SEQ_CST);
	if (store_ring_empty(&s->done) && !(flag && __atomic_load_n(flag, __ATOMIC_SEQ_CST)))
		while (read(s->done_fd, &v, sizeof(v)) < 0 && errno == EINTR)
			;
	__atomic_store_n(&s->caller_waiting, 0, __ATOMIC_SEQ_CST);
}

static void wait_reaped(struct llmio_store *s, uint32_t idx)
{
	for (reap_all(s); !s->ops[idx].reaped; reap_all(s))
		wait_io(s, NULL);
}

static uint32_t op_new(struct llmio_store *s, uint8_t type, uint64_t h)
{
	uint32_t idx;
	struct store_op *op;

	for (reap_all(s); !s->nfree_ops; reap_all(s))
		wait_io(s, NULL);
	idx = s->free_ops[--s->nfree_ops];
	op = &s->ops[idx];
	op->type = type;
	op->handle = h;
	op->event = op->wait_copy = op->reaped = op->keep = false;
	op->copied = 0;
	op->refs = op->dep = 0;
	op->src = NULL;
	op->dst = NULL;
	op->len = 0;
	memset(&op->ext, 0, sizeof(op->ext));
	return idx;
}

static void op_push(struct llmio_store *s, uint32_t idx)
{
	store_ring_push(&s->cmd, idx);
	store_wake_io(s);
}

/*
 * Run an operation that names no tensor (START, FLUSH) and wait for it; its slot is free again
 * but untouched until the next op_new, so *idx still shows its result and message.
 */
static int op_run(struct llmio_store *s, uint8_t type, uint32_t *idx)
{
	*idx = op_new(s, type, 0);
	op_push(s, *idx);
	wait_reaped(s, *idx);
	return s->ops[*idx].res;
}

static void set_dep(struct llmio_store *s, struct store_op *op, uint32_t dep)
{
	op->dep = dep;
	if (dep)
		s->ops[dep - 1].refs++;
}

/* ---- read-ahead ---------------------------------------------------------------------- */

static void prefetch_start(struct llmio_store *s, struct store_tensor *t)
{
	uint32_t idx = op_new(s, STORE_OP_PREFETCH, t->handle);
	struct store_op *op = &s->ops[idx];

	op->len = t->len;
	op->ext = t->ext;
	op->keep = true;
	op->bufs = s->op_bufs + (size_t)idx * s->pf_pieces;
	for (uint32_t k = 0; k < t->ext.npieces; k++)
		op->bufs[k] = STORE_NO_BUF;
	set_dep(s, op, t->put_op);
	t->pf_op = idx + 1;
	t->pending += 2; /* the read, and the memory-tier copy it leaves until consumed */
	s->ra_used += staging_of(s, t);
	if (s->ra_used > s->st.peak_readahead_bytes)
		s->st.peak_readahead_bytes = s->ra_used;
	op_push(s, idx);
}

/* Can t be read ahead now?  1 yes, 0 no need, -1 the window is full. */
static int ra_fits(struct llmio_store *s, const struct store_tensor *t)
{
	if (t->pf_op || t->err || staging_of(s, t) > s->ra_limit)
		return 0;
	if (s->ra_used + staging_of(s, t) > s->ra_limit || s->nfree_ops < RA_SLOT_RESERVE)
		return -1;
	return 1;
}

/* Read ahead along the order hint, as far as readahead_bytes allows. */
static void read_ahead(struct llmio_store *s)
{
	if (!s->ra_limit)
		return;
	if (s->order == LLMIO_STORE_ORDER_LIST) {
		for (size_t i = s->hint_pos; i < s->nhint; i++) {
			struct store_tensor *t = lookup(s, s->hint[i]);
			int r = t ? ra_fits(s, t) : 0;

			if (r < 0)
				break;
			if (r > 0)
				prefetch_start(s, t);
		}
	} else if (s->order == LLMIO_STORE_ORDER_REVERSE) {
		for (uint32_t i = s->ra_from; i; i = s->tensors[i - 1].prev) {
			int r = ra_fits(s, &s->tensors[i - 1]);

			if (r < 0)
				break;
			if (r > 0)
				prefetch_start(s, &s->tensors[i - 1]);
		}
	}
}

/* A get of t happened: the hint's cursor moves past it. */
static void hint_advance(struct llmio_store *s, struct store_tensor *t)
{
	if (s->order == LLMIO_STORE_ORDER_REVERSE) {
		s->ra_from = t->prev;
	} else if (s->order == LLMIO_STORE_ORDER_LIST) {
		for (size_t i = s->hint_pos; i < s->nhint; i++)
			if (s->hint[i] == t->handle) {
				s->hint_pos = i + 1;
				break;
			}
	}
}

/* ---- create / destroy ---------------------------------------------------------------- */

static int check_opts(struct llmio_store *s, const struct llmio_store_opts *in,
                      struct llmio_error *e)
{
	struct llmio_store_opts *o = &s->o;
	uint64_t pool;

	if (!in || in->opts_size < offsetof(struct llmio_store_opts, targets) ||
	    in->opts_size > sizeof(*o))
		return llmio_err(e, -EINVAL,
		                 "store options: opts_size %zu is not one this llmio knows (%zu); "
		                 "fill them with llmio_store_opts_init()",
		                 in ? in->opts_size : 0, sizeof(*o));
	llmio_store_opts_init(o);
	memcpy(o, in, in->opts_size);
	o->opts_size = sizeof(*o);
	if (!o->targets || !o->ntargets)
		return llmio_err(e, -EINVAL,
		                 "store: no targets; give at least one file, directory "
		                 "or block device");
	if (o->ntargets > 1024)
		return llmio_err(e, -EINVAL,
		                 "store: %u targets, more than the 1024 it stripes over",
		                 o->ntargets);
	if (!o->capacity)
		o->capacity = DEF_CAPACITY;
	if (!o->stripe_size)
		o->stripe_size = DEF_STRIPE;
	if (!o->iodepth)
		o->iodepth = DEF_IODEPTH;
	if (!o->staging_bytes)
		o->staging_bytes = DEF_STAGING;
	if (o->stripe_size % ALIGN || o->stripe_size > MAX_STRIPE)
		return llmio_err(e, -EINVAL,
		                 "store: stripe_size %llu is not a multiple of %u up to %llu; use "
		                 "e.g. 1 MiB",
		                 (unsigned long long)o->stripe_size, ALIGN,
		                 (unsigned long long)MAX_STRIPE);
	o->capacity -= o->capacity % o->stripe_size;
	if (!o->capacity)
		return llmio_err(
		        e, -EINVAL,
		        "store: capacity holds less than one stripe (%llu bytes) per target; "
		        "raise capacity or lower stripe_size",
		        (unsigned long long)o->stripe_size);
	pool = o->fast_bytes && o->fast_bytes < o->staging_bytes ? o->fast_bytes : o->staging_bytes;
	if (pool / o->stripe_size < 2 || pool / o->stripe_size > MAX_BUFS)
		return llmio_err(e, -EINVAL,
		                 "store: staging_bytes %llu (fast_bytes %llu) must hold 2 to 4096 "
		                 "stripes of %llu bytes; change staging_bytes or stripe_size",
		                 (unsigned long long)o->staging_bytes,
		                 (unsigned long long)o->fast_bytes,
		                 (unsigned long long)o->stripe_size);
	s->stripe = o->stripe_size;
	s->align = ALIGN;
	s->stg.nbufs = (unsigned)(pool / o->stripe_size);
	s->stg.buf_len = o->stripe_size;
	if (!o->readahead_bytes)
		o->readahead_bytes = pool / 2;
	/* A buffer always stays for puts and gets from storage, whatever read-ahead holds. */
	if (o->readahead_bytes > pool - o->stripe_size)
		return llmio_err(
		        e, -EINVAL,
		        "store: readahead_bytes %llu leaves no staging buffer for puts; use "
		        "at most %llu (staging minus one stripe)",
		        (unsigned long long)o->readahead_bytes,
		        (unsigned long long)(pool - o->stripe_size));
	s->ra_limit = o->readahead_bytes;
	s->depth = o->iodepth < s->stg.nbufs ? o->iodepth : s->stg.nbufs;
	return 0;
}

static int pick_engine(struct llmio_store *s, struct llmio_error *e)
{
	const char *name = s->o.engine;
	char why[512] = "";
	int rc = 0;

	s->o.engine[sizeof(s->o.engine) - 1] = '\0';
	/* none named: the registry's default, which falls back where io_uring cannot run */
	s->eng = name[0] ? engine_find(name) : engine_default(NULL, 0);
	if (!s->eng)
		return llmio_err(e, -EINVAL, "store: unknown engine %s; `llmio engines` lists them",
		                 name);
	if (name[0] && s->eng->probe)
		rc = s->eng->probe(why, sizeof(why));
	if (rc)
		return llmio_err(e, rc, "store: engine %s cannot run here: %s", name, why);
	if (s->eng->caps & ENGINE_CAP_NO_IO)
		return llmio_err(e, -EINVAL, "store: engine %s moves no data; choose another",
		                 s->eng->name);
	if (!(s->eng->caps & ENGINE_CAP_DIRECT))
		s->o.direct = false; /* mmap: the page cache is its datapath */
	s->eng_opts = calloc(1, s->eng->opts_size ? s->eng->opts_size : 1);
	if (!s->eng_opts)
		return llmio_err(e, -ENOMEM, "out of memory for engine options");
	s->o.engine_opts[sizeof(s->o.engine_opts) - 1] = '\0';
	rc = engine_opts_parse(s->eng, s->o.engine_opts, s->eng_opts, e);
	if (rc)
		llmio_err_prefix(e, "store");
	return rc;
}

static int start_thread(struct llmio_store *s, struct llmio_error *e)
{
	uint32_t idx;
	int rc;

	s->ops = calloc(STORE_OPS, sizeof(*s->ops));
	/* a tensor read ahead needs at most readahead_bytes of staging: that many pieces */
	s->pf_pieces = (unsigned)(s->ra_limit / s->stripe) + 1;
	s->op_bufs = calloc((size_t)STORE_OPS * s->pf_pieces, sizeof(*s->op_bufs));
	s->wake_fd = eventfd(0, EFD_CLOEXEC);
	s->done_fd = eventfd(0, EFD_CLOEXEC);
	s->ev_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (!s->ops || !s->op_bufs)
		return llmio_err(e, -ENOMEM, "out of memory for the store's operation slots");
	if (s->wake_fd < 0 || s->done_fd < 0 || s->ev_fd < 0)
		return llmio_err(e, -errno, "store: eventfd: %s", strerror(errno));
	for (uint32_t i = 0; i < STORE_OPS; i++)
		s->free_ops[s->nfree_ops++] = STORE_OPS - 1 - i;
	rc = pthread_create(&s->thread, NULL, store_io_main, s);
	if (rc)
		return llmio_err(e, -rc, "store: cannot start its I/O thread: %s", strerror(rc));
	s->thread_started = true;
	rc = op_run(s, STORE_OP_START, &idx);
	if (rc)
		return llmio_err(e, rc, "store: %s", s->ops[idx].msg);
	return 0;
}

int llmio_store_create(const struct llmio_store_opts *o, struct llmio_store **out,
                       struct llmio_error *e)
{
	struct llmio_store *s;
	int rc;

	if (!out)
		return llmio_err(e, -EINVAL, "store: out is NULL");
	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return llmio_err(e, -ENOMEM, "out of memory for a store");
	s->wake_fd = s->done_fd = s->ev_fd = -1;
	rc = check_opts(s, o, e);
	if (!rc)
		rc = pick_engine(s, e);
	if (!rc) {
		rc = store_targets_open(s, e);
		s->o.targets = NULL; /* borrowed for the call only */
	}
	if (!rc && extents_init(&s->ext, (uint64_t)s->ntg * s->o.capacity, s->align))
		rc = llmio_err(e, -ENOMEM, "out of memory for the store's extents");
	if (!rc)
		rc = start_thread(s, e);
	if (rc) {
		llmio_store_destroy(s);
		return rc;
	}
	s->st.stats_size = sizeof(s->st);
	*out = s;
	return 0;
}

void llmio_store_destroy(struct llmio_store *s)
{
	if (!s)
		return;
	if (s->thread_started) {
		uint64_t one = 1;

		/* It finishes every operation pushed so far, then leaves; woken either way. */
		__atomic_store_n(&s->hold, 0, __ATOMIC_SEQ_CST);
		__atomic_store_n(&s->stop, 1, __ATOMIC_SEQ_CST);
		while (write(s->wake_fd, &one, sizeof(one)) < 0 && errno == EINTR)
			;
		pthread_join(s->thread, NULL);
	}
	store_targets_close(s);
	extents_fini(&s->ext);
	for (size_t i = 0; i < s->ntensors; i++) {
		free(s->tensors[i].errmsg);
		free(s->tensors[i].get_errmsg);
	}
	free(s->tensors);
	free(s->hint);
	free(s->evq.ev);
	free(s->ops);
	free(s->op_bufs);
	free(s->eng_opts);
	if (s->wake_fd >= 0)
		close(s->wake_fd);
	if (s->done_fd >= 0)
		close(s->done_fd);
	if (s->ev_fd >= 0)
		close(s->ev_fd);
	free(s);
}

/* ---- operations ---------------------------------------------------------------------- */

int llmio_store_put(struct llmio_store *s, const void *buf, uint64_t len, unsigned flags,
                    uint64_t *handle, struct llmio_error *e)
{
	struct store_tensor *t;
	struct store_extent x;
	uint32_t ti, idx;
	int rc;

	if (!s || !handle || (!buf && len))
		return llmio_err(e, -EINVAL, "put: store, buffer and handle are needed");
	*handle = 0;
	if (!len)
		return llmio_err(e, -EINVAL,
		                 "put: a tensor of 0 bytes; keep empty tensors in memory");
	if (flags & ~(unsigned)LLMIO_STORE_BORROW)
		return llmio_err(e, -EINVAL, "put: unknown flags %#x", flags);
	reap_all(s); /* extents of released tensors come back */
	/* a borrowed host buffer: its file offset congruent to its address (store_internal.h) */
	x.pad = flags & LLMIO_STORE_BORROW && !s->eng->buf_alloc
	                ? (uint32_t)((uintptr_t)buf % s->align)
	                : 0;
	x.alen = (x.pad + len + s->align - 1) / s->align * s->align;
	if (extents_reserve(&s->ext, s->ext.n + 2) || tensor_new(s, &ti))
		return llmio_err(e, -ENOMEM, "put: out of memory for the tensor table");
	rc = extents_alloc(&s->ext, x.alen, &x.start);
	/* Released tensors whose I/O is still in flight give their space back when it lands. */
	while (rc && s->zombies) {
		wait_io(s, NULL);
		reap_all(s);
		rc = extents_alloc(&s->ext, x.alen, &x.start);
	}
	if (rc) {
		s->tensors[ti].next = s->free_tensor; /* give the slot back */
		s->tensors[ti].handle = 0;
		s->free_tensor = ti + 1;
		return llmio_err(e, -ENOSPC,
		                 "put: store full: a tensor of %llu bytes needs %llu contiguous "
		                 "bytes on %s%s; %llu of %llu bytes are free (the largest run "
		                 "%llu); release tensors, or raise capacity or add targets",
		                 (unsigned long long)len, (unsigned long long)x.alen, s->tg[0].path,
		                 s->ntg > 1 ? " and the other targets" : "",
		                 (unsigned long long)s->ext.nfree, (unsigned long long)s->ext.total,
		                 (unsigned long long)extents_largest(&s->ext));
	}
	x.npieces = (uint32_t)((x.start + x.alen - 1) / s->stripe - x.start / s->stripe + 1);
	if (++s->gen == 0)
		s->gen = 1;
	t = &s->tensors[ti];
	memset(t, 0, sizeof(*t));
	t->handle = (uint64_t)s->gen << 32 | (ti + 1);
	t->len = len;
	t->ext = x;
	/* put order, for the REVERSE hint */
	t->prev = s->last;
	if (s->last)
		s->tensors[s->last - 1].next = ti + 1;
	else
		s->first = ti + 1;
	s->last = ti + 1;

	idx = op_new(s, STORE_OP_PUT, t->handle);
	t = &s->tensors[ti];
	s->ops[idx].src = buf;
	s->ops[idx].len = len;
	s->ops[idx].ext = x;
	s->ops[idx].event = true;
	s->ops[idx].wait_copy = !(flags & LLMIO_STORE_BORROW);
	t->put_op = idx + 1;
	t->pending = 1;
	s->st.puts++;
	s->st.bytes_put += len;
	*handle = t->handle;
	op_push(s, idx);
	/* COPY: the caller's buffer is free once every piece is in staging (or written). */
	if (s->ops[idx].wait_copy)
		while (!s->ops[idx].reaped &&
		       !__atomic_load_n(&s->ops[idx].copied, __ATOMIC_SEQ_CST)) {
			wait_io(s, &s->ops[idx].copied);
			reap_all(s);
		}
	return 0;
}

int llmio_store_get(struct llmio_store *s, uint64_t handle, void *buf, uint64_t len, bool wait,
                    struct llmio_error *e)
{
	struct store_tensor *t;
	uint32_t idx, ti;
	bool hit, resident;
	uint64_t t0;
	int rc;

	rc = tensor_arg(s, handle, "get", &t, e);
	if (rc)
		return rc;
	if (!buf)
		return llmio_err(e, -EINVAL, "get of tensor %#llx: no buffer",
		                 (unsigned long long)handle);
	if (len != t->len)
		return llmio_err(e, -EINVAL,
		                 "get of tensor %#llx: len %llu differs from its size %llu; pass a "
		                 "buffer of its size",
		                 (unsigned long long)handle, (unsigned long long)len,
		                 (unsigned long long)t->len);
	if (t->err)
		return llmio_err(e, t->err, "get of tensor %#llx: its put failed: %s",
		                 (unsigned long long)handle, t->errmsg ? t->errmsg : "");
	ti = (uint32_t)(t - s->tensors);
	idx = op_new(s, STORE_OP_GET, handle);
	t = &s->tensors[ti];
	hit = t->pf_op != 0;
	resident = hit && s->ops[t->pf_op - 1].reaped;
	s->ops[idx].dst = buf;
	s->ops[idx].len = len;
	s->ops[idx].ext = t->ext;
	s->ops[idx].event = !wait;
	if (hit) {
		set_dep(s, &s->ops[idx], t->pf_op);
		s->ra_used -= staging_of(s, t);
		t->pf_op = 0;
		t->pending--; /* the copy passes to this get */
		s->st.prefetch_hits++;
	} else {
		set_dep(s, &s->ops[idx], t->put_op);
	}
	t->pending++;
	t->gets_async += !wait;
	s->st.gets++;
	t0 = now_ns();
	op_push(s, idx);
	hint_advance(s, t);
	read_ahead(s); /* started before we wait, so it overlaps this get */
	if (!wait)
		return 0;
	wait_reaped(s, idx);
	if (!resident) {
		s->st.stalls++;
		s->st.stall_ns += now_ns() - t0;
	}
	rc = s->ops[idx].res;
	if (rc)
		rc = llmio_err(e, rc, "get of tensor %#llx: %s", (unsigned long long)handle,
		               s->ops[idx].msg);
	return rc;
}

int llmio_store_wait(struct llmio_store *s, uint64_t handle, struct llmio_error *e)
{
	struct store_tensor *t;
	uint32_t ti;
	uint64_t t0;
	int rc = tensor_arg(s, handle, "wait", &t, e);

	if (rc)
		return rc;
	ti = (uint32_t)(t - s->tensors);
	if (t->gets_async) {
		t0 = now_ns();
		while (s->tensors[ti].gets_async) {
			wait_io(s, NULL);
			reap_all(s);
		}
		s->st.stalls++;
		s->st.stall_ns += now_ns() - t0;
	}
	t = &s->tensors[ti];
	if (t->get_err) {
		rc = llmio_err(e, t->get_err, "get of tensor %#llx: %s", (unsigned long long)handle,
		               t->get_errmsg ? t->get_errmsg : "");
		t->get_err = 0;
		free(t->get_errmsg);
		t->get_errmsg = NULL;
	}
	return rc;
}

int llmio_store_prefetch(struct llmio_store *s, uint64_t handle, struct llmio_error *e)
{
	struct store_tensor *t;
	int rc = tensor_arg(s, handle, "prefetch", &t, e);

	if (rc)
		return rc;
	if (t->pf_op)
		return 0;
	if (t->err)
		return llmio_err(e, t->err, "prefetch of tensor %#llx: its put failed: %s",
		                 (unsigned long long)handle, t->errmsg ? t->errmsg : "");
	if (staging_of(s, t) > s->ra_limit)
		return llmio_err(e, -EFBIG,
		                 "prefetch of tensor %#llx: its %llu bytes of staging exceed "
		                 "readahead_bytes (%llu); raise it or get the tensor directly",
		                 (unsigned long long)handle, (unsigned long long)staging_of(s, t),
		                 (unsigned long long)s->ra_limit);
	if (ra_fits(s, t) < 0)
		return llmio_err(e, -EAGAIN,
		                 "prefetch of tensor %#llx: the read-ahead window (readahead_bytes "
		                 "%llu) is full; get or release prefetched tensors first",
		                 (unsigned long long)handle, (unsigned long long)s->ra_limit);
	prefetch_start(s, t);
	return 0;
}

int llmio_store_hint(struct llmio_store *s, enum llmio_store_order order, const uint64_t *handles,
                     size_t n, struct llmio_error *e)
{
	uint64_t *h = NULL;

	if (!s)
		return llmio_err(e, -EINVAL, "hint: no store");
	if (order == LLMIO_STORE_ORDER_LIST && (!handles || !n))
		return llmio_err(e, -EINVAL, "hint: ORDER_LIST needs the handles in order");
	if (order != LLMIO_STORE_ORDER_LIST && order != LLMIO_STORE_ORDER_REVERSE &&
	    order != LLMIO_STORE_ORDER_NONE)
		return llmio_err(e, -EINVAL, "hint: unknown order %d", (int)order);
	if (order == LLMIO_STORE_ORDER_LIST) {
		h = malloc(n * sizeof(*h));
		if (!h)
			return llmio_err(e, -ENOMEM, "hint: out of memory for %zu handles", n);
		memcpy(h, handles, n * sizeof(*h));
	}
	free(s->hint);
	s->hint = h;
	s->nhint = order == LLMIO_STORE_ORDER_LIST ? n : 0;
	s->hint_pos = 0;
	s->order = order;
	/* REVERSE: the next get is expected to be the last put */
	s->ra_from = s->last;
	reap_all(s);
	read_ahead(s);
	return 0;
}

int llmio_store_release(struct llmio_store *s, uint64_t handle, struct llmio_error *e)
{
	struct store_tensor *t;
	uint32_t ti;
	int rc = tensor_arg(s, handle, "release", &t, e);

	if (rc)
		return rc;
	ti = (uint32_t)(t - s->tensors);
	t->released = true;
	s->zombies++; /* until its operations are reaped (tensor_maybe_free) */
	order_unlink(s, ti);
	if (t->pf_op) {
		uint32_t idx = op_new(s, STORE_OP_DROP, handle);

		t = &s->tensors[ti];
		set_dep(s, &s->ops[idx], t->pf_op);
		s->ra_used -= staging_of(s, t);
		t->pf_op = 0; /* the copy passes to the drop (pending stays: -1 +1) */
		op_push(s, idx);
	}
	tensor_maybe_free(s, t);
	read_ahead(s); /* the window may have room again */
	return 0;
}

int llmio_store_poll(struct llmio_store *s, struct llmio_store_event *ev, size_t max)
{
	struct store_event_queue *q;
	uint64_t v;
	size_t n = 0;

	if (!s || (!ev && max))
		return -EINVAL;
	q = &s->evq;
	if (__atomic_load_n(&s->ev_armed, __ATOMIC_RELAXED))
		while (read(s->ev_fd, &v, sizeof(v)) < 0 && errno == EINTR)
			; /* reset first: an event after the drain below kicks it again */
	reap_all(s);
	for (; n < max && q->n; n++, q->n--, q->head = (q->head + 1) % q->cap)
		ev[n] = q->ev[q->head];
	if (q->n && __atomic_load_n(&s->ev_armed, __ATOMIC_RELAXED)) {
		v = 1;
		while (write(s->ev_fd, &v, sizeof(v)) < 0 && errno == EINTR)
			;
	}
	return (int)n;
}

int llmio_store_eventfd(struct llmio_store *s)
{
	uint64_t v = 1;

	if (!s)
		return -EINVAL;
	__atomic_store_n(&s->ev_armed, 1, __ATOMIC_SEQ_CST);
	reap_all(s);
	if (s->evq.n)
		while (write(s->ev_fd, &v, sizeof(v)) < 0 && errno == EINTR)
			;
	return s->ev_fd;
}

int llmio_store_flush(struct llmio_store *s, struct llmio_error *e)
{
	uint32_t idx;
	int rc;

	if (!s)
		return llmio_err(e, -EINVAL, "flush: no store");
	rc = op_run(s, STORE_OP_FLUSH, &idx);
	if (rc)
		return llmio_err(e, rc, "flush: %s", s->ops[idx].msg);
	if (s->flush_err) {
		rc = llmio_err(e, s->flush_err, "flush: %s", s->flush_msg);
		s->flush_err = 0;
	}
	return rc;
}

int llmio_store_stats(struct llmio_store *s, struct llmio_store_stats *st)
{
	struct llmio_store_stats v;
	struct timespec ts;
	clockid_t cid;
	size_t n;

	if (!s || !st || st->stats_size < sizeof(uint64_t) * 3)
		return -EINVAL;
	reap_all(s);
	v = s->st;
	v.stats_size = sizeof(v);
	v.device_bytes_written = store_load(&s->dev_written);
	v.device_bytes_read = store_load(&s->dev_read);
	v.io_busy_ns = store_load(&s->io_busy_ns);
	v.staged_bytes = store_load(&s->staged_bytes);
	v.direct_bytes = store_load(&s->direct_bytes);
	v.overlap = v.io_busy_ns ? 1.0 - (double)v.stall_ns / (double)v.io_busy_ns : 0.0;
	if (v.overlap < 0)
		v.overlap = 0;
	v.peak_staging_bytes = __atomic_load_n(&s->stg.peak, __ATOMIC_RELAXED) * s->stripe;
	if (!pthread_getcpuclockid(s->thread, &cid) && !clock_gettime(cid, &ts))
		v.cpu_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	n = st->stats_size < sizeof(v) ? st->stats_size : sizeof(v);
	memcpy(st, &v, n);
	st->stats_size = n;
	return 0;
}
