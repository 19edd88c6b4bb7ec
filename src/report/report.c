/* SPDX-License-Identifier: MIT */
/*
 * The report: the journal's points as charts and tables (docs/report.md).  Plain-job points are
 * sliced by their configuration minus the swept key (iodepth for the queue-depth charts, bs for
 * the block-size chart) and minus the datapath, so each chart compares datapaths under one
 * setting; recipe points are shown per phase.  Every chart has a table with its numbers.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/fmt.h"
#include "report/report.h"

#define MAX_SERIES      16 /* lines or bars per chart */
#define MAX_X           64 /* points per line */
#define MAX_SLICE_CHART 12 /* charts per kind; further slices are in the tables only */
#define CDF_LINES       8
#define NPCT            5 /* percentiles in a CDF table */

struct slice {
	size_t *pts; /* indices into d->p */
	size_t n;
	char *key;
};

struct slices {
	struct slice *v;
	size_t n;
};

struct series {
	char name[160];
	size_t n;
	double x[MAX_X], y[MAX_X];
	const struct point *p[MAX_X];
};

static bool is_job(const struct point *p)
{
	return !strcmp(p->s->workload, "job");
}

static bool is_recipe_point(const struct point *p)
{
	return !is_job(p);
}

static void slices_release(struct slices *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].pts);
		free(s->v[i].key);
	}
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

/* Points that pass want, grouped by their config minus drop (and minus the datapath). */
static int slice_points(const struct dataset *d, const char *const *drop, bool by_engine,
                        bool (*want)(const struct point *), struct slices *out)
{
	memset(out, 0, sizeof(*out));
	out->v = calloc(d->np ? d->np : 1, sizeof(*out->v));
	if (!out->v)
		return -ENOMEM;
	for (size_t i = 0; i < d->np; i++) {
		const struct point *p = &d->p[i];
		char *key;
		size_t k;

		if (!want(p))
			continue;
		key = config_key(d, p->s->config, drop, by_engine);
		if (!key)
			goto fail;
		for (k = 0; k < out->n; k++)
			if (!strcmp(out->v[k].key, key))
				break;
		if (k == out->n) {
			out->v[k].pts = calloc(d->np, sizeof(size_t));
			if (!out->v[k].pts) {
				free(key);
				goto fail;
			}
			out->v[k].key = key;
			out->n++;
		} else {
			free(key);
		}
		out->v[k].pts[out->v[k].n++] = i;
	}
	return 0;
fail:
	slices_release(out);
	return -ENOMEM;
}

static const char *const known_keys[] = {"rw",     "bs",       "iodepth",  "numjobs",
                                         "direct", "ioengine", "engine",   "engine_opts",
                                         "repeat", "randseed", "workload", NULL};

static bool known(const struct dataset *d, const char *k)
{
	for (size_t i = 0; known_keys[i]; i++)
		if (!strcmp(known_keys[i], k))
			return true;
	return dataset_engine_key(d, k);
}

/* " key=value" for each config key that is not shown otherwise and varies in the journal. */
static void varying_suffix(const struct dataset *d, const cJSON *config, char *buf, size_t len)
{
	const cJSON *it;
	size_t used = strlen(buf);

	cJSON_ArrayForEach(it, config)
	{
		char *v;

		if (!it->string || known(d, it->string) || !config_key_varies(d, it->string))
			continue;
		v = cJSON_IsString(it) ? NULL : cJSON_PrintUnformatted(it);
		used += (size_t)snprintf(buf + used, used < len ? len - used : 0, " %s=%s",
		                         it->string, v ? v : it->valuestring);
		free(v);
		if (used >= len)
			return;
	}
}

/* "randread bs=4k numjobs=1 direct=1" without the swept key. */
static void slice_title(const struct dataset *d, const struct point *p, const char *swept,
                        char *buf, size_t len)
{
	const struct sample *s = p->s;
	char bs[32], qd[32] = "";

	fmt_size(bs, sizeof(bs), s->bs);
	if (strcmp(swept, "iodepth"))
		snprintf(qd, sizeof(qd), " iodepth=%u", s->iodepth);
	snprintf(buf, len, "%s%s%s%s numjobs=%u direct=%d", s->rw,
	         strcmp(swept, "bs") ? " bs=" : "", strcmp(swept, "bs") ? bs : "", qd, s->numjobs,
	         s->direct);
	varying_suffix(d, s->config, buf, len);
}

static void sort_series(struct series *s)
{
	for (size_t i = 1; i < s->n; i++)
		for (size_t k = i; k > 0 && s->x[k] < s->x[k - 1]; k--) {
			double tx = s->x[k], ty = s->y[k];
			const struct point *tp = s->p[k];

			s->x[k] = s->x[k - 1];
			s->y[k] = s->y[k - 1];
			s->p[k] = s->p[k - 1];
			s->x[k - 1] = tx;
			s->y[k - 1] = ty;
			s->p[k - 1] = tp;
		}
}

