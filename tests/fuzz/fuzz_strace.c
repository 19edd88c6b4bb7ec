/* SPDX-License-Identifier: MIT */
/*
 * strace logs (src/trace/trace_strace.c), as `llmio trace import-strace` reads them, and the
 * imported trace written, opened and reported as `llmio trace report` would (the path that
 * issue 15's pid 0xFFFFFFFF took to crash the reader).
 */
#include "fuzz_trace_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct trace_builder b;
	char path[64], err[1024];
	FILE *in;
	int fd;

	if (!size)
		return 0; /* fmemopen needs a buffer; an empty log is the empty-file test's */
	in = fmemopen((void *)data, size, "r");
	if (!in)
		abort();
	if (trace_builder_init(&b))
		abort();
	if (trace_import_strace(&b, in, err, sizeof(err)) == 0) {
		fd = fuzz_trace_write(&b, path, sizeof(path));
		if (fd >= 0) {
			fuzz_trace_report(path, 0);
			fuzz_file_close(fd);
		}
	}
	trace_builder_release(&b);
	fclose(in);
	return 0;
}
