/* SPDX-License-Identifier: MIT */
/*
 * fio at home in `llmio run` (docs/fio.md): fio's output options (--output-format, --output)
 * and fio job files run as fio runs them (run_fio.c).
 */
#ifndef LLMIO_CLI_RUN_FIO_H
#define LLMIO_CLI_RUN_FIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "llmio/llmio.h"

/* What fio's --output-format and --output ask for, and the results to write. */
struct run_out {
	bool normal, json, plus; /* normal (the table), json, json+ (clat_ns bins) */
	const char *path;        /* --output FILE; NULL = stdout */
	struct llmio_result **r;
	const unsigned *group; /* fio groupid of each result; NULL = all 0 */
	size_t n;
};

/*
 * --output-format=normal|json|json+ (a comma list) and --output FILE: *handled when argv[*i]
 * is one of them.  0, or EXIT_USAGE after printing the error.
 */
int run_out_arg(struct run_out *out, int argc, char **argv, int *i, bool *handled);

/* Write what out asks for to f (cli_write_file's signature).  0 or -errno. */
int run_out_write(FILE *f, void *arg);

#endif