/* One series per datapath: (x, y) of each point of the slice. */
static size_t build_series(const struct dataset *d, const struct slice *sl, struct series *s,
                           double (*x)(const struct point *), double (*y)(const struct point *))
{
	size_t ns = 0;

	for (size_t i = 0; i < sl->n; i++) {
		const struct point *p = &d->p[sl->pts[i]];
		char name[sizeof(s->name)];
		size_t k, j;

		/* a page-cache point is its own series, named so: never one line with the device */
		snprintf(name, sizeof(name), "%s%s", p->s->engine, point_mark(p));
		for (k = 0; k < ns; k++)
			if (!strcmp(s[k].name, name))
				break;
		if (k == ns) {
			if (ns == MAX_SERIES)
				continue;
			memset(&s[ns], 0, sizeof(s[ns]));
			snprintf(s[ns].name, sizeof(s[ns].name), "%s", name);
			ns++;
		}
		for (j = 0; j < s[k].n; j++)
			if (s[k].x[j] == x(p))
				break;
		if (j < s[k].n || s[k].n == MAX_X)
			continue; /* same x twice (a key outside the slice differs): first wins */
		s[k].x[s[k].n] = x(p);
		s[k].y[s[k].n] = y(p);
		s[k].p[s[k].n++] = p;
	}
	for (size_t k = 0; k < ns; k++)
		sort_series(&s[k]);
	return ns;
}

static double x_qd(const struct point *p)
{
	return p->s->iodepth;
}
static double x_bs_kib(const struct point *p)
{
	return (double)p->s->bs / 1024;
}
static double y_gbs(const struct point *p)
{
	return p->bw.med / 1e9;
}
static double y_p99_us(const struct point *p)
{
	return (double)p->p99 / 1e3;
}
static double y_iops(const struct point *p)
{
	return p->iops.med;
}

static void f_gbs(char *b, size_t n, double v)
{
	snprintf(b, n, "%.3f", v);
}
static void f_us(char *b, size_t n, double v)
{
	snprintf(b, n, "%.1f", v);
}
static void f_iops(char *b, size_t n, double v)
{
	snprintf(b, n, "%.0f", v);
}
static void f_x(char *b, size_t n, double v)
{
	snprintf(b, n, "%g", v);
}

/*
 * Series of one engine share its colour: the second of them in a chart is dashed, the third
 * dotted, ... (another datapath of the engine, its page-cache points, another queue depth).
 */
static int engine_dash(const char *const *datapaths, size_t k)
{
	const size_t len = strcspn(datapaths[k], " ");
	int dash = 1;

	for (size_t o = 0; o < k; o++)
		dash += strcspn(datapaths[o], " ") == len &&
		        !strncmp(datapaths[o], datapaths[k], len);
	return dash;
}

/* The x values of all series, each once, ascending, into xs (MAX_SERIES * MAX_X). */
static size_t union_x(const struct series *s, size_t ns, double *xs)
{
	size_t nx = 0;

	for (size_t k = 0; k < ns; k++)
		for (size_t i = 0; i < s[k].n; i++) {
			size_t j;

			for (j = 0; j < nx && xs[j] != s[k].x[i]; j++)
				;
			if (j == nx)
				xs[nx++] = s[k].x[i];
		}
	qsort(xs, nx, sizeof(xs[0]), cmp_double);
	return nx;
}

/* Table with one row per x and one column per series: the numbers of a line chart. */
static void pivot(struct doc *doc, const char *xname, const struct series *s, size_t ns,
                  void (*fmt)(char *, size_t, double))
{
	double xs[MAX_SERIES * MAX_X];
	size_t nx = union_x(s, ns, xs);
	char buf[64];

	doc_table_n(doc, 1 + ns);
	doc_cell(doc, "%s", xname);
	for (size_t k = 0; k < ns; k++)
		doc_cell(doc, "%s", s[k].name);
	for (size_t j = 0; j < nx; j++) {
		f_x(buf, sizeof(buf), xs[j]);
		doc_cell(doc, "%s", buf);
		for (size_t k = 0; k < ns; k++) {
			size_t i;

			for (i = 0; i < s[k].n && s[k].x[i] != xs[j]; i++)
				;
			if (i < s[k].n)
				fmt(buf, sizeof(buf), s[k].y[i]);
			else
				snprintf(buf, sizeof(buf), "-");
			doc_cell(doc, "%s", buf);
		}
	}
}

