/* SPDX-License-Identifier: MIT */
/* llmio engines: every datapath, whether it can run on this machine (and why not), options. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

int cmd_engines(int argc, char **argv)
{
	struct llmio_engine_info e;
	struct llmio_engine_option_info o;
	bool verbose = true;
	int unavailable = 0;

	static const struct option longopts[] = {
	        {"brief", no_argument, NULL, 'b'},
	        {"help", no_argument, NULL, 'h'},
	        {NULL, 0, NULL, 0},
	};
	struct cli_getopt g = CLI_GETOPT_QUIET("engines", argc, argv, "-:h", longopts);
	int c;

	while ((c = cli_getopt_next(&g)) != -1) {
		switch (c) {
		case 'h':
			printf("usage: llmio engines [--brief]\n\n"
			       "Lists every engine, whether it can run on this machine and, if "
			       "not,\n"
			       "exactly why, and each engine's options with their defaults.\n"
			       "--brief leaves the options out.  Exit status 0.\n");
			return 0;
		case 'b':
			verbose = false;
			break;
		default: /* an unknown option, or an operand (1): engines takes none */
			fprintf(stderr, "llmio engines: unknown option '%s'\n",
			        cli_getopt_word(&g, c));
			return EXIT_USAGE;
		}
	}
	for (size_t i = 0; llmio_engine_info(i, &e) == 0; i++) {
		char why[512];
		int ret = llmio_engine_probe(e.name, why, sizeof(why));

		printf("%-9s %-13s %s\n", e.name, ret ? "unavailable" : "available", e.summary);
		printf("          %s, %s\n",
		       e.async ? "asynchronous (iodepth = I/Os in flight)"
		               : "synchronous (one I/O at a time per thread)",
		       e.supports_direct ? "O_DIRECT supported" : "page cache only");
		if (ret) {
			printf("          why: %s\n", why);
			unavailable++;
		} else if (why[0]) {
			printf("          uses: %s\n",
			       why); /* what a foreign-library engine loaded */
		}
		for (size_t k = 0; verbose && llmio_engine_option(i, k, &o) == 0; k++) {
			char name[64];

			snprintf(name, sizeof(name), "--%s=%s", o.name, o.def);
			printf("          %-24s %s%s%s%s\n", name, o.help, o.alias ? " (fio: " : "",
			       o.alias ? o.alias : "", o.alias ? ")" : "");
		}
	}
	(void)unavailable;
	return 0;
}
