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

	if (fuzz_import_strace(&b, data, size) == 0)
		fuzz_trace_write_report(&b);
	trace_builder_release(&b);
	return 0;
}
