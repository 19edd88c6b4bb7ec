/* SPDX-License-Identifier: MIT */
/*
 * The engine interface (internal).  An engine is a datapath: a `const struct engine_ops` of
 * callbacks plus capability flags and an options table.  One instance (struct engine_ctx)
 * exists per worker thread; nothing in it is shared, so engines never lock.
 *
 * The worker loop drives every engine the same way (fio's model):
 *
 *	queue(io)  -> ENGINE_Q_COMPLETED   done synchronously, io->res is set
 *	           -> ENGINE_Q_QUEUED      accepted; will be submitted by commit()
 *	           -> ENGINE_Q_BUSY        no room now: reap something first, then retry
 *	queue_batch(ios, n)  optional: queue() of n I/Os in one call (see below)
 *	commit()   submits everything queued since the last commit (may be lazy, see io_uring)
 *	reap(min)  waits until at least `min` I/Os completed, returns up to `max` of them
 *
 * A failed I/O is data: the engine stores -errno in io->res and returns normally.  Callbacks
 * return 0 / a count, or -errno when the engine itself broke (the job then stops).
 */
#ifndef LLMIO_ENGINE_INTERNAL_H
#define LLMIO_ENGINE_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
struct llmio_error; /* include/llmio/common.h; engines fill it with base/error.h */
struct llmio_file;  /* include/llmio/job.h */

#include "base/optdesc.h"

#define ENGINE_ABI_VERSION 1

enum engine_op { ENGINE_OP_READ = 0, ENGINE_OP_WRITE = 1 };

enum engine_qstatus { ENGINE_Q_COMPLETED = 0, ENGINE_Q_QUEUED = 1, ENGINE_Q_BUSY = 2 };

/* One I/O.  The worker owns an array of iodepth of these; engines may use `priv`. */
struct io_req {
	void *buf;
	uint64_t off;
	uint32_t len;
	uint16_t file;    /* index into engine_setup.fds */
	uint16_t buf_idx; /* index into engine_setup.bufs (for registered buffers) */
	uint8_t op;       /* enum engine_op */
	uint16_t prio;    /* its I/O priority (ioprio value), 0 = the thread's; libaio, io_uring */
	int64_t res;      /* bytes transferred, or -errno; set by the engine */
	uint64_t t_queue; /* ns, set by the worker */
	uint64_t t_submit;
	uint64_t priv;
	uint64_t tag; /* an io_source's tag (the worker's, not the engine's) */
};

/* Capability flags. */
#define ENGINE_CAP_ASYNC      (1u << 0) /* reap() exists; iodepth > 1 means I/Os in flight */
#define ENGINE_CAP_DIRECT     (1u << 1) /* O_DIRECT works through it */
#define ENGINE_CAP_NO_IO      (1u << 2) /* touches no file (null) */
#define ENGINE_CAP_MAPS_FILES (1u << 3) /* needs file sizes, no O_DIRECT (mmap) */
#define ENGINE_CAP_GPU_DIRECT (1u << 4) /* storage DMA into GPU memory, no host copy (GDS) */
#define ENGINE_CAP_POLLED     (1u << 5) /* can poll for submissions / completions (SQPOLL, IOPOLL) */
/* Its targets are not files but names it resolves itself (s3://bucket/key): target_resolve */
#define ENGINE_CAP_OWN_TARGET (1u << 6)
/* Its own buffers (buf_alloc) are host memory this process maps (s3-agent's shared memory,
 * SPDK's DMA memory): the worker may stamp and check them (verify=) */
#define ENGINE_CAP_HOST_BUFS (1u << 7)
/*
 * Its target is an NVMe namespace (uring_cmd's block device, spdk's transport ID), never files:
 * --engine all, llmio quick and the recipes' file runs leave it out.
 */
#define ENGINE_CAP_NAMESPACE (1u << 8)
/*
 * Each I/O is one call on its file (stat, unlink, ftruncate, fallocate: fio's file-operation
 * engines), and no data moves through the buffers: verify, --engine all, llmio quick and the
 * recipes leave it out; tests/cli_fio_engines.sh checks it against fio.
 */
#define ENGINE_CAP_FILE_OPS (1u << 9)
/*
 * Its I/Os make the job's files (filecreate): the job names and sizes them (one block each) but
 * neither creates, lays out nor opens them; fds are -1.
 */