/* Slices of the plain-job points over drop, under a new section heading. */
static int begin_section(const struct dataset *d, struct doc *doc, const char *const *drop,
                         const char *heading, const char *intro, struct slices *sl)
{
	int ret = slice_points(d, drop, true, is_job, sl);

	if (ret)
		return ret;
	doc_heading(doc, 1, "%s", heading);
	doc_para(doc, "%s", intro);
	return 0;
}

static int draw_lines(struct plot *plot, struct doc *doc, const char *base, const char *title,
                      const char *xlabel, const char *ylabel, int logx, enum plot_yaxis y,
                      const struct plot_series *ps, size_t ns)
{
	int ret;

	if (!plot)
		return 0;
	ret = plot_lines(plot, base, title, xlabel, ylabel, logx, y, ps, ns);
	if (!ret)
		doc_chart(doc, base, title);
	return ret;
}

static int draw_series(struct plot *plot, struct doc *doc, const char *base, const char *title,
                       const char *xlabel, const char *ylabel, const struct series *s, size_t ns)
{
	struct plot_series ps[MAX_SERIES];
	const char *dp[MAX_SERIES];
	double xs[MAX_SERIES * MAX_X];
	double(*ys)[MAX_SERIES * MAX_X];
	size_t nx = union_x(s, ns, xs);
	int ret;

	if (!plot)
		return 0;
	ys = malloc(ns ? ns * sizeof(*ys) : 1);
	if (!ys)
		return -ENOMEM;
	/*
	 * Every series over every x of the chart, NaN where it was not measured: the line
	 * breaks there instead of running across a point that does not exist.
	 */
	for (size_t k = 0; k < ns; k++)
		dp[k] = s[k].p[0]->s->engine;
	for (size_t k = 0; k < ns; k++) {
		for (size_t j = 0, i = 0; j < nx; j++) {
			while (i < s[k].n && s[k].x[i] < xs[j])
				i++;
			ys[k][j] = i < s[k].n && s[k].x[i] == xs[j] ? s[k].y[i] : NAN;
		}
		ps[k] = (struct plot_series){
		        s[k].name, nx, xs, ys[k], plot_engine_color(dp[k]), engine_dash(dp, k)};
	}
	ret = draw_lines(plot, doc, base, title, xlabel, ylabel, 2, PLOT_Y_LINEAR, ps, ns);
	free(ys);
	return ret;
}

/* A chart kind over one swept key: which metric, how it is labelled and printed. */
struct view {
	const char *base, *title, *ylabel, *unit;
	double (*y)(const struct point *);
	void (*fmt)(char *, size_t, double);
};

struct sweep_spec {
	const char *key, *heading, *intro, *xname, *xlabel;
	double (*x)(const struct point *);
	struct view views[2];
	size_t nviews;
};

static const struct sweep_spec sweep_qd = {
        "iodepth",
        "Throughput and p99 latency vs queue depth",
        "One chart per setting that was measured at more than one queue depth, one line per "
        "datapath (engine and its options).  Values are medians over the repeats; the p99 is "
        "read off the histogram that merges every job of every repeat.",
        "QD",
        "queue depth (I/Os in flight per thread, log2 scale)",
        x_qd,
        {{"qd-tput", "Throughput vs queue depth", "throughput (GB/s = 10^9 bytes/s)", "GB/s", y_gbs,
          f_gbs},
         {"qd-p99", "p99 completion latency vs queue depth", "p99 completion latency (us)",
          "p99 us", y_p99_us, f_us}},
        2};

static const struct sweep_spec sweep_bs = {
        "bs",
        "IOPS vs block size",
        "One chart per setting that was measured at more than one block size, one line per "
        "datapath.  Values are medians over the repeats.",
        "bs KiB",
        "block size (KiB, log2 scale)",
        x_bs_kib,
        {{"bs-iops", "IOPS vs block size", "IOPS (I/Os per second)", "IOPS", y_iops, f_iops},
         {"bs-tput", "Throughput vs block size", "throughput (GB/s = 10^9 bytes/s)", "GB/s", y_gbs,
          f_gbs}},
        2};

