/* SPDX-License-Identifier: MIT */
/*
 * fio's jobs as fio runs them (docs/fio.md), for `llmio run FILE.fio`, `llmio run --name=a
 * ... --name=b ...` and any program: the files fio names for a job, a job file's section as
 * a job, and the jobs run group by group (stonewall, new_group) with group_reporting's merge.
 * Printing, fio's output formats and logs stay with the caller.
 */
#ifndef LLMIO_SWEEP_FIO_JOBS_H
#define LLMIO_SWEEP_FIO_JOBS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "llmio/llmio.h"
#include "sweep/sweep.h"

/* The files fio would name for a job (fio_files_make()); freed by fio_files_free(). */
struct fio_files {
	struct llmio_file *list; /* two files or more: the job's explicit file list */
	char *names;             /* their paths, LLMIO_PATH_MAX each */
};

/*
 * fio's files of job o (docs/fio.md, "Files"), from a command line or a job file: filename
 * inside directory, a ':' list of files (fio's "\:" is a colon in a name), filename_format,
 * and, with neither filename nor directory, fio's default names JOBNAME.CLONE.N in the working
 * directory.  o then names them as the library takes them (filename, or o->files from ff);
 * directory alone stays llmio's own work directory.  0, or -EINVAL / -ENOMEM with e set.
 */
int fio_files_make(struct llmio_job_opts *o, struct fio_files *ff, struct llmio_error *e);
void fio_files_free(struct fio_files *ff);

struct fio_run;

struct fio_job {
	struct llmio_job_opts o;
	struct fio_files files; /* o's file list, when fio names several */
	unsigned group;         /* fio's groupid: a new one at stonewall or new_group */
	unsigned wave;          /* jobs run together: a new wave at stonewall */
	struct llmio_result *r;
	struct llmio_error e;
	int ret;
	pthread_t thread;
	/* fio_jobs_run()'s: the run, the job o.wait_for names, its stop flag and state */
	struct fio_run *run;
	size_t waitee;
	volatile int stop;
	bool started, done, measuring;
	bool gated;  /* laying out its files: the wave's jobs start measuring together */
	bool exited; /* stopped by another job's exitall */
};

/* A job file's section as a job: fio's defaults where they differ from llmio's, then its keys
 * (one value each).  0, or -EINVAL with e naming the file, line and key. */
int fio_job_section(const struct sweep_section *s, struct llmio_job_opts *o, struct llmio_error *e);

/* What a run hands each job: its stop flag, and for a job that runs alone, the progress line. */
struct fio_run_hooks {
	volatile int *stop;
	void (*progress)(void *arg, double elapsed_s, double eta_s, double iops, double bw_bytes);
	void (*prepare_progress)(void *arg, uint64_t done, uint64_t total);
	void (*one_done)(void); /* after a job that ran alone */
};

/*
 * Run jobs[0, njobs): the jobs of a wave together (a thread each), waves one after the other;
 * each job's outcome in its r, ret and e.  Nothing starts once *h->stop is set.  As fio: a job
 * with wait_for starts when the named earlier job has ended (a name that is no earlier job's is
 * refused in its ret before anything runs); with exitall in any job, a job that ends stops the
 * others its exit_what names (such a job's result is not interrupted); the logs are numbered
 * across the jobs (log_index).
 */
void fio_jobs_run(struct fio_job *jobs, size_t njobs, const struct fio_run_hooks *h);

/* The results to report, in res[0, *n) (njobs room): each job's, or each group's merge with
 * group_reporting (merged[k]: res[k] is the caller's to destroy), with its fio groupid. */
int fio_jobs_collect(struct fio_job *jobs, size_t njobs, struct llmio_result **res, unsigned *group,
                     size_t *n, bool *merged);
void fio_jobs_free(struct fio_job *jobs, size_t n);

#endif
