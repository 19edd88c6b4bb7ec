/* SPDX-License-Identifier: MIT */
/* Shared pieces of the subcommands. */
#ifndef LLMIO_CLI_H
#define LLMIO_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "llmio/llmio.h"

#define EXIT_USAGE   2
#define EXIT_RUNTIME 1

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

int cmd_run(int argc, char **argv);
/* llmio run --workload NAME (src/cli/run_workload.c). */
int cmd_run_workload(int argc, char **argv);
int cmd_engines(int argc, char **argv);
int cmd_quick(int argc, char **argv);
int cmd_model(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_advise(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_results(int argc, char **argv);
int cmd_trace(int argc, char **argv);
int cmd_replay(int argc, char **argv);

/* Set by SIGINT / SIGTERM; handed to jobs as opts.stop. */
extern volatile int cli_stop;
/* Also set by SIGINT / SIGTERM when not NULL (a sweep's current point). */
extern volatile int *cli_stop_also;
void cli_install_signals(void);

/* Progress line on stderr when it is a terminal (a llmio_job_opts.progress callback). */
void cli_progress(void *arg, double elapsed_s, double eta_s, double iops, double bw_bytes);
void cli_progress_clear(void);

/* Exit code for an llmio_job_run() failure: 2 for usage (-EINVAL), 1 otherwise. */
int cli_exit_code(int ret);

/*
 * Write a file all at once: fn writes to a temporary file beside path, which is renamed over
 * path only when everything succeeded, so a failure never leaves a half-written file.
 */
/* Can path be written (its directory exists and is writable)?  Checked before a run. */
int cli_check_writable(const char *path);

/* The engine that has an option called key, or NULL. */
const char *cli_engine_owning(const char *key);

int cli_write_file(const char *path, int (*fn)(FILE *f, void *arg), void *arg);

/*
 * Parse "--key=value" / "--key value" / "--flag" arguments of job options into opts; engine
 * options go to opts->engine_opts.  Unknown keys are returned through *unknown (argv index)
 * for the caller's own flags.  \return 0, or EXIT_USAGE after printing the error.
 */
int cli_parse_job_arg(struct llmio_job_opts *opts, int argc, char **argv, int *i, bool *handled);

/* Tables (src/report/table.c). */
void table_print_result(FILE *f, const struct llmio_result *r);
void fmt_ns(char *buf, size_t len, uint64_t ns);
void fmt_count(char *buf, size_t len, double v);

/*
 * The fio job file equivalent to job o (src/report/emit_fio.c); cmdline is the llmio command
 * line it came from, quoted in a comment.  \return 0, or -EINVAL with the reason in err.
 */
int emit_fio_job(FILE *f, const struct llmio_job_opts *o, const char *cmdline, char *err,
                 size_t errlen);

#endif
