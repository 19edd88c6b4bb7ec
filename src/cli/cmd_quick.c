/* SPDX-License-Identifier: MIT */
/*
 * llmio quick (and `llmio` with no arguments): a phase-aware look at this machine's storage
 * in about a minute.  Every engine that can run here does each pattern of the plan
 * (src/sweep/quick.c) on one scratch file, O_DIRECT where the engine and the filesystem
 * support it (llmio_direct_probe asks the filesystem; it is never guessed from a failed run).
 * This file parses, runs the plan's points and prints the table.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/progress.h"
#include "base/fmt.h"
#include "sweep/quick.h"

#define MAX_RESULTS 64
#define MAX_ENGINES 32

struct quick {
	char dir[LLMIO_PATH_MAX];
	/* llmio's own directory, made fresh in dir (DIR/llmio-quick.XXXXXX), and its file */
	char scratch[LLMIO_PATH_MAX - 16];
	char file[LLMIO_PATH_MAX];
	uint64_t size;
	uint64_t runtime_ns;
	bool keep;
	const char *json, *csv;
	struct llmio_result *res[MAX_RESULTS];
	const struct quick_pattern *pat[MAX_RESULTS];
	size_t nres;
	/* the progress line: point k of n, the one running */
	unsigned k, n;
	const char *engine;
	const struct quick_pattern *running;
	unsigned depth; /* the depth it runs at: 1 for a synchronous engine */
};

static void help(FILE *f)
{
	fprintf(f,
	        "usage: llmio [quick] [--dir DIR] [--size SIZE] [--runtime TIME] [--keep]\n"
	        "                    [--json FILE] [--csv FILE] [--progress|--no-progress]\n\n"
	        "A quick, phase-aware look at this machine's storage (about one minute).  For\n"
	        "every engine that can run here it measures inference-like patterns (4 KiB and\n"
	        "128 KiB random reads at QD 1 and 32) and training-like patterns (1 MiB "
	        "sequential\n"
	        "read and write at QD 8), O_DIRECT where the engine and the filesystem support it\n"
	        "(the filesystem is asked first), on one scratch file; prints one table (GB/s,\n"
	        "IOPS, p50, p99, GB/s per core, device bytes) and the best engine per pattern;\n"
	        "then removes the scratch data.\n\n"
	        "  --dir DIR       scratch directory (default ./llmio-scratch; created if "
	        "missing)\n"
	        "  --size SIZE     scratch file size (default 1GiB, less when space is short)\n"
	        "  --runtime TIME  measured time per point (default 2s)\n"
	        "  --keep          keep the scratch file (DIR/llmio-quick.XXXXXX/scratch)\n"
	        "  --json FILE     all results as JSON (fio layout plus llmio's fields)\n"
	        "  --csv FILE      all results as CSV\n"
	        "  --progress      the progress line (point k of N, ETA) even when stderr is not "
	        "a\n"
	        "                  terminal; --no-progress: never\n\n"
	        "Synchronous engines (psync, mmap) run QD 1 only: their rows say QD1, the random\n"
	        "QD 32 patterns skip them (the same run as QD 1), and the best engine of a deeper\n"
	        "pattern is chosen among the engines that ran at its depth; a QD 1 engine that\n"
	        "beats them is named beside it with \"at QD 1\".\n"
	        "Rows are marked [shared disk] when the disk moved much more than llmio did, and\n"
	        "[busy machine] when other work used the CPUs (docs/metrics.md).\n"
	        "Ctrl-C stops at the next point: the table holds the points that finished, the\n"
	        "interrupted one is marked and not ranked, and the exit status is 1.\n"
	        "exit status: 0 success, 1 runtime failure or interrupted, 2 usage error\n"
	        "(including a --json/--csv path that cannot be written, checked before the "
	        "run).\n");
}

