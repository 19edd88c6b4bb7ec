/* SPDX-License-Identifier: MIT */
/*
 * llmio replay FILE --engine E --dir DIR: the `replay` workload recipe under its own name.
 * Everything after FILE is passed on, so job options (--iodepth, --direct ...) and the
 * recipe's parameters (--timeline, --bs) work as in `llmio run --workload replay`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static void help(FILE *f)
{
	fprintf(f,
	        "usage: llmio replay TRACE --dir DIR [--engine E|all] [--timeline 1] [--bs SIZE]\n"
	        "                    [job options] [--json FILE]\n\n"
	        "Re-creates the files a traced program read and wrote (same sizes, synthetic\n"
	        "content) in DIR and replays every traced thread's reads and writes, at their\n"
	        "offsets and sizes, and its fsyncs (after the I/Os before them), through the\n"
	        "chosen engine: as fast as possible, or with --timeline 1 on the original\n"
	        "schedule (absolute times, so delays never add up).  Reports the usual metrics\n"
	        "and, per traced phase, the original and the replayed time, bytes and fsyncs.\n"
	        "TRACE comes from `llmio trace` or `llmio trace import-strace`.\n"
	        "Buffered by default (the program's offsets are rarely aligned); --direct 1\n"
	        "widens every I/O to 4 KiB boundaries.  Details: docs/tracing.md.\n");
}

int cmd_replay(int argc, char **argv)
{
	char **av;
	int ac = 0, ret;

	if (argc < 2) {
		fprintf(stderr, "llmio replay: give a trace file: llmio replay TRACE --dir DIR "
		                "(see llmio replay --help)\n");
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		help(stdout);
		return 0;
	}
	if (argv[1][0] == '-') {
		fprintf(stderr, "llmio replay: the first argument is the trace file, not %s\n",
		        argv[1]);
		return EXIT_USAGE;
	}
	av = calloc((size_t)argc + 8, sizeof(*av));
	if (!av)
		return EXIT_RUNTIME;
	av[ac++] = "run";
	av[ac++] = "--workload";
	av[ac++] = "replay";
	av[ac++] = "--trace";
	av[ac++] = argv[1];
	/* replay is buffered unless asked: traced offsets are rarely O_DIRECT-aligned */
	av[ac++] = "--direct=0";
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			free(av);
			help(stdout);
			return 0;
		}
		av[ac++] = !strcmp(argv[i], "--dir") ? "--directory" : argv[i];
	}
	ret = cmd_run_workload(ac, av);
	free(av);
	return ret;
}
