/* SPDX-License-Identifier: MIT */
/*
 * The migrate recipe's comparison chart (docs/migration.md, "Charts").  The numbers go into a
 * data file of their own, one row per policy, so that a user can read, check or replot them;
 * the script reads that file and draws two panels: stacked step-time bars and the ratio to the
 * ideal step.  Compute is split at the overlap (transfer time hidden inside kernels, never more
 * than compute), so the three stacked parts add up to the step: compute + stall.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/gnuplot.h"
#include "report/migrate_chart.h"
#include "report/report.h"
#include "workload/workload.h"

static const char *const mode_name[MIGRATE_MODES] = {"simulated", "measured"};
static const char *const mode_col[MIGRATE_MODES] = {"sim", "run"};

/* A policy name as a data-file word and a gnuplot string: letters, digits, '-', '_', '.'. */
static void word(FILE *f, const char *s)
{
	if (!*s)
		fputc('_', f);
	for (; *s; s++)
		fputc(strchr("-_.", *s) || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		                      (*s >= '0' && *s <= '9')
		              ? *s
		              : '_',
		      f);
}

static void num(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, " %.9g", v);
	else
		fputs(" ?", f);
}

static int write_data(FILE *f, const struct migrate_chart_row *rows, size_t n)
{
	fputs("# llmio run --workload migrate: per policy, seconds per step and the ratio to the\n"
	      "# ideal step (no memory limit), simulated (sim_) and measured (run_); ? = none\n"
	      "# policy",
	      f);
	for (int m = 0; m < MIGRATE_MODES; m++)
		fprintf(f, " %s_compute_s %s_stall_s %s_overlap_s %s_ratio", mode_col[m],
		        mode_col[m], mode_col[m], mode_col[m]);
	fputc('\n', f);
	for (size_t i = 0; i < n; i++) {
		word(f, rows[i].policy);
		for (int m = 0; m < MIGRATE_MODES; m++) {
			num(f, rows[i].compute_s[m]);
			num(f, rows[i].stall_s[m]);
			num(f, rows[i].overlap_s[m]);
			num(f, rows[i].ratio[m]);
		}
		fputc('\n', f);
	}
	return ferror(f) ? -EIO : 0;
}

/* Columns of mode m in the data file: compute, stall, overlap, ratio. */
static int col(int m, int k)
{
	return 2 + 4 * m + k;
}

/* Both panels for one output; modes[] says which modes have figures. */
static void panels(FILE *f, const bool *modes)
{
	int nm = modes[0] + modes[1], slot = 0;
	double w = nm > 1 ? 0.38 : 0.7;

	fputs("set multiplot layout 1,2 title \"llmio migrate: policies side by side\"\n"
	      "set title \"step time per policy",
	      f);
	if (nm > 1)
		fputs(" (left: simulated, right, hatched: measured)", f);
	fputs("\"\nset ylabel \"seconds per step\"\nset yrange [0:*]\n"
	      "set key below box maxrows 3\nplot ",
	      f);
	for (int m = 0; m < MIGRATE_MODES; m++) {
		double x;
		const char *fs = m == MIGRATE_SIM ? "solid 0.85" : "pattern 4";
		const char *sfx = nm > 1 ? (m == MIGRATE_SIM ? " (simulated)" : " (measured)") : "";

		if (!modes[m])
			continue;
		x = nm > 1 ? (slot++ ? 0.2 : -0.2) : 0;
		/* drawn tallest first: each later box covers the bottom of the one before */
		fprintf(f,
		        "%s\"" MIGRATE_CHART_DATA "\" using ($0%+.2f):($%d+$%d):(%.2f) with boxes "
		        "fs %s lc rgb \"#d62728\" title \"stall%s\", \\\n"
		        "     \"\" using ($0%+.2f):%d:(%.2f) with boxes fs %s lc rgb \"#2ca02c\" "
		        "title \"compute overlapping transfers%s\", \\\n"
		        "     \"\" using ($0%+.2f):($%d-$%d):(%.2f) with boxes fs %s lc rgb "
		        "\"#1f77b4\" title \"compute, no transfer%s\"",
		        slot > 1 ? ", \\\n     " : "", x, col(m, 0), col(m, 1), w, fs, sfx, x,
		        col(m, 0), w, fs, sfx, x, col(m, 0), col(m, 2), w, fs, sfx);
	}
	fputs("\nset title \"ratio to the ideal step (1 = as fast as unlimited memory)\"\n"
	      "set ylabel \"ideal step / step\"\nset yrange [0:1.1]\nset key below box\n"
	      "plot 1 with lines dt 2 lc rgb \"gray\" notitle",
	      f);
	slot = 0;
	for (int m = 0; m < MIGRATE_MODES; m++) {
		double x;

		if (!modes[m])
			continue;
		x = nm > 1 ? (slot++ ? 0.2 : -0.2) : 0;
		fprintf(f,
		        ", \\\n     \"" MIGRATE_CHART_DATA
		        "\" using ($0%+.2f):%d:(%.2f) with boxes "
		        "fs %s lc rgb \"#9467bd\" title \"%s\"",
		        x, col(m, 3), w, m == MIGRATE_SIM ? "solid 0.85" : "pattern 4",
		        mode_name[m]);
	}
	fputs("\nunset multiplot\nunset output\n", f);
}

