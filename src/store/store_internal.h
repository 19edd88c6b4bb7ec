/* SPDX-License-Identifier: MIT */
/*
 * The tensor store's internals (docs/store.md, "Internals").  Two threads share a store:
 *
 *  - the caller's thread owns the handle table, the extent allocator, the read-ahead window
 *    and the event queue (store.c, extent.c);
 *  - the I/O thread owns the engine instance, the staging pool and the progress of every
 *    operation (io_thread.c, staging.c).
 *
 * They talk through preallocated operation slots (struct store_op) and two single-producer
 * single-consumer rings of slot numbers: `cmd` (caller -> I/O thread) and `done` (I/O thread
 * -> caller).  A slot's caller fields are written before it is pushed on `cmd` and its I/O
 * fields are read by the caller only after it came back on `done` (the rings publish with
 * release / acquire), so no slot field is ever touched by both threads at once.  Each side
 * sleeps on an eventfd only when it has nothing to do, and the other side writes it only when
 * the sleeper said it is asleep: no syscall per operation beyond the engine's own.
 */
#ifndef LLMIO_STORE_INTERNAL_H
#define LLMIO_STORE_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "job/target.h"
#include "engine/engine.h"
#include "llmio/store.h"

/* Operation slots (a power of two: the rings never fill, at most STORE_OPS slots exist). */
#define STORE_OPS 1024u

#define STORE_NO_BUF 0xffffu

enum store_op_type {
	STORE_OP_PUT = 1,
	STORE_OP_GET,      /* from storage, or from a prefetch's buffers (src) */
	STORE_OP_PREFETCH, /* read into staging buffers that stay held (the memory tier) */
	STORE_OP_DROP,     /* give a prefetch's buffers back (release, a failed get) */
	STORE_OP_FLUSH,    /* every earlier operation done, files synced */
	STORE_OP_START,    /* the I/O thread's own start-up result (engine init) */
};

/*
 * Where a tensor lives: a run of the logical space striped over the targets.  Its data starts
 * pad bytes into the run: a borrowed put from host memory is placed at a logical offset
 * congruent to its buffer's address modulo the alignment (pad = address % alignment), so that
 * every whole alignment unit of the file maps onto an aligned run of the caller's memory and
 * moves with O_DIRECT straight from or into it; only the partial units at the head and the
 * tail go through staging.
 */
struct store_extent {
	uint64_t start;   /* logical byte offset (a multiple of the alignment) */
	uint64_t alen;    /* bytes reserved: pad + len rounded up to the alignment */
	uint32_t npieces; /* stripe units it touches = staging buffers at a time */
	uint32_t pad;     /* the data starts at start + pad (< the alignment) */
};

struct store_op {
	/* Written by the caller before the slot is pushed on cmd. */
	uint8_t type;   /* enum store_op_type */
	bool event;     /* queue a public event when it completes */
	bool wait_copy; /* a COPY put: wake the caller once the data is copied */
	uint64_t handle;
	const void *src; /* PUT: caller's data */
	void *dst;       /* GET: caller's buffer */
	uint64_t len;
	struct store_extent ext;
	uint32_t dep; /* slot + 1 of an operation that must be done first (GET, DROP), or 0 */

	/* Caller-only bookkeeping. */
	uint32_t refs; /* later operations naming this one as dep */
	bool reaped;   /* came back on done */
	bool keep;     /* PREFETCH: the slot lives until its buffers are consumed */

	/* Written by the I/O thread; the caller reads them after the slot came back on done. */
	uint32_t issued, inflight, ndone;
	int res;        /* 0 or -errno */
	bool io_done;   /* I/O thread only: complete (deps check it) */
	bool live;      /* I/O thread only: taken from cmd, not complete yet */
	int copied;     /* atomic: a COPY put's data is all in staging */
	uint16_t *bufs; /* PREFETCH: the staging buffer of each piece */
	char msg[384];  /* the cause of a failure */
};

