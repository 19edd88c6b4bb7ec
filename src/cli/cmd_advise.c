/* SPDX-License-Identifier: MIT */
/* llmio advise: the best datapath per LLM phase, from a sweep journal. */
#include <errno.h>
#include <stdlib.h>
#include <getopt.h>
#include <string.h>

#include "cli/cli.h"
#include "report/report.h"

static void help(FILE *f)
{
	fprintf(f,
	        "usage: llmio advise FILE.jsonl [--json]\n\n"
	        "For each phase of an LLM's life, the datapath (engine and its options) and "
	        "settings\n"
	        "(queue depth, threads, block size) that did best on this machine, by how much "
	        "over\n"
	        "the runner-up (with the spread of the repeats), and the records behind it:\n"
	        "  inference       small random reads (<= 64 KiB): lowest p99 among the points "
	        "that\n"
	        "                  reach 25%% of the best IOPS\n"
	        "  pre-training /  large sequential reads and writes (>= 128 KiB): GB/s, then "
	        "GB/s\n"
	        "  fine-tuning     per core when GB/s is inside the noise\n"
	        "  checkpointing   large writes with fsync: GB/s, then GB/s per core\n"
	        "  model loading   large sequential reads: GB/s, then GB/s per core\n"
	        "  KV-cache offload (randrw), activation / KV spill (randwrite), shuffled sample\n"
	        "  loading (random reads > 64 KiB), dataset streaming (sequential reads < 128 "
	        "KiB)\n"
	        "  and dataset preparation (sequential writes < 128 KiB): GB/s, then GB/s per "
	        "core\n"
	        "Like with like: points served by the page cache (or mixed, or where that cannot\n"
	        "be told) are ranked only among themselves, never against device-bound ones; "
	        "every\n"
	        "phase's device answer comes first, then the page-cache ones, each labelled in\n"
	        "the \"served by\" column.  Records out of range are skipped with a warning.\n"
	        "Recipe records (workload=) are classed by their phase names.  When the data "
	        "cannot\n"
	        "decide (one datapath, fewer than 3 repeats, a difference inside the noise) it "
	        "says\n"
	        "\"too thin\" and what to measure next.  It also says where this machine agrees\n"
	        "with the guideline of the study llmio follows.  Rules: docs/report.md.\n\n"
	        "  --json   the same as JSON on stdout\n\n"
	        "exit status: 0 success, 1 runtime failure, 2 bad usage or a file that is not a "
	        "journal.\n");
}

static int write_text(FILE *f, void *arg)
{
	const void *const *a = arg;

	return advise_write_text(f, a[0], a[1]);
}

static int write_json(FILE *f, void *arg)
{
	const void *const *a = arg;

	return advise_write_json(f, a[0], a[1]);
}

int cmd_advise(int argc, char **argv)
{
	static const struct option opts[] = {{"json", no_argument, NULL, 'j'},
	                                     {"help", no_argument, NULL, 'h'},
	                                     {NULL, 0, NULL, 0}};
	struct cli_getopt g = {
	        .cmd = "advise", .argc = argc, .argv = argv, .shortopts = ":h", .longopts = opts};
	struct advice_set *a = NULL;
	struct dataset d;
	const void *args[2];
	bool json = false;
	struct llmio_error e = {0};
	int c, ret;

	while ((c = cli_getopt_next(&g)) != -1) {
		if (c == 'h') {
			help(stdout);
			return 0;
		}
		if (c != 'j') /* CLI_OPT_BAD: the message is printed */
			return EXIT_USAGE;
		json = true;
	}
	if (g.next != argc - 1) {
		fprintf(stderr, "llmio advise: give one journal file: llmio advise FILE.jsonl\n");
		return EXIT_USAGE;
	}
	ret = dataset_load(&d, argv[g.next], &e);
	if (ret) {
		fprintf(stderr, "llmio advise: %s\n", e.msg);
		return ret == -ENOMEM || ret == -EIO ? EXIT_RUNTIME : EXIT_USAGE;
	}
	a = malloc(sizeof(*a));
	if (!a) {
		fprintf(stderr, "llmio advise: out of memory\n");
		dataset_release(&d);
		return EXIT_RUNTIME;
	}
	advise_all(&d, a);
	args[0] = &d;
	args[1] = a;
	ret = cli_write_file("-", json ? write_json : write_text, args);
	if (ret)
		fprintf(stderr, "llmio advise: cannot write the advice: %s\n", strerror(-ret));
	free(a);
	dataset_release(&d);
	return ret ? EXIT_RUNTIME : 0;
}
