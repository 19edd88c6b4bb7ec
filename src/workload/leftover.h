/* SPDX-License-Identifier: MIT */
/*
 * What a recipe run leaves on disk.  A recipe writes its files in llmio's work directory under
 * --directory (llmio_work_dir()); the names there before the run are noted, and afterwards
 * every file that was not there is this run's own: removed, or kept with --keep.  A file that
 * was there before (an earlier run's, kept with --keep) is never removed; the CLI says what
 * was removed and what stays, and where.
 */
#ifndef LLMIO_WORKLOAD_LEFTOVER_H
#define LLMIO_WORKLOAD_LEFTOVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "llmio/job.h"
#include "base/error.h"

struct wl_leftover {
	bool active;              /* the work directory could be listed before the run */
	bool made;                /* this run made the work directory */
	char dir[LLMIO_PATH_MAX]; /* the work directory */
	char (*before)[256];      /* the names there before the run */
	size_t nbefore;
	/* after wl_leftover_end(): */
	unsigned ours, removed; /* files this run made; of them removed */
	uint64_t ours_bytes;    /* their bytes (apparent size) */
	unsigned theirs;        /* files that were there before, left as they were */
	uint64_t theirs_bytes;
	bool dir_removed; /* the work directory itself is gone (made by this run) */
};

/*
 * Note what is in the work directory of `directory` (the --directory given), making it when
 * missing.  A directory that cannot be used (missing, an s3:// target) leaves l inactive: the
 * run itself reports it.  \return 0 or -ENOMEM.
 */
int wl_leftover_begin(struct wl_leftover *l, const char *directory, struct llmio_error *e);

/*
 * After the run: remove the files this run made unless keep (and the work directory, when
 * this run made it and nothing else is in it); count what is left.  \return 0 or the first
 * -errno of a removal (the counts say what was done).
 */
int wl_leftover_end(struct wl_leftover *l, bool keep, struct llmio_error *e);

void wl_leftover_release(struct wl_leftover *l);

/*
 * What a run of many jobs (a sweep) leaves: one wl_leftover per work directory its points use,
 * and the files its points name themselves (filename=) that did not exist before it.  Those
 * are this run's own too: removed at the end unless keep; a named file that existed before
 * (a user's file, a device) is never noted, so never removed.
 */
struct wl_leftovers {
	struct wl_leftover *dirs;
	size_t ndirs;
	char (*files)[LLMIO_PATH_MAX]; /* named files missing before the run */
	size_t nfiles;
	/* after wl_leftovers_end(): of the named files, those the run made */
	unsigned files_ours, files_removed;
	uint64_t files_bytes;
};

/* Note the work directory of `directory` (once per directory).  \return 0 or -ENOMEM. */
int wl_leftovers_add_dir(struct wl_leftovers *s, const char *directory, struct llmio_error *e);

/* Note a file a job names, when nothing is at that path yet.  \return 0 or -ENOMEM. */
int wl_leftovers_add_file(struct wl_leftovers *s, const char *path, struct llmio_error *e);

/* wl_leftover_end() of every directory, and the same for the named files (plain files only,
 * never through a link).  \return 0 or the first -errno of a removal. */
int wl_leftovers_end(struct wl_leftovers *s, bool keep, struct llmio_error *e);

void wl_leftovers_release(struct wl_leftovers *s);

/*
 * A sweep that is killed (kill -9) before it removes what its points made leaves their files
 * behind, and a resumed sweep would take them for files that were there before it.  So the
 * sweep saves what it noted before its first point (wl_leftovers_save(), beside its journal)
 * and removes that manifest once it has cleaned up; a resumed sweep loads it
 * (wl_leftovers_load(), before noting anything itself), and the killed run's files are its own
 * again: reused by its points, removed at the end unless --keep.
 */
int wl_leftovers_save(const struct wl_leftovers *s, const char *path, struct llmio_error *e);
/* \return 1 when loaded, 0 when there is no manifest at path, or -errno (e set). */
int wl_leftovers_load(struct wl_leftovers *s, const char *path, struct llmio_error *e);
/* The files on disk now that the run counts as its own, and their bytes.  \return 0 or -ENOMEM. */
int wl_leftovers_count(const struct wl_leftovers *s, unsigned *files, uint64_t *bytes);

#endif
