/* SPDX-License-Identifier: MIT */
/* llmio engines: every datapath, whether it can run on this machine (and why not), options. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "engine/engine.h"

int cmd_engines(int argc, char **argv)
{
	struct llmio_engine_info e;
	struct llmio_engine_option_info o;
	bool verbose = true;
	int unavailable = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			printf("usage: llmio engines [--brief]\n\n"
			       "Lists every engine, whether it can run on this machine and, if "
			       "not,\n"
			       "exactly why, and each engine's options with their defaults.\n"
			       "--brief leaves the options out.  Exit status 0.\n");
			return 0;
		}
		if (!strcmp(argv[i], "--brief")) {
			verbose = false;
			continue;
		}
		fprintf(stderr, "llmio engines: unknown option '%s'\n", argv[i]);
		return EXIT_USAGE;
	}
	for (size_t i = 0; llmio_engine_info(i, &e) == 0; i++) {
		char why[512];
		int ret = llmio_engine_probe(e.name, why, sizeof(why));

		printf("%-9s %-13s %s\n", e.name, ret ? "unavailable" : "available", e.summary);
		printf("          %s, %s\n",
		       e.async ? "asynchronous (iodepth = I/Os in flight)"
		               : "synchronous (one I/O at a time per thread)",
		       (engine_find(e.name)->caps & ENGINE_CAP_OWN_TARGET)
		               ? "its own targets (no local file or page cache)"
		       : e.supports_direct ? "O_DIRECT supported"
		                           : "page cache only");
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