static int parse(struct quick *q, int argc, char **argv)
{
	static const struct option longopts[] = {
	        {"dir", required_argument, NULL, 'd'},
	        {"size", required_argument, NULL, 's'},
	        {"runtime", required_argument, NULL, 'r'},
	        {"json", required_argument, NULL, 'j'},
	        {"csv", required_argument, NULL, 'c'},
	        {"keep", no_argument, NULL, 'k'},
	        {"help", no_argument, NULL, 'h'},
	        PROGRESS_LONGOPTS,
	        {NULL, 0, NULL, 0},
	};
	struct cli_getopt g = CLI_GETOPT_QUIET("quick", argc, argv, "-:h", longopts);
	int c;

	while ((c = cli_getopt_next(&g)) != -1) {
		if (progress_getopt(c))
			continue;
		switch (c) {
		case 1: /* `llmio` alone runs quick: its own name may be among the arguments */
			if (!strcmp(optarg, "quick"))
				break;
			fprintf(stderr, "llmio: unknown option '%s' (see `llmio quick --help`)\n",
			        optarg);
			return EXIT_USAGE;
		case 'h':
			help(stdout);
			return -1;
		case 'k':
			q->keep = true;
			break;
		case 'd':
			if (strlen(optarg) >=
			    sizeof(q->dir) - 48) { /* room for the scratch names */
				fprintf(stderr, "llmio: --dir is too long\n");
				return EXIT_USAGE;
			}
			snprintf(q->dir, sizeof(q->dir), "%s", optarg);
			break;
		case 's':
			if (llmio_parse_size(optarg, &q->size) || q->size < QUICK_MIN_SIZE) {
				fprintf(stderr,
				        "llmio: --size %s is not valid: expected a size of at "
				        "least 16m such as 256m or 1GiB\n",
				        optarg);
				return EXIT_USAGE;
			}
			break;
		case 'r':
			if (llmio_parse_duration(optarg, &q->runtime_ns) || !q->runtime_ns) {
				fprintf(stderr,
				        "llmio: --runtime %s is not valid: expected a time such "
				        "as 2s or 500ms\n",
				        optarg);
				return EXIT_USAGE;
			}
			break;
		case 'j':
			q->json = optarg;
			break;
		case 'c':
			q->csv = optarg;
			break;
		default:
			if (g.noval)
				fprintf(stderr,
				        "llmio: %s needs a value (see `llmio quick --help`)\n",
				        g.bad);
			else
				fprintf(stderr,
				        "llmio: unknown option '%s' (see `llmio quick --help`)\n",
				        g.bad);
			return EXIT_USAGE;
		}
	}
	return 0;
}

/* 1 GiB unless the filesystem is short of space: then a quarter of what is free. */
static int choose_size(struct quick *q)
{
	uint64_t free_bytes = 0;
	int ret = quick_choose_size(q->dir, q->size, &q->size, &free_bytes);

	if (ret == -ENOSPC)
		fprintf(stderr,
		        "llmio: not enough free space in %s (%llu MiB free); use --dir on "
		        "another filesystem\n",
		        q->dir, (unsigned long long)(free_bytes >> 20));
	return ret;
}

static int write_json(FILE *f, void *arg)
{
	struct quick *q = arg;

	return llmio_results_write_json(f, q->res, q->nres);
}

static int write_csv(FILE *f, void *arg)
{
	struct quick *q = arg;

	return llmio_results_write_csv(f, q->res, q->nres);
}

/* "4k rand read QD32": the pattern with the depth that ran (or the pattern's own). */
static void label(char *buf, size_t len, const struct quick_pattern *p, uint32_t qd)
{
	snprintf(buf, len, "%s QD%u", p->name, qd);
}

/*
 * One pattern's line: the best at the pattern's depth; a shallower run (a synchronous engine
 * at QD 1) is never that pattern's best, but is named when it beat them, or when nothing ran
 * at the depth, with the depth it ran at.
 */
static void print_best(const struct quick *q, const struct quick_pattern *p, bool direct, char *buf,
                       size_t len)
{
	const char *what = direct ? "O_DIRECT" : "page cache";
	size_t used = strlen(buf);
	struct quick_best b;
	char rate[32];

	quick_best(q->res, q->pat, q->nres, p, direct, &b);
	if (b.at && used < len) {
		fmt_rate(rate, sizeof(rate), quick_gbps(b.at) * 1e9);
		used += (size_t)snprintf(buf + used, len - used, "%s%s: %s %s, %.2f GB/s/core",
		                         used ? "; " : "", what, b.at->opts.engine, rate,
		                         b.at->gb_per_s_per_core);
	}
	if (b.low && used < len) {
		fmt_rate(rate, sizeof(rate), quick_gbps(b.low) * 1e9);
		snprintf(buf + used, len - used, "%s%s%s: %s at QD 1 %s", used ? "; " : "",
		         b.at ? "faster " : "", what, b.low->opts.engine, rate);
	}
}