#define ENGINE_CAP_MAKES_FILES (1u << 10)
/* It gives each I/O its own priority (io_req.prio: fio's cmdprio_percentage) */
#define ENGINE_CAP_CMDPRIO (1u << 11)
/* It trims (engine_setup.trims: its writes are trims; falloc punches holes). */
#define ENGINE_CAP_TRIM (1u << 12)
/*
 * Its I/Os remove the job's files (filedelete): they must all be new, made by this job's layout,
 * so a file that is there before the job is refused before anything is laid out or written.
 */
#define ENGINE_CAP_NEW_FILES (1u << 13)
/*
 * With ENGINE_CAP_NO_IO: no files, but its I/Os carry the buffers' data (net's socket), so the
 * worker fills its writes as a file's (buffer_pattern included).
 */
#define ENGINE_CAP_SOCKET (1u << 14)
/*
 * Its I/Os move no bytes and only pace the job, which lasts its runtime (exec: a program runs
 * beside the job): the job needs a runtime, is time_based, and reports no bytes (fio's NOIO).
 */
#define ENGINE_CAP_TIMED (1u << 15)

/* What a job asks of a target an engine resolves itself (ENGINE_CAP_OWN_TARGET). */
struct engine_target_req {
	const char *name; /* --filename or --directory as given */
	bool directory;   /* --directory: a prefix of several objects */
	unsigned nrfiles;
	uint64_t size; /* --size, 0 when not given */
	uint64_t bs;
	bool writes;
	bool random_writes;     /* writes at random offsets (rw=randwrite, randrw) */
	bool allow_destructive; /* --allow_destructive: writes may overwrite a device's data */
	/*
	 * A list instead of name (a recipe's objects, names s3://bucket/key): taken as given,
	 * sizes included; a size of 0 on a read asks the engine (HEAD).  NULL: name.
	 */
	const struct llmio_file *files;
	unsigned nfiles;
	/* set from outside (Ctrl-C) while resolving: stop waiting on a server (the job's
	 * llmio_job_opts.stop, read atomically), or NULL */
	const volatile int *stop;
};

/* The resolved target: n names (malloc'd each) and sizes, both arrays malloc'd. */
struct engine_target {
	unsigned n;
	char **names;
	uint64_t *sizes;
};

/* Everything an engine needs to set up one worker's instance. */
struct engine_setup {
	const int *fds;             /* open files, all of the job's */
	const uint64_t *file_sizes; /* bytes of each file */
	unsigned nfiles;
	void *const *bufs; /* iodepth buffers of buf_len bytes; aligned to >= 4096 if direct */
	unsigned nbufs;
	size_t buf_len;
	unsigned iodepth;
	unsigned nworkers; /* threads of the job, each with its own engine instance */
	bool direct;
	bool writable;            /* writes may be issued (files are open O_RDWR) */
	int dev_io_poll;          /* target's queue has poll queues: 1 yes, 0 no, -1 unknown */
	const char *devname;      /* block device name for messages ("vda"), or "" */
	const char *const *names; /* nfiles paths, or the names an engine resolved (s3://) */
	/*
	 * nfiles flags: this job created the file (its layout made it), so an engine that
	 * removes files (filedelete) may remove it; NULL when none was.
	 */
	const bool *created;
	const void *opts; /* the engine's option struct, parsed from its table */
	/*
	 * The job's stop flag, set when the run must end (runtime over, Ctrl-C, another thread
	 * failed), or NULL.  An engine whose I/Os can wait on another machine (s3) reads it in
	 * reap and completes what it abandons with -ECANCELED, which the worker then neither
	 * counts nor reports as an error.
	 */
	const atomic_int *stop;
	/*
	 * The job's fadvise_hint as posix_fadvise() advice (POSIX_FADV_RANDOM, ...; -1 none), for
	 * an engine that advises its own mappings as fio's mmap does.  0 is POSIX_FADV_NORMAL:
	 * a setup that does not set it asks for the kernel's default.
	 */
	int fadvise;
	/*
	 * The job trims (fio's rw=trim, randtrim): its ENGINE_OP_WRITE I/Os are trims, which only
	 * an engine that says so takes (falloc punches a hole); the job refuses any other.
	 */
	bool trims;
	const char *job_name; /* the job's name (fio's: its section), never NULL */
	uint64_t runtime_ns;  /* the job's runtime, 0 = none */
};

