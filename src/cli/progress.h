/* SPDX-License-Identifier: MIT */
/*
 * The progress line of every command that can take more than a few seconds (run, quick, the
 * workload recipes, replay, report): one line on stderr, redrawn in place with \r, at most
 * four times a second, and erased before anything else is printed, so that no output line
 * ever lands on a progress fragment.
 *
 * File preparation (a job laying out its files before it runs) is shown the same way, with
 * bytes done, rate and ETA (progress_layout).
 *
 * Shown when stderr is a terminal; --progress shows it anyway (into a file, for a log or a
 * test), --no-progress and --quiet never.  The library never prints: it calls back (a
 * llmio_job_opts.progress, a workload's on_step) and the CLI draws here.
 */
#ifndef LLMIO_CLI_PROGRESS_H
#define LLMIO_CLI_PROGRESS_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>

enum progress_mode {
	PROGRESS_AUTO, /* when stderr is a terminal (the default) */
	PROGRESS_ON,   /* --progress */
	PROGRESS_OFF,  /* --no-progress, --quiet */
};

void progress_set_mode(enum progress_mode m);

/* arg is --progress or --no-progress: its mode is set.  \return whether it was one of them. */
bool progress_option(const char *arg);

/*
 * The two options in a getopt_long table: PROGRESS_LONGOPTS among its entries, then
 * `if (progress_getopt(c)) continue;` before the switch on what getopt_long returned.
 */
#define PROGRESS_OPT_ON  0x150
#define PROGRESS_OPT_OFF 0x151
#define PROGRESS_LONGOPTS                                                                          \
	{"progress", no_argument, NULL, PROGRESS_OPT_ON},                                          \
	{                                                                                          \
		"no-progress", no_argument, NULL, PROGRESS_OPT_OFF                                 \
	}
bool progress_getopt(int c);

/* Will a progress line be drawn? */
bool progress_enabled(void);

/*
 * Draw the line (printf format), cut to fit the terminal's 100 columns.  A new step (force)
 * is drawn at once; updates within a step at most every 250 ms.  stdout is flushed first, so
 * that what a command printed before comes before the line, wherever both go.
 */
void progress_draw(bool force, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Erase the line, if one is shown.  Call before printing anything else. */
void progress_clear(void);

/*
 * The line's lock, for a caller whose progress state is updated from more than one thread (a
 * recipe's streams running together): hold it around the update and the draw.  Recursive.
 */
void progress_lock(void);
void progress_unlock(void);

/* ", ETA 12.0 s" into buf, or "" when eta_s is not known (0, negative or NaN). */
void progress_eta(char *buf, unsigned long len, double eta_s);

/*
 * A job laying out its files (llmio_job_opts.prepare_progress): "PREFIX: laying out 12.0 MiB
 * of 48.0 MiB, 812 MB/s, ETA 1.20 s", or without a prefix (NULL) "[laying out files] 12.0 MiB
 * of ..."; without a total, "12.0 MiB done".  The rate (from the second draw on) is measured
 * from the first call of this layout (a call whose done is below the last one's starts a new
 * layout), so files found complete, counted at once, do not inflate it.
 */
void progress_layout(const char *prefix, uint64_t done, uint64_t total);

/* progress_layout() as a prepare_progress callback: arg is the prefix, or NULL. */
void progress_layout_cb(void *arg, uint64_t done, uint64_t total);

#endif