static int section_sweep(const struct dataset *d, struct doc *doc, struct plot *plot,
                         const struct sweep_spec *sp)
{
	const char *const drop[] = {sp->key, NULL};
	struct series *s = calloc(MAX_SERIES, sizeof(*s));
	double xs[MAX_SERIES * MAX_X];
	struct slices sl = {0};
	size_t shown = 0, ns;
	char title[512], full[640], base[64];
	int ret = -ENOMEM;

	if (!s || (ret = begin_section(d, doc, drop, sp->heading, sp->intro, &sl)))
		goto out;
	for (size_t i = 0; i < sl.n; i++) {
		ns = build_series(d, &sl.v[i], s, sp->x, sp->views[0].y);
		if (union_x(s, ns, xs) < 2)
			continue;
		slice_title(d, &d->p[sl.v[i].pts[0]], sp->key, title, sizeof(title));
		doc_heading(doc, 2, "%s", title);
		for (size_t v = 0; v < sp->nviews; v++) {
			const struct view *w = &sp->views[v];

			ns = build_series(d, &sl.v[i], s, sp->x, w->y);
			snprintf(full, sizeof(full), "%s: %s", w->title, title);
			snprintf(base, sizeof(base), "%s-%zu", w->base, shown + 1);
			if (shown < MAX_SLICE_CHART &&
			    (ret = draw_series(plot, doc, base, full, sp->xlabel, w->ylabel, s,
			                       ns)))
				goto out;
			doc_para(doc, "%s by %s and datapath (median of repeats):", w->unit,
			         sp->xname);
			pivot(doc, sp->xname, s, ns, w->fmt);
		}
		shown++;
	}
	if (!shown)
		doc_para(doc, "No setting was measured at more than one %s.", sp->key);
	else if (shown > MAX_SLICE_CHART)
		doc_para(doc,
		         "Charts are drawn for the first %d settings; the tables cover all %zu.",
		         MAX_SLICE_CHART, shown);
	ret = 0;
out:
	slices_release(&sl);
	free(s);
	return ret;
}

static const char *lat_op(const struct point *p)
{
	return p->s->op;
}

/*
 * CDF of the merged histogram on the "nines" axis: x = bucket value (us), y = 1 / (1 - p) for
 * the share p of I/Os at or below it, drawn on a log axis labelled 90, 99, 99.9, ... so that
 * the tail gets the room.  p = seen / (count + 1) (a plotting position below 1: the slowest
 * I/O lands at count + 1, the resolution the sample has, not at infinity).
 */
static int cdf_series(const struct llmio_hist *h, struct plot_series *ps, double **xy)
{
	uint64_t seen = 0;
	size_t n = 0;

	*xy = malloc(2 * LLMIO_HIST_BUCKETS * sizeof(double));
	if (!*xy)
		return -ENOMEM;
	for (unsigned i = 0; i < LLMIO_HIST_BUCKETS && h->count; i++) {
		uint64_t v;

		if (!h->bucket[i])
			continue;
		seen += h->bucket[i];
		v = llmio_hist_bucket_value(i);
		v = v < h->min ? h->min : v > h->max ? h->max : v;
		(*xy)[n] = (double)v / 1e3;
		(*xy)[LLMIO_HIST_BUCKETS + n] =
		        (double)(h->count + 1) / (double)(h->count + 1 - seen);
		n++;
	}
	ps->n = n;
	ps->x = *xy;
	ps->y = *xy + LLMIO_HIST_BUCKETS;
	return 0;
}

/* The lines of a CDF chart: every point, or the lowest queue depth per datapath if too many. */
static size_t cdf_pick(const struct dataset *d, const struct slice *sl, const struct point **out)
{
	size_t n = 0;

	for (size_t i = 0; i < sl->n && n < CDF_LINES * 4; i++)
		if (d->p[sl->pts[i]].lat_count)
			out[n++] = &d->p[sl->pts[i]];
	if (n <= CDF_LINES)
		return n;
	for (size_t i = 0; i < n;) {
		size_t k;

		for (k = 0; k < n; k++)
			if (k != i && !strcmp(out[k]->s->engine, out[i]->s->engine) &&
			    out[k]->s->iodepth < out[i]->s->iodepth)
				break;
		if (k < n)
			out[i] = out[--n];
		else
			i++;
	}
	return n < CDF_LINES ? n : CDF_LINES;
}