struct engine_ctx {
	void *priv;
	/*
	 * What the engine actually did, for the result ("fixedbufs on; sqpoll off; iopoll
	 * requested but vda has no poll queues: interrupt completions").  Set by init.
	 */
	char notes[1024];
	/*
	 * I/Os really in progress at once when fewer than iodepth (libaio through the page
	 * cache copies inside io_submit, one I/O after another: 1); 0 = iodepth.  Set by init.
	 */
	unsigned depth_effective;
	/*
	 * Why the last failed I/O failed, when the engine knows more than -errno says ("GET
	 * s3://b/k bytes=0-4095: HTTP 403 InvalidAccessKeyId: check ...").  Set with io->res < 0.
	 */
	char ioerr[384];
	/*
	 * Set by a synchronous engine whose peer ended the transfer (net: the sender closed)
	 * with the I/O that found it, which completes with res 0: the thread's loop then ends as
	 * when its bytes are done, without an error.
	 */
	bool ended;
	/*
	 * What an engine whose bytes never reach a local device (s3) counted itself; the
	 * worker zeroes it when measuring starts, so it covers the measured window.
	 */
	struct engine_counters {
		bool known;                 /* the engine fills these */
		uint64_t wire_rx, wire_tx;  /* bytes on the wire, headers included */
		uint64_t requests, retries; /* requests completed; sent again after 503/500 */
		uint64_t hash_ns, copy_ns;  /* hashing payloads; copying them (when apart) */
		uint64_t agent_cpu_ns;      /* a separate client process's CPU (s3-agent) */
	} counters;
};

/* The job as fio will run it, for an engine's fio_option(). */
struct engine_fio_job {
	FILE *f;
	const void *opts; /* the engine's option struct as the job sets it */
	unsigned depth;   /* iodepth as llmio runs it */
	bool direct;
	bool random; /* random offsets */
	int fadvise; /* the job's posix_fadvise() advice (fadvise_hint), or -1 for none */
};

struct engine_ops {
	int abi_version; /* ENGINE_ABI_VERSION */
	const char *name;
	const char *summary;
	const char *const
	        *aliases; /* other names it answers to (fio's), NULL-terminated; or NULL */
	unsigned caps;
	/* Options (terminated by an entry with name == NULL; may be NULL): scope
	 * OPTD_SCOPE_ENGINE, fields of the engine's option struct, which holds ints (bools 0/1,
	 * enums the index into `choices`, times in ms with store_ns = bare_ns = 1 ms) and, for
	 * OPTD_STRING, char arrays (at most LLMIO_ENGINE_TEXT_MAX bytes of them together). */
	const struct llmio_optdesc *opts;
	size_t opts_size; /* sizeof the engine's option struct */

	/* Can this engine run here?  0, or -errno with the exact reason in why. */
	int (*probe)(char *why, size_t len);
	/* Per-thread setup.  0, or -errno with a message naming the problem and fix in e. */
	int (*init)(struct engine_ctx *ctx, const struct engine_setup *s, struct llmio_error *e);
	int (*queue)(struct engine_ctx *ctx, struct io_req *io);
	int (*commit)(struct engine_ctx *ctx); /* may be NULL for sync engines */
	/* Completed I/Os into evs (at most max); blocks until >= min are available. */
	int (*reap)(struct engine_ctx *ctx, unsigned min, struct io_req **evs, unsigned max);
	/* Make writes to file `file` durable; NULL means fsync(fd) is right. */
	int (*sync)(struct engine_ctx *ctx, unsigned file);
	void (*cleanup)(struct engine_ctx *ctx);

	/*
	 * Optional, both or neither: the engine provides the I/O buffers (GPU memory).  The
	 * worker calls buf_alloc on its own thread before init(), once per buffer, with the
	 * engine's parsed options and `init`: len bytes of host data the buffer must hold (what
	 * writes carry); the engine copies it in.  The worker never touches such a buffer
	 * itself, unless the engine has ENGINE_CAP_HOST_BUFS.  buf_free is called after cleanup().
	 * 0, or -errno with the reason in e.
	 */
	int (*buf_alloc)(const void *opts, void **buf, size_t len, const void *init,
	                 struct llmio_error *e);
	void (*buf_free)(const void *opts, void *buf);
	/*
	 * Required with buf_alloc unless ENGINE_CAP_HOST_BUFS (then memcpy is right): copy n bytes
	 * of host memory into a buffer of buf_alloc's at byte at (buf_copy_in), or out of one
	 * (buf_copy_out), on the caller's thread (the tensor store's staging pool on a GPU
	 * engine).  0, or -errno (-EIO: the device refused the copy).
	 */
	int (*buf_copy_in)(const void *opts, void *buf, size_t at, const void *src, size_t n);
	int (*buf_copy_out)(const void *opts, const void *buf, size_t at, void *dst, size_t n);

