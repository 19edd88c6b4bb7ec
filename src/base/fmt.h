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
#include "base/error.h"

/* A duration: "812 ns", "12.5 us", "3.1 ms", "12.00 s". */
void fmt_ns(char *buf, size_t len, uint64_t ns);
/*
 * Human units for a person (tables, progress lines; JSON and CSV keep plain numbers): three
 * significant digits, never an exponent.
 *
 * fmt_ns: a duration in ns: "812 ns", "12.5 us", "3.14 ms", "12.0 s".
 * fmt_seconds: the same from seconds (and "2 h 05 min" beyond 1000 s).
 * fmt_params: a parameter count: "8.03 B", "124 M".
 * fmt_hms: whole seconds, compact, for a progress line's ETA: "45s", "3m07s", "2h05m".
 * fmt_bytes: binary units: "512 B", "4.00 KiB", "501 MiB", "3.88 GiB".
 * fmt_rate: bytes per second in decimal units, as llmio's GB/s: "378 MB/s", "1.77 GB/s".
 * fmt_number: a plain figure: "0.993", "12.9", "9.02k".
 * fmt_metric: a figure with its unit ("B", "s", "us", "GB/s" ... or any other, printed after
 * it) in the matching one of the above.
 */
void fmt_seconds(char *buf, size_t len, double s);
void fmt_hms(char *buf, size_t len, double s);
void fmt_params(char *buf, size_t len, uint64_t n);
void fmt_bytes(char *buf, size_t len, double bytes);
void fmt_rate(char *buf, size_t len, double bytes_per_s);
void fmt_number(char *buf, size_t len, double v);
void fmt_metric(char *buf, size_t len, double v, const char *unit);
/*
 * A record key in words for a human table: "load_time_s" -> "load time", "cpu_s" -> "CPU",
 * "samples_per_s" -> "samples" (the unit goes with the value).  JSON keys are not renamed.
 */
void fmt_words(char *buf, size_t len, const char *key);
/* path, shortened to width columns with "..." in the middle when longer. */
void fmt_path(char *buf, size_t len, const char *path, size_t width);

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

/*
 * A table fitted into FMT_COLUMNS: cells holds rows x ncols strings, row by row, the header
 * first.  Columns that do not fit go into a further table (after a blank line) that repeats
 * the first nkey columns; a column too wide to fit even alone beside them is wrapped at
 * spaces within the width left.  align: one 'l' or 'r' per column (NULL: all left).
 */
#define FMT_TABLE_MAX_COLS 16
struct fmt_table {
	const char *const *cells;
	size_t rows, ncols, nkey;
	const char *sep;   /* between columns: "  ", " | " */
	const char *align; /* may be NULL */
	size_t indent;     /* spaces before every line */
};
void fmt_table_print(FILE *f, const struct fmt_table *t);

/* The result of one job as `llmio run` prints it (src/report/table.c). */
void table_print_result(FILE *f, const struct llmio_result *r);

/*
 * The fio job file equivalent to job o (src/report/emit_fio.c); cmdline is the llmio command
 * line it came from, quoted in a comment.  \return 0, or -EINVAL with the reason in e.
 */
int emit_fio_job(FILE *f, const struct llmio_job_opts *o, const char *cmdline,
                 struct llmio_error *e);

/* The n bytes of s as HTML text: & < > " ' as entities, the rest as they are. */
void fmt_html(FILE *f, const char *s, size_t n);

#endif
