/* SPDX-License-Identifier: MIT */
/*
 * Charts through gnuplot: every chart is appended to one script, charts.gp in the report's
 * directory (kept, so a user can restyle and redraw), with its data inline as datablocks; one
 * gnuplot child process then draws each chart twice, as PNG (pngcairo, or libgd's png) and as
 * SVG.  Labels come from the journal, so they are reduced to a safe alphabet: gnuplot expands
 * backquotes and macros inside strings.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "llmio/job.h"
#include "base/error.h"
#include "base/hash.h"
#include "base/gnuplot.h"
#include "engine/engine.h"
#include "report/report.h"

#define SCRIPT "charts.gp"

struct plot {
	char dir[LLMIO_PATH_MAX];
	FILE *f;
	char **out; /* files the script writes */
	size_t nout, cap;
	size_t ncharts;
	int error;
};

static int path_in(const struct plot *p, const char *name, char *buf, size_t len)
{
	return snprintf(buf, len, "%s/%s", p->dir, name) >= (int)len ? -ENAMETOOLONG : 0;
}

struct plot *plot_create(const char *dir)
{
	struct plot *p = calloc(1, sizeof(*p));
	char path[LLMIO_PATH_MAX + 16];

	if (!p)
		return NULL;
	snprintf(p->dir, sizeof(p->dir), "%s", dir);
	if (path_in(p, SCRIPT, path, sizeof(path)) || !(p->f = fopen(path, "we"))) {
		free(p);
		return NULL;
	}
	fputs("# The charts of this llmio report.  Redraw them with `gnuplot " SCRIPT "` in this\n"
	      "# directory (PNG and SVG side by side).\n"
	      "pngterm = strstrt(GPVAL_TERMINALS, \"pngcairo\") > 0 ? \"pngcairo\" : \"png\"\n"
	      "common = 'set datafile missing \"?\"; set grid; set key outside right top box;"
	      " set border 3; set tics nomirror'\n",
	      p->f);
	return p;
}

void plot_destroy(struct plot *p)
{
	if (!p)
		return;
	if (p->f)
		fclose(p->f);
	for (size_t i = 0; i < p->nout; i++)
		free(p->out[i]);
	free(p->out);
	free(p);
}

size_t plot_count(const struct plot *p)
{
	return p->ncharts;
}

/* Journal text in a gnuplot string: letters, digits and a few signs; the rest becomes '_'. */
static void safe(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		char c = *s;

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      strchr(" _.,:;=+-()/%<>[]*#^", c)))
			c = '_';
		fputc(c, f);
	}
	fputc('"', f);
}

static int expect(struct plot *p, const char *base, const char *ext)
{
	char name[256];

	if (p->nout == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 32;
		char **n = realloc(p->out, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		p->out = n;
		p->cap = cap;
	}
	snprintf(name, sizeof(name), "%s.%s", base, ext);
	p->out[p->nout] = strdup(name);
	return p->out[p->nout] ? (p->nout++, 0) : -ENOMEM;
}

static void begin(struct plot *p, const char *title, const char *xlabel, const char *ylabel)
{
	fprintf(p->f, "\n# ---- chart %zu\nreset\n@common\nset title ", p->ncharts + 1);
	safe(p->f, title);
	fputs(" noenhanced\nset xlabel ", p->f);
	safe(p->f, xlabel);
	fputs(" noenhanced\nset ylabel ", p->f);
	safe(p->f, ylabel);
	fputs(" noenhanced\n", p->f);
}

/* The plot command has been written: draw it into base.png and base.svg. */
static int finish(struct plot *p, const char *base)
{
	int ret;

	fprintf(p->f,
	        "set terminal @pngterm size 1000,560 noenhanced\nset output \"%s.png\"\nreplot\n"
	        "set terminal svg size 1000,560 noenhanced\nset output \"%s.svg\"\nreplot\n"
	        "unset output\n",
	        base, base);
	p->ncharts++;
	if ((ret = expect(p, base, "png")) || (ret = expect(p, base, "svg")))
		p->error = ret;
	return ferror(p->f) ? -EIO : p->error;
}

/* A datablock's name: the chart's file name with '-' made '_' (gnuplot identifiers). */
static void block_name(char *buf, size_t len, const char *base)
{
	snprintf(buf, len, "$%s", base);
	for (char *c = buf; *c; c++)
		if (*c == '-')
			*c = '_';
}

static void number(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, " %.9g", v);
	else
		fputs(" ?", f);
}

/*
 * A fixed palette, distinct in colour and lightness (after Okabe and Ito's colour-blind safe
 * set, with darker additions): the same engine gets the same colour in every chart.
 */
static const char *const palette[] = {
        "#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9",
        "#000000", "#8c564b", "#7f7f7f", "#9467bd", "#bcbd22", "#17becf",
};
#define NPALETTE (sizeof(palette) / sizeof(palette[0]))

const char *plot_engine_color(const char *datapath)
{
	const size_t len = strcspn(datapath, " "); /* "io_uring sqpoll=1": io_uring's colour */

	for (size_t i = 0; i < engine_count(); i++)
		if (strlen(engine_at(i)->name) == len &&
		    !strncmp(engine_at(i)->name, datapath, len))
			return palette[i % NPALETTE];
	/* a name no engine has (an older journal's): the same colour in every chart of a report */
	return palette[hash64(0, datapath, len) % NPALETTE];
}

