/* SPDX-License-Identifier: MIT */
/*
 * llmio under MPI (docs/mpi.md).  The only code that calls MPI is src/mpi/mpi.c; without
 * Open MPI at build time src/mpi/none.c stands in, and without mpirun at run time
 * (OMPI_COMM_WORLD_SIZE unset) MPI is never initialised: every function below then behaves as
 * for one process and the single-process path is unchanged.
 *
 * A run under MPI: every rank runs its share (ranks_job_share()), behind a barrier before each
 * phase; rank 0 gathers each rank's result whole (a result holds no pointer) and merges them
 * exactly (ranks_merge()): counts and bytes summed, histograms merged bucket by bucket, CPU per
 * rank and per host, device bytes once per host, the phase timed from the earliest start to
 * the latest end as IOR does.  A rank that fails ends the whole run (ranks_fail()).
 */
#ifndef LLMIO_DIST_H
#define LLMIO_DIST_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "llmio/common.h"
#include "llmio/result.h"

#define RANKS_HOST_MAX 256

/* How ranks share a `llmio run` target, named as IOR names them (docs/mpi.md). */
enum ranks_layout {
	RANKS_FILE_PER_PROCESS, /* IOR -F: rank r uses FILE.0000000r (IOR's suffix) */
	RANKS_SHARED_FILE,      /* IOR's default: one file, rank r its own contiguous region */
};

enum ranks_op { RANKS_SUM, RANKS_MIN, RANKS_MAX };

/*
 * Join the MPI job when launched by mpirun and built with MPI; otherwise nothing.  Idempotent.
 * \return 0, or -errno with the reason in e.
 */
int ranks_init(int *argc, char ***argv, struct llmio_error *e);
/* Running as one of several ranks (mpirun, even -np 1). */
bool ranks_active(void);
unsigned ranks_rank(void);
unsigned ranks_size(void);
/* The host name ranks are grouped by: $LLMIO_HOSTNAME when set, else gethostname(). */
const char *ranks_host(void);
/* Ranks sharing this rank's host (1 when not under MPI). */
unsigned ranks_host_ranks(void);

/* IOR -C's shift: the ranks on this host, or 1 when every rank is on it (0 for one rank). */
unsigned ranks_reorder_shift(void);

/* Wait for every rank (nothing when not under MPI). */
void ranks_barrier(void);
/* v reduced over every rank, the result on every rank. */
double ranks_allreduce(double v, enum ranks_op op);

/*
 * Gather every rank's len bytes at buf into all (rank-major, ranks_size() * len bytes) on rank
 * 0; all is ignored elsewhere.  \return 0 or -errno with e.
 */
int ranks_gather(const void *buf, size_t len, void *all, struct llmio_error *e);
/* Every rank's host name into hosts (ranks_size() * RANKS_HOST_MAX bytes), on every rank. */
int ranks_hosts(char *hosts, struct llmio_error *e);

/*
 * This rank failed: print "llmio: rank R on HOST: MESSAGE" (e's message) to stderr and end the
 * whole MPI job with exit status code (MPI_Abort), so no rank waits in a barrier for it.
 * Returns (with code) only when not under MPI.
 */
int ranks_fail(int code, const struct llmio_error *e);
/*
 * The command is done with exit status code: 0 leaves MPI cleanly; any other code ends every
 * rank (a rank that fails alone must not leave the others in a barrier).  stopped: a SIGINT or
 * SIGTERM reached this rank (mpirun sends every rank SIGTERM on Ctrl-C and is already ending
 * the job); a non-zero code then leaves the process at once, as that signal would have ended
 * it, without an MPI_Abort that races mpirun's own teardown.  Returns code.
 */
int ranks_end(int code, bool stopped);

/* One rank's result for ranks_merge(). */
struct ranks_rank {
	const struct llmio_result *r;
	const char *host;
	unsigned rank;
};

/* What ranks_merge() found beyond the merged result. */
struct ranks_summary {
	unsigned ranks, hosts;
	double phase_s;      /* earliest start to latest end over ranks (IOR) */
	double start_skew_s; /* latest start - earliest start */
};

/*
 * Merge n ranks' results into agg exactly (docs/mpi.md): counts and bytes summed, histograms
 * bucket by bucket, CPU time summed, system CPU and device counters once per host (the first
 * rank of each host), runtime = earliest start to latest end; rates recomputed over it.
 * \return 0, or -EINVAL for n == 0.
 */
int ranks_merge(const struct ranks_rank *ranks, unsigned n, struct llmio_result *agg,
                struct ranks_summary *s);

/*
 * The "mpi" object of a record (record.c, kinds `mpi` and `rank`): the summary, one entry per
 * host and one per rank with its full job record.  layout may be NULL (recipes).
 */
cJSON *ranks_json(const struct ranks_rank *ranks, unsigned n, const struct ranks_summary *s,
                  const char *layout);

/*
 * Turn o into rank `rank`'s share of a job of `size` ranks: with RANKS_FILE_PER_PROCESS its own
 * file (filename + IOR's ".%08u" suffix) of its share of --size; with RANKS_SHARED_FILE its own
 * region of the one file (sequential read/write), or its share of the I/O over the whole file
 * (random patterns, as fio's jobs on one file).  reorder_shift (IOR -C): a reading rank uses
 * the file or region of rank (rank + shift) % size.  The share of rank r is size/N rounded to
 * bs, the remainder's blocks going to the first ranks (uneven shares are allowed).  Segments of
 * a shared region are kept in *src (free with ranks_share_release()).  \return 0 or -errno with e.
 */
struct ranks_share {
	struct llmio_file file;
	char path[LLMIO_PATH_MAX];
	void *segs; /* struct segsrc, when a region is used */
};
int ranks_job_share(struct llmio_job_opts *o, unsigned rank, unsigned size,
                    enum ranks_layout layout, unsigned reorder_shift, struct ranks_share *sh,
                    struct llmio_error *e);
void ranks_share_release(struct ranks_share *sh);
/*
 * Under mpirun: run this rank's share of o (ranks_job_share()) after a barrier, then gather and
 * merge every rank's result.  On rank 0 *agg is the merged result and *mpi (when mpi is not
 * NULL) the record's "mpi" object; elsewhere both are NULL.  A rank whose share or job fails
 * ends the MPI job with its message (ranks_fail()): this returns only on success.
 */
int ranks_job_run(struct llmio_job_opts *o, enum ranks_layout layout, bool reorder,
                  struct llmio_result **agg, cJSON **mpi, struct llmio_error *e);
/* Gather mine from every rank and merge on rank 0, as ranks_job_run() does after its job. */
int ranks_gather_merge(const struct llmio_result *mine, struct llmio_result **agg, cJSON **mpi,
                       const char *layout, struct llmio_error *e);

/*
 * Recipes: the hooks of a struct wl (its `dist` member) under MPI, NULL otherwise; after
 * wl_run(), ranks_wl_reduce() merges every stream of every phase over the ranks (rank 0's
 * streams become the merged results, each phase's wall_s the slowest rank's) and, on rank 0,
 * builds the record's "mpi" object (NULL elsewhere and without MPI).  \return 0 or -errno.
 */
struct wl;
struct wl_dist;
const struct wl_dist *ranks_wl(void);
int ranks_wl_reduce(struct wl *w, cJSON **mpi, struct llmio_error *e);

/* "file-per-process" / "shared-file"; parse returns -EINVAL for anything else. */
const char *ranks_layout_name(enum ranks_layout l);
int ranks_layout_parse(const char *s, enum ranks_layout *l, struct llmio_error *e);

#endif
