/* SPDX-License-Identifier: MIT */
/*
 * Tensor store: asynchronous put/get of byte blobs ("tensors") through any llmio engine, for
 * programs that offload data they will need again (activations saved for backward, SSDTrain;
 * tensors migrated on a plan, G10).
 *
 * docs/store.md walks through the API with an example and describes the internals and every
 * statistic.
 *
 * Threading: one store is driven by one caller thread at a time (the functions are not
 * thread-safe against each other); the store owns one internal I/O thread that runs the engine
 * loop, copies into and out of its staging pool and completes requests.
 *
 * No copy but the edges: with a host engine, a borrowed put is placed at a file offset congruent
 * to its buffer's address modulo 4096, so its whole 4 KiB units move between the buffer and the
 * device with no staging copy; only the partial units at its head and tail (under 4 KiB of the
 * tensor each) go through staging.  A get into a buffer at the same offset in its 4 KiB page as
 * the put's (4096-aligned for an aligned put) moves the same way; other buffers, COPY puts and
 * the GPU engines are copied into or out of staging by the I/O thread.
 *
 * Errors: every function returns 0 (or a count) or a negative errno; when `e` is not NULL it
 * receives one line naming the problem and the fix (struct llmio_error, llmio/common.h).
 */
#ifndef LLMIO_STORE_H
#define LLMIO_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "llmio/common.h"

