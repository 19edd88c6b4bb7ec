/* SPDX-License-Identifier: MIT */
/*
 * Trace analysis.  One pass over the records fills totals per phase, process, file and
 * (file, process); latency histograms per call type (globally and per phase) use llmio's
 * log-linear histogram, request sizes a power-of-two histogram.
 *
 * Definitions (docs/tracing.md):
 * - bytes read / written: what the calls returned (transferred), not what they asked for;
 * - sequential: a read or write that starts where the previous one of the same process on
 *   the same file ended (the first at offset 0 counts as sequential); calls whose offset is
 *   unknown (pipes) are in neither class;
 * - I/O time: the sum of the calls' durations (threads add up, so it can exceed the wall time);
 * - concentration: the smallest fraction of the files touched that carries 50 / 90 / 99 % of
 *   all bytes read and written;
 * - distribution over files: the bytes (read + written) and the accesses (read and write
 *   calls) of each file touched, fitted as a power law (trace_fit.h) with a Gini coefficient.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "stats/result_json.h"
#include "base/error.h"
#include "base/fmt.h" /* fmt_ns: durations as the other tables print them */
#include "base/gnuplot.h"
#include "llmio/llmio.h"
#include "trace/trace_fit.h"
#include "trace/trace_map.h"
#include "trace/trace_report.h"
#include "trace/trace_time.h"

#define NSIZES 48 /* request sizes: bucket 0 = 0 bytes, b = [2^(b-1), 2^b) */

struct totals {
	uint64_t rbytes, wbytes, rcalls, wcalls, opens, fsyncs, calls, errors, io_ns;
	uint64_t seq, rnd;
	uint64_t first, last; /* first call, end of the last */
};

/*
 * Reads by how they were served (TRACE_SERVED_*: unknown, page cache, device): all of them,
 * and those at or above their call type's p99 and p99.9 over the whole trace.
 */
struct tail_stat {
	uint64_t all[3], p99[3], p999[3];
};

struct file_stat {
	uint32_t path;
	int64_t head; /* first (file, pid) entry */
	struct totals t;
	struct tail_stat tail;
};

struct file_pid {
	uint32_t pid;
	int64_t next;
	uint64_t last_end;
	struct totals t;
};

struct phase_stat {
	struct totals t;
	struct tail_stat tail;
	uint64_t rsize[NSIZES], wsize[NSIZES];
	struct llmio_hist *lat[TR_NTYPES];
};

struct trace_analysis {
	struct trace *t;
	struct phase_stat all;
	struct phase_stat *phase;
	struct totals *proc; /* parallel to t->proc */
	struct file_stat *file;
	size_t nfile;
	struct file_pid *fp;
	size_t nfp;
	uint32_t *by_bytes; /* file indexes, most bytes first */
	size_t nthreads;
	uint64_t thr99[TR_NTYPES], thr999[TR_NTYPES]; /* a read type's p99, p99.9 (ns) */
	struct tail_stat tail_type[TR_NTYPES];
	bool served_known;          /* some read says how it was served */
	struct phase_time *ptime;   /* t->nphase: each phase's time in calls and between them */
	struct trace_timeseries ts; /* bytes and calls over time, per phase and process */
	struct fit_result fit[2];   /* FIT_BYTES, FIT_ACCESSES over the files */
	bool fitted;                /* trace_analysis_fit() was called */
};

enum { FIT_BYTES, FIT_ACCESSES };

/*
 * Bootstrap samples of the goodness of fit: 100 (p to about +-0.05; a second for 10^4 files),
 * fewer above 2 * 10^4 files so that a fit of any trace takes seconds (each sample is a whole
 * fit: 128 candidate cut-offs over every file), never fewer than 20.
 */
static unsigned fit_boots(size_t nfile)
{
	const size_t budget = 2000000; /* files x samples */

	return nfile * 100 <= budget ? 100 : nfile * 20 >= budget ? 20 : (unsigned)(budget / nfile);
}

/* ---- analysis ---- */

static unsigned size_bucket(uint64_t v)
{
	unsigned b = v ? 64u - (unsigned)__builtin_clzll(v) : 0;

	return b < NSIZES ? b : NSIZES - 1;
}

static void add_totals(struct totals *s, const struct trace_rec *r, int seq)
{
	uint64_t end = r->ts + r->dur;

	s->calls++;
	s->io_ns += r->dur;
	s->errors += r->result < 0;
	if (!s->first || r->ts < s->first)
		s->first = r->ts;
	if (end > s->last)
		s->last = end;
	if (trace_type_is_read(r->type)) {
		s->rcalls++;
		s->rbytes += r->result > 0 ? (uint64_t)r->result : 0;
	} else if (trace_type_is_write(r->type)) {
		s->wcalls++;
		s->wbytes += r->result > 0 ? (uint64_t)r->result : 0;
	} else if (r->type == TR_OPEN || r->type == TR_FOPEN) {
		s->opens += r->result >= 0;
	} else if (r->type == TR_FSYNC || r->type == TR_FDATASYNC || r->type == TR_SYNC_RANGE ||
	           r->type == TR_MSYNC) {
		s->fsyncs++;
	}
	if (seq > 0)
		s->seq++;
	else if (seq == 0)
		s->rnd++;
}

static int add_phase(struct phase_stat *p, const struct trace_rec *r, int seq)
{
	add_totals(&p->t, r, seq);
	if (trace_type_is_read(r->type))
		p->rsize[size_bucket(r->req)]++;
	else if (trace_type_is_write(r->type))
		p->wsize[size_bucket(r->req)]++;
	if (!p->lat[r->type]) {
		p->lat[r->type] = malloc(sizeof(struct llmio_hist));
		if (!p->lat[r->type])
			return -ENOMEM;
		llmio_hist_init(p->lat[r->type]);
	}
	llmio_hist_add(p->lat[r->type], r->dur);
	return 0;
}

static int grow_array(void *p, size_t *cap, size_t n, size_t elem)
{
	void **pp = p, *q;
	size_t c = *cap ? *cap * 2 : 256;

	if (n < *cap)
		return 0;
	q = realloc(*pp, c * elem);
	if (!q)
		return -ENOMEM;
	*pp = q;
	*cap = c;
	return 0;
}

/* The (file, pid) entry of a record; sequential test; -1 = not a data call with an offset. */
static int file_pid_entry(struct trace_analysis *a, struct tmap *fpm, size_t *cap, size_t fi,
                          const struct trace_rec *r, struct file_pid **out)
{
	size_t before = fpm->n;
	int64_t k = tmap_index(fpm, (uint64_t)fi << 32 | r->pid);
	struct file_pid *e;

	if (k < 0 || grow_array(&a->fp, cap, (size_t)k, sizeof(*a->fp)))
		return -ENOMEM;
	e = &a->fp[k];
	if ((size_t)k == before) {
		memset(e, 0, sizeof(*e));
		e->pid = r->pid;
		e->next = a->file[fi].head;
		a->file[fi].head = k;
		a->nfp = fpm->n;
	}
	*out = e;
	return 0;
}

static int classify_seq(struct file_pid *e, const struct trace_rec *r)
{
	int seq;

	if (!(trace_type_is_read(r->type) || trace_type_is_write(r->type)) ||
	    r->offset == TRACE_OFF_NONE)
		return -1;
	seq = r->offset == e->last_end;
	if (r->result > 0)
		e->last_end = r->offset + (uint64_t)r->result;
	return seq;
}