static int section_cdf(const struct dataset *d, struct doc *doc, struct plot *plot)
{
	static const char *const drop[] = {"iodepth", NULL};
	static const double pct[NPCT] = {50, 90, 99, 99.9, 100};
	const struct point *pts[CDF_LINES * 4];
	const char *dp[CDF_LINES * 4];
	struct plot_series ps[CDF_LINES * 4];
	char names[CDF_LINES * 4][160], title[512], full[640], base[64], v[32];
	double *xy[CDF_LINES * 4] = {0};
	uint64_t lat[CDF_LINES * 4][NPCT];
	struct llmio_hist *h = malloc(sizeof(*h));
	struct slices sl = {0};
	size_t shown = 0, n = 0;
	int ret;

	if (!h)
		return -ENOMEM;

	if ((ret = begin_section(d, doc, drop, "Latency distribution (CDF)",
	                         "Completion latency of every I/O, from the raw histogram buckets "
	                         "of all jobs and all repeats of a point merged exactly (bucket "
	                         "counts add; values within 1/128).  A curve further left is "
	                         "faster; the gap at the top is the tail.",
	                         &sl)))
		goto out;
	for (size_t i = 0; i < sl.n; i++) {
		n = cdf_pick(d, &sl.v[i], pts);
		if (!n)
			continue;
		slice_title(d, pts[0], "iodepth", title, sizeof(title));
		doc_heading(doc, 2, "%s (%s)", title, lat_op(pts[0]));
		for (size_t k = 0; k < n; k++) {
			snprintf(names[k], sizeof(names[k]), "%s%s QD %u", pts[k]->s->engine,
			         point_mark(pts[k]), pts[k]->s->iodepth);
			ps[k].name = names[k];
			dp[k] = pts[k]->s->engine;
			ps[k].color = plot_engine_color(dp[k]);
			ps[k].dash = engine_dash(dp, k);
			point_hist(pts[k], h);
			for (size_t q = 0; q < NPCT; q++)
				lat[k][q] = llmio_hist_percentile(h, pct[q]);
			if ((ret = cdf_series(h, &ps[k], &xy[k])))
				goto out;
		}
		snprintf(full, sizeof(full), "Latency CDF (%s clat, merged): %s", lat_op(pts[0]),
		         title);
		snprintf(base, sizeof(base), "cdf-%zu", shown + 1);
		if (shown < MAX_SLICE_CHART &&
		    (ret = draw_lines(
		             plot, doc, base, full, "completion latency (us, log10 scale)",
		             "percent of I/Os completed within x (tail axis: 1/(1-p), log)", 10,
		             PLOT_Y_NINES, ps, n)))
			goto out;
		doc_table(doc, 8, "datapath", "QD", "I/Os", "p50 us", "p90 us", "p99 us",
		          "p99.9 us", "max us");
		for (size_t k = 0; k < n; k++) {
			doc_cell(doc, "%s%s", pts[k]->s->engine, point_mark(pts[k]));
			doc_cell(doc, "%u", pts[k]->s->iodepth);
			doc_cell(doc, "%llu", (unsigned long long)pts[k]->lat_count);
			for (size_t q = 0; q < NPCT; q++) {
				f_us(v, sizeof(v), (double)lat[k][q] / 1e3);
				doc_cell(doc, "%s", v);
			}
			free(xy[k]);
			xy[k] = NULL;
		}
		shown++;
	}
	if (!shown)
		doc_para(doc, "No plain-job point carries latency buckets.");
	ret = 0;
out:
	for (size_t k = 0; k < n; k++)
		free(xy[k]);
	slices_release(&sl);
	free(h);
	return ret;
}

/* Index of name in names (adding it when there is room), or -1. */
static int name_index(char (*names)[160], size_t *n, size_t max, const char *name)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp(names[i], name))
			return (int)i;
	if (*n == max)
		return -1;
	snprintf(names[*n], sizeof(names[0]), "%s", name);
	return (int)(*n)++;
}