/* The row's marks: what makes its figures partial or not the job's own (docs/metrics.md). */
static const char *marks(const struct llmio_result *r, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s", r->interrupted ? "  [interrupted: not ranked]" : "",
	         r->shared_disk ? "  [shared disk]" : "", r->busy_system ? "  [busy machine]" : "");
	return buf;
}

#define QUICK_COLS 12

static void print_table(const struct quick *q)
{
	static const char *const head[QUICK_COLS] = {"phase",     "pattern",  "engine",    "direct",
	                                             "GB/s",      "IOPS",     "p50",       "p99",
	                                             "GB/s/core", "dev read", "dev write", "notes"};
	bool stopped = false, shared = false, busy = false;
	char(*text)[48] = calloc((q->nres + 1) * QUICK_COLS, sizeof(*text));
	const char **cells = calloc((q->nres + 1) * QUICK_COLS, sizeof(*cells));
	struct fmt_table t = {.cells = cells,
	                      .rows = q->nres + 1,
	                      .ncols = QUICK_COLS,
	                      .nkey = 3,
	                      .sep = "  ",
	                      .align = "lllrrrrrrrrl"};

	if (!text || !cells) {
		free(text);
		free(cells);
		return;
	}
	for (size_t i = 0; i < (q->nres + 1) * QUICK_COLS; i++)
		cells[i] = text[i];
	for (int c = 0; c < QUICK_COLS; c++)
		snprintf(text[c], sizeof(text[c]), "%s", head[c]);
	/* the pattern's name holds the depth that ran (QD1 for a synchronous engine): each value
	 * once */
	for (size_t i = 0; i < q->nres; i++) {
		const struct llmio_result *r = q->res[i];
		const struct llmio_op_result *op = r->write.ios ? &r->write : &r->read;
		char(*row)[48] = &text[(i + 1) * QUICK_COLS];
		char mark[80];

		snprintf(row[0], 48, "%s", q->pat[i]->phase);
		label(row[1], 48, q->pat[i], r->iodepth_effective);
		snprintf(row[2], 48, "%s", r->opts.engine);
		snprintf(row[3], 48, "%s", r->direct_in_effect ? "yes" : "no");
		snprintf(row[4], 48, "%.3f", quick_gbps(r));
		fmt_count(row[5], 48, r->read.iops + r->write.iops);
		fmt_ns(row[6], 48, llmio_hist_percentile(&op->clat, 50));
		fmt_ns(row[7], 48, llmio_hist_percentile(&op->clat, 99));
		snprintf(row[8], 48, "%.2f", r->gb_per_s_per_core);
		if (r->device.known) {
			fmt_bytes(row[9], 48, (double)r->device.read_bytes);
			fmt_bytes(row[10], 48, (double)r->device.write_bytes);
		} else {
			snprintf(row[9], 48, "n/a");
			snprintf(row[10], 48, "n/a");
		}
		marks(r, mark, sizeof(mark));
		snprintf(row[11], 48, "%s", mark + strspn(mark, " "));
		stopped |= r->interrupted;
		shared |= r->shared_disk;
		busy |= r->busy_system;
	}
	putchar('\n');
	fmt_table_print(stdout, &t);
	free(text);
	free(cells);
	printf("\nbest engine per pattern (highest GB/s; GB/s per core breaks near-ties). Direct\n"
	       "and page-cache results are ranked apart: a cached figure is not a device "
	       "figure.\nA pattern's best ran at its depth; synchronous engines ran at QD 1 and "
	       "are named so.\n");
	for (size_t p = 0; p < quick_npatterns; p++) {
		const struct quick_pattern *pat = &quick_patterns[p];
		char name[48], prefix[80], best[512] = "";

		label(name, sizeof(name), pat, pat->iodepth);
		snprintf(prefix, sizeof(prefix), "  %-10s %-19s ", pat->phase, name);
		print_best(q, pat, true, best, sizeof(best));
		print_best(q, pat, false, best, sizeof(best));
		fmt_wrapped(stdout, prefix, strlen(prefix), best);
	}
	if (stopped)
		printf("\nthe point marked [interrupted] stopped early: its figures are partial\n");
	if (shared)
		printf("\n[shared disk]: the disk moved much more than llmio did meanwhile "
		       "(another "
		       "program's I/O):\nits dev read/write columns are not llmio's, and its "
		       "figures may be low; run again on a quiet disk\n");
	if (busy)
		printf("\n[busy machine]: other work used the CPUs during the point: its latency "
		       "and GB/s per core\nmay be worse than this machine can do; run again when "
		       "it is quiet\n");
}

