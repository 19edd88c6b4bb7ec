/* SPDX-License-Identifier: MIT */
/*
 * The offload recipe's trace (src/workload/offload.c, `--workload offload --trace FILE`, the
 * format python/llmio_offload.py writes: "layer bytes fwd_us bwd_us" lines, "# step N"): the
 * recipe's run() on it up to the tensor store, which it is given in a directory that does not
 * exist, so that it stops there: the layers of the last step, their pieces and the buffers are
 * fuzzed, and nothing is written anywhere.  run() is called as wl_run() calls it once it has
 * made llmio's directory in --directory, which would fail on a directory that does not exist.
 * --tensor is 1 MiB (the recipe's default, 64 MiB, would make every input two 64 MiB
 * buffers); bit 0 of the last byte turns on --layers 2.
 */
#include "fuzz_common.h"

#include "workload/workload.h"

#define NO_DIR "/nonexistent/llmio-fuzz-offload"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct recipe *r = recipe_find("offload");
	struct llmio_job_opts base;
	struct llmio_error err = {0};
	char path[64];
	struct wl *w;
	int fd;

	if (!size)
		return 0;
	w = malloc(sizeof(*w));
	if (!r || !w)
		abort();
	fd = fuzz_file(data, size, path, sizeof(path));
	llmio_job_opts_init(&base);
	snprintf(base.directory, sizeof(base.directory), "%s", NO_DIR);
	wl_init(w, r, &base);
	if (wl_set(w, "trace", path, &err) || wl_set(w, "tensor", "1m", &err) ||
	    wl_set(w, "steps", "1", &err) ||
	    wl_set(w, "layers", data[size - 1] & 1 ? "2" : "0", &err))
		abort();
	r->run(w, &err);
	wl_release(w);
	free(w);
	fuzz_file_close(fd);
	return 0;
}
