/* SPDX-License-Identifier: MIT */
/*
 * Replay plans (src/workload/replay.c): the `replay` recipe opens a trace, plans every traced
 * thread's I/O (files, offsets, sizes, pieces of at most bs, fsyncs, phases), names the files
 * and checks the space, then runs the job.  The input is a merged trace (it starts with
 * "LLMIOTRC") or an strace log, imported first; bit 0 of the last byte turns on --timeline.
 *
 * The job is given a directory that does not exist, so that it stops at its first file:
 * everything up to the I/O is fuzzed and nothing is written anywhere.  The recipe's run() is
 * called as wl_run() calls it once it has made llmio's directory in --directory, which it
 * cannot do in a directory that does not exist (through wl_run() the recipe never ran).
 */
#include "fuzz_trace_common.h"

#include "workload/workload.h"

#define NO_DIR "/nonexistent/llmio-fuzz-replay"

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
	const struct recipe *r = recipe_find("replay");
	struct llmio_job_opts base;
	struct llmio_error err = {0};
	char path[64];
	struct wl *w;
	int fd;

	if (!size)
		return 0;
	fd = trace_file(data, size, path, sizeof(path));
	if (fd < 0)
		return 0;
	w = malloc(sizeof(*w));
	if (!r || !w)
		abort();
	llmio_job_opts_init(&base);
	snprintf(base.directory, sizeof(base.directory), "%s", NO_DIR);
	wl_init(w, r, &base);
	if (wl_set(w, "trace", path, &err) ||
	    wl_set(w, "timeline", data[size - 1] & 1 ? "1" : "0", &err))
		abort();
	r->run(w, &err);
	wl_release(w);
	free(w);
	fuzz_file_close(fd);
	return 0;
}
