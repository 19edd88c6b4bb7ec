/* SPDX-License-Identifier: MIT */
/* llmio: the command table.  Each subcommand lives in its own cmd_<name>.c. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "engine/engine.h"

static const struct cmd commands[] = {
        {"run", cmd_run, "run one job (fio-style options) and measure it"},
        {"engines", cmd_engines,
         "list the datapaths, whether each can run here, and their options"},
        {"quick", cmd_quick,
         "the default: a one-minute phase-aware look at this machine's storage"},
        {"model", cmd_model, "the model catalog and the sizes derived from a model"},
        {"report", cmd_report, "a sweep journal as Markdown + HTML with gnuplot charts"},
        {"advise", cmd_advise, "the best datapath per LLM phase, from a sweep journal"},
        {"sweep", cmd_sweep, "run a job file's matrix of points into a results journal"},
        {"results", cmd_results, "export a results journal (CSV)"},
        {"trace", cmd_trace, "trace a program's file I/O; report, import strace logs"},
        {"replay", cmd_replay, "replay a trace through any engine, fast or on its timeline"},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: llmio [COMMAND] [OPTIONS]\n\n"
	           "With no command, llmio runs `quick`.\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\n`llmio COMMAND --help` describes each.  llmio %s\n", llmio_version());
}

int main(int argc, char **argv)
{
	int code;

	/* a process an engine started of this program (s3-agent's agent: engine.h, process_main) */
	code = engine_process_main(argc, argv);
	if (code >= 0)
		return code;
	if (argc < 2 || argv[1][0] == '-') {
		if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
			usage(stdout);
			return 0;
		}
		if (argc >= 2 && !strcmp(argv[1], "--version")) {
			printf("llmio %s\n", llmio_version());
			return 0;
		}
		/* `llmio --dir X` is `llmio quick --dir X` */
		return cmd_quick(argc, argv);
	}
	if (cli_dispatch(commands, sizeof(commands) / sizeof(commands[0]), argc, argv, &code))
		return code;
	if (!strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	fprintf(stderr, "llmio: unknown command '%s'\n\n", argv[1]);
	usage(stderr);
	return EXIT_USAGE;
}
