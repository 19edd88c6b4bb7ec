/* SPDX-License-Identifier: MIT */
/*
 * Trace files: a merged trace (src/trace/trace_read.c), as `llmio trace report` and replay
 * open it, or, when the input starts with the raw magic "LLMIORAW", a per-process raw file
 * from the preload library, merged as `llmio trace` merges its directory
 * (src/trace/trace_merge.c) and then opened and reported the same way.
 *
 * A raw file is at least a 4 KiB header and a 64 KiB chunk of mostly zeros, too large for the
 * fuzzer to mutate well, so the input is its compact form: the header's first 56 bytes (its
 * fields before the command line), then the chunks' slots, 64-byte records from slot 0 (the
 * TR_RAW_CHUNK marker) on.  The harness pads the header to TRACE_RAW_HDR and each chunk to
 * TRACE_CHUNK with zeros.  tests/data/fuzz/trace/raw-* are real files in this form.
 */
#include "fuzz_trace_common.h"

#include <sys/stat.h>

static char dir[4096];
static char raw[sizeof(dir) + 16];

static void cleanup(void)
{
	unlink(raw);
	rmdir(dir);
}

/* A directory of its own under $TMPDIR (scripts/fuzz.sh and ctest point it into the build). */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("TMPDIR");

	(void)argc;
	(void)argv;
	snprintf(dir, sizeof(dir), "%s/llmio-fuzz-trace.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		abort();
	snprintf(raw, sizeof(raw), "%s/1.0.trace", dir);
	atexit(cleanup);
	return 0;
}

#define RAW_FIELDS 56 /* struct trace_raw_hdr up to cmdline */

/* The compact input expanded into the directory's raw file (see above). */
static void write_raw(const uint8_t *data, size_t size)
{
	static const uint8_t zero[TRACE_CHUNK];
	size_t head = size < RAW_FIELDS ? size : RAW_FIELDS, body = size - head;
	size_t chunks = (body + TRACE_CHUNK - 1) / TRACE_CHUNK;
	FILE *f = fopen(raw, "we");
	int bad;

	if (!f)
		abort();
	bad = fwrite(data, 1, head, f) != head ||
	      fwrite(zero, 1, TRACE_RAW_HDR - head, f) != TRACE_RAW_HDR - head ||
	      fwrite(data + head, 1, body, f) != body;
	if (body % TRACE_CHUNK)
		bad |= fwrite(zero, 1, chunks * TRACE_CHUNK - body, f) !=
		       chunks * TRACE_CHUNK - body;
	if (fclose(f) || bad)
		abort();
}

/* The raw file into the directory, merged, written as a merged trace and reported. */
static void merge_raw(const uint8_t *data, size_t size)
{
	struct trace_builder b;
	struct llmio_error err = {0};

	write_raw(data, size);
	if (trace_builder_init(&b))
		abort();
	if (trace_merge_dir(&b, dir, &err) == 0)
		fuzz_trace_write_report(&b);
	trace_builder_release(&b);
	unlink(raw);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	int fd;

	if (size >= 8 && !memcmp(data, TRACE_RAW_MAGIC, 8)) {
		merge_raw(data, size);
		return 0;
	}
	fd = fuzz_file(data, size, path, sizeof(path));
	fuzz_trace_report(path, 0);
	fuzz_trace_report(path, TRACE_OPEN_RAW_PHASES);
	fuzz_file_close(fd);
	return 0;
}