static int cmp_bytes_desc(const void *x, const void *y, void *arg)
{
	const struct trace_analysis *a = arg;
	const struct totals *p = &a->file[*(const uint32_t *)x].t,
	                    *q = &a->file[*(const uint32_t *)y].t;
	uint64_t bp = p->rbytes + p->wbytes, bq = q->rbytes + q->wbytes;

	return bp > bq ? -1 : bp < bq;
}

int trace_analysis_fit(struct trace_analysis *a)
{
	double *v;
	int ret = 0;

	if (a->fitted)
		return 0;
	v = malloc((a->nfile + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (int k = FIT_BYTES; k <= FIT_ACCESSES && !ret; k++) {
		for (size_t i = 0; i < a->nfile; i++) {
			const struct totals *s = &a->file[i].t;

			v[i] = (double)(k == FIT_BYTES ? s->rbytes + s->wbytes
			                               : s->rcalls + s->wcalls);
		}
		ret = trace_fit_power_law(v, a->nfile, fit_boots(a->nfile), &a->fit[k]);
	}
	free(v);
	a->fitted = !ret;
	return ret;
}

static void tail_add(struct tail_stat *s, const struct trace_rec *r, uint64_t t99, uint64_t t999)
{
	const unsigned k = r->path2 <= TRACE_SERVED_DEVICE ? r->path2 : TRACE_SERVED_UNKNOWN;

	s->all[k]++;
	if (t99 && r->dur >= t99)
		s->p99[k]++;
	if (t999 && r->dur >= t999)
		s->p999[k]++;
}

/*
 * The latency tail of reads, explained: each read type's p99 and p99.9 over the trace, then
 * every read counted by how it was served, overall and in those tails, per type, phase and
 * file.  fidx[i]: record i's file index (-1: none).
 */
static void tails(struct trace_analysis *a, const int64_t *fidx)
{
	const struct trace *t = a->t;

	for (unsigned k = 0; k < TR_NTYPES; k++)
		if (trace_type_is_read(k) && a->all.lat[k]) {
			/* from the low edge of the percentile's bucket: the calls the histogram
			 * puts there are in the tail, whatever their place inside it */
			a->thr99[k] = llmio_hist_bucket_low(
			        llmio_hist_index(llmio_hist_percentile(a->all.lat[k], 99)));
			a->thr999[k] = llmio_hist_bucket_low(
			        llmio_hist_index(llmio_hist_percentile(a->all.lat[k], 99.9)));
		}
	for (size_t i = 0; i < t->nrec; i++) {
		const struct trace_rec *r = &t->rec[i];
		const uint64_t t99 = a->thr99[r->type], t999 = a->thr999[r->type];

		if (!trace_type_is_read(r->type))
			continue;
		a->served_known |= trace_rec_served(r) != NULL;
		tail_add(&a->tail_type[r->type], r, t99, t999);
		tail_add(&a->all.tail, r, t99, t999);
		tail_add(&a->phase[r->phase].tail, r, t99, t999);
		if (fidx[i] >= 0)
			tail_add(&a->file[fidx[i]].tail, r, t99, t999);
	}
}

static int analyse(struct trace_analysis *a)
{
	struct trace *t = a->t;
	struct tmap fm = {0}, fpm = {0};
	size_t fcap = 0, fpcap = 0;
	int64_t *fidx = malloc((t->nrec + 1) * sizeof(*fidx));
	int ret = -ENOMEM;

	if (!fidx)
		return -ENOMEM;
	for (size_t i = 0; i < t->nrec; i++) {
		const struct trace_rec *r = &t->rec[i];
		struct file_pid *e = NULL;
		int seq = -1;

		fidx[i] = -1;
		if (r->path) {
			size_t before = fm.n;
			int64_t fi = tmap_index(&fm, r->path);

			if (fi < 0 || grow_array(&a->file, &fcap, (size_t)fi, sizeof(*a->file)))
				goto out;
			if ((size_t)fi == before) {
				memset(&a->file[fi], 0, sizeof(a->file[fi]));
				a->file[fi].path = r->path;
				a->file[fi].head = -1;
				a->nfile = fm.n;
			}
			fidx[i] = fi;
			if (file_pid_entry(a, &fpm, &fpcap, (size_t)fi, r, &e))
				goto out;
			seq = classify_seq(e, r);
			add_totals(&a->file[fi].t, r, seq);
			add_totals(&e->t, r, seq);
		}
		for (size_t k = 0; k < t->nproc; k++)
			if (t->proc[k].pid == r->pid) {
				add_totals(&a->proc[k], r, seq);
				break;
			}
		if (add_phase(&a->all, r, seq) || add_phase(&a->phase[r->phase], r, seq))
			goto out;
	}
	a->by_bytes = malloc((a->nfile + 1) * sizeof(*a->by_bytes));
	if (!a->by_bytes)
		goto out;
	for (size_t k = 0; k < a->nfile; k++)
		a->by_bytes[k] = (uint32_t)k;
	qsort_r(a->by_bytes, a->nfile, sizeof(*a->by_bytes), cmp_bytes_desc, a);
	trace_threads(t, &a->nthreads);
	a->ptime = calloc(t->nphase + 1, sizeof(*a->ptime));
	if (!a->ptime || trace_phase_times(t, a->ptime) || trace_timeseries_build(t, &a->ts))
		goto out;
	tails(a, fidx);
	ret = 0;
out:
	free(fidx);
	tmap_release(&fm);
	tmap_release(&fpm);
	return ret;
}

struct trace_analysis *trace_analyze(struct trace *t)
{
	struct trace_analysis *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->t = t;
	a->phase = calloc(t->nphase, sizeof(*a->phase));
	a->proc = calloc(t->nproc + 1, sizeof(*a->proc));
	if (!a->phase || !a->proc || analyse(a)) {
		trace_analysis_destroy(a);
		return NULL;
	}
	return a;
}

static void phase_release(struct phase_stat *p)
{
	for (int k = 0; k < TR_NTYPES; k++)
		free(p->lat[k]);
}

void trace_analysis_destroy(struct trace_analysis *a)
{
	if (!a)
		return;
	phase_release(&a->all);
	for (size_t i = 0; a->phase && i < a->t->nphase; i++)
		phase_release(&a->phase[i]);
	free(a->phase);
	free(a->proc);
	free(a->file);
	free(a->fp);
	free(a->by_bytes);
	free(a->ptime);
	trace_timeseries_release(&a->ts);
	free(a);
}

double trace_analysis_concentration(const struct trace_analysis *a, double frac)
{
	uint64_t total = a->all.t.rbytes + a->all.t.wbytes, sum = 0;

	if (!a->nfile || !total)
		return 0;
	for (size_t k = 0; k < a->nfile; k++) {
		const struct totals *s = &a->file[a->by_bytes[k]].t;

		sum += s->rbytes + s->wbytes;
		if ((double)sum >= frac * (double)total)
			return (double)(k + 1) / (double)a->nfile;
	}
	return 1.0;
}

/* ---- text ---- */

static const char *phase_label(const struct trace_analysis *a, size_t i, char *buf, size_t len)
{
	const struct trace *t = a->t;

	if (!i)
		snprintf(buf, len, "(none)");
	else
		snprintf(buf, len, "%s%s", t->phase_name[i],
		         (t->phase[i].flags & TRACE_PHASE_INFERRED) ? " (inferred)" : "");
	return buf;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static void print_totals_row(FILE *f, const char *label, const struct totals *s)
{
	char rb[32], wb[32], io[32], name[48];

	fmt_bytes(rb, sizeof(rb), (double)s->rbytes);
	fmt_bytes(wb, sizeof(wb), (double)s->wbytes);
	fmt_ns(io, sizeof(io), s->io_ns);
	/* a long path keeps its start and its file name: "..." in the middle */
	fmt_path(name, sizeof(name), label, 32);
	fprintf(f,
	        "  %-32s %9s %7" PRIu64 " %9s %7" PRIu64 " %6" PRIu64 " %6" PRIu64 " %4.0f%% %9s\n",
	        name, rb, s->rcalls, wb, s->wcalls, s->opens, s->fsyncs,
	        pct(s->seq, s->seq + s->rnd), io);
}

static void print_totals_head(FILE *f, const char *what)
{
	fprintf(f, "  %-32s %9s %7s %9s %7s %6s %6s %5s %9s\n", what, "read", "calls", "written",
	        "calls", "opens", "syncs", "seq", "I/O time");
}

static void print_sizes(FILE *f, const struct phase_stat *p)
{
	fprintf(f, "\nrequest sizes (calls)\n  %-12s %10s %10s\n", "size <", "reads", "writes");
	for (unsigned b = 0; b < NSIZES; b++) {
		char lim[32];

		if (!p->rsize[b] && !p->wsize[b])
			continue;
		if (b == 0)
			snprintf(lim, sizeof(lim), "0 B");
		else
			fmt_bytes(lim, sizeof(lim), (double)(1ull << b));
		fprintf(f, "  %-12s %10" PRIu64 " %10" PRIu64 "\n", lim, p->rsize[b], p->wsize[b]);
	}
}

static const double lat_pct[] = {50, 90, 99, 99.9};

static void print_latency(FILE *f, const struct phase_stat *p)
{
	fprintf(f, "\nlatency per call type\n  %-16s %9s %10s %10s %10s %10s %10s\n", "call",
	        "calls", "p50", "p90", "p99", "p99.9", "max");
	for (unsigned k = 0; k < TR_NTYPES; k++) {
		char v[5][32];

		if (!p->lat[k])
			continue;
		for (int i = 0; i < 4; i++)
			fmt_ns(v[i], sizeof(v[i]), llmio_hist_percentile(p->lat[k], lat_pct[i]));
		fmt_ns(v[4], sizeof(v[4]), p->lat[k]->max);
		fprintf(f, "  %-16s %9" PRIu64 " %10s %10s %10s %10s %10s\n", trace_type_name(k),
		        p->lat[k]->count, v[0], v[1], v[2], v[3], v[4]);
	}
}

static void print_overview(const struct trace_analysis *a, FILE *f)
{
	const struct trace *t = a->t;
	const struct totals *s = &a->all.t;
	uint64_t wall = t->hdr.t_end > t->hdr.t_start ? t->hdr.t_end - t->hdr.t_start : 0;
	char rb[32], wb[32], io[32], w[32];

	fmt_bytes(rb, sizeof(rb), (double)s->rbytes);
	fmt_bytes(wb, sizeof(wb), (double)s->wbytes);
	fmt_ns(io, sizeof(io), s->io_ns);
	fmt_ns(w, sizeof(w), wall);
	fprintf(f,
	        "%zu processes, %zu threads, %zu files, %zu calls over %s%s\n"
	        "read %s in %" PRIu64 " calls, wrote %s in %" PRIu64 " calls, %" PRIu64
	        " opens, %" PRIu64 " syncs, %" PRIu64 " failed calls\n"
	        "time in I/O calls %s = %.1f%% of the wall time (summed over threads)\n",
	        t->nproc, a->nthreads, a->nfile, t->nrec, w,
	        (t->hdr.flags & TRACE_F_STRACE) ? " (imported from strace)" : "", rb, s->rcalls, wb,
	        s->wcalls, s->opens, s->fsyncs, s->errors, io, pct(s->io_ns, wall));
	if (t->hdr.dropped || (t->hdr.flags & TRACE_F_STOPPED))
		fprintf(f, "warning: %" PRIu64 " records were lost (no space for the trace)%s\n",
		        t->hdr.dropped,
		        (t->hdr.flags & TRACE_F_STOPPED)
		                ? ": recording stopped early, the trace ends before the command"
		                : "");
	fprintf(f,
	        "concentration: %.1f%% of files carry 50%% of bytes, %.1f%% carry 90%%, %.1f%% "
	        "carry 99%%\n",
	        100 * trace_analysis_concentration(a, 0.5),
	        100 * trace_analysis_concentration(a, 0.9),
	        100 * trace_analysis_concentration(a, 0.99));
}

static void print_fit(FILE *f, const char *what, const struct fit_result *r, bool bytes)
{
	char xmin[32], text[640];

	if (!r->fitted) {
		snprintf(text, sizeof(text),
		         "%s over files: Gini %.3f; too few files to fit (%zu; a fit needs %d, and "
		         "25 of them at or above one value of 6 or more)",
		         what, r->gini, r->n, FIT_MIN_N);
		fmt_wrapped(f, "", 2, text);
		return;
	}
	if (bytes)
		fmt_bytes(xmin, sizeof(xmin), r->xmin);
	else
		snprintf(xmin, sizeof(xmin), "%.0f calls", r->xmin);
	snprintf(text, sizeof(text),
	         "%s over files: %s: alpha %.3f +- %.3f above %s (%zu of %zu files), KS D %.4f, "
	         "p %.2f (%u bootstrap samples); against lognormal R %.2f (p %.3g), exponential R "
	         "%.2f (p %.3g); Gini %.3f",
	         what, trace_fit_verdict(r), r->alpha, r->sigma, xmin, r->n_tail, r->n, r->ks,
	         r->p_gof, r->boots, r->lognormal.R, r->lognormal.p, r->exponential.R,
	         r->exponential.p, r->gini);
	fmt_wrapped(f, "", 2, text);
}

static void print_distribution(const struct trace_analysis *a, FILE *f)
{
	if (!a->fitted)
		return;
	print_fit(f, "bytes", &a->fit[FIT_BYTES], true);
	print_fit(f, "accesses", &a->fit[FIT_ACCESSES], false);
}

static void print_phases(const struct trace_analysis *a, FILE *f)
{
	char label[96];

	fprintf(f, "\nper phase%s\n",
	        a->t->inferred ? " (inferred from the files: no markers)" : "");
	print_totals_head(f, "phase");
	for (size_t i = 0; i < a->t->nphase; i++)
		if (a->phase[i].t.calls)
			print_totals_row(f, phase_label(a, i, label, sizeof(label)),
			                 &a->phase[i].t);
}

static void print_verdicts(const struct trace_analysis *a, FILE *f)
{
	char label[96];

	fprintf(f, "\nper phase, its threads' time: inside I/O calls and between them\n");
	fprintf(f, "  %-24s %7s %10s %10s %10s %6s  %s\n", "phase", "threads", "in calls",
	        "between", "span", "I/O", "verdict");
	for (size_t i = 0; i < a->t->nphase; i++) {
		const struct phase_time *p = &a->ptime[i];
		char io[32], between[32], span[32];

		if (!p->threads)
			continue;
		fmt_ns(io, sizeof(io), p->io_ns);
		fmt_ns(between, sizeof(between), p->span_ns - p->io_ns);
		fmt_ns(span, sizeof(span), p->span_ns);
		fprintf(f, "  %-24.24s %7u %10s %10s %10s %5.1f%%  %s\n",
		        phase_label(a, i, label, sizeof(label)), p->threads, io, between, span,
		        pct(p->io_ns, p->span_ns), trace_phase_verdict(p));
	}
}

static void tail_cells(const uint64_t *c, char *buf, size_t len)
{
	const uint64_t n = c[0] + c[1] + c[2];

	if (!n)
		snprintf(buf, len, "%7s %6s %6s", "0", "-", "-");
	else
		snprintf(buf, len, "%7" PRIu64 " %5.1f%% %5.1f%%", n,
		         100.0 * (double)c[TRACE_SERVED_DEVICE] / (double)n,
		         100.0 * (double)c[TRACE_SERVED_CACHE] / (double)n);
}

static void print_tail_row(FILE *f, const char *label, const struct tail_stat *t)
{
	char all[48], p99[48], p999[48], name[40];

	tail_cells(t->all, all, sizeof(all));
	tail_cells(t->p99, p99, sizeof(p99));
	tail_cells(t->p999, p999, sizeof(p999));
	fmt_path(name, sizeof(name), label, 24);
	fprintf(f, "  %-24s %s  %s  %s\n", name, all, p99, p999);
}

/* The reads' latency tail and how much of it went to the device. */
static void print_tails(const struct trace_analysis *a, FILE *f, unsigned top)
{
	char label[96];
	unsigned shown = 0;

	if (!a->served_known)
		return;
	fprintf(f, "\nlatency tail of reads: served by the device or the page cache (each read "
	           "asked of the page\ncache first); p99 and p99.9 of each call type over the "
	           "trace\n");
	fprintf(f, "  %-24s %7s %6s %6s  %7s %6s %6s  %7s %6s %6s\n", "", "reads", "device",
	        "cache", ">=p99", "device", "cache", ">=p99.9", "device", "cache");
	for (unsigned k = 0; k < TR_NTYPES; k++)
		if (a->tail_type[k].all[0] + a->tail_type[k].all[1] + a->tail_type[k].all[2]) {
			char ty[64], p99[32];

			fmt_ns(p99, sizeof(p99), a->thr99[k]);
			snprintf(ty, sizeof(ty), "%s (p99 %s)", trace_type_name(k), p99);
			print_tail_row(f, ty, &a->tail_type[k]);
		}
	print_tail_row(f, "all reads", &a->all.tail);
	for (size_t i = 0; a->t->nphase > 1 && i < a->t->nphase; i++) {
		const struct tail_stat *t = &a->phase[i].tail;

		if (t->all[0] + t->all[1] + t->all[2]) {
			char name[112];

			snprintf(name, sizeof(name), "phase %s",
			         phase_label(a, i, label, sizeof(label)));
			print_tail_row(f, name, t);
		}
	}
	for (size_t k = 0; k < a->nfile && shown < top; k++) {
		const struct file_stat *s = &a->file[a->by_bytes[k]];

		if (!(s->tail.p99[0] + s->tail.p99[1] + s->tail.p99[2]))
			continue;
		print_tail_row(f, trace_str(a->t, s->path), &s->tail);
		shown++;
	}
}

static void print_top(const struct trace_analysis *a, FILE *f, unsigned top)
{
	fprintf(f, "\ntop files by bytes\n");
	print_totals_head(f, "file");
	for (size_t k = 0; k < a->nfile && k < top; k++) {
		const struct file_stat *s = &a->file[a->by_bytes[k]];
		print_totals_row(f, trace_str(a->t, s->path), &s->t);
	}
}

int trace_report_summary(const struct trace_analysis *a, FILE *f)
{
	print_overview(a, f);
	print_phases(a, f);
	print_top(a, f, 5);
	return ferror(f) ? -EIO : 0;
}

int trace_report_text(const struct trace_analysis *a, FILE *f, unsigned top)
{
	const struct trace *t = a->t;

	print_overview(a, f);
	print_distribution(a, f);
	print_phases(a, f);
	print_verdicts(a, f);
	fprintf(f, "\nper process\n");
	print_totals_head(f, "pid parent command");
	for (size_t k = 0; k < t->nproc; k++) {
		char label[160];

		/* a command line is cut at its end: its start names the program */
		snprintf(label, sizeof(label), "%u %u %.*s", t->proc[k].pid, t->proc[k].ppid, 16,
		         trace_str(t, t->proc[k].cmd));
		print_totals_row(f, label, &a->proc[k]);
	}
	print_top(a, f, top);
	print_latency(f, &a->all);
	print_tails(a, f, top);
	for (size_t i = 1; i < t->nphase && t->nphase > 2; i++) {
		char label[96];

		if (!a->phase[i].t.calls)
			continue;
		fprintf(f, "\nphase %s:", phase_label(a, i, label, sizeof(label)));
		print_latency(f, &a->phase[i]);
	}
	print_sizes(f, &a->all);
	return ferror(f) ? -EIO : 0;
}

/* ---- JSON ---- */

static cJSON *totals_json(const struct totals *s, bool full)
{
	cJSON *o = cJSON_CreateObject();

	if (!o)
		return NULL;
	cJSON_AddNumberToObject(o, "bytes_read", (double)s->rbytes);
	cJSON_AddNumberToObject(o, "bytes_written", (double)s->wbytes);
	cJSON_AddNumberToObject(o, "read_calls", (double)s->rcalls);
	cJSON_AddNumberToObject(o, "write_calls", (double)s->wcalls);
	if (!full)
		return o;
	cJSON_AddNumberToObject(o, "opens", (double)s->opens);
	cJSON_AddNumberToObject(o, "fsyncs", (double)s->fsyncs);
	cJSON_AddNumberToObject(o, "calls", (double)s->calls);
	cJSON_AddNumberToObject(o, "failed_calls", (double)s->errors);
	cJSON_AddNumberToObject(o, "sequential_fraction",
	                        s->seq + s->rnd ? (double)s->seq / (double)(s->seq + s->rnd) : 0.0);
	cJSON_AddNumberToObject(o, "io_time_s", (double)s->io_ns / 1e9);
	cJSON_AddNumberToObject(o, "span_s",
	                        s->last > s->first ? (double)(s->last - s->first) / 1e9 : 0.0);
	return o;
}

static cJSON *latency_json(const struct phase_stat *p)
{
	cJSON *o = cJSON_CreateObject();

	for (unsigned k = 0; o && k < TR_NTYPES; k++) {
		cJSON *l;

		if (!p->lat[k] || !(l = cJSON_AddObjectToObject(o, trace_type_name(k))))
			continue;
		cJSON_AddNumberToObject(l, "calls", (double)p->lat[k]->count);
		cJSON_AddNumberToObject(l, "p50", (double)llmio_hist_percentile(p->lat[k], 50));
		cJSON_AddNumberToObject(l, "p90", (double)llmio_hist_percentile(p->lat[k], 90));
		cJSON_AddNumberToObject(l, "p99", (double)llmio_hist_percentile(p->lat[k], 99));
		cJSON_AddNumberToObject(l, "p99.9", (double)llmio_hist_percentile(p->lat[k], 99.9));
		cJSON_AddNumberToObject(l, "max", (double)p->lat[k]->max);
		cJSON_AddNumberToObject(l, "mean", llmio_hist_mean(p->lat[k]));
	}
	return o;
}

static cJSON *sizes_json(const uint64_t *h)
{
	cJSON *o = cJSON_CreateObject();

	for (unsigned b = 0; o && b < NSIZES; b++) {
		char key[32];

		if (!h[b])
			continue;
		/* key: the bucket's lower bound in bytes */
		snprintf(key, sizeof(key), "%" PRIu64, b ? (uint64_t)1 << (b - 1) : 0);
		cJSON_AddNumberToObject(o, key, (double)h[b]);
	}
	return o;
}

static cJSON *phase_json(const struct phase_stat *p)
{
	cJSON *o = totals_json(&p->t, true), *sizes;

	if (!o)
		return NULL;
	cJSON_AddItemToObject(o, "latency_ns", latency_json(p));
	sizes = cJSON_AddObjectToObject(o, "request_sizes");
	if (sizes) {
		cJSON_AddItemToObject(sizes, "read", sizes_json(p->rsize));
		cJSON_AddItemToObject(sizes, "write", sizes_json(p->wsize));
	}
	return o;
}

static cJSON *files_json(const struct trace_analysis *a)
{
	cJSON *files = cJSON_CreateObject();

	for (size_t k = 0; files && k < a->nfile; k++) {
		const struct file_stat *s = &a->file[a->by_bytes[k]];
		cJSON *o = totals_json(&s->t, true), *by;

		if (!o)
			continue;
		by = cJSON_AddObjectToObject(o, "by_pid");
		for (int64_t e = s->head; by && e >= 0; e = a->fp[e].next) {
			char pid[16];

			snprintf(pid, sizeof(pid), "%u", a->fp[e].pid);
			cJSON_AddItemToObject(by, pid, totals_json(&a->fp[e].t, false));
		}
		cJSON_AddItemToObject(files, trace_str(a->t, s->path), o);
	}
	return files;
}

static cJSON *processes_json(const struct trace_analysis *a)
{
	cJSON *procs = cJSON_CreateObject();

	for (size_t k = 0; procs && k < a->t->nproc; k++) {
		const struct trace_proc *p = &a->t->proc[k];
		cJSON *o = cJSON_CreateObject();
		char pid[16];

		if (!o)
			continue;
		snprintf(pid, sizeof(pid), "%u", p->pid);
		cJSON_AddNumberToObject(o, "parent", p->ppid);
		cJSON_AddStringToObject(o, "command", trace_str(a->t, p->cmd));
		cJSON_AddItemToObject(o, "totals", totals_json(&a->proc[k], true));
		cJSON_AddItemToObject(procs, pid, o);
	}
	return procs;
}

static cJSON *fit_json(const struct fit_result *r)
{
	cJSON *o = cJSON_CreateObject(), *c;

	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "verdict", trace_fit_verdict(r));
	cJSON_AddNumberToObject(o, "files", (double)r->n);
	cJSON_AddNumberToObject(o, "gini", r->gini);
	if (!r->fitted)
		return o;
	cJSON_AddNumberToObject(o, "xmin", r->xmin);
	cJSON_AddNumberToObject(o, "files_in_tail", (double)r->n_tail);
	cJSON_AddNumberToObject(o, "alpha", r->alpha);
	cJSON_AddNumberToObject(o, "alpha_stderr", r->sigma);
	cJSON_AddNumberToObject(o, "ks_distance", r->ks);
	cJSON_AddNumberToObject(o, "p_value", r->p_gof);
	cJSON_AddNumberToObject(o, "bootstrap_samples", r->boots);
	if ((c = cJSON_AddObjectToObject(o, "vs_lognormal"))) {
		cJSON_AddNumberToObject(c, "R", r->lognormal.R);
		cJSON_AddNumberToObject(c, "p", r->lognormal.p);
		cJSON_AddNumberToObject(c, "mu", r->lognormal.param1);
		cJSON_AddNumberToObject(c, "sigma", r->lognormal.param2);
	}
	if ((c = cJSON_AddObjectToObject(o, "vs_exponential"))) {
		cJSON_AddNumberToObject(c, "R", r->exponential.R);
		cJSON_AddNumberToObject(c, "p", r->exponential.p);
		cJSON_AddNumberToObject(c, "lambda", r->exponential.param1);
	}
	return o;
}

/* A series of the cells at stride (one phase's or one process's, bin by bin). */
static cJSON *series_json(const struct trace_timeseries *ts, const struct time_cell *c,
                          size_t stride)
{
	static const char *const keys[] = {"read_bytes", "write_bytes", "read_calls",
	                                   "write_calls"};
	cJSON *o = cJSON_CreateObject();

	for (unsigned k = 0; o && k < 4; k++) {
		cJSON *arr = cJSON_AddArrayToObject(o, keys[k]);

		for (unsigned b = 0; arr && b < ts->nbins; b++) {
			const struct time_cell *x = &c[(size_t)b * stride];
			const uint64_t v[4] = {x->rbytes, x->wbytes, x->rcalls, x->wcalls};

			cJSON_AddItemToArray(arr, cJSON_CreateNumber((double)v[k]));
		}
	}
	return o;
}

static cJSON *time_json(const struct trace_analysis *a)
{
	const struct trace *t = a->t;
	const struct trace_timeseries *ts = &a->ts;
	cJSON *o = cJSON_CreateObject(), *ph, *pr;

	if (!o)
		return NULL;
	cJSON_AddNumberToObject(o, "bin_s", (double)ts->bin_ns / 1e9);
	cJSON_AddNumberToObject(o, "bins", ts->nbins);
	ph = cJSON_AddObjectToObject(o, "phases");
	for (size_t i = 0; ph && i < t->nphase; i++) {
		const struct phase_time *p = &a->ptime[i];
		cJSON *x;

		if (!p->threads || !(x = cJSON_CreateObject()))
			continue;
		cJSON_AddNumberToObject(x, "threads", p->threads);
		cJSON_AddNumberToObject(x, "in_calls_s", (double)p->io_ns / 1e9);
		cJSON_AddNumberToObject(x, "between_s", (double)(p->span_ns - p->io_ns) / 1e9);
		cJSON_AddNumberToObject(x, "span_s", (double)p->span_ns / 1e9);
		cJSON_AddNumberToObject(x, "io_share",
		                        p->span_ns ? (double)p->io_ns / (double)p->span_ns : 0);
		cJSON_AddStringToObject(x, "verdict", trace_phase_verdict(p));
		if (ts->nbins)
			cJSON_AddItemToObject(x, "series",
			                      series_json(ts, ts->by_phase + i, t->nphase));
		cJSON_AddItemToObject(ph, i ? t->phase_name[i] : "(none)", x);
	}
	pr = cJSON_AddObjectToObject(o, "processes");
	for (size_t k = 0; pr && ts->nbins && k < t->nproc; k++) {
		char pid[16];

		snprintf(pid, sizeof(pid), "%u", t->proc[k].pid);
		cJSON_AddItemToObject(pr, pid, series_json(ts, ts->by_proc + k, t->nproc));
	}
	return o;
}

static cJSON *tail_json(const struct tail_stat *t)
{
	static const char *const names[] = {"unknown", "page_cache", "device"};
	const uint64_t *sets[] = {t->all, t->p99, t->p999};
	static const char *const set_names[] = {"reads", "p99_and_above", "p99_9_and_above"};
	cJSON *o = cJSON_CreateObject();

	for (int s = 0; o && s < 3; s++) {
		cJSON *x = cJSON_AddObjectToObject(o, set_names[s]);
		const uint64_t n = sets[s][0] + sets[s][1] + sets[s][2];

		for (int k = 0; x && k < 3; k++)
			cJSON_AddNumberToObject(x, names[k], (double)sets[s][k]);
		if (x)
			cJSON_AddNumberToObject(x, "device_share",
			                        n ? (double)sets[s][TRACE_SERVED_DEVICE] / (double)n
			                          : 0);
	}
	return o;
}

static cJSON *tails_json(const struct trace_analysis *a)
{
	cJSON *o = cJSON_CreateObject(), *ty, *ph, *fi;

	if (!o)
		return NULL;
	cJSON_AddItemToObject(o, "all_reads", tail_json(&a->all.tail));
	ty = cJSON_AddObjectToObject(o, "by_call");
	for (unsigned k = 0; ty && k < TR_NTYPES; k++) {
		cJSON *x;

		if (!(a->tail_type[k].all[0] + a->tail_type[k].all[1] + a->tail_type[k].all[2]) ||
		    !(x = tail_json(&a->tail_type[k])))
			continue;
		cJSON_AddNumberToObject(x, "p99_ns", (double)a->thr99[k]);
		cJSON_AddNumberToObject(x, "p99_9_ns", (double)a->thr999[k]);
		cJSON_AddItemToObject(ty, trace_type_name(k), x);
	}
	ph = cJSON_AddObjectToObject(o, "by_phase");
	for (size_t i = 0; ph && i < a->t->nphase; i++) {
		const struct tail_stat *t = &a->phase[i].tail;

		if (t->all[0] + t->all[1] + t->all[2])
			cJSON_AddItemToObject(ph, i ? a->t->phase_name[i] : "(none)", tail_json(t));
	}
	fi = cJSON_AddObjectToObject(o, "by_file");
	for (size_t k = 0; fi && k < a->nfile; k++) {
		const struct file_stat *s = &a->file[k];

		if (s->tail.all[0] + s->tail.all[1] + s->tail.all[2])
			cJSON_AddItemToObject(fi, trace_str(a->t, s->path), tail_json(&s->tail));
	}
	return o;
}

static cJSON *distribution_json(const struct trace_analysis *a)
{
	cJSON *o = cJSON_CreateObject();

	if (!o)
		return NULL;
	cJSON_AddItemToObject(o, "bytes", fit_json(&a->fit[FIT_BYTES]));
	cJSON_AddItemToObject(o, "accesses", fit_json(&a->fit[FIT_ACCESSES]));
	return o;
}

int trace_report_json(const struct trace_analysis *a, FILE *f)
{
	const struct trace *t = a->t;
	cJSON *root = cJSON_CreateObject(), *phases, *tot, *conc;

	if (!root)
		return -ENOMEM;
	cJSON_AddItemToObject(root, "files", files_json(a));
	cJSON_AddItemToObject(root, "processes", processes_json(a));
	phases = cJSON_AddObjectToObject(root, "phases");
	for (size_t i = 0; phases && i < t->nphase; i++) {
		cJSON *o;

		if (!a->phase[i].t.calls || !(o = phase_json(&a->phase[i])))
			continue;
		cJSON_AddBoolToObject(o, "inferred",
		                      (t->phase[i].flags & TRACE_PHASE_INFERRED) != 0);
		cJSON_AddItemToObject(phases, i ? t->phase_name[i] : "(none)", o);
	}
	tot = phase_json(&a->all);
	if (tot) {
		uint64_t wall = t->hdr.t_end > t->hdr.t_start ? t->hdr.t_end - t->hdr.t_start : 0;

		cJSON_AddNumberToObject(tot, "wall_s", (double)wall / 1e9);
		cJSON_AddNumberToObject(tot, "files", (double)a->nfile);
		cJSON_AddNumberToObject(tot, "processes", (double)t->nproc);
		cJSON_AddNumberToObject(tot, "threads", (double)a->nthreads);
		cJSON_AddNumberToObject(tot, "records_lost", (double)t->hdr.dropped);
		cJSON_AddNumberToObject(tot, "exit_status", t->hdr.exit_status);
		cJSON_AddStringToObject(tot, "source",
		                        (t->hdr.flags & TRACE_F_STRACE) ? "strace" : "preload");
		conc = cJSON_AddObjectToObject(tot, "concentration");
		if (conc) {
			cJSON_AddNumberToObject(conc, "files_for_50pct",
			                        trace_analysis_concentration(a, 0.5));
			cJSON_AddNumberToObject(conc, "files_for_90pct",
			                        trace_analysis_concentration(a, 0.9));
			cJSON_AddNumberToObject(conc, "files_for_99pct",
			                        trace_analysis_concentration(a, 0.99));
		}
	}
	cJSON_AddItemToObject(root, "totals", tot);
	if (a->fitted)
		cJSON_AddItemToObject(root, "distribution", distribution_json(a));
	cJSON_AddItemToObject(root, "time", time_json(a));
	cJSON_AddItemToObject(root, "tails", tails_json(a));
	return json_write_doc(f, root);
}

/* ---- plots ---- */

/*
 * fopen(path, "w") for a file of the plot directory, which is the user's: never through a
 * symbolic link, never into a FIFO or device (which could block or be anything), so errno
 * ELOOP or EINVAL for those.
 */
static FILE *create_file(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0666);
	struct stat st;
	FILE *f;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || ftruncate(fd, 0)) {
		int err = fstat(fd, &st) == 0 && !S_ISREG(st.st_mode) ? EINVAL : errno;

		close(fd);
		errno = err;
		return NULL;
	}
	f = fdopen(fd, "w");
	if (!f)
		close(fd);
	return f;
}