/* Point k of n: its live figures, and the time left for it and the points after it. */
static void on_progress(void *arg, double elapsed_s, double eta_s, double iops, double bw)
{
	const struct quick *q = arg;
	const double per_point = (double)q->runtime_ns / 1e9;
	char c[32], rate[32], eta[48];

	fmt_count(c, sizeof(c), iops);
	fmt_rate(rate, sizeof(rate), bw);
	(void)elapsed_s;
	progress_eta(eta, sizeof(eta), eta_s + per_point * (q->n - q->k));
	progress_draw(false, "[point %u/%u] %s %s QD%u: %s IOPS, %s%s", q->k, q->n, q->engine,
	              q->running->name, q->depth, c, rate, eta);
}

static int run_point(struct quick *q, const struct llmio_engine_info *eng, bool direct,
                     const struct quick_pattern *p)
{
	struct llmio_job_opts o;
	struct llmio_result *r = NULL;
	struct llmio_error e = {0};
	char eta[48];
	int ret;

	if (q->nres >= MAX_RESULTS)
		return 0;
	quick_job_opts(&o, eng->name, q->file, q->size, q->runtime_ns, direct, p);
	o.stop = &cli_stop;
	o.progress = on_progress;
	o.progress_arg = q;
	q->k++;
	q->engine = eng->name;
	q->depth = eng->async ? p->iodepth : 1; /* as its row will say */
	q->running = p;
	progress_eta(eta, sizeof(eta), (double)q->runtime_ns / 1e9 * (q->n - q->k + 1));
	progress_draw(true, "[point %u/%u] %s %s QD%u: preparing%s", q->k, q->n, eng->name, p->name,
	              q->depth, eta);
	ret = llmio_job_run(&o, &r, &e);
	progress_clear();
	if (ret) {
		fprintf(stderr, "llmio: %s %s QD%u: %s\n", eng->name, p->name, p->iodepth, e.msg);
		llmio_result_destroy(r);
		return ret;
	}
	q->pat[q->nres] = p;
	q->res[q->nres++] = r;
	return 0;
}

