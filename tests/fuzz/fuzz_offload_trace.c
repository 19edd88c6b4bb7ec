/* SPDX-License-Identifier: MIT */
/*
 * The offload recipe's trace (src/workload/offload.c, `--workload offload --trace FILE`, the
 * format python/llmio_offload.py writes: "layer bytes fwd_us bwd_us" lines, "# step N"): the
 * recipe's run() on it up to the tensor store, which it is given in a directory that does not
 * exist, so that it stops there: the layers of the last step, their pieces and the buffers are
 * fuzzed, and nothing is written anywhere (fuzz_recipe.h).
 * --tensor is 1 MiB (the recipe's default, 64 MiB, would make every input two 64 MiB
 * buffers); bit 0 of the last byte turns on --layers 2.
 */
#include "fuzz_recipe.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	int fd;

	if (!size)
		return 0;
	fd = fuzz_file(data, size, path, sizeof(path));
	fuzz_recipe_run("offload",
	                (const char *const[][2]){{"trace", path},
	                                         {"tensor", "1m"},
	                                         {"steps", "1"},
	                                         {"layers", data[size - 1] & 1 ? "2" : "0"}},
	                4);
	fuzz_file_close(fd);
	return 0;
}
