/* SPDX-License-Identifier: MIT */
/*
 * CHECK for the programs the trace tests run (trace_prog.c, trace_edge.c): a condition that must
 * hold, or the program says which, where, and errno, and exits 1.
 */
#ifndef LLMIO_TESTS_TRACE_CHECK_H
#define LLMIO_TESTS_TRACE_CHECK_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(x)                                                                                   \
	do {                                                                                       \
		if (!(x)) {                                                                        \
			fprintf(stderr, "%s: %s failed at line %d: %s\n",                          \
			        program_invocation_short_name, #x, __LINE__, strerror(errno));     \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

#endif
