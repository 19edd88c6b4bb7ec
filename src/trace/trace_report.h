/* SPDX-License-Identifier: MIT */
/*
 * Analysis of a trace: per phase, process and file, bytes and calls, request sizes,
 * sequential fraction, latency percentiles per call type (llmio's histogram), concentration of
 * bytes over files (Lorenz curve), top files and time in I/O.  Functions return 0 or -errno.
 */
#ifndef LLMIO_TRACE_REPORT_H
#define LLMIO_TRACE_REPORT_H

#include <stdio.h>

#include "trace/trace_read.h"
#include "base/error.h"

struct trace_analysis;

/* Analyse t (which must stay open while the analysis is used).  NULL: out of memory. */
struct trace_analysis *trace_analyze(struct trace *t);
void trace_analysis_destroy(struct trace_analysis *a);

/*
 * Fit the distributions of bytes and accesses over the files (trace_fit.h): seconds for a
 * trace of many files, so apart from trace_analyze(); the text and JSON reports and the
 * rank-size plot's line include them once fitted.  0 or -ENOMEM.
 */
int trace_analysis_fit(struct trace_analysis *a);

/* The full text report (top: how many files to list). */
int trace_report_text(const struct trace_analysis *a, FILE *f, unsigned top);
/* One JSON object with keys files, processes, phases, totals (docs/tracing.md). */
int trace_report_json(const struct trace_analysis *a, FILE *f);
/* The short summary printed after a capture. */
int trace_report_summary(const struct trace_analysis *a, FILE *f);
/*
 * Plots into dir (created if missing): lorenz.dat + lorenz.svg (the concentration of bytes
 * over files) and sizes.dat + sizes.svg (request sizes).  The .gp scripts are kept; without
 * gnuplot only data and scripts are written and *plotted is false.
 */
int trace_report_plots(const struct trace_analysis *a, const char *dir, bool *plotted,
                       struct llmio_error *e);

/* Concentration: the smallest fraction of files that carries frac of all bytes (0..1). */
double trace_analysis_concentration(const struct trace_analysis *a, double frac);

/* Every record of t as a line of text, after the header, processes and phase events as
 * comments: `llmio trace dump`, whose columns docs/tracing.md lists. */
void trace_dump(FILE *f, const struct trace *t);

#endif