/* gnuplot's style of series s: its colour and dash when given */
static void style(FILE *f, const char *color, int dash)
{
	if (color)
		fprintf(f, " lc rgb \"%s\"", color);
	if (dash)
		fprintf(f, " dt %d", dash);
}

int plot_lines(struct plot *p, const char *base, const char *title, const char *xlabel,
               const char *ylabel, int logx, enum plot_yaxis y, const struct plot_series *s,
               size_t ns)
{
	char var[80];

	block_name(var, sizeof(var), base);
	begin(p, title, xlabel, ylabel);
	for (size_t k = 0; k < ns; k++) {
		bool broken = true; /* nothing before the first point to break from */

		fprintf(p->f, "%s_%zu << EOD\n", var, k);
		for (size_t i = 0; i < s[k].n; i++) {
			/* a blank line ends a line segment: no line across a point not measured */
			if (!isfinite(s[k].y[i])) {
				if (!broken)
					fputc('\n', p->f);
				broken = true;
				continue;
			}
			number(p->f, s[k].x[i]);
			number(p->f, s[k].y[i]);
			fputc('\n', p->f);
			broken = false;
		}
		fputs("EOD\n", p->f);
	}
	if (logx)
		fprintf(p->f, "set logscale x %d\n", logx);
	if (y == PLOT_Y_LOG)
		fputs("set logscale y 10\n", p->f);
	else if (y == PLOT_Y_NINES)
		/* y = 1 / (1 - p) on a log axis: each nine of the tail gets as much room as the
		 * first 90 % of the I/Os */
		fputs("set logscale y 10\nset yrange [1:*]\n"
		      "set ytics (\"0\" 1, \"90\" 10, \"99\" 100, \"99.9\" 1000, \"99.99\" 10000, "
		      "\"99.999\" 100000, \"99.9999\" 1000000)\n",
		      p->f);
	else
		fputs("set yrange [0:*]\n", p->f);
	/* the first plot draws on the default terminal; nothing is written until `replot` */
	fputs("set terminal unknown\nplot ", p->f);
	for (size_t k = 0; k < ns; k++) {
		fprintf(p->f, "%s%s_%zu using 1:2 with linespoints lw 2 pt %zu",
		        k ? ", \\\n     " : "", var, k, 5 + k % 5);
		style(p->f, s[k].color, s[k].dash);
		fputs(" title ", p->f);
		safe(p->f, s[k].name);
	}
	fputc('\n', p->f);
	return finish(p, base);
}

int plot_bars(struct plot *p, const char *base, enum plot_kind kind, const char *title,
              const char *xlabel, const char *ylabel, const char *const *cats, size_t nc,
              const char *const *series, const char *const *colors, size_t ns, const double *v)
{
	char var[80];

	block_name(var, sizeof(var), base);
	begin(p, title, xlabel, ylabel);
	fprintf(p->f, "%s << EOD\n", var);
	for (size_t c = 0; c < nc; c++) {
		safe(p->f, cats[c]);
		for (size_t k = 0; k < ns; k++)
			number(p->f, kind == PLOT_STACKED && !isfinite(v[c * ns + k])
			                     ? 0
			                     : v[c * ns + k]);
		fputc('\n', p->f);
	}
	fprintf(p->f,
	        "EOD\nset style data histogram\nset style histogram %s\n"
	        "set style fill solid 0.85 border -1\nset boxwidth 0.9\nset yrange [0:*]\n"
	        "set xtics rotate by -25\nset terminal unknown\nplot ",
	        kind == PLOT_STACKED ? "rowstacked" : "cluster gap 1");
	for (size_t k = 0; k < ns; k++) {
		fprintf(p->f, "%s%s using %zu%s", k ? ", \\\n     " : "", var, k + 2,
		        k ? "" : ":xtic(1)");
		style(p->f, colors ? colors[k] : NULL, 0);
		fputs(" title ", p->f);
		safe(p->f, series[k]);
	}
	fputc('\n', p->f);
	return finish(p, base);
}

int plot_render(struct plot *p, struct llmio_error *e)
{
	char path[LLMIO_PATH_MAX + 16];
	struct stat st;
	int ret;

	if (fclose(p->f) || p->error) {
		p->f = NULL;
		return llmio_err(e, p->error ? p->error : -EIO, "cannot write the chart script: %s",
		                 strerror(p->error ? -p->error : EIO));
	}
	p->f = NULL;
	if (!p->ncharts)
		return 0;
	ret = gnuplot_run(p->dir, SCRIPT, e);
	if (ret == -ENOENT)
		return llmio_err(
		        e, -ENOENT,
		        "gnuplot is not installed (the charts need it): install it (Debian: "
		        "apt-get install gnuplot-nox) or pass --no-charts");
	if (ret)
		return ret;
	for (size_t i = 0; i < p->nout; i++) {
		if (path_in(p, p->out[i], path, sizeof(path)) || stat(path, &st) || !st.st_size)
			return llmio_err(e, -EIO, "gnuplot did not draw %s", p->out[i]);
	}
	if (!path_in(p, GNUPLOT_LOG, path, sizeof(path)))
		unlink(path);
	return 0;
}