static int section_cpu(const struct dataset *d, struct doc *doc, struct plot *plot)
{
	static const char *const drop[] = {"iodepth", NULL};
	char engines[MAX_SERIES][160], cats[MAX_SLICE_CHART + 4][512], title[512], v[32];
	const char *cp[MAX_SLICE_CHART + 4], *ep[MAX_SERIES], *colors[MAX_SERIES];
	double vals[(MAX_SLICE_CHART + 4) * MAX_SERIES];
	struct slices sl = {0};
	size_t ne = 0, nc = 0;
	int ret;

	if ((ret = begin_section(d, doc, drop, "CPU efficiency (GB/s per core)",
	                         "Throughput per busy core (process CPU including io_uring's "
	                         "kernel threads) at each datapath's highest-throughput queue "
	                         "depth, per setting.  Higher is cheaper: the CPU left for the "
	                         "training or serving job.",
	                         &sl)))
		return ret;
	doc_table(doc, 6, "setting", "datapath", "QD", "GB/s", "cores busy", "GB/s per core");
	for (size_t i = 0; i < (MAX_SLICE_CHART + 4) * MAX_SERIES; i++)
		vals[i] = NAN;
	for (size_t i = 0; i < sl.n; i++) {
		const struct point *best[MAX_SERIES] = {0};
		size_t nloc = 0;
		char loc[MAX_SERIES][160];

		slice_title(d, &d->p[sl.v[i].pts[0]], "iodepth", title, sizeof(title));
		for (size_t k = 0; k < sl.v[i].n; k++) {
			const struct point *p = &d->p[sl.v[i].pts[k]];
			char name[160];
			int e;

			snprintf(name, sizeof(name), "%s%s", p->s->engine, point_mark(p));
			e = name_index(loc, &nloc, MAX_SERIES, name);

			if (e >= 0 && (!best[e] || p->bw.med > best[e]->bw.med))
				best[e] = p;
		}
		for (size_t e = 0; e < nloc; e++) {
			const struct point *p = best[e];
			int col = name_index(engines, &ne, MAX_SERIES, loc[e]);

			doc_cell(doc, "%s", title);
			doc_cell(doc, "%s", loc[e]);
			doc_cell(doc, "%u", p->s->iodepth);
			f_gbs(v, sizeof(v), p->bw.med / 1e9);
			doc_cell(doc, "%s", v);
			doc_cell(doc, "%.2f", p->gbpc.med > 0 ? p->bw.med / 1e9 / p->gbpc.med : 0);
			doc_cell(doc, "%.2f", p->gbpc.med);
			if (col >= 0)
				colors[col] = plot_engine_color(p->s->engine);
			if (nc < MAX_SLICE_CHART && col >= 0)
				vals[nc * MAX_SERIES + (size_t)col] = p->gbpc.med;
		}
		if (nc < MAX_SLICE_CHART)
			snprintf(cats[nc++], sizeof(cats[0]), "%s", title);
	}
	if (plot && nc) {
		double packed[(MAX_SLICE_CHART + 4) * MAX_SERIES];

		for (size_t c = 0; c < nc; c++) {
			cp[c] = cats[c];
			for (size_t e = 0; e < ne; e++)
				packed[c * ne + e] = vals[c * MAX_SERIES + e];
		}
		for (size_t e = 0; e < ne; e++)
			ep[e] = engines[e];
		ret = plot_bars(plot, "cpu-efficiency", PLOT_CLUSTER,
		                "CPU efficiency per datapath (at its best queue depth)", "setting",
		                "GB/s per busy core", cp, nc, ep, colors, ne, packed);
		if (!ret)
			doc_chart(doc, "cpu-efficiency",
			          "CPU efficiency per datapath (at its best queue depth)");
	}
	slices_release(&sl);
	return ret;
}

/* Recipe workloads: wall time and throughput per phase, one run per datapath and setting. */
static int section_phases(const struct dataset *d, struct doc *doc, struct plot *plot)
{
	static const char *const drop[] = {NULL};
	char runs[MAX_SERIES][160], phases[MAX_SERIES][160], base[64], full[256], v[32];
	const char *rp[MAX_SERIES], *pp[MAX_SERIES], *colors[MAX_SERIES];
	double wall[MAX_SERIES * MAX_SERIES], bw[MAX_SERIES * MAX_SERIES];
	struct slices sl = {0};
	size_t nw = 0;
	int ret;

	if ((ret = slice_points(d, drop, false, is_recipe_point, &sl)))
		return ret;
	if (!sl.n)
		goto out;
	doc_heading(doc, 1, "Phase workloads");
	doc_para(doc, "Each recipe run split into its phases: wall time per phase (stacked: the "
	              "run's total) and the throughput each phase reached.  Medians over repeats.");
	/* a slice here is one run (config without repeat); group the runs by recipe */
	for (size_t w = 0; w < sl.n; w++) {
		const char *wl = d->p[sl.v[w].pts[0]].s->workload;
		size_t nr = 0, nph = 0;
		bool first = true;

		for (size_t k = 0; k < w; k++)
			if (!strcmp(d->p[sl.v[k].pts[0]].s->workload, wl))
				first = false;
		if (!first)
			continue;
		for (size_t i = 0; i < MAX_SERIES * MAX_SERIES; i++)
			wall[i] = bw[i] = NAN;
		doc_heading(doc, 2, "workload %s", wl);
		doc_table(doc, 8, "run", "phase", "wall s", "GB/s", "IOPS", "p99 us",
		          "GB/s per core", "repeats");
		for (size_t r = w; r < sl.n; r++) {
			char label[160];
			int ri;

			if (strcmp(d->p[sl.v[r].pts[0]].s->workload, wl))
				continue;
			snprintf(label, sizeof(label), "%s", d->p[sl.v[r].pts[0]].s->engine);
			varying_suffix(d, d->p[sl.v[r].pts[0]].s->config, label, sizeof(label));
			ri = name_index(runs, &nr, MAX_SERIES, label);
			if (ri >= 0)
				colors[ri] = plot_engine_color(d->p[sl.v[r].pts[0]].s->engine);
			for (size_t k = 0; k < sl.v[r].n; k++) {
				const struct point *p = &d->p[sl.v[r].pts[k]];
				int pi = name_index(phases, &nph, MAX_SERIES, p->s->phase);

				doc_cell(doc, "%s", label);
				doc_cell(doc, "%s%s", p->s->phase, point_mark(p));
				doc_cell(doc, "%.2f", p->wall.med);
				f_gbs(v, sizeof(v), p->bw.med / 1e9);
				doc_cell(doc, "%s", v);
				doc_cell(doc, "%.0f", p->iops.med);
				doc_cell(doc, "%.1f", (double)p->p99 / 1e3);
				doc_cell(doc, "%.2f", p->gbpc.med);
				doc_cell(doc, "%zu", p->n);
				if (ri >= 0 && pi >= 0) {
					wall[(size_t)ri * MAX_SERIES + (size_t)pi] = p->wall.med;
					bw[(size_t)pi * MAX_SERIES + (size_t)ri] = p->bw.med / 1e9;
				}
			}
		}
		if (!plot)
			continue;
		nw++;
		for (size_t i = 0; i < nr; i++)
			rp[i] = runs[i];
		for (size_t i = 0; i < nph; i++)
			pp[i] = phases[i];
		/* pack the MAX_SERIES-strided grids to the plot's dense layout */
		for (size_t a = 0; a < nr; a++)
			for (size_t b = 0; b < nph; b++)
				wall[a * nph + b] = wall[a * MAX_SERIES + b];
		for (size_t a = 0; a < nph; a++)
			for (size_t b = 0; b < nr; b++)
				bw[a * nr + b] = bw[a * MAX_SERIES + b];
		snprintf(base, sizeof(base), "phase-wall-%zu", nw);
		snprintf(full, sizeof(full), "Wall time per phase: workload %s", wl);
		if ((ret = plot_bars(plot, base, PLOT_STACKED, full, "run (datapath and setting)",
		                     "wall time (s), stacked by phase", rp, nr, pp, NULL, nph,
		                     wall)))
			goto out;
		doc_chart(doc, base, full);
		snprintf(base, sizeof(base), "phase-tput-%zu", nw);
		snprintf(full, sizeof(full), "Throughput per phase: workload %s", wl);
		if ((ret = plot_bars(plot, base, PLOT_CLUSTER, full, "phase",
		                     "throughput (GB/s = 10^9 bytes/s)", pp, nph, rp, colors, nr,
		                     bw)))
			goto out;
		doc_chart(doc, base, full);
	}
out:
	slices_release(&sl);
	return ret;
}