static int write_text(const char *path, const char *text, struct llmio_error *e)
{
	FILE *f = create_file(path);

	if (!f || fputs(text, f) < 0 || fclose(f)) {
		llmio_err(e, -EIO, "cannot write %s: %s", path, strerror(errno));
		if (f)
			fclose(f);
		return -EIO;
	}
	return 0;
}

/*
 * ranksize.gp: bytes of each file against its rank, log-log, into ranksize.svg and .png, with
 * the fitted power law's line over its tail: a file of rank r (of n) has about xmin (r /
 * n_tail)^(-1 / (alpha - 1)) bytes there (the fitted tail's share of files above x).
 */
static int ranksize_script(const struct trace_analysis *a, const char *dir, struct llmio_error *e)
{
	const struct fit_result *r = &a->fit[FIT_BYTES];
	char path[4096], fit[512] = "", text[2048];

	if (a->fitted && r->fitted)
		snprintf(fit, sizeof(fit),
		         ", (x <= %zu ? %.17g * (x / %zu.0) ** (-1.0 / (%.17g - 1)) : 1/0) with "
		         "lines "
		         "dt 2 lw 2 title 'power law, alpha %.2f (%s)'",
		         r->n_tail, r->xmin, r->n_tail, r->alpha, r->alpha, trace_fit_verdict(r));
	snprintf(
	        text, sizeof(text),
	        "pngterm = strstrt(GPVAL_TERMINALS, \"pngcairo\") > 0 ? \"pngcairo\" : \"png\"\n"
	        "set title 'Bytes per file by rank (log-log)'\nset xlabel 'rank (1 = most bytes)'\n"
	        "set ylabel 'bytes'\nset logscale xy\nset grid\nset key right top\n"
	        "set samples 400\nplot 'ranksize.dat' using 1:($2 > 0 ? $2 : 1/0) with points pt 7 "
	        "ps 0.5 title 'files'%s\n"
	        "set terminal @pngterm size 640,480\nset output 'ranksize.png'\nreplot\n"
	        "set terminal svg size 640,480\nset output 'ranksize.svg'\nreplot\n",
	        fit);
	snprintf(path, sizeof(path), "%s/ranksize.gp", dir);
	return write_text(path, text, e);
}

