/* SPDX-License-Identifier: MIT */
/*
 * exclude= expressions (src/sweep/matrix.c): parsed as a job file's section would parse them
 * (the first byte chooses a plain or a workload= section; the rest is the expression), then
 * evaluated against a fixed configuration, so that every comparison path runs.
 */
#include "fuzz_common.h"

#include "sweep/sweep.h"

static const struct sweep_config config = {
        .n = 8,
        .kv =
                {
                        {.key = "bs", .raw = "4k", .canon = "4096"},
                        {.key = "iodepth", .raw = "32", .canon = "32"},
                        {.key = "ioengine", .raw = "io_uring", .canon = "io_uring"},
                        {.key = "numjobs", .raw = "4", .canon = "4"},
                        {.key = "rw", .raw = "randread", .canon = "randread"},
                        {.key = "size", .raw = "1g", .canon = "1073741824"},
                        {.key = "sqpoll", .raw = "1", .canon = "1"},
                        {.key = "workload", .raw = "load", .canon = "load"},
                },
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sweep_expr *e = NULL;
	struct llmio_error err = {0};
	char *text;

	if (!size)
		return 0;
	text = fuzz_str(data + 1, size - 1);
	if (sweep_expr_parse(text, data[0] & 1, &e, &err) == 0) {
		sweep_expr_eval(e, &config);
		sweep_expr_free(e);
	}
	free(text);
	return 0;
}