static void section_overview(const struct dataset *d, struct doc *doc)
{
	char keys[1024] = "";
	size_t used = 0, nrep = 0, ncache = 0, nmixed = 0, nunknown = 0, nshared = 0, nbusy = 0;

	for (size_t i = 0; i < d->np; i++)
		if (d->p[i].n > nrep)
			nrep = d->p[i].n;
	/* the swept keys: config keys that took two values or more */
	for (size_t i = 0; i < d->nvarying && used < sizeof(keys); i++)
		if (config_key_swept(d, d->varying[i]))
			used += (size_t)snprintf(keys + used, sizeof(keys) - used, " %s,",
			                         d->varying[i]);
	if (used)
		keys[strlen(keys) - 1] = '\0';
	doc_para(doc,
	         "Journal %s: %lu records, %zu points (configurations), up to %zu repeats "
	         "each; %zu failed, %lu torn or invalid lines skipped.",
	         d->path, d->records, d->np, nrep, d->nfail, d->skipped_lines);
	if (d->host[0])
		doc_para(doc, "Host %s, kernel %s, CPU %s (%u online CPUs).", d->host, d->kernel,
		         d->cpu_model, d->online_cpus);
	for (size_t i = 0; i < d->np; i++) {
		ncache += d->p[i].service == LLMIO_SERVICE_PAGE_CACHE;
		nmixed += d->p[i].service == LLMIO_SERVICE_MIXED;
		nunknown += d->p[i].service == LLMIO_SERVICE_UNKNOWN;
		nshared += d->p[i].shared_disk;
		nbusy += d->p[i].busy_system;
	}
	if (ncache + nmixed + nunknown)
		doc_para(
		        doc,
		        "Not device-bound: %zu points served by the page cache and %zu partly "
		        "(mixed), marked \"(page cache)\" and \"(mixed)\" in every chart and "
		        "table; %zu points where that cannot be told.  The advisor ranks them only "
		        "among themselves (docs/metrics.md, \"Page cache or device\").",
		        ncache, nmixed, nunknown);
	if (nshared + nbusy)
		doc_para(doc,
		         "Measured with company: %zu points on a disk shared with other I/O, %zu "
		         "on a machine busy beyond the job (\"served by\" in All points).",
		         nshared, nbusy);
	doc_para(doc,
	         "Swept keys:%s.  A point's numbers are the median over its repeats; "
	         "latency percentiles come from the histogram merging all its jobs and "
	         "repeats (docs/report.md).",
	         used ? keys : " none");
}