/* A CSV field as RFC 4180 quotes it: in double quotes (doubled inside) when it needs them. */
static void csv_field(FILE *f, const char *v)
{
	if (!v[strcspn(v, ",\"\r\n")]) {
		fputs(v, f);
		return;
	}
	fputc('"', f);
	for (; *v; v++) {
		if (*v == '"')
			fputc('"', f);
		fputc(*v, f);
	}
	fputc('"', f);
}

/* One CSV of the time series: a row per bin and phase (or process) that made calls. */
static int timeseries_csv(const struct trace_analysis *a, const char *path, bool phases,
                          struct llmio_error *e)
{
	const struct trace *t = a->t;
	const struct trace_timeseries *ts = &a->ts;
	const size_t n = phases ? t->nphase : t->nproc;
	FILE *f = create_file(path);

	if (!f)
		return llmio_err(e, -errno, "cannot write %s: %s", path, strerror(errno));
	fprintf(f, "t_s,%s,read_bytes,write_bytes,read_calls,write_calls\n",
	        phases ? "phase" : "pid");
	for (unsigned b = 0; b < ts->nbins; b++)
		for (size_t i = 0; i < n; i++) {
			const struct time_cell *c = phases ? &ts->by_phase[(size_t)b * n + i]
			                                   : &ts->by_proc[(size_t)b * n + i];

			if (!c->rcalls && !c->wcalls)
				continue;
			fprintf(f, "%.9f,", (double)b * (double)ts->bin_ns / 1e9);
			if (phases)
				csv_field(f, i ? t->phase_name[i] : "(none)");
			else
				fprintf(f, "%u", t->proc[i].pid);
			fprintf(f, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n", c->rbytes,
			        c->wbytes, c->rcalls, c->wcalls);
		}
	if (fclose(f))
		return llmio_err(e, -EIO, "cannot write %s: %s", path, strerror(errno));
	return 0;
}

