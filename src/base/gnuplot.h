/* SPDX-License-Identifier: MIT */
/*
 * Running gnuplot on a script the caller wrote: the one driver of the report's charts and the
 * trace report's.  gnuplot runs as a child in the script's directory (so the script names its
 * outputs relative to it), with stdin from /dev/null and stdout and stderr into GNUPLOT_LOG
 * there, never through a shell: a directory's name is never parsed.
 */
#ifndef LLMIO_BASE_GNUPLOT_H
#define LLMIO_BASE_GNUPLOT_H

#include "base/error.h"

/* what gnuplot printed, in the script's directory (opened without following a link) */
#define GNUPLOT_LOG "gnuplot.log"

/*
 * Runs gnuplot (from $LLMIO_GNUPLOT, else the first on PATH) on dir/script.  0 when it exited
 * 0; -ENOENT when there is none (the message names the package); -EIO when it failed (the
 * message quotes the first error line of its log).
 */
int gnuplot_run(const char *dir, const char *script, struct llmio_error *e);

#endif