static int section_advice(const struct dataset *d, struct doc *doc)
{
	struct advice_set *set = malloc(sizeof(*set));
	char set_s[256], met[128], vs[256], ev[256];

	if (!set)
		return -ENOMEM;
	advise_all(d, set);
	doc_heading(doc, 1, "Datapath advice per phase");
	doc_para(doc,
	         "What `llmio advise` concludes from this journal (rules: docs/report.md).  "
	         "Device-bound points are ranked only against each other; points served by the "
	         "page cache (or where that cannot be told) have rows of their own.");
	doc_table(doc, 8, "phase", "served by", "best datapath", "settings", "metric",
	          "vs runner-up", "evidence", "verdict");
	for (size_t i = 0; i < set->n; i++) {
		const struct advice *x = &set->a[i];

		if (x->best.p)
			advice_settings(x->best.p, set_s, sizeof(set_s));
		advice_metric(x, x->best.p, met, sizeof(met));
		advice_vs(x, vs, sizeof(vs));
		advice_evidence(x->best.p, 3, ev, sizeof(ev));
		doc_row(doc, phase_class_name(x->pc), svc_class_name(x->sc),
		        x->best.p ? x->best.p->s->engine : "-", x->best.p ? set_s : "-", met, vs,
		        ev,
		        !x->best.p ? "no data"
		        : x->thin  ? "too thin"
		                   : "decided");
	}
	doc_table(doc, 3, "phase", "the study's guideline", "this machine");
	for (size_t i = 0; i < set->n; i++)
		if (set->a[i].sc == SC_DEVICE)
			doc_row(doc, phase_class_name(set->a[i].pc), set->a[i].study,
			        set->a[i].agree_text);
	for (size_t i = 0; i < set->n; i++)
		if (set->a[i].thin)
			doc_para(doc, "%s (%s): too thin: %s.  Try next: %s.",
			         phase_class_name(set->a[i].pc), svc_class_name(set->a[i].sc),
			         set->a[i].why, set->a[i].next);
	free(set);
	return 0;
}

static void section_points(const struct dataset *d, struct doc *doc)
{
	char bs[32], v[32], ev[256];

	doc_heading(doc, 1, "All points");
	doc_table(doc, 15, "workload", "phase", "datapath", "rw", "bs", "QD", "jobs", "direct",
	          "served by", "GB/s", "IOPS", "p99 us", "GB/s per core", "repeats (spread)",
	          "records");
	for (size_t i = 0; i < d->np; i++) {
		const struct point *p = &d->p[i];

		fmt_size(bs, sizeof(bs), p->s->bs);
		advice_evidence(p, 3, ev, sizeof(ev));
		doc_cell(doc, "%s", p->s->workload);
		doc_cell(doc, "%s", p->s->phase);
		doc_cell(doc, "%s", p->s->engine);
		doc_cell(doc, "%s", p->s->rw);
		doc_cell(doc, "%s", bs);
		doc_cell(doc, "%u", p->s->iodepth);
		doc_cell(doc, "%u", p->s->numjobs);
		doc_cell(doc, "%d", p->s->direct);
		doc_cell(doc, "%s%s%s", llmio_service_name(p->service),
		         p->shared_disk ? ", shared disk" : "",
		         p->busy_system ? ", busy machine" : "");
		f_gbs(v, sizeof(v), p->bw.med / 1e9);
		doc_cell(doc, "%s", v);
		doc_cell(doc, "%.0f", p->iops.med);
		doc_cell(doc, "%.1f", (double)p->p99 / 1e3);
		doc_cell(doc, "%.2f", p->gbpc.med);
		doc_cell(doc, "%zu (%.0f%%)", p->n, metric_spread_pct(&p->bw));
		doc_cell(doc, "%s", ev);
	}
	if (!d->nfail)
		return;
	doc_heading(doc, 1, "Failed points");
	doc_table(doc, 3, "record", "point", "error");
	for (size_t i = 0; i < d->nfail; i++)
		doc_row(doc, d->fail[i].hash, d->fail[i].what, d->fail[i].message);
}

int report_build(const struct dataset *d, struct doc *doc, struct plot *plot)
{
	int ret;

	section_overview(d, doc);
	if ((ret = section_advice(d, doc)) || (ret = section_sweep(d, doc, plot, &sweep_qd)) ||
	    (ret = section_sweep(d, doc, plot, &sweep_bs)) || (ret = section_cdf(d, doc, plot)) ||
	    (ret = section_cpu(d, doc, plot)) || (ret = section_phases(d, doc, plot)))
		return ret;
	section_points(d, doc);
	return doc_error(doc);
}
