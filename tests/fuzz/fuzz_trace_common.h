/* SPDX-License-Identifier: MIT */
/*
 * Shared by the trace harnesses: write a built trace to an in-memory file, and do with an
 * opened trace what `llmio trace report` does (per-thread index, analysis, text, JSON and
 * summary reports, into /dev/null).
 */
#ifndef LLMIO_FUZZ_TRACE_COMMON_H
#define LLMIO_FUZZ_TRACE_COMMON_H

#include "fuzz_common.h"

#include "trace/trace_read.h"
#include "trace/trace_report.h"
#include "trace/trace_write.h"

/* Write b as a merged trace into a memfd named in path; the descriptor, or -1 on failure. */
/*
 * Import an strace log held in memory into b (initialised here; release it after).
 * \return the importer's 0 or -errno; an empty log is -EINVAL (fmemopen needs a buffer).
 */
static inline int fuzz_import_strace(struct trace_builder *b, const uint8_t *data, size_t size)
{
	struct llmio_error err = {0};
	FILE *in;
	int ret;

	if (trace_builder_init(b))
		abort();
	if (!size)
		return -EINVAL;
	in = fmemopen((void *)data, size, "r");
	if (!in)
		abort();
	ret = trace_import_strace(b, in, &err);
	fclose(in);
	return ret;
}

static inline int fuzz_trace_write(struct trace_builder *b, char *path, size_t len)
{
	int fd = fuzz_file(NULL, 0, path, len), fd2 = dup(fd);
	FILE *f = fd2 < 0 ? NULL : fdopen(fd2, "w");
	int ret;

	if (!f)
		abort();
	ret = trace_builder_write(b, f);
	if (fclose(f) || ret) {
		fuzz_file_close(fd);
		return -1;
	}
	return fd;
}

/* `llmio trace report` (text and --json) and the summary `llmio trace` prints. */
static inline void fuzz_trace_report(const char *path, unsigned flags)
{
	static FILE *null;
	struct trace_analysis *a;
	struct trace *t = NULL;
	struct llmio_error err = {0};
	size_t n;

	if (!null && !(null = fopen("/dev/null", "we")))
		abort();
	if (trace_open(path, flags, &t, &err))
		return;
	trace_threads(t, &n);
	for (size_t i = 0; i < t->nrec; i++) {
		trace_rec_path(t, &t->rec[i]);
		trace_proc_find(t, t->rec[i].pid);
		trace_type_name(t->rec[i].type);
	}
	a = trace_analyze(t);
	if (a) {
		trace_report_summary(a, null); /* what a capture prints: without the fits */
		if (!trace_analysis_fit(a)) {
			trace_report_text(a, null, 10);
			trace_report_json(a, null);
		}
		trace_analysis_concentration(a, 0.9);
		trace_analysis_destroy(a);
	}
	trace_close(t);
}

/* A built trace as the CLI leaves it: written whole, then opened and reported. */
static inline void fuzz_trace_write_report(struct trace_builder *b)
{
	char path[64];
	int fd = fuzz_trace_write(b, path, sizeof(path));

	if (fd < 0)
		return;
	fuzz_trace_report(path, 0);
	fuzz_file_close(fd);
}

#endif