int cmd_quick(int argc, char **argv)
{
	struct quick q = {.runtime_ns = 2000000000ull};
	bool made_dir = false;
	struct llmio_engine_info e;
	char why[LLMIO_PATH_MAX + 128];
	struct llmio_error serr = {0};
	bool direct_ok = true;
	struct llmio_engine_info run[MAX_ENGINES];
	size_t nrun = 0;
	int ret, code = 0;

	snprintf(q.dir, sizeof(q.dir), "llmio-scratch");
	ret = parse(&q, argc, argv);
	if (ret)
		return ret < 0 ? 0 : ret;
	if ((q.json && (ret = cli_output_usable("quick", q.json, CLI_OUT_FILE))) ||
	    (q.csv && (ret = cli_output_usable("quick", q.csv, CLI_OUT_FILE))))
		return ret; /* before the run: an unwritable path must not cost its results */
	if (mkdir(q.dir, 0755) == 0)
		made_dir = true;
	else if (errno != EEXIST) {
		fprintf(stderr, "llmio: cannot create %s: %s; choose another --dir\n", q.dir,
		        strerror(errno));
		return EXIT_RUNTIME;
	}
	/*
	 * The scratch data lives in a directory made fresh for this run (mkdtemp), so no name
	 * can be a user's file: a user's DIR/llmio.0 is neither read, written nor removed.
	 */
	if (llmio_scratch_dir(q.dir, "llmio-quick", q.scratch, sizeof(q.scratch), &serr)) {
		fprintf(stderr, "llmio: %s; choose another --dir\n", serr.msg);
		code = EXIT_RUNTIME;
		goto out_clean;
	}
	snprintf(q.file, sizeof(q.file), "%s/scratch", q.scratch);
	if (choose_size(&q)) {
		code = EXIT_RUNTIME;
		goto out_clean;
	}
	cli_install_signals();
	{
		char size[32], file[72], per[32];

		fmt_bytes(size, sizeof(size), (double)q.size);
		fmt_path(file, sizeof(file), q.file, 56);
		fmt_seconds(per, sizeof(per), (double)q.runtime_ns / 1e9);
		char text[256], prefix[48];

		snprintf(text, sizeof(text), "%s scratch file %s, %s per point", size, file, per);
		snprintf(prefix, sizeof(prefix), "llmio %s: ", llmio_version());
		fmt_wrapped(stdout, prefix, 2, text);
	}
	if (llmio_direct_probe(q.scratch, why, sizeof(why)) == -EINVAL) {
		direct_ok = false; /* asked of the filesystem: no point tries O_DIRECT */
		printf("  %s: every point runs through the page cache\n", why);
	}
	/* the engines that can run here first: the progress line counts the points */
	for (size_t i = 0; llmio_engine_info(i, &e) == 0 && nrun < MAX_ENGINES; i++) {
		char prefix[64];

		if (!quick_engine_measured(&e))
			continue; /* no I/O: it measures llmio itself, not the storage */
		if (llmio_engine_probe(e.name, why, sizeof(why))) {
			snprintf(prefix, sizeof(prefix), "  skipping %s: ", e.name);
			fmt_wrapped(stdout, prefix, 4, why);
			continue;
		}
		run[nrun++] = e;
		for (size_t p = 0; p < quick_npatterns; p++)
			q.n += quick_engine_runs(&e, &quick_patterns[p]);
	}
	for (size_t i = 0; i < nrun && !cli_stop; i++) {
		for (size_t p = 0; p < quick_npatterns && !cli_stop; p++) {
			if (!quick_engine_runs(&run[i], &quick_patterns[p]))
				continue; /* same as QD1 for a synchronous engine */
			ret = run_point(&q, &run[i], run[i].supports_direct && direct_ok,
			                &quick_patterns[p]);
			if (ret)
				code = cli_exit_code(ret);
		}
	}
	print_table(&q);
	if (cli_stop) {
		/* as `run`: a stopped measurement is not a success */
		fprintf(stderr, "llmio: interrupted: the table holds the points that finished; "
		                "the one stopped early is marked and not ranked\n");
		code = EXIT_RUNTIME;
	}
	if (q.json && (ret = cli_write_file(q.json, write_json, &q))) {
		fprintf(stderr, "llmio: cannot write %s: %s\n", q.json, strerror(-ret));
		code = EXIT_RUNTIME;
	}
	if (q.csv && (ret = cli_write_file(q.csv, write_csv, &q))) {
		fprintf(stderr, "llmio: cannot write %s: %s\n", q.csv, strerror(-ret));
		code = EXIT_RUNTIME;
	}
out_clean:
	for (size_t i = 0; i < q.nres; i++)
		llmio_result_destroy(q.res[i]);
	if (q.scratch[0]) {
		char size[32], text[LLMIO_PATH_MAX + 96];
		struct stat st;

		const bool made_file = stat(q.file, &st) == 0; /* else: nothing to tell */

		fmt_bytes(size, sizeof(size), made_file ? (double)st.st_size : 0);
		if (!made_file) {
			if (!q.keep)
				llmio_scratch_remove(q.scratch);
		} else if (q.keep) { /* the whole path: it says where the data is */
			snprintf(text, sizeof(text), "left 1 file, %s in %s (--keep)", size,
			         q.scratch);
			fputc('\n', stdout);
			fmt_wrapped(stdout, "", 2, text);
		} else if (!llmio_scratch_remove(q.scratch)) {
			snprintf(text, sizeof(text), "removed the scratch file, %s, and %s", size,
			         q.scratch);
			fputc('\n', stdout);
			fmt_wrapped(stdout, "", 2, text);
		}
	}
	if (!q.keep && made_dir)
		rmdir(q.dir);
	return code;
}