	/*
	 * Needed when an option is OPTD_FIO_CUSTOM: write option o (value v) of the job as fio
	 * lines to j->f.  fio's name for it is optdesc_fio_name(o).
	 */
	void (*fio_option)(const struct llmio_optdesc *o, int v, struct engine_fio_job *j);

	/*
	 * Option strings that each take another path through the engine ("" is always run
	 * first): the conformance suite (tests/test_engines.c) runs every one.  NULL-terminated,
	 * or NULL for the defaults only.
	 */
	const char *const *test_variants;

	/*
	 * ENGINE_CAP_OWN_TARGET: resolve rq (on the control thread, before any init) into the
	 * job's files, with the engine's parsed options.  0, or -errno with one line in e.
	 */
	int (*target_resolve)(const void *opts, const struct engine_target_req *rq,
	                      struct engine_target *t, struct llmio_error *e);
	/*
	 * Optional, for an engine that wraps another (cuda-bounce host=s3): whether, with these
	 * parsed options, its target is resolved by target_resolve rather than opened as files.
	 * NULL: ENGINE_CAP_OWN_TARGET alone decides.
	 */
	bool (*owns_target)(const void *opts);

	/*
	 * Optional, for an ENGINE_CAP_ASYNC engine whose queue() never completes an I/O at once:
	 * queue ios[0 .. n) in order, exactly as n calls of queue() would, with one indirect call
	 * for the batch instead of one per I/O (the worker's hot loop: docs/performance.md).
	 * Returns k, how many it took (0 .. n): ios[0 .. k) are queued (ENGINE_Q_QUEUED each; a
	 * failure found at once, such as a file index out of range, is reaped later as that
	 * I/O's completion with res = -errno), and ios[k] found no room (ENGINE_Q_BUSY).  A
	 * negative value: the engine broke.  NULL: the worker calls queue() per I/O.
	 */
	int (*queue_batch)(struct engine_ctx *ctx, struct io_req *const *ios, unsigned n);

	/*
	 * Optional: the worker's loop ended and every I/O is reaped (its stop included).  An engine
	 * whose writes land only as a whole (an object: a PUT, or a multipart upload completed
	 * with its last part) says here that one did not: the job then fails, for the bytes it
	 * counted never reached the target.  0, or -errno with the line in ctx->ioerr.  NULL: 0.
	 */
	int (*finish)(struct engine_ctx *ctx);
	/*
	 * fio's name for this datapath when it differs from name (libpmem for pmem2,
	 * io_uring_cmd for uring_cmd): what --emit-fio writes as ioengine.  NULL: name.
	 */
	const char *fio_name;

	/*
	 * Optional, for an engine whose targets are objects (s3://bucket/key): what a recipe asks
	 * of the object store outside a job (struct engine_objects).  Meaningful only where
	 * engine_owns_target() holds for the job's options (cuda-bounce's is its host=s3's).
	 */
	const struct engine_objects *objects;

	/*
	 * Optional, for an engine that runs part of itself in a process of its own, started as
	 * this program again (s3-agent's agent): main() hands its argv to engine_process_main()
	 * before anything else, which calls this of each engine.  -1 when argv is not such a start;
	 * else the process's exit code, once it has served.
	 */
	int (*process_main)(int argc, char *const *argv);
};

/* An object that does not exist (engine_objects.size). */
#define ENGINE_OBJECT_ABSENT UINT64_MAX

/*
 * An object store's operations outside a job, with the endpoint and credentials the engine
 * finds itself and its default options.  names are the engine's (s3://bucket/key).  Each
 * returns 0, or -errno with one line in e: a missing bucket, refused credentials, no server.
 */
