/* SPDX-License-Identifier: MIT */
/* llmio report: a sweep journal as a Markdown report, an HTML page and gnuplot charts. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/progress.h"
#include "base/error.h"
#include "base/fmt.h"
#include "report/report.h"

static void help(FILE *f)
{
	fprintf(f,
	        "usage: llmio report FILE.jsonl [-o DIR] [--no-charts] "
	        "[--progress|--no-progress]\n\n"
	        "Turns a sweep journal (what `llmio sweep -o` writes) into DIR/report.md and\n"
	        "DIR/index.html (self-contained, opens offline) with charts drawn by gnuplot as "
	        "PNG\n"
	        "and SVG: throughput and p99 latency vs queue depth, IOPS vs block size, latency\n"
	        "CDF from the merged histograms, CPU efficiency (GB/s per core) per datapath, the\n"
	        "per-phase breakdown of recipe workloads, and the advisor's table.  Every chart "
	        "has\n"
	        "a table with the same numbers.  Repeats of a configuration are folded by their\n"
	        "median; torn lines (a sweep killed mid-write) and records holding numbers out of\n"
	        "range are reported and skipped.  Points served by the page cache are named\n"
	        "\"ENGINE (page cache)\" or \"(mixed)\" in every chart and table, and All points\n"
	        "says who served each (docs/metrics.md, \"Page cache or device\").\n\n"
	        "  -o, --output DIR   where the report goes (default: FILE without .jsonl, plus\n"
	        "                     -report).  DIR is replaced whole when the report is "
	        "complete;\n"
	        "                     an existing DIR must be an earlier llmio report; a symlink\n"
	        "                     is followed; a file or an unwritable parent is refused\n"
	        "                     before anything is read (exit 2).\n"
	        "  --no-charts        tables only (no gnuplot needed)\n"
	        "  --progress         the progress line (the step, lines read) even when stderr\n"
	        "                     is not a terminal; --no-progress: never\n\n"
	        "The charts' gnuplot script stays in DIR as charts.gp.  gnuplot is found on PATH\n"
	        "or through $LLMIO_GNUPLOT.  Rules for grouping and medians: docs/report.md.\n"
	        "exit status: 0 success, 1 runtime failure (gnuplot, writing DIR), 2 bad usage or\n"
	        "a file that is not a journal.\n");
}

/* The journal is read: lines so far (0: a warning is about to be printed). */
static void on_line(void *arg, unsigned line)
{
	if (!line)
		progress_clear();
	else
		progress_draw(false, "[1/3] reading %s: %u lines", (const char *)arg, line);
}

/* Remove a report directory: it only ever holds the plain files a report writes. */
static int remove_dir(const char *dir)
{
	char path[LLMIO_PATH_MAX + 300];
	struct dirent *e;
	DIR *d = opendir(dir);
	int ret = 0;

	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (unlink(path) && !ret)
			ret = -errno;
	}
	closedir(d);
	if (rmdir(dir) && !ret)
		ret = -errno;
	return ret;
}

/* May dir be replaced?  Yes when it is missing, or an earlier report of plain files. */
static bool replaceable(const char *dir, bool *exists)
{
	char path[LLMIO_PATH_MAX + 300];
	struct dirent *e;
	struct stat st;
	bool ok = true, marked = false;
	DIR *d;

	*exists = !lstat(dir, &st);
	if (!*exists)
		return true;
	if (!S_ISDIR(st.st_mode) || !(d = opendir(dir)))
		return false;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (lstat(path, &st) || !S_ISREG(st.st_mode))
			ok = false;
		if (!strcmp(e->d_name, "index.html") || !strcmp(e->d_name, "report.md"))
			marked = true;
	}
	closedir(d);
	return ok && marked;
}

static int write_html(FILE *f, void *doc)
{
	return doc_write_html(f, doc);
}

static int write_md(FILE *f, void *doc)
{
	return doc_write_md(f, doc);
}

/* Through cli_write_file(): a full disk is reported as such, not as an I/O error. */
static int write_doc(const char *dir, const char *name, const struct doc *doc, bool html)
{
	char path[LLMIO_PATH_MAX + 32];

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	return cli_write_file(path, html ? write_html : write_md, (void *)doc);
}