/*
 * The time series: timeseries_phases.csv and timeseries_processes.csv, and timeseries.dat
 * (a column per phase: bytes read and written per second in each bin) with timeseries.gp,
 * drawn into timeseries.png and .svg.
 */
static int timeseries_files(const struct trace_analysis *a, const char *dir, struct llmio_error *e)
{
	const struct trace *t = a->t;
	const struct trace_timeseries *ts = &a->ts;
	char path[4096], *gp = NULL;
	size_t gplen = 0;
	FILE *f, *g;
	int ret, col = 2;

	snprintf(path, sizeof(path), "%s/timeseries_phases.csv", dir);
	if ((ret = timeseries_csv(a, path, true, e)))
		return ret;
	snprintf(path, sizeof(path), "%s/timeseries_processes.csv", dir);
	if ((ret = timeseries_csv(a, path, false, e)))
		return ret;
	if (!ts->nbins)
		return 0;
	snprintf(path, sizeof(path), "%s/timeseries.dat", dir);
	f = create_file(path);
	if (!f)
		return llmio_err(e, -errno, "cannot write %s: %s", path, strerror(errno));
	fprintf(f, "# t_s, then bytes per second of each phase with calls\n");
	for (unsigned b = 0; b < ts->nbins; b++) {
		fprintf(f, "%.9f", (double)b * (double)ts->bin_ns / 1e9);
		for (size_t i = 0; i < t->nphase; i++)
			if (a->ptime[i].threads) {
				const struct time_cell *c =
				        &ts->by_phase[(size_t)b * t->nphase + i];

				fprintf(f, " %.6g",
				        (double)(c->rbytes + c->wbytes) /
				                ((double)ts->bin_ns / 1e9));
			}
		fputc('\n', f);
	}
	if (fclose(f))
		return llmio_err(e, -EIO, "cannot write %s: %s", path, strerror(errno));
	g = open_memstream(&gp, &gplen);
	if (!g)
		return llmio_err(e, -ENOMEM, "out of memory");
	fprintf(g, "pngterm = strstrt(GPVAL_TERMINALS, \"pngcairo\") > 0 ? \"pngcairo\" : \"png\"\n"
	           "set title 'Bytes read and written over time, per phase' noenhanced\n"
	           "set xlabel 'seconds from the first call'\nset ylabel 'bytes per second'\n"
	           "set grid\nset key outside right top noenhanced\nplot ");
	for (size_t i = 0; i < t->nphase; i++) {
		char label[96];

		if (!a->ptime[i].threads)
			continue;
		phase_label(a, i, label, sizeof(label));
		for (char *q = label; *q; q++)
			if (*q == '\'' || *q == '\\')
				*q = '_';
		fprintf(g, "%s'timeseries.dat' using 1:%d with steps lw 2 title '%s'",
		        col > 2 ? ", " : "", col, label);
		col++;
	}
	fprintf(g, "\nset terminal @pngterm size 800,480\nset output 'timeseries.png'\nreplot\n"
	           "set terminal svg size 800,480\nset output 'timeseries.svg'\nreplot\n");
	fclose(g);
	snprintf(path, sizeof(path), "%s/timeseries.gp", dir);
	ret = gp ? write_text(path, gp, e) : llmio_err(e, -ENOMEM, "out of memory");
	free(gp);
	return ret;
}

