/* SPDX-License-Identifier: MIT */
/*
 * fio at home in `llmio run` (docs/fio.md): fio's output options (--output-format, --output)
 * and fio job files run as fio runs them (run_fio.c).
 */
#ifndef LLMIO_CLI_RUN_FIO_H
#define LLMIO_CLI_RUN_FIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "llmio/llmio.h"
#include "sweep/fio_jobs.h"

/* What fio's --output-format and --output ask for, and the results to write. */
struct run_out {
	bool normal, json, plus; /* normal (the table), json, json+ (clat_ns bins) */
	const char *path;        /* --output FILE; NULL = stdout */
	struct llmio_result **r;
	const unsigned *group; /* fio groupid of each result; NULL = all 0 (a command line) */
	size_t n;
	bool together; /* a job's threads in one table only (under mpirun: the merged job) */
};

/*
 * --output-format=normal|json|json+ (a comma list) and --output FILE: *handled when argv[*i]
 * is one of them.  0, or EXIT_USAGE after printing the error.
 */
int run_out_arg(struct run_out *out, int argc, char **argv, int *i, bool *handled);

/* Write what out asks for to f (cli_write_file's signature).  0 or -errno. */
int run_out_write(FILE *f, void *arg);

/*
 * fio's logs of r (write_bw_log, write_lat_log, write_iops_log), if its options ask for them;
 * a warning when a thread's log was cut short.  0, or EXIT_RUNTIME after printing the error.
 */
int run_logs_write(const struct llmio_result *r);

/*
 * The engine of argv[from, to) (--ioengine, --engine) into o: it decides which engine options
 * exist, so it is found before the rest is parsed.  0, or EXIT_USAGE after printing the error.
 */
int run_find_engine(struct llmio_job_opts *o, int argc, char **argv, int from, int to);

/* The one line for an argument of `llmio run` that is no option of engine's.  EXIT_USAGE. */
int run_unknown_arg(const char *a, const char *engine);

/* How many jobs argv names: its --name options (fio's one job each). */
int run_names(int argc, char **argv);

/*
 * `llmio run --name=a ... --name=b ...`: fio's jobs of a command line, one per --name with the
 * options after it, over the options before the first (fio's global options); run as a job
 * file's jobs are (run_jobfile()).  Returns the exit status.
 */
int run_cmdline_jobs(int argc, char **argv);

/*
 * Is argv[i] a fio job file for `llmio run FILE.fio`: the first argument when it is not an
 * option, or any argument naming an existing file that ends in ".fio".
 */
bool run_is_jobfile(int argc, char **argv, int i);

/*
 * `llmio run FILE.fio [output options]`: the job file's sections run as fio runs them (the
 * jobs of a group at once, groups one after the other, split by stonewall; [global]
 * inherited) and are reported per job, or per group with group_reporting.  Returns the exit
 * status (0, 1 runtime, 2 usage).
 */
int run_jobfile(int argc, char **argv, int file_arg);

#endif