static int write_script(FILE *f, const struct migrate_chart_row *rows, size_t n)
{
	bool modes[MIGRATE_MODES] = {false, false};

	for (size_t i = 0; i < n; i++)
		for (int m = 0; m < MIGRATE_MODES; m++)
			modes[m] |= isfinite(rows[i].compute_s[m]);
	if (!modes[0] && !modes[1])
		modes[0] = true; /* no plan fits: empty panels, not a broken script */
	fputs("# The policies of one `llmio run --workload migrate` side by side, "
	      "from " MIGRATE_CHART_DATA ".\n# Redraw with `gnuplot " MIGRATE_CHART_SCRIPT
	      "` in this directory (PNG and SVG).\n"
	      "pngterm = strstrt(GPVAL_TERMINALS, \"pngcairo\") > 0 ? \"pngcairo\" : \"png\"\n"
	      "set datafile missing \"?\"\nset grid y\nset border 3\nset tics nomirror\n"
	      "set boxwidth 0.38 absolute\nset xtics rotate by -25 (",
	      f);
	/* explicit labels: a policy without figures keeps its place and its name */
	for (size_t i = 0; i < n; i++) {
		fputs(i ? ", \"" : "\"", f);
		word(f, rows[i].policy);
		fprintf(f, "\" %zu", i);
	}
	fprintf(f, ")\nset xrange [-0.6:%zu.4]\n", n ? n - 1 : 0);
	fputs("set terminal @pngterm size 1400,600 noenhanced\nset output \"migrate.png\"\n", f);
	panels(f, modes);
	fputs("set terminal svg size 1400,600 noenhanced\nset output \"migrate.svg\"\n", f);
	panels(f, modes);
	return ferror(f) ? -EIO : 0;
}

/* Create dir/name and fill it with fn; a file that exists is never replaced. */
static int new_file(const char *dir, const char *name,
                    int (*fn)(FILE *, const struct migrate_chart_row *, size_t),
                    const struct migrate_chart_row *rows, size_t n, struct llmio_error *e)
{
	char path[LLMIO_PATH_MAX + 16];
	FILE *f;
	int ret;

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
		return llmio_err(e, -ENAMETOOLONG,
		                 "cannot write the chart into %s: the path is "
		                 "too long",
		                 dir);
	if (!(f = fopen(path, "wxe")))
		return llmio_err(e, -errno, "cannot create %s: %s", path, strerror(errno));
	ret = fn(f, rows, n);
	if (fclose(f) && !ret)
		ret = -EIO;
	if (ret)
		return llmio_err(e, ret, "cannot write %s: %s", path, strerror(-ret));
	return 0;
}

int migrate_chart_write(const char *dir, const struct migrate_chart_row *rows, size_t n,
                        struct llmio_error *e)
{
	static const char *const drawn[] = {"migrate.png", "migrate.svg"};
	char path[LLMIO_PATH_MAX + 16];
	struct stat st;
	int ret;

	if ((ret = new_file(dir, MIGRATE_CHART_DATA, write_data, rows, n, e)) ||
	    (ret = new_file(dir, MIGRATE_CHART_SCRIPT, write_script, rows, n, e)))
		return ret;
	ret = gnuplot_run(dir, MIGRATE_CHART_SCRIPT, e);
	if (ret == -ENOENT)
		return llmio_err(
		        e, -ENOENT,
		        "gnuplot is not installed: %s/" MIGRATE_CHART_SCRIPT " and its data "
		        "are written; draw the chart with `cd %s && gnuplot " MIGRATE_CHART_SCRIPT
		        "` once it is (Debian: apt-get install "
		        "gnuplot-nox)",
		        dir, dir);
	if (ret)
		return llmio_err_prefix(
		        e, "cannot draw the chart in %s (its log: gnuplot.log there)", dir);
	for (size_t i = 0; i < sizeof(drawn) / sizeof(drawn[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, drawn[i]);
		if (stat(path, &st) || !st.st_size)
			return llmio_err(e, -EIO, "gnuplot did not draw %s", path);
	}
	snprintf(path, sizeof(path), "%s/gnuplot.log", dir);
	unlink(path);
	return 0;
}

/* The migrate record's phases simulate-POLICY and run-POLICY as one chart row per policy. */
static size_t chart_rows(const struct wl *w, struct migrate_chart_row *rows, size_t cap)
{
	static const char *const prefix[MIGRATE_MODES] = {"simulate-", "run-"};
	size_t n = 0;

	for (unsigned p = 0; p < w->nphases; p++) {
		const struct wl_phase *ph = &w->phases[p];
		struct migrate_chart_row *row = NULL;
		const char *pol = NULL;
		int m;

		for (m = 0; m < MIGRATE_MODES && !pol; m++)
			if (!strncmp(ph->name, prefix[m], strlen(prefix[m])))
				pol = ph->name + strlen(prefix[m]);
		if (!pol)
			continue;
		m--;
		for (size_t i = 0; i < n && !row; i++)
			if (!strcmp(rows[i].policy, pol))
				row = &rows[i];
		if (!row) {
			if (n == cap)
				continue;
			row = &rows[n++];
			snprintf(row->policy, sizeof(row->policy), "%s", pol);
			for (int k = 0; k < MIGRATE_MODES; k++)
				row->compute_s[k] = row->stall_s[k] = row->overlap_s[k] =
				        row->ratio[k] = NAN;
		}
		for (unsigned k = 0; k < ph->nmetrics; k++) {
			const struct wl_metric *mt = &ph->metrics[k];

			if (!strcmp(mt->name, "compute_s"))
				row->compute_s[m] = mt->value;
			else if (!strcmp(mt->name, "stall_s"))
				row->stall_s[m] = mt->value;
			else if (!strcmp(mt->name, "overlap_s"))
				row->overlap_s[m] = mt->value;
			else if (!strcmp(mt->name, "ratio_to_ideal"))
				row->ratio[m] = mt->value;
		}
	}
	return n;
}

int migrate_chart_of(const char *dir, const struct wl *w, struct llmio_error *e)
{
	struct migrate_chart_row rows[WL_MAX_PHASES];

	return migrate_chart_write(dir, rows, chart_rows(w, rows, WL_MAX_PHASES), e);
}
