/* SPDX-License-Identifier: MIT */
/* The tables of a recipe's run: report/wl_table.h. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fmt.h"
#include "report/wl_table.h"

/*
 * Figures a phase's row already shows, formatted: a recipe metric that is the same figure
 * (its name says so, and it reads the same) is not printed again: each value once.
 */
struct row_figures {
	char time[32], rate[32], moved[32], dev[32];
};

static bool shown_in_row(const struct row_figures *row, const char *metric, const char *value)
{
	static const struct {
		const char *metric;
		size_t column; /* offsetof the figure in struct row_figures */
	} same[] = {
	        {"load_time_s", offsetof(struct row_figures, time)},
	        {"duration_s", offsetof(struct row_figures, time)},
	        {"step_s", offsetof(struct row_figures, time)},
	        {"GBps", offsetof(struct row_figures, rate)},
	        {"aggregate_GBps", offsetof(struct row_figures, rate)},
	        {"device_read_bytes", offsetof(struct row_figures, dev)},
	};

	for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++)
		if (!strcmp(metric, same[i].metric) &&
		    !strcmp(value, (const char *)row + same[i].column))
			return true;
	return false;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n >= t && !strcmp(s + n - t, tail);
}

/*
 * A phase without streams (a migration step run on the tensor store, or simulated) measured no
 * job: its row shows its own step (step_s, else its wall time) and the bytes its transfers
 * moved between tiers (the *_out_bytes and *_in_bytes metrics), and "-" for the device bytes
 * and cores that no job counted, instead of a row of zeros.
 */
static void streamless_row(const struct wl_phase *ph, struct row_figures *row)
{
	double t = ph->wall_s, moved = 0;
	bool any = false;

	for (unsigned m = 0; m < ph->nmetrics; m++) {
		const struct wl_metric *x = &ph->metrics[m];

		if (!strcmp(x->name, "step_s"))
			t = x->value;
		else if (ends_with(x->name, "_out_bytes") || ends_with(x->name, "_in_bytes")) {
			moved += x->value;
			any = true;
		}
	}
	if (t > 0)
		fmt_seconds(row->time, sizeof(row->time), t);
	else
		snprintf(row->time, sizeof(row->time), "-");
	if (any) {
		fmt_bytes(row->moved, sizeof(row->moved), moved);
		if (t > 0)
			fmt_rate(row->rate, sizeof(row->rate), moved / t);
		else
			snprintf(row->rate, sizeof(row->rate), "-");
	} else {
		snprintf(row->moved, sizeof(row->moved), "-");
		snprintf(row->rate, sizeof(row->rate), "-");
	}
	snprintf(row->dev, sizeof(row->dev), "-");
}

void wl_table_phases(FILE *f, const struct wl *w)
{
	fprintf(f, "%s%s%s  engine=%s  direct=%d  scale=%g\n", w->recipe->name,
	        w->has_model ? "  model=" : "", w->has_model ? w->model.name : "", w->base.engine,
	        w->base.direct, w->scale);
	fprintf(f, "  %-24s %9s %10s %9s %9s %6s\n", "phase", "time", "rate", "moved", "device",
	        "cores");
	for (unsigned p = 0; p < w->nphases; p++) {
		const struct wl_phase *ph = &w->phases[p];
		uint64_t moved = 0, dev = 0;
		double cores = 0;
		struct row_figures row;

		for (unsigned s = 0; s < ph->nstreams; s++) {
			const struct llmio_result *r = ph->streams[s];

			moved += r->read.bytes + r->write.bytes;
			dev += r->device.read_bytes + r->device.write_bytes;
			cores += r->cpu.cores_busy;
		}
		if (!ph->nstreams) {
			streamless_row(ph, &row);
			fprintf(f, "  %-24s %9s %10s %9s %9s %6s\n", ph->name, row.time, row.rate,
			        row.moved, row.dev, "-");
		} else {
			fmt_seconds(row.time, sizeof(row.time), ph->wall_s);
			fmt_rate(row.rate, sizeof(row.rate),
			         ph->wall_s > 0 ? (double)moved / ph->wall_s : 0);
			fmt_bytes(row.moved, sizeof(row.moved), (double)moved);
			fmt_bytes(row.dev, sizeof(row.dev), (double)dev);
			fprintf(f, "  %-24s %9s %10s %9s %9s %6.2f\n", ph->name, row.time, row.rate,
			        row.moved, row.dev, cores);
		}
		for (unsigned m = 0; m < ph->nmetrics; m++) {
			char name[64], v[48];

			fmt_words(name, sizeof(name), ph->metrics[m].name);
			fmt_metric(v, sizeof(v), ph->metrics[m].value, ph->metrics[m].unit);
			if (!shown_in_row(&row, ph->metrics[m].name, v))
				fprintf(f, "      %-28s %s\n", name, v);
		}
		if (ph->note[0])
			fmt_wrapped(f, "      note: ", 12, ph->note);
	}
}

/* Bytes moved by a phase's streams over its wall time, bytes/s. */
static double phase_rate(const struct wl_phase *ph)
{
	uint64_t moved = 0;

	for (unsigned s = 0; s < ph->nstreams; s++)
		moved += ph->streams[s]->read.bytes + ph->streams[s]->write.bytes;
	return ph->wall_s > 0 ? (double)moved / ph->wall_s : 0;
}

/* cells[rows * cols] of 48 characters each, for fmt_table_print(). */
struct cells {
	char (*text)[48];
	const char **ptr;
	size_t rows, cols;
};

