/* SPDX-License-Identifier: MIT */
/*
 * Recipes against an object store (--directory s3://bucket/prefix; docs/object-storage.md,
 * "Recipes").  An engine that resolves its own targets (s3, s3-agent, cuda-bounce host=s3)
 * reads and writes the recipe's files as objects under prefix/llmio-work/: the same names,
 * sizes and I/O as on files.  A file engine (--engine all beside them) runs against a local
 * staging directory instead, and every phase says so.
 */
#ifndef LLMIO_WORKLOAD_OBJECTS_H
#define LLMIO_WORKLOAD_OBJECTS_H

#include <stdbool.h>
#include <stdint.h>

#include "workload/workload.h"

struct engine_objects; /* src/engine/engine.h */

struct wl_objects {
	bool on_objects;           /* the streams' files are objects (else: staging files) */
	char url[LLMIO_PATH_MAX];  /* --directory as given, s3://bucket/prefix */
	char note[LLMIO_PATH_MAX]; /* said in every phase: staging, O_DIRECT */
	char **created;            /* objects this run uploaded or wrote */
	uint64_t created_bytes;
	unsigned ncreated, cap;
	unsigned reused; /* the run's objects that were there before, read as they are */
	char **before;   /* objects a write phase found there before this run: never removed */
	unsigned nbefore, before_cap;
	/* the object sets already prepared (load asks before each phase): name of the first, n */
	char seen[8][128];
	unsigned seen_n[8], nseen;
	/* the run's engine's object operations (engine.h, engine_objects), when on_objects */
	const struct engine_objects *ops;
};

/* Is this --directory an object store's URL? */
bool wl_object_url(const char *dir);

/*
 * The local directory a file engine of an s3:// run works in (--staging, else $TMPDIR, else
 * /var/tmp), or NULL when w's directory is not s3:// or its engine handles objects itself.
 */
const char *wl_objects_staging(const struct wl *w);

/*
 * Before the recipe runs, with --directory s3://...: objects under its llmio-work/ prefix for
 * an engine that resolves them (the bucket checked: a missing one is one line), or the
 * staging directory (--staging, else $TMPDIR or /var/tmp) for a file engine.  0 or -errno.
 */
int wl_objects_begin(struct wl *w, struct llmio_error *e);

/* Does this run read and write objects (so recipes lay out objects, not files)? */
bool wl_on_objects(const struct wl *w);

/*
 * A read phase's objects: each must exist at its size; those that do not are uploaded first
 * (outside the measurement, as files are filled), and removed at the end unless --keep.  Under
 * MPI every rank calls it: the ranks take turns (rank 0 first), so an object is uploaded once.
 */
int wl_objects_prepare(struct wl *w, const struct llmio_file *files, unsigned n,
                       struct llmio_error *e);

/*
 * Before a write phase: which of its objects are there already, not made by this run (an
 * earlier run's, kept).  The phase rewrites them, as it does files, but they are never
 * removed.  0 or -errno (the server's answer in e).
 */
int wl_objects_before_write(struct wl *w, const struct llmio_file *files, unsigned n,
                            struct llmio_error *e);

/* Objects a write phase created (removed at the end unless --keep; not those there before). */
int wl_objects_written(struct wl *w, const struct llmio_file *files, unsigned n);

/*
 * After the recipe (ret: its result): every phase's wire bytes and client CPU split as
 * metrics, the notes, and the created objects removed unless --keep (under MPI after a barrier,
 * when the recipe succeeded on this rank: no rank still reads them); the last phase says what is
 * left in the bucket.
 */
void wl_objects_end(struct wl *w, int ret);

void wl_objects_release(struct wl *w);

#endif
