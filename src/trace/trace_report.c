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
 *   all bytes read and written.
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
#include "core/error.h"
#include "report/fmt.h" /* fmt_ns: durations as the other tables print them */
#include "llmio/llmio.h"
#include "trace/trace_map.h"
#include "trace/trace_report.h"

#define NSIZES 48 /* request sizes: bucket 0 = 0 bytes, b = [2^(b-1), 2^b) */

struct totals {
	uint64_t rbytes, wbytes, rcalls, wcalls, opens, fsyncs, calls, errors, io_ns;
	uint64_t seq, rnd;
	uint64_t first, last; /* first call, end of the last */
};

struct file_stat {
	uint32_t path;
	int64_t head; /* first (file, pid) entry */
	struct totals t;
};

struct file_pid {
	uint32_t pid;
	int64_t next;
	uint64_t last_end;
	struct totals t;
};

struct phase_stat {
	struct totals t;
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
};

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

static int analyse(struct trace_analysis *a)
{
	struct trace *t = a->t;
	struct tmap fm = {0}, fpm = {0};
	size_t fcap = 0, fpcap = 0;
	int ret = -ENOMEM;

	for (size_t i = 0; i < t->nrec; i++) {
		const struct trace_rec *r = &t->rec[i];
		struct file_pid *e = NULL;
		int seq = -1;

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
	ret = 0;
out:
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
	print_phases(a, f);
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

static int run_gnuplot(const char *dir, const char *script)
{
	char cmd[4200];
	int st;

	snprintf(cmd, sizeof(cmd), "cd '%s' && gnuplot '%s' 2>/dev/null", dir, script);
	st = system(cmd);
	return st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

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
	for (int i = 0; i < 2; i++) {
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", dir, i ? "sizes.svg" : "lorenz.svg");
		if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
			return llmio_err(
			        e, -EINVAL,
			        "%s is not a regular file; llmio never writes through a "
			        "link or into a FIFO: remove it or choose another directory",
			        path);
	}
	*plotted = run_gnuplot(dir, "lorenz.gp") == 0 && run_gnuplot(dir, "sizes.gp") == 0;
	return 0;
io:
	ret = -errno;
	return llmio_err(e, ret, "cannot write %s: %s", path, strerror(errno));
}