/* An SVG chart of dir, pasted into the page (from its <svg element on); nothing if absent. */
static void html_svg(FILE *f, const char *dir, const char *name, const char *caption)
{
	char path[4096], buf[65536];
	FILE *in;
	size_t n;
	bool started = false;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	in = fopen(path, "r");
	if (!in)
		return;
	fputs("<figure>\n", f);
	while ((n = fread(buf, 1, sizeof(buf) - 1, in)) > 0) {
		char *from = buf;

		buf[n] = '\0';
		if (!started) { /* the XML declaration and doctype stay out of an HTML page */
			from = strstr(buf, "<svg");
			if (!from)
				continue;
			started = true;
		}
		fwrite(from, 1, n - (size_t)(from - buf), f);
	}
	fclose(in);
	fputs("<figcaption>", f);
	fmt_html(f, caption, strlen(caption));
	fputs("</figcaption></figure>\n", f);
}

/*
 * report.html: the whole text report and every chart in one self-contained page (the charts'
 * SVG inline, no other file needed), written whole or not at all (temporary file + rename).
 */
static int report_html(const struct trace_analysis *a, const char *dir, struct llmio_error *e)
{
	static const struct {
		const char *svg, *caption;
	} charts[] = {
	        {"timeseries.svg", "Bytes read and written over time, per phase"},
	        {"ranksize.svg", "Bytes per file by rank, log-log, with the fitted power law"},
	        {"lorenz.svg", "Concentration of bytes over files (Lorenz curve)"},
	        {"sizes.svg", "Request sizes"},
	};
	char path[4096], tmp[4200], *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len), *f;
	int ret;

	if (!m)
		return llmio_err(e, -ENOMEM, "out of memory");
	ret = trace_report_text(a, m, 20);
	fclose(m);
	if (ret || !text) {
		free(text);
		return llmio_err(e, ret ? ret : -ENOMEM, "cannot format the report");
	}
	snprintf(path, sizeof(path), "%s/report.html", dir);
	snprintf(tmp, sizeof(tmp), "%s/.report.html.tmp", dir);
	f = create_file(tmp);
	if (!f) {
		free(text);
		return llmio_err(e, -errno, "cannot write %s: %s", tmp, strerror(errno));
	}
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<title>llmio trace report</title>\n<style>\nbody{font-family:system-ui,sans-serif;"
	      "margin:2em auto;max-width:72em;padding:0 1em;color:#222}\npre{font-size:.85em;"
	      "background:#fafafa;border:1px solid #ddd;padding:1em;overflow-x:auto}\n"
	      "figure{margin:1.5em 0}svg{max-width:100%;height:auto}\n"
	      "figcaption{font-size:.85em;color:#555}\n</style>\n</head>\n<body>\n"
	      "<h1>llmio trace report</h1>\n<pre>",
	      f);
	fmt_html(f, text, len);
	fputs("</pre>\n", f);
	free(text);
	for (size_t i = 0; i < sizeof(charts) / sizeof(charts[0]); i++)
		html_svg(f, dir, charts[i].svg, charts[i].caption);
	fputs("</body>\n</html>\n", f);
	if (ferror(f) | fclose(f) || rename(tmp, path)) {
		ret = -errno;
		unlink(tmp);
		return llmio_err(e, ret ? ret : -EIO, "cannot write %s: %s", path, strerror(errno));
	}
	return 0;
}