#ifdef __cplusplus
extern "C" {
#endif

struct llmio_store; /* opaque */

struct llmio_store_opts {
	size_t opts_size; /* sizeof(struct llmio_store_opts) as the caller knows it */

	char engine[32];       /* "" = io_uring when it can run, else psync */
	char engine_opts[512]; /* "key=value,..." engine options, as for jobs */
	/* Targets: files (created and preallocated, removed on destroy), directories (a store file
	 * is created inside), or raw block devices (same consent rules as jobs). */
	const char *const *targets;
	uint32_t ntargets;
	uint64_t capacity;        /* bytes per target to preallocate (default 1 GiB) */
	uint64_t stripe_size;     /* bytes per stripe unit across targets (default 1 MiB) */
	bool direct;              /* O_DIRECT (default true) */
	uint32_t iodepth;         /* I/Os in flight (default 32) */
	uint64_t staging_bytes;   /* aligned staging pool, never exceeded (default 64 MiB) */
	uint64_t fast_bytes;      /* memory tier budget: write-behind + read-ahead (default 0 =
	                             staging_bytes) */
	uint64_t readahead_bytes; /* prefetch window in bytes along the order hint (default
	                             staging_bytes / 2) */
	bool allow_destructive;   /* raw device targets: allow writes */
	bool force;               /* with allow_destructive: even over a filesystem signature */
};

/** Fill o with the defaults (and opts_size).  Zero in a numeric field also means its default. */
LLMIO_API void llmio_store_opts_init(struct llmio_store_opts *o);

/**
 * Open a store: check the options, open (create, preallocate) the targets, allocate the staging
 * pool and start the I/O thread with its engine instance.  The targets array is read during the
 * call only.
 * \return 0 and *out, or -errno with *out NULL and nothing left behind:
 *   -EINVAL  bad options (opts_size, no targets, stripe_size not a multiple of 4096 up to
 *            64 MiB, staging_bytes not 2..4096 stripes, readahead_bytes leaving no staging
 *            buffer for puts, unknown engine or engine option, the null engine, a raw device
 *            without allow_destructive or with a signature without force);
 *   -EEXIST  a named target file exists (the store never writes over a file it did not create);
 *   -ENOSPC  no room for capacity on a target's filesystem;
 *   -ENODEV  the engine chosen cannot run here (the message says why);
 *   -EBUSY   a raw device is in use;
 *   another -errno from opening a target, the engine's setup or the system (-ENOMEM).
 */
LLMIO_API int llmio_store_create(const struct llmio_store_opts *o, struct llmio_store **out,
                                 struct llmio_error *e);

/**
 * Wait for outstanding I/O, stop the I/O thread, remove files the store created, free.  Buffers
 * of gets not waited for must stay valid until it returns.  NULL is ignored.
 */
LLMIO_API void llmio_store_destroy(struct llmio_store *s);

enum llmio_store_put_flags {
	/* buf is copied into the staging pool (by the I/O thread) before put returns; the
	 * caller may reuse buf at once.  A tensor larger than the free staging waits, in put,
	 * for earlier writes to free buffers (write-behind is bounded by staging_bytes). */
	LLMIO_STORE_COPY = 0,
	LLMIO_STORE_BORROW = 1, /* caller keeps buf valid and unchanged until LLMIO_STORE_EV_PUT;
	                           host engines: written from buf itself, at a file offset
	                           congruent to buf modulo 4096; only the partial 4 KiB units
	                           at its edges are copied through staging */
};

/**
 * Start writing len bytes; *handle (never 0) names the tensor from now on.  Returns before the
 * write is done; an LLMIO_STORE_EV_PUT event (or LLMIO_STORE_EV_ERROR with the cause) follows.
 * A write that fails later makes the tensor's gets and the next flush return its cause.
 * \return 0; -EINVAL (no buffer, len 0, unknown flags); -ENOSPC when no target has room (the
 *         message names the targets, the bytes needed and the free bytes); -ENOMEM.
 */
LLMIO_API int llmio_store_put(struct llmio_store *s, const void *buf, uint64_t len, unsigned flags,
                              uint64_t *handle, struct llmio_error *e);

/**
 * Read the tensor into buf (len must equal its size).  wait = true returns when buf holds
 * the bytes (counting a stall when the data was not already in memory); wait = false starts
 * the read and reports completion as an LLMIO_STORE_EV_GOT event; buf is the caller's again
 * only after that event.  -ENOENT for an unknown or released handle; a failed read returns its
 * cause (never zero-filled data).  A tensor can be got any number of times until released.
 * \return 0; -ENOENT (the message names the handle); -EINVAL (len is not the tensor's size);
 *         the -errno of a failed put of the tensor, or of the read (-EIO for a short read:
 *         the target lost its data); with wait = false, read failures come as
 *         LLMIO_STORE_EV_ERROR events with res = -errno.
 */
LLMIO_API int llmio_store_get(struct llmio_store *s, uint64_t handle, void *buf, uint64_t len,
                              bool wait, struct llmio_error *e);

/**
 * Wait until every get of the tensor started with wait = false has landed (their events are
 * queued as usual); counts a stall, and its time, when one was still in flight.  With
 * non-waiting gets into aligned buffers issued ahead of need, a caller reads ahead into its
 * own memory with no staging copy, and waits here only for what has not arrived.
 * \return 0; -ENOENT (unknown or released handle); the -errno of the first of those gets that
 *         failed since the last wait (the message names the cause).
 */
LLMIO_API int llmio_store_wait(struct llmio_store *s, uint64_t handle, struct llmio_error *e);

/**
 * Bring a tensor into the memory tier ahead of its get (bounded by readahead_bytes).
 * \return 0 (also when it is already there or on its way); -ENOENT; -EFBIG (the tensor alone
 *         needs more staging than readahead_bytes); -EAGAIN (the window is full now: get or
 *         release prefetched tensors first); the -errno of its failed put.
 */
LLMIO_API int llmio_store_prefetch(struct llmio_store *s, uint64_t handle, struct llmio_error *e);

/**
 * Order hint: the expected order of future gets.  n handles in order; or n == 0 with
 * LLMIO_STORE_ORDER_REVERSE: future gets come in the reverse order of puts (activations).
 * The store prefetches along it within readahead_bytes.
 */
enum llmio_store_order {
	LLMIO_STORE_ORDER_NONE,    /* no read-ahead */
	LLMIO_STORE_ORDER_REVERSE, /* after a get of a tensor, the tensors put before it */
	LLMIO_STORE_ORDER_LIST, /* the n handles given, in order (copied; unknown ones skipped) */
};
/** \return 0; -EINVAL (unknown order, LIST without handles); -ENOMEM. */
LLMIO_API int llmio_store_hint(struct llmio_store *s, enum llmio_store_order order,
                               const uint64_t *handles, size_t n, struct llmio_error *e);

/**
 * Forget a tensor: its extent is free again; pending I/O on it completes first (a put needing
 * the space waits for that).  The handle is invalid at once.  \return 0 or -ENOENT.
 */
LLMIO_API int llmio_store_release(struct llmio_store *s, uint64_t handle, struct llmio_error *e);

enum llmio_store_event_type {
	LLMIO_STORE_EV_PUT = 1, /* the tensor is on storage (borrowed buffer free) */
	LLMIO_STORE_EV_GOT = 2, /* a wait = false get landed in the caller's buffer */
	LLMIO_STORE_EV_ERROR = 3,
};
struct llmio_store_event {
	uint64_t handle;
	int type; /* enum llmio_store_event_type */
	int res;  /* 0 or -errno */
};

/**
 * Copy up to max pending events out; returns how many (0 when none), never blocks; -EINVAL
 * without a store or array.  Events wait in a queue until polled (16 bytes each).
 */
LLMIO_API int llmio_store_poll(struct llmio_store *s, struct llmio_store_event *ev, size_t max);

/**
 * An eventfd that is readable while events are pending (for language bindings' loops).  The
 * store owns it (closed by destroy); llmio_store_poll() resets it.  \return the fd, or -EINVAL.
 */
LLMIO_API int llmio_store_eventfd(struct llmio_store *s);

/**
 * Wait until every put so far is on storage (and synced: fsync, or the engine's sync).
 * \return 0; the -errno of the first put that failed since the last flush (the message names
 *         the tensor and the cause), or of the sync.
 */
LLMIO_API int llmio_store_flush(struct llmio_store *s, struct llmio_error *e);

struct llmio_store_stats {
	size_t stats_size; /* sizeof as the caller knows it */
	uint64_t puts, gets;
	uint64_t bytes_put;                               /* bytes handed to put */
	uint64_t bytes_got;                               /* bytes returned by get */
	uint64_t device_bytes_written, device_bytes_read; /* bytes the engine moved */
	uint64_t stalls;     /* gets and llmio_store_wait calls that had to wait for storage */
	uint64_t stall_ns;   /* total time those gets waited */
	uint64_t io_busy_ns; /* time with at least one I/O in flight */
	double overlap;      /* 1 - stall_ns / io_busy_ns: I/O hidden behind the caller */
	uint64_t peak_staging_bytes;
	uint64_t prefetch_hits; /* gets served from the memory tier */
	uint64_t cpu_ns;        /* CPU of the store's I/O thread (user + system) */
	/* Added after the draft (read only when stats_size covers them): */
	uint64_t peak_readahead_bytes; /* most staging held or being filled by read-ahead */
	uint64_t staged_bytes; /* copied between callers' buffers and staging (in and out) */
	uint64_t direct_bytes; /* moved by the engine straight from / into callers' buffers */
	/* Stale store files of dead processes that create removed from llmio's directory: */
	uint64_t reclaimed_files, reclaimed_bytes;
};

/**
 * The store's counters so far (docs/store.md defines each).  Set st->stats_size first; fields
 * past it are not written, and stats_size comes back as the bytes written.
 * \return 0, or -EINVAL (no store, or stats_size too small to hold puts and gets).
 */
LLMIO_API int llmio_store_stats(struct llmio_store *s, struct llmio_store_stats *st);

#ifdef __cplusplus
}
#endif
#endif
