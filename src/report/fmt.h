/* SPDX-License-Identifier: MIT */
/*
 * How results read in a terminal: the number formats every table shares (run, quick, sweep,
 * report, advise, trace) and the one-job result table.  Part of the report layer, so the trace
 * tools and the CLI print figures the same way without either depending on the other.
 */
#ifndef LLMIO_REPORT_FMT_H
#define LLMIO_REPORT_FMT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "llmio/llmio.h"
#include "core/error.h"

/* A duration: "812 ns", "12.5 us", "3.1 ms", "12.00 s". */
void fmt_ns(char *buf, size_t len, uint64_t ns);
/* A count or rate: "950", "12.3k", "1.25M". */
void fmt_count(char *buf, size_t len, double v);
/* A block size as a sweep writes it: "4k", "1m", or the number of bytes when not whole KiB. */
void fmt_size(char *buf, size_t len, uint64_t bytes);

/* Terminal output fits this many columns. */
#define FMT_COLUMNS 100

/*
 * prefix, then text broken at spaces so that no line is wider than FMT_COLUMNS; every further
 * line is indented by indent spaces; a newline at the end.  A word longer than a line stays
 * whole.
 */
void fmt_wrapped(FILE *f, const char *prefix, size_t indent, const char *text);

/* The result of one job as `llmio run` prints it (src/report/table.c). */
void table_print_result(FILE *f, const struct llmio_result *r);

/*
 * The fio job file equivalent to job o (src/report/emit_fio.c); cmdline is the llmio command
 * line it came from, quoted in a comment.  \return 0, or -EINVAL with the reason in e.
 */
int emit_fio_job(FILE *f, const struct llmio_job_opts *o, const char *cmdline,
                 struct llmio_error *e);

#endif