struct engine_objects {
	/* the size of each of n objects into sizes[i], or ENGINE_OBJECT_ABSENT (stat) */
	int (*size)(const char *const *names, unsigned n, uint64_t *sizes, struct llmio_error *e);
	/* remove each of n objects; *removed of them went (an absent one is no failure) */
	int (*remove)(const char *const *names, unsigned n, unsigned *removed,
	              struct llmio_error *e);
	/*
	 * every object under prefix (s3://bucket/prefix), in key order, into t (names and sizes
	 * malloc'd as target_resolve's; t zeroed first): what a directory target of a read is
	 */
	int (*list)(const char *prefix, struct engine_target *t, struct llmio_error *e);
	/*
	 * The engine that writes a recipe's objects (a job of it with a list of files, its
	 * default options): the plain client of the store, whichever engine reads them.
	 */
	const struct engine_ops *writer;
};

/* The objects' operations of ops with these parsed options, or NULL where it has none. */
const struct engine_objects *engine_objects(const struct engine_ops *ops, const void *opts);

/* A process an engine started of this program (process_main): its exit code, or -1. */
int engine_process_main(int argc, char *const *argv);

/*
 * The engine a caller that names none gets, for files: io_uring where it can run here, else
 * psync (which always can).  why (len bytes, may be NULL) says why io_uring was passed over.
 */
const struct engine_ops *engine_default(char *why, size_t len);

/* Whether the job's target is the engine's to resolve (target_resolve) with these options. */
bool engine_owns_target(const struct engine_ops *ops, const void *opts);

/* ops->target_resolve with ops's default options (for an engine that runs ops inside it). */
int engine_target_resolve_defaults(const struct engine_ops *ops, const struct engine_target_req *rq,
                                   struct engine_target *t, struct llmio_error *e);

/* Append printf-style text to buf (len bytes); a truncated note is still a useful note. */
void engine_appendf(char *buf, size_t len, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/*
 * Read one unsigned number from a /proc or /sys file (an engine explaining a refusal:
 * io_uring_disabled, aio-max-nr); 0 or -errno.
 */
int engine_read_proc_ulong(const char *path, unsigned long *val);

/* The registry (registry.c). */
/* NULL for a well-formed engine, else the callback or field it lacks ("reap", "fio_option"). */
const char *engine_missing(const struct engine_ops *e);
size_t engine_count(void);
const struct engine_ops *engine_at(size_t i);
const struct engine_ops *engine_find(const char *name);

/* Engine e's option called key (by name or alias), or NULL. */
const struct llmio_optdesc *engine_opt_find(const struct engine_ops *e, const char *key);

/* The first engine with an option called key (by name or alias), or NULL. */
const struct engine_ops *engine_owning_option(const char *key);

/*
 * Parse "k=v,k=v" against an engine's table into opts (opts_size bytes, defaults first).  In a
 * value, "\," is a comma and "\\" a backslash (engine_opts_append() writes them); any other
 * backslash is itself.  0, or -EINVAL with a message naming the key and the valid keys /
 * values in e.
 */
int engine_opts_parse(const struct engine_ops *eng, const char *text, void *opts,
                      struct llmio_error *e);

/*
 * Append key=value to text (len bytes: llmio_job_opts.engine_opts), after a comma when text
 * has options already, with the value's commas and backslashes escaped so that
 * engine_opts_parse() reads it back whole (a string option: exec's arguments).  0, or -ENOSPC
 * when it does not fit (text is then as it was).  Every writer of that text calls it.
 */
int engine_opts_append(char *text, size_t len, const char *key, const char *value);

/*
 * Each of engine e's options in opts (as engine_opts_parse filled them) into out, in the
 * table's order, enums by name: what a result carries (llmio_result.engine_options), so that
 * its record is written without the engine.  A string option (OPTD_STRING) is whole in text
 * (len bytes, LLMIO_ENGINE_TEXT_MAX: engine_missing checks its fields fit) at out[i].value,
 * with bit i of *strings set.  Returns the count, at most LLMIO_ENGINE_OPTS_MAX (engine_missing
 * checks the table); 0 when opts is NULL (an engine without options).
 */
struct llmio_engine_optval;
unsigned engine_opts_values(const struct engine_ops *e, const void *opts,
                            struct llmio_engine_optval *out, uint32_t *strings, char *text,
                            size_t len);

/* Option string m of the engine's test runs: "" (its defaults) for 0, then its test_variants;
 * NULL past the end. */
const char *engine_test_variant(const struct engine_ops *e, size_t m);

#endif