/* What gnuplot (and the page's rename) put in the directory without create_file(). */
static const char *const gnuplot_out[] = {
        "lorenz.svg",     "sizes.svg",      "ranksize.png", "ranksize.svg",
        "timeseries.png", "timeseries.svg", "report.html",  GNUPLOT_LOG,
};

int trace_report_plots(const struct trace_analysis *a, const char *dir, bool *plotted,
                       struct llmio_error *e)
{
	char path[4096];
	uint64_t total = a->all.t.rbytes + a->all.t.wbytes, sum = 0;
	FILE *f;
	int ret;

	*plotted = false;
	if (strchr(dir, '\''))
		return llmio_err(e, -EINVAL, "plot directory names cannot contain quotes");
	if (mkdir(dir, 0777) && errno != EEXIST)
		return llmio_err(e, -errno, "cannot create %s: %s", dir, strerror(errno));
	/* Lorenz curve: files from the fewest bytes up; x = share of files, y = share of bytes */
	snprintf(path, sizeof(path), "%s/lorenz.dat", dir);
	f = create_file(path);
	if (!f)
		goto io;
	fprintf(f, "# share_of_files share_of_bytes\n0 0\n");
	for (size_t k = a->nfile; k > 0; k--) {
		const struct totals *s = &a->file[a->by_bytes[k - 1]].t;

		sum += s->rbytes + s->wbytes;
		fprintf(f, "%.6f %.6f\n", (double)(a->nfile - k + 1) / (double)a->nfile,
		        total ? (double)sum / (double)total : 0.0);
	}
	if (fclose(f))
		goto io;
	/* rank-size: files by bytes, most first; rank 1 = the largest, log-log */
	snprintf(path, sizeof(path), "%s/ranksize.dat", dir);
	f = create_file(path);
	if (!f)
		goto io;
	fprintf(f, "# rank bytes accesses\n");
	for (size_t k = 0; k < a->nfile; k++) {
		const struct totals *s = &a->file[a->by_bytes[k]].t;

		fprintf(f, "%zu %" PRIu64 " %" PRIu64 "\n", k + 1, s->rbytes + s->wbytes,
		        s->rcalls + s->wcalls);
	}
	if (fclose(f))
		goto io;
	if ((ret = ranksize_script(a, dir, e)) || (ret = timeseries_files(a, dir, e)))
		return ret;
	snprintf(path, sizeof(path), "%s/sizes.dat", dir);
	f = create_file(path);
	if (!f)
		goto io;
	fprintf(f, "# size_lower_bound_bytes reads writes\n");
	for (unsigned b = 0; b < NSIZES; b++)
		if (a->all.rsize[b] || a->all.wsize[b])
			fprintf(f, "%" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
			        b ? (uint64_t)1 << (b - 1) : 0, a->all.rsize[b], a->all.wsize[b]);
	if (fclose(f))
		goto io;
	snprintf(path, sizeof(path), "%s/lorenz.gp", dir);
	if ((ret = write_text(path,
	                      "set terminal svg size 640,480\nset output 'lorenz.svg'\n"
	                      "set title 'Concentration of bytes over files (Lorenz curve)'\n"
	                      "set xlabel 'share of files (fewest bytes first)'\n"
	                      "set ylabel 'share of bytes'\nset key left top\nset grid\n"
	                      "plot [0:1][0:1] 'lorenz.dat' using 1:2 with lines lw 2 title "
	                      "'trace', x with lines dt 2 title 'equal'\n",
	                      e)))
		return ret;
	snprintf(path, sizeof(path), "%s/sizes.gp", dir);
	if ((ret = write_text(path,
	                      "set terminal svg size 640,480\nset output 'sizes.svg'\n"
	                      "set title 'Request sizes'\nset xlabel 'size (bytes, lower bound)'\n"
	                      "set ylabel 'calls'\nset logscale x 2\nset logscale y\nset grid\n"
	                      "plot 'sizes.dat' using ($1+1):($2+0.1) with linespoints title "
	                      "'reads', '' using ($1+1):($3+0.1) with linespoints title 'writes'\n",
	                      e)))
		return ret;
	/* gnuplot opens its outputs itself: they must not be links or FIFOs already */
	for (size_t i = 0; i < sizeof(gnuplot_out) / sizeof(gnuplot_out[0]); i++) {
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", dir, gnuplot_out[i]);
		if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
			return llmio_err(
			        e, -EINVAL,
			        "%s is not a regular file; llmio never writes through a "
			        "link or into a FIFO: remove it or choose another directory",
			        path);
	}
	*plotted = gnuplot_run(dir, "lorenz.gp", NULL) == 0 &&
	           gnuplot_run(dir, "sizes.gp", NULL) == 0 &&
	           gnuplot_run(dir, "ranksize.gp", NULL) == 0 &&
	           (!a->ts.nbins || gnuplot_run(dir, "timeseries.gp", NULL) == 0);
	return report_html(a, dir, e);
io:
	ret = -errno;
	return llmio_err(e, ret, "cannot write %s: %s", path, strerror(errno));
}