static int cells_init(struct cells *c, size_t rows, size_t cols)
{
	c->rows = rows;
	c->cols = cols;
	c->text = calloc(rows * cols, sizeof(*c->text));
	c->ptr = calloc(rows * cols, sizeof(*c->ptr));
	if (!c->text || !c->ptr) {
		free(c->text);
		free(c->ptr);
		return -ENOMEM;
	}
	for (size_t i = 0; i < rows * cols; i++)
		c->ptr[i] = c->text[i];
	return 0;
}

static void cells_print(FILE *f, struct cells *c, const char *align)
{
	const struct fmt_table t = {.cells = c->ptr,
	                            .rows = c->rows,
	                            .ncols = c->cols,
	                            .nkey = 1,
	                            .sep = "  ",
	                            .align = align,
	                            .indent = 2};

	fmt_table_print(f, &t);
	free(c->text);
	free(c->ptr);
}

/* The right-aligned columns after the first: "lrrr...". */
static const char *align_right(void)
{
	return "lrrrrrrrrrrrrrrr";
}

/* A phase's metric, or -1 when it has none. */
static double phase_metric(const struct wl_phase *ph, const char *name)
{
	for (unsigned m = 0; m < ph->nmetrics; m++)
		if (!strcmp(ph->metrics[m].name, name))
			return ph->metrics[m].value;
	return -1;
}

/* A phase's cell in a table by engine: its time and rate. */
static void cell_time_rate(char *buf, size_t len, const struct wl_phase *ph)
{
	char t[20], r[20];

	fmt_seconds(t, sizeof(t), ph->wall_s);
	fmt_rate(r, sizeof(r), phase_rate(ph));
	snprintf(buf, len, "%s %s", t, r);
}

/* A phase's cell in a table by engine: the client's CPU seconds per GB, "-" without. */
static void cell_client_cpu(char *buf, size_t len, const struct wl_phase *ph)
{
	double v = phase_metric(ph, "client_cpu_s_per_GB");

	if (v < 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.3f", v);
}

/* Engines side by side: a row per phase of the first run, a column per engine. */
static void by_engine(FILE *f, const char *title, const struct wl *runs, unsigned n,
                      void (*cell)(char *buf, size_t len, const struct wl_phase *ph))
{
	struct cells c;

	if (n < 2 || n >= FMT_TABLE_MAX_COLS || cells_init(&c, runs[0].nphases + 1, n + 1))
		return;
	fprintf(f, "\n%s\n", title);
	snprintf(c.text[0], 48, "phase");
	for (unsigned e = 0; e < n; e++)
		snprintf(c.text[1 + e], 48, "%s", runs[e].base.engine);
	for (unsigned p = 0; p < runs[0].nphases; p++) {
		char(*row)[48] = &c.text[(p + 1) * c.cols];

		snprintf(row[0], 48, "%s", runs[0].phases[p].name);
		for (unsigned e = 0; e < n; e++)
			if (p < runs[e].nphases)
				cell(row[1 + e], 48, &runs[e].phases[p]);
			else
				snprintf(row[1 + e], 48, "-");
	}
	cells_print(f, &c, align_right());
}

/* Engines side by side: each phase's time and rate; with an s3:// --directory also the
 * client CPU per GB, objects beside files. */
void wl_table_compare(FILE *f, const struct wl *runs, unsigned n)
{
	by_engine(f, "phase time and rate by engine", runs, n, cell_time_rate);
	if (runs[0].nphases && phase_metric(&runs[0].phases[0], "client_cpu_s_per_GB") >= 0)
		by_engine(f, "client CPU seconds per GB by engine", runs, n, cell_client_cpu);
}

/* Phases that only computed (no streams) with the same metrics, as columns side by side: the
 * policies of `migrate --policy all`.  A phase without metrics shows its note instead. */
void wl_table_metrics(FILE *f, const struct wl *w)
{
	const struct wl_phase *ref = NULL;
	unsigned ncols = 0;
	struct cells c;

	for (unsigned p = 0; p < w->nphases; p++) {
		if (w->phases[p].nstreams)
			return;
		if (w->phases[p].nmetrics > 1 && (!ref || w->phases[p].nmetrics > ref->nmetrics))
			ref = &w->phases[p];
	}
	if (w->nphases < 2 || !ref)
		return;
	/* a further table repeats the metric's name when the phases do not fit side by side */
	ncols = w->nphases < FMT_TABLE_MAX_COLS - 1 ? w->nphases : FMT_TABLE_MAX_COLS - 1;
	if (cells_init(&c, ref->nmetrics + 1, ncols + 1))
		return;
	fputc('\n', f);
	for (unsigned p = 0; p < ncols; p++)
		snprintf(c.text[1 + p], 48, "%s", w->phases[p].name);
	for (unsigned m = 0; m < ref->nmetrics; m++) {
		char(*row)[48] = &c.text[(m + 1) * c.cols];

		fmt_words(row[0], 48, ref->metrics[m].name);
		for (unsigned p = 0; p < ncols; p++) {
			const struct wl_phase *ph = &w->phases[p];

			if (m < ph->nmetrics && !strcmp(ph->metrics[m].name, ref->metrics[m].name))
				fmt_metric(row[1 + p], 48, ph->metrics[m].value,
				           ph->metrics[m].unit);
			else
				snprintf(row[1 + p], 48, "-");
		}
	}
	cells_print(f, &c, align_right());
}