/* A single-producer single-consumer ring of slot numbers. */
struct store_ring {
	uint32_t slot[STORE_OPS];
	uint32_t head; /* atomic: next to pop (consumer) */
	uint32_t tail; /* atomic: next to push (producer) */
};

void store_ring_push(struct store_ring *r, uint32_t v);
bool store_ring_pop(struct store_ring *r, uint32_t *v);
bool store_ring_empty(const struct store_ring *r);

/* The extent allocator: first fit over a sorted list of free runs (caller thread). */
struct store_extents {
	uint64_t total;  /* logical bytes */
	uint64_t align;  /* allocation unit */
	uint64_t nfree;  /* free bytes */
	uint64_t *start; /* free runs, sorted, never adjacent */
	uint64_t *len;
	size_t n, cap;
};

int extents_init(struct store_extents *x, uint64_t total, uint64_t align);
void extents_fini(struct store_extents *x);
/* 0 with *start, -ENOSPC (no run long enough), or -ENOMEM. */
int extents_alloc(struct store_extents *x, uint64_t len, uint64_t *start);
void extents_free(struct store_extents *x, uint64_t start, uint64_t len);
/* Room for `runs` free runs, so that extents_free() never allocates.  0 or -ENOMEM. */
int extents_reserve(struct store_extents *x, size_t runs);
uint64_t extents_largest(const struct store_extents *x);

/* The staging pool: fixed buffers of stripe_size bytes, owned by the I/O thread. */
struct store_staging {
	void **buf;     /* nbufs buffers */
	uint16_t *free; /* stack of free buffer numbers */
	unsigned nbufs, nfree;
	size_t buf_len;
	uint8_t *users;  /* I/Os in flight on each buffer (a piece's head and tail share one) */
	void *host;      /* one allocation behind buf[] for host engines */
	bool engine_mem; /* the engine's buf_alloc made them (GPU memory) */
	uint64_t peak;   /* most buffers in use at once */
};

struct llmio_store;
int staging_alloc(struct llmio_store *s, struct llmio_error *e);
void staging_release(struct llmio_store *s);
static inline bool staging_get(struct store_staging *p, uint16_t *idx)
{
	if (!p->nfree)
		return false;
	*idx = p->free[--p->nfree];
	if (p->nbufs - p->nfree > p->peak) /* read by stats() on the caller's thread */
		__atomic_store_n(&p->peak, p->nbufs - p->nfree, __ATOMIC_RELAXED);
	return true;
}
static inline void staging_put(struct store_staging *p, uint16_t idx)
{
	p->free[p->nfree++] = idx;
}
/* Copy between caller memory and staging buffer idx (host memcpy, or the GPU's copy). */
int staging_in(struct llmio_store *s, uint16_t idx, size_t at, const void *src, size_t n);
int staging_out(struct llmio_store *s, uint16_t idx, size_t at, void *dst, size_t n);
void staging_zero(struct llmio_store *s, uint16_t idx, size_t from, size_t to);

/* One tensor of the handle table (caller thread). */
struct store_tensor {
	uint64_t handle; /* 0: the slot is free */
	uint64_t len;
	struct store_extent ext;
	uint32_t put_op;  /* slot + 1 of its put until reaped, else 0 */
	uint32_t pf_op;   /* slot + 1 of the prefetch whose buffers hold it, else 0 */
	uint32_t pending; /* its operations not reaped yet */
	uint32_t prev;    /* put order: index + 1 of the tensor put before it, or 0 */
	uint32_t next;
	bool released;
	int err;             /* its put failed: gets return this */
	char *errmsg;        /* and this (allocated on failure only) */
	uint32_t gets_async; /* its gets with wait = false not reaped yet (llmio_store_wait) */
	int get_err;         /* the first of them that failed since the last wait */
	char *get_errmsg;    /* its cause (allocated on failure only) */
};

struct store_target {
	struct target t;
	char path[4096];    /* the file the store uses */
	char workdir[4096]; /* llmio's directory it was made in ("" for a named file) */
	bool created;       /* ours: removed on destroy */
	int lock_fd;        /* created: holds flock(LOCK_EX) on the file while we live, else -1 */
	uint64_t size;      /* bytes used (capacity) */
};

