/* SPDX-License-Identifier: MIT */
/* Shared pieces of the subcommands. */
#ifndef LLMIO_CLI_H
#define LLMIO_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include "llmio/llmio.h"
#include "base/error.h"

#define EXIT_USAGE   2
#define EXIT_RUNTIME 1

/* A (sub)command: llmio's own table in main.c, and those of trace, model and results. */
struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

/*
 * Git-style dispatch: when argv[1] names an entry of table, run it with argv shifted by one
 * (argv[0] becomes the subcommand's name) and store its exit code in *code.  \return true when
 * dispatched; false leaves the caller to handle no argument or an unknown one in its own words.
 */
/*
 * One getopt_long loop for a subcommand, with one wording for what goes wrong:
 *
 *	struct cli_getopt g = {.cmd = "sweep", .argc = argc, .argv = argv,
 *	                       .shortopts = ":o:qh", .longopts = longopts};
 *	while ((c = cli_getopt_next(&g)) != -1)
 *		switch (c) { case 'o': ...; case CLI_OPT_BAD: return EXIT_USAGE; }
 *
 * The first call starts at argv[1]; operands are moved after the options (getopt_long's
 * order), so g.next is the first operand after the loop.  An unknown option prints
 * "llmio CMD: unknown option 'X' (see `llmio CMD --help`)", a missing value
 * "llmio CMD: X needs a value"; both return CLI_OPT_BAD.  shortopts must start with ':' (or
 * "-:" to get operands in order, as code 1 with their text in optarg).
 *
 * A prefix of a long option is an unknown option, never that option (getopt_long would take
 * "--di" for "--dir"): a shortened name in a script breaks when an option is added.
 */
struct cli_getopt {
	const char *cmd; /* as the messages name it: "sweep", "results" */
	int argc;
	char **argv;
	const char *shortopts;
	const struct option *longopts;
	bool quiet;        /* print nothing on CLI_OPT_BAD: the caller words it from bad / noval */
	bool pass_unknown; /* an unknown option is CLI_OPT_OTHER (its text in bad), not an error */
	int next;          /* after the loop: the index of the first operand */
	const char *bad;   /* after CLI_OPT_BAD / CLI_OPT_OTHER: the option as given */
	bool noval;        /* after CLI_OPT_BAD: bad lacks its value (else it is unknown) */
	bool started;      /* internal */
};

#define CLI_OPT_BAD   (-2)
#define CLI_OPT_OTHER (-3)

/* A quiet loop's state (the caller words refusals): struct cli_getopt g = CLI_GETOPT_QUIET(...) */
#define CLI_GETOPT_QUIET(name, ac, av, shorts, longs)                                              \
	{                                                                                          \
		.cmd = (name), .argc = (ac), .argv = (av), .shortopts = (shorts),                  \
		.longopts = (longs), .quiet = true                                                 \
	}

/* The word a quiet loop refused: an operand (c == 1, "-:" loops) or the option as given. */
const char *cli_getopt_word(const struct cli_getopt *g, int c);

int cli_getopt_next(struct cli_getopt *g);

bool cli_dispatch(const struct cmd *table, size_t n, int argc, char **argv, int *code);

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

/*
 * What a run leaves on disk, and where: "removed N files, X from DIR (--keep leaves them)" or
 * "left N files, X in DIR (--keep)", with the files that were there before and stay (the
 * recipes' and the sweep's one wording); the set form says it of every directory and of the
 * files named by filename=.
 */
struct wl_leftover;
struct wl_leftovers;
void cli_say_leftover(FILE *f, const struct wl_leftover *l, bool keep);
void cli_say_leftovers(FILE *f, const struct wl_leftovers *s, bool keep);

/* Exit code for an llmio_job_run() failure: 2 for usage (-EINVAL), 1 otherwise. */
int cli_exit_code(int ret);

/*
 * Output paths: one rule for every file or directory llmio is told to write (--json, --csv,
 * -o of run, quick, results export, trace, sweep's journal and report's directory), checked
 * before any work is done and applied again when writing (docs/output.md, "Output paths"):
 *
 *  - "-" is stdout (files only);
 *  - a new path or a regular file is replaced atomically: written whole to a temporary file in
 *    the same directory, fsynced, then renamed over it (a failure leaves the old file as it
 *    was);
 *  - a symbolic link is resolved and the rule applies to its target: the link stays a link;
 *  - a character device (/dev/null, /dev/stdout, a tty) or a FIFO is opened and written
 *    through, never replaced;
 *  - a directory (for a file), a block device, a socket, a dangling link, a missing parent
 *    directory or one that cannot be written (permissions, read-only filesystem) is refused.
 *
 * A journal (sweep -o) must be a regular file, or a new one: it is appended to, fsynced and
 * read back by --resume.  A report directory (report -o) is a new path or a directory; whether
 * an existing one may be replaced is the report's own decision.
 */
enum cli_out_kind {
	CLI_OUT_FILE,    /* a file written whole: JSON, CSV, a trace */
	CLI_OUT_JOURNAL, /* a file appended to: a sweep's journal */
	CLI_OUT_DIR,     /* a directory built beside it and renamed into place */
};

struct cli_out {
	char path[LLMIO_PATH_MAX]; /* what to write: the link's target when given a link */
	bool to_stdout;            /* "-" */
	bool through;              /* a character device or FIFO: open and write, no rename */
	bool exists;               /* path exists (a file, or a directory for CLI_OUT_DIR) */
};

/*
 * Apply the rule to path; out (may be NULL) says how to write it.  \return 0, or -errno with
 * one line in e naming the path, the problem and what to do (e may be NULL).
 */
int cli_output_check(const char *path, enum cli_out_kind kind, struct cli_out *out,
                     struct llmio_error *e);

/*
 * cli_output_check() for a subcommand's option before its run: prints "llmio CMD: PROBLEM" on
 * failure.  \return 0, or EXIT_USAGE: a path that cannot be written is a usage error.
 */
int cli_output_usable(const char *cmd, const char *path, enum cli_out_kind kind);

/* cli_output_check(path, CLI_OUT_FILE) without the message.  \return 0 or -errno. */
int cli_check_writable(const char *path);

/*
 * Write a file all at once by the rule above: fn writes to a stream (stdout for "-"); nothing
 * is published unless everything succeeded, and a write error comes back as its own errno
 * (ENOSPC, EDQUOT, EIO, ...), whatever fn made of it.  \return 0 or -errno.
 */
int cli_write_file(const char *path, int (*fn)(FILE *f, void *arg), void *arg);

/*
 * Parse "--key=value" / "--key value" / "--flag" arguments of job options into opts; engine
 * options go to opts->engine_opts.  Unknown keys are returned through *unknown (argv index)
 * for the caller's own flags.  \return 0, or EXIT_USAGE after printing the error.
 */
int cli_parse_job_arg(struct llmio_job_opts *opts, int argc, char **argv, int *i, bool *handled);

#endif