/* Build the whole report in tmp; nothing is published unless every file was written. */
static int build(const struct dataset *d, const char *tmp, bool charts, struct llmio_error *e)
{
	struct plot *plot = NULL;
	struct doc *doc;
	int ret = -ENOMEM;

	doc = doc_create("llmio report: which datapath for which phase");
	if (!doc || (charts && !(plot = plot_create(tmp)))) {
		llmio_err(e, ret, "cannot start the report in %s: %s", tmp,
		          strerror(errno ? errno : ENOMEM));
		goto out;
	}
	progress_draw(true, "[2/3] building the tables from %zu points", d->np);
	ret = report_build(d, doc, plot);
	if (ret) {
		llmio_err(e, ret, "cannot build the report: %s", strerror(-ret));
		goto out;
	}
	if (plot)
		progress_draw(true, "[3/3] drawing the charts (gnuplot)");
	if (plot && (ret = plot_render(plot, e)))
		goto out;
	if ((ret = write_doc(tmp, "report.md", doc, false)) ||
	    (ret = write_doc(tmp, "index.html", doc, true)))
		llmio_err(e, ret, "cannot write the report into %s: %s", tmp, strerror(-ret));
out:
	plot_destroy(plot);
	doc_destroy(doc);
	return ret;
}

static int publish(const char *tmp, const char *dir, bool exists)
{
	char old[LLMIO_PATH_MAX + 32];
	int ret = 0;

	if (!exists)
		return rename(tmp, dir) ? -errno : 0;
	snprintf(old, sizeof(old), "%s.old.%d", dir, (int)getpid());
	if (rename(dir, old))
		return -errno;
	if (rename(tmp, dir)) {
		ret = -errno;
		rename(old, dir); /* put the earlier report back */
		return ret;
	}
	remove_dir(old);
	return 0;
}

int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {{"output", required_argument, NULL, 'o'},
	                                     {"no-charts", no_argument, NULL, 'n'},
	                                     PROGRESS_LONGOPTS,
	                                     {"help", no_argument, NULL, 'h'},
	                                     {NULL, 0, NULL, 0}};
	struct llmio_error e = {0};
	char dir[LLMIO_PATH_MAX], tmp[LLMIO_PATH_MAX + 32];
	const char *out = NULL, *file;
	struct dataset d;
	struct cli_out o;
	bool charts = true, exists;
	int c, ret;
	size_t n;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		if (progress_getopt(c))
			continue;
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'n':
			charts = false;
			break;
		case 'h':
			help(stdout);
			return 0;
		default:
			fprintf(stderr, "llmio report: %s '%s' (see `llmio report --help`)\n",
			        c == ':' || optopt ? "option needs a value or is unknown"
			                           : "unknown option",
			        argv[optind - 1]);
			return EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "llmio report: give one journal file: llmio report FILE.jsonl [-o "
		                "DIR]\n");
		return EXIT_USAGE;
	}
	file = argv[optind];
	if (out) {
		snprintf(dir, sizeof(dir), "%s", out);
	} else {
		n = strlen(file);
		if (n > 6 && !strcmp(file + n - 6, ".jsonl"))
			n -= 6;
		snprintf(dir, sizeof(dir), "%.*s-report", (int)n, file);
	}
	n = strlen(dir);
	while (n > 1 && dir[n - 1] == '/')
		dir[--n] = '\0';
	/* the output rule (cli.h): a symlink is followed, a file or unwritable parent refused */
	if (cli_output_check(dir, CLI_OUT_DIR, &o, &e)) {
		fprintf(stderr, "llmio report: %s\n", e.msg);
		return EXIT_USAGE;
	}
	snprintf(dir, sizeof(dir), "%s", o.path);
	if (!replaceable(dir, &exists)) {
		fprintf(stderr,
		        "llmio report: %s exists and is not an llmio report; choose a new "
		        "directory "
		        "with -o\n",
		        dir);
		return EXIT_USAGE;
	}
	progress_draw(true, "[1/3] reading %s", file);
	ret = dataset_load_progress(&d, file, on_line, (void *)file, &e);
	progress_clear();
	if (ret) {
		fprintf(stderr, "llmio report: %s\n", e.msg);
		return ret == -ENOMEM || ret == -EIO ? EXIT_RUNTIME : EXIT_USAGE;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", dir, (int)getpid());
	if (mkdir(tmp, 0755)) {
		fprintf(stderr, "llmio report: cannot create %s: %s; choose another -o\n", tmp,
		        strerror(errno));
		dataset_release(&d);
		return EXIT_RUNTIME;
	}
	ret = build(&d, tmp, charts, &e);
	progress_clear();
	if (!ret && (ret = publish(tmp, dir, exists)))
		llmio_err(&e, ret, "cannot move the report into %s: %s", dir, strerror(-ret));
	if (ret) {
		remove_dir(tmp);
		fprintf(stderr, "llmio report: %s\n", e.msg);
	} else {
		char text[2 * LLMIO_PATH_MAX + 96];

		snprintf(text, sizeof(text),
		         "%s/index.html and %s/report.md (%zu points from %lu records)", dir, dir,
		         d.np, d.records);
		fmt_wrapped(stdout, "report: ", 8, text); /* a long path: wrapped at its spaces */
	}
	dataset_release(&d);
	return ret ? EXIT_RUNTIME : 0;
}
