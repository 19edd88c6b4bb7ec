/* SPDX-License-Identifier: MIT */
/*
 * The sweep runner: a job file loaded and planned into an order of points (repeats,
 * shuffled or not), the points already in a journal left out (--resume), then each point run,
 * its record appended to the journal and fsynced before the next one starts.  The caller
 * (`llmio sweep`) parses its arguments and prints: the runner reports what happens through
 * callbacks and never writes to the terminal.
 */
#ifndef LLMIO_SWEEP_RUNNER_H
#define LLMIO_SWEEP_RUNNER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sweep/journal.h"
#include "sweep/sweep.h"
#include "base/error.h"

/* What to run: the options of `llmio sweep` that shape the run. */
struct sweep_run_opts {
	const char *path;    /* the job file */
	const char *dir;     /* --dir: every point's files in it (may be NULL) */
	const char *journal; /* -o: read back for resume, appended to by sweep_runner_run() */
	bool resume;         /* leave out the points whose hash is in the journal */
	bool shuffle;        /* a random order, seeded by seed */
	bool keep_cache;     /* do not drop the page cache between points */
	bool keep;           /* recipe points leave the files and objects they made */
	/*
	 * Drop the page cache before every point (as root), as before sweeps reused state
	 * between points.  Without it the cache is dropped before the first point and before
	 * each point that may read through it; an O_DIRECT point with invalidate on (the
	 * default) has its target's pages written back and dropped by the job itself.
	 */
	bool no_reuse;
	uint64_t seed;
	uint64_t repeat; /* every point this many times (at least 1) */
	/* under MPI (docs/mpi.md): every rank runs every point, rank 0 alone journals it */
	const struct sweep_dist *dist;
};

struct sweep_order {
	size_t idx;      /* into plan.p */
	unsigned repeat; /* 0 for the first round */
};

/* What one point did, for the caller's line. */
struct sweep_point_done {
	size_t k;          /* 0-based position in the order */
	const char *label; /* "[section] bs=4k iodepth=8" */
	int error;         /* 0 or -errno; message then says why */
	const char *message;
	double iops, bw; /* main figures of the record's first job */
	bool steady;     /* the point ended by steady state */
};

/* Calls into the caller while points run; every one may be NULL. */
struct sweep_events {
	/* Live figures about once a second (a llmio_job_opts.progress); must not block. */
	void (*progress)(void *arg, double elapsed_s, double eta_s, double iops, double bw);
	/* A point's job returned (before its record is written, or left out when interrupted). */
	void (*point_ended)(void *arg);
	/* A point's record is in the journal. */
	void (*point_done)(void *arg, const struct sweep_point_done *d);
	/* A journal line that resume could not read (message says which and why). */
	void (*skipped_line)(void *arg, const char *message);
	void *arg;
};

struct sweep_runner {
	struct sweep_run_opts o;
	struct sweep_file *file;
	struct sweep_plan plan;
	struct sweep_order *order;
	size_t norder;

	uint64_t *done; /* sorted hashes already in the journal */
	size_t ndone;

	bool bad_input; /* prepare failed on the job file itself (a usage error) */
	bool started;   /* sweep_runner_run() opened the journal */

	/* while running, and after */
	size_t k;       /* the point running (position in order) */
	size_t ran;     /* points run and recorded */
	size_t skipped; /* points already in the journal */
	size_t failed;  /* points whose record holds an error */
	double spent;   /* seconds of the points run */
	size_t drops;   /* page cache drops done */
	const char *label;

	/*
	 * Set by the caller to record a point without running it (`--adaptive --from`: its
	 * record looked up in another journal); NULL runs it.  Called by sweep_runner_point()
	 * for a point not yet in the journal.
	 */
	int (*record)(void *arg, struct sweep_runner *r, const struct sweep_point *p,
	              struct llmio_error *e);
	void *record_arg;

	/* between sweep_runner_open() and sweep_runner_close() */
	struct journal j;
	struct sweep_point *pt;
	struct sweep_run_ctx *ctx;
	const struct sweep_events *ev;
};

/*
 * Load the job file, plan it, order the points and read back the journal's hashes when
 * resuming.  \return 0, or -errno with a message (-EINVAL or -ENOENT: the job file is bad or
 * missing).  sweep_runner_release() is due either way.
 */
int sweep_runner_prepare(struct sweep_runner *r, const struct sweep_run_opts *o,
                         const struct sweep_events *ev, struct llmio_error *e);
void sweep_runner_release(struct sweep_runner *r);

/* The manifest of what was on disk before a sweep's first point, beside its journal:
 * JOURNAL.llmio-made.  \return 0, or -ENAMETOOLONG with a message in e. */
int sweep_manifest_path(const char *journal, char *out, size_t len, struct llmio_error *e);

struct wl_leftovers;
/*
 * Note in left what is on disk where the points write, before the first one runs: their work
 * directories (plain points with directory=, recipes) and the files they name (filename=)
 * that do not exist yet.  A point of an engine that does no I/O touches no file.
 */
int sweep_runner_note_targets(const struct sweep_runner *r, struct wl_leftovers *left,
                              struct llmio_error *e);

/* Is a point of this hash already in the journal? */
bool sweep_runner_is_done(const struct sweep_runner *r, uint64_t hash);

/* "[section] bs=4k iodepth=8": the keys that vary within the point's section. */
void sweep_runner_label(const struct sweep_runner *r, size_t idx, char *buf, size_t len);

/* Seconds left in the sweep: the points to come at the mean so far, plus current_left. */
double sweep_runner_eta_s(const struct sweep_runner *r, double current_left);

/* What --dry-run prints: the estimated time of the points not already in the journal. */
struct sweep_estimate {
	double total_s; /* every point at most */
	double least_s; /* every point at least (steady state reached at once) */
	size_t unknown; /* points whose time is not known in advance */
	size_t already; /* points already in the journal */
	double setup_s; /* counted per point for start-up, open and cache drop */
};

/* \return 0, or -errno with a message. */
int sweep_runner_estimate(const struct sweep_runner *r, struct sweep_estimate *est,
                          struct llmio_error *e);

/*
 * Run every point not already in the journal, in order, appending each record.  *abort (set
 * by the caller's signal handler) stops the sweep: the point it cut short is not recorded.
 * *point_stop is the running job's stop flag (the handler sets it too).  A point that fails
 * is recorded and the sweep goes on.  \return 0, or -errno with a message when the sweep
 * could not go on (the journal cannot be opened or appended to, a point cannot be made).
 */
int sweep_runner_run(struct sweep_runner *r, const struct sweep_events *ev, volatile int *abort,
                     volatile int *point_stop, struct llmio_error *e);

/*
 * The pieces of sweep_runner_run(), for a caller that chooses the points itself (the adaptive
 * sweep): open the journal; run point idx of the plan for one repeat (left out when its hash
 * is in the journal already); close.  sweep_runner_close() is due when open was called.
 */
int sweep_runner_open(struct sweep_runner *r, const struct sweep_events *ev, volatile int *abort,
                      volatile int *point_stop, struct llmio_error *e);
int sweep_runner_point(struct sweep_runner *r, size_t idx, unsigned repeat, struct llmio_error *e);
void sweep_runner_close(struct sweep_runner *r);

/* Read the journal's hashes again (what --resume skips), after points were added to it. */
int sweep_runner_reload(struct sweep_runner *r, struct llmio_error *e);

#endif
