/* SPDX-License-Identifier: MIT */
/*
 * llmio replay FILE --engine E --dir DIR: the `replay` workload recipe under its own name.
 * Everything after FILE is passed on, so job options (--iodepth, --direct ...) and the
 * recipe's parameters (--timeline, --bs) work as in `llmio run --workload replay`.
 */
#include <getopt.h>
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
	static const struct option longopts[] = {
	        {"dir", required_argument, NULL, 'd'},
	        {"help", no_argument, NULL, 'h'},
	        {NULL, 0, NULL, 0},
	};
	/* from the word after TRACE; everything but --dir and --help passes on in its order */
	struct cli_getopt g = {.cmd = "replay",
	                       .argc = argc - 1,
	                       .argv = argv + 1,
	                       .shortopts = "-:h",
	                       .longopts = longopts,
	                       .pass_unknown = true};
	const char *last = NULL;
	char **av;
	int ac = 0, ret, c;

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
	av = calloc(2 * (size_t)argc + 8, sizeof(*av)); /* --dir=X becomes two words */
	if (!av)
		return EXIT_RUNTIME;
	av[ac++] = "run";
	av[ac++] = "--workload";
	av[ac++] = "replay";
	av[ac++] = "--trace";
	av[ac++] = argv[1];
	/* replay is buffered unless asked: traced offsets are rarely O_DIRECT-aligned */
	av[ac++] = "--direct=0";
	while ((c = cli_getopt_next(&g)) != -1) {
		switch (c) {
		case 'h':
			free(av);
			help(stdout);
			return 0;
		case 'd':
			av[ac++] = "--directory";
			av[ac++] = optarg;
			break;
		case 1: /* a value or an operand: run judges it */
			av[ac++] = optarg;
			break;
		case CLI_OPT_OTHER:        /* a job option or a recipe parameter: run's to judge */
			if (g.bad != last) /* once per word, even for a group of short options */
				av[ac++] = (char *)g.bad;
			last = g.bad;
			break;
		default: /* CLI_OPT_BAD: --dir without its value (the helper said so) */
			free(av);
			return EXIT_USAGE;
		}
	}
	ret = cmd_run_workload(ac, av);
	free(av);
	return ret;
}