struct store_event_queue {
	struct llmio_store_event *ev;
	size_t head, n, cap;
};

struct llmio_store {
	struct llmio_store_opts o;
	const struct engine_ops *eng;
	void *eng_opts;
	struct engine_ctx ctx;

	struct store_target *tg;
	unsigned ntg;
	int *fds;
	uint64_t *sizes;
	uint64_t stripe, align;
	unsigned depth; /* I/Os in flight at most */

	struct store_staging stg;

	/* Shared: slots and rings. */
	struct store_op *ops;
	uint16_t *op_bufs;  /* STORE_OPS x pf_pieces: each prefetch's buffers */
	unsigned pf_pieces; /* the most pieces of a tensor read ahead */
	struct store_ring cmd, done;
	int wake_fd, done_fd, ev_fd;
	int io_sleeping, caller_waiting, ev_armed, stop; /* atomics */
	int hold; /* atomic; tests only (store_hold_io): the I/O thread takes no command */
	pthread_t thread;
	bool thread_started;

	/* Caller thread. */
	uint32_t free_ops[STORE_OPS];
	uint32_t nfree_ops;
	struct store_tensor *tensors;
	size_t ntensors, cap_tensors;
	uint32_t free_tensor; /* index + 1 of a free-list of table slots, or 0 */
	uint32_t zombies;     /* released tensors waiting for their operations */
	uint32_t gen;
	uint32_t first, last; /* put order of live tensors (index + 1) */
	struct store_extents ext;
	struct store_event_queue evq;
	/* Read-ahead along the order hint. */
	enum llmio_store_order order;
	uint64_t *hint;
	size_t nhint, hint_pos;
	uint32_t ra_from; /* REVERSE: index + 1 of the tensor the next read-ahead starts at */
	uint64_t ra_used; /* staging bytes held or being filled by read-ahead */
	uint64_t ra_limit;
	int flush_err; /* the first put that failed since the last flush */
	char flush_msg[LLMIO_ERROR_MSG_MAX - 64];

	/* Statistics: the caller's, and the I/O thread's (atomics). */
	struct llmio_store_stats st;
	uint64_t dev_written, dev_read, io_busy_ns;
	uint64_t staged_bytes; /* copied between callers' memory and staging */
	uint64_t direct_bytes; /* moved by the engine straight from / into callers' memory */
};

/* io_thread.c */
void *store_io_main(void *arg);
/* Wake the I/O thread if it sleeps (after pushing on cmd). */
void store_wake_io(struct llmio_store *s);
/*
 * Tests only: while held, the I/O thread takes no new command (those pushed wait on cmd), so a
 * test can queue operations behind one whose outcome is known (a put that will fail) without
 * depending on timing.  Releasing the hold wakes the thread.
 */
void store_hold_io(struct llmio_store *s, bool hold);

/* targets.c */
int store_targets_open(struct llmio_store *s, struct llmio_error *e);
void store_targets_close(struct llmio_store *s);
/* (file, offset) of logical byte off, and bytes to the end of its stripe unit. */
void store_place(const struct llmio_store *s, uint64_t off, uint16_t *file, uint64_t *foff);

/*
 * Piece k of an extent (its part of one stripe unit): logical [lo, hi), of which [d0, d1) is
 * the tensor's data (the rest is alignment padding before and after it).  Logical byte d of
 * the data is byte d - (start + pad) of the caller's buffer.
 */
void store_piece(const struct llmio_store *s, const struct store_extent *x, uint64_t len,
                 uint32_t k, uint64_t *lo, uint64_t *hi, uint64_t *d0, uint64_t *d1);

static inline uint64_t store_load(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}
static inline void store_add(uint64_t *p, uint64_t v)
{
	__atomic_store_n(p, __atomic_load_n(p, __ATOMIC_RELAXED) + v, __ATOMIC_RELAXED);
}

#endif
