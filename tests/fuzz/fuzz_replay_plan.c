/* SPDX-License-Identifier: MIT */
/*
 * Replay plans (src/workload/replay.c): the `replay` recipe opens a trace, plans every traced
 * thread's I/O (files, offsets, sizes, pieces of at most bs, fsyncs, phases), names the files
 * and checks the space, then runs the job.  The input is a merged trace (it starts with
 * "LLMIOTRC") or an strace log, imported first; bit 0 of the last byte turns on --timeline.
 *
 * The job is given a directory that does not exist, so that it stops at its first file:
 * everything up to the I/O is fuzzed and nothing is written anywhere (fuzz_recipe.h; through
 * wl_run() the recipe would never run).
 */
#include "fuzz_trace_common.h"

#include "fuzz_recipe.h"

/* The input as a merged trace in a memfd: as it is, or imported from an strace log. */
static int trace_file(const uint8_t *data, size_t size, char *path, size_t len)
{
	struct trace_builder b;
	int fd = -1;

	if (size >= 8 && !memcmp(data, TRACE_MAGIC, 8))
		return fuzz_file(data, size, path, len);
	if (fuzz_import_strace(&b, data, size) == 0)
		fd = fuzz_trace_write(&b, path, len);
	trace_builder_release(&b);
	return fd;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	int fd;

	if (!size)
		return 0;
	fd = trace_file(data, size, path, sizeof(path));
	if (fd < 0)
		return 0;
	fuzz_recipe_run("replay",
	                (const char *const[][2]){{"trace", path},
	                                         {"timeline", data[size - 1] & 1 ? "1" : "0"}},
	                2);
	fuzz_file_close(fd);
	return 0;
}
