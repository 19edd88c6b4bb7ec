/* SPDX-License-Identifier: MIT */
/*
 * Recipe `replay`: a trace from `llmio trace` (or an imported strace log) replayed through any
 * engine.  Every traced file that carried data is re-created in the directory (its size = the
 * furthest byte the program touched; synthetic content; files the program only wrote start
 * empty, as they did), and every traced thread's reads and writes are replayed in order by
 * one worker thread, at their offsets and sizes (split into pieces of at most bs).
 *
 * --timeline 1 keeps the original schedule: each I/O is issued no earlier than its original
 * time after the trace's start.  The time is absolute (trace start + offset), not a delay
 * after the previous I/O, so waiting on a slow I/O never pushes every later one back: the
 * drift of fio's relative replay_* timing cannot build up.  An I/O whose time has passed is
 * issued at once.  --timeline 0 (default) replays as fast as the datapath allows.
 *
 * Per trace phase the recipe reports the original span (first call to the end of the last)
 * and the replayed span, and the bytes.  What a syscall tracer cannot see (data moved through
 * mmap'd pages) is not replayed.  fsync and fdatasync of a replayed file are replayed as fsync,
 * in their thread's order after the I/Os before them have completed (a checkpoint's cost is
 * mostly its fsync); rename and other metadata calls are counted, not replayed.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/error.h"
#include "trace/trace_read.h"
#include "workload/replay.h"
#include "workload/workload.h"

#define MAX_THREADS 64
#define MAX_PHASES  32

struct rp_io {
	uint32_t file, len;
	uint64_t off, at;
	uint16_t phase;
	uint8_t write;
};

struct rp_thread {
	struct rp_io *io;
	size_t n, next;
};

struct rp_phase {
	uint64_t orig_first, orig_last, bytes, syncs;
	_Atomic uint64_t first, last, done_bytes, done_syncs;
};

/* The traced files that carried data, their replay names and sizes. */
struct rp_files {
	const char **orig; /* trace paths */
	char (*paths)[LLMIO_PATH_MAX];
	struct llmio_file *files;
	bool *read;
	uint64_t *sizes; /* furthest byte touched */
	unsigned n, cap;
};

/* The plan (struct replay_plan in replay.h) and the io_source that runs it. */
struct replay_plan {
	struct llmio_io_source src;
	struct rp_thread thr[MAX_THREADS];
	unsigned nthr;
	struct rp_phase ph[MAX_PHASES];
	unsigned nph;
	struct rp_files f;
	uint64_t nios;
	uint64_t t0; /* replay start (first next() call) */
	_Atomic uint64_t started;
};

static int rp_next(void *arg, unsigned t, struct llmio_io *io)
{
	struct replay_plan *r = arg;
	struct rp_thread *th = &r->thr[t];
	const struct rp_io *x;
	uint64_t expect = 0, now = now_ns();

	if (th->next >= th->n)
		return 0;
	atomic_compare_exchange_strong(&r->started, &expect, now);
	x = &th->io[th->next++];
	*io = (struct llmio_io){.file = x->file,
	                        .len = x->len,
	                        .off = x->off,
	                        .write = x->write,
	                        .at_ns = x->at,
	                        .tag = x->phase};
	expect = 0;
	atomic_compare_exchange_strong(&r->ph[x->phase].first, &expect, now);
	return 1;
}

static void rp_done(void *arg, unsigned t, const struct llmio_io *io, int64_t res, uint64_t lat_ns)
{
	struct replay_plan *r = arg;
	struct rp_phase *p = &r->ph[io->tag];
	uint64_t now = now_ns(), last = atomic_load(&p->last);

	(void)t;
	(void)lat_ns;
	if (io->write == LLMIO_IO_SYNC && res == 0)
		atomic_fetch_add(&p->done_syncs, 1);
	else if (res > 0)
		atomic_fetch_add(&p->done_bytes, (uint64_t)res);
	while (now > last && !atomic_compare_exchange_weak(&p->last, &last, now))
		;
}

static bool file_find(const struct rp_files *f, const char *path, unsigned *out)
{
	for (unsigned i = 0; i < f->n; i++)
		if (!strcmp(f->orig[i], path)) {
			*out = i;
			return true;
		}
	return false;
}

static int file_index(struct rp_files *f, const char *path, unsigned *out)
{
	if (file_find(f, path, out))
		return 0;
	if (f->n == 65535)
		return -E2BIG; /* io_req.file is 16 bits */
	if (f->n == f->cap) {
		unsigned cap = f->cap ? f->cap * 2 : 64;
		const char **o = realloc(f->orig, cap * sizeof(*o));
		uint64_t *sz;
		bool *rd;

		if (!o)
			return -ENOMEM;
		f->orig = o;
		rd = realloc(f->read, cap * sizeof(*rd));
		if (!rd)
			return -ENOMEM;
		f->read = rd;
		sz = realloc(f->sizes, cap * sizeof(*sz));
		if (!sz)
			return -ENOMEM;
		f->sizes = sz;
		f->cap = cap;
	}
	f->orig[f->n] = path;
	f->read[f->n] = false;
	f->sizes[f->n] = 0;
	*out = f->n++;
	return 0;
}

void replay_plan_destroy(struct replay_plan *r)
{
	if (!r)
		return;
	for (unsigned t = 0; t < MAX_THREADS; t++)
		free(r->thr[t].io);
	free(r->f.orig);
	free(r->f.paths);
	free(r->f.files);
	free(r->f.read);
	free(r->f.sizes);
	free(r);
}

uint64_t replay_plan_ios(const struct replay_plan *r)
{
	return r->nios;
}

unsigned replay_plan_files(const struct replay_plan *r)
{
	return r->f.n;
}

uint64_t replay_plan_file_size(const struct replay_plan *r, unsigned i)
{
	return i < r->f.n ? r->f.sizes[i] : 0;
}

static int push(struct rp_thread *th, const struct rp_io *x, size_t *cap)
{
	if (th->n == *cap) {
		size_t c = *cap ? *cap * 2 : 256;
		struct rp_io *n = realloc(th->io, c * sizeof(*n));

		if (!n)
			return -ENOMEM;
		th->io = n;
		*cap = c;
	}
	th->io[th->n++] = *x;
	return 0;
}

/* A read or write of a file that moved bytes at a known offset: what a replay re-issues. */
static bool is_data(const struct trace_rec *rec, const char *path)
{
	return (trace_type_is_read(rec->type) || trace_type_is_write(rec->type)) &&
	       rec->result > 0 && path[0] && rec->offset != TRACE_OFF_NONE;
}

/* The byte range a data record's I/Os cover, widened to align (trace_open bounded both ends
 * by TRACE_POS_MAX, so nothing here wraps). */
static void data_range(const struct trace_rec *rec, uint32_t align, uint64_t *off, uint64_t *end)
{
	*off = rec->offset / align * align;
	*end = (rec->offset + (uint64_t)rec->result + align - 1) / align * align;
}

/*
 * How many I/Os the plan needs, counted before anything is allocated for them, and every
 * file that carried data (first, so that any thread's fsync of it is known).
 */
static int count(struct trace *tr, struct replay_plan *r, const struct replay_plan_opts *o,
                 uint64_t max, struct llmio_error *e)
{
	uint64_t n = 0;
	int ret = 0;

	for (size_t k = 0; k < tr->nrec && !ret; k++) {
		const struct trace_rec *rec = &tr->rec[k];
		const char *path = trace_rec_path(tr, rec);
		uint64_t off, end;
		unsigned fi;

		if (rec->type == TR_FSYNC || rec->type == TR_FDATASYNC) {
			n++; /* at most one I/O; not all are replayed */
		} else if (is_data(rec, path)) {
			data_range(rec, o->align, &off, &end);
			n += (end - off + o->bs - 1) / o->bs;
			ret = file_index(&r->f, path, &fi);
		}
		if (n > max) {
			return llmio_err(
			        e, -EINVAL,
			        "trace record %zu: the replay would need more than %" PRIu64
			        " I/Os of at most %" PRIu64 " bytes (the limit of one plan); "
			        "replay with a larger --bs",
			        k, max, o->bs);
		}
	}
	return ret;
}

int replay_plan_build(struct trace *tr, const struct replay_plan_opts *o, struct replay_plan **out,
                      struct llmio_error *e)
{
	size_t nthr, caps[MAX_THREADS] = {0};
	const struct trace_thread *th;
	struct replay_plan *r;
	uint64_t max = o->max_ios ? o->max_ios : REPLAY_MAX_IOS, total = 0;
	uint32_t align = o->align;
	int ret = 0;

	*out = NULL;
	if (o->bs < 4096 || o->bs > (64u << 20) || !align || align > o->bs ||
	    (align & (align - 1))) {
		return llmio_err(e, -EINVAL,
		                 "replay needs --bs 4k..64m (got %" PRIu64 ", alignment %" PRIu32
		                 ")",
		                 o->bs, align);
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		goto nomem;
	r->nph = tr->nphase < MAX_PHASES ? (unsigned)tr->nphase : MAX_PHASES;
	if ((ret = count(tr, r, o, max, e)))
		goto fail;
	th = trace_threads(tr, &nthr);
	if (!th && tr->nrec) {
		ret = -ENOMEM;
		goto fail;
	}
	for (size_t i = 0; i < nthr && !ret; i++) {
		unsigned slot = (unsigned)(i % MAX_THREADS);

		for (size_t k = 0; k < th[i].n && !ret; k++) {
			const struct trace_rec *rec = &tr->rec[th[i].idx[k]];
			const char *path = trace_rec_path(tr, rec);
			bool rd = trace_type_is_read(rec->type),
			     wr = trace_type_is_write(rec->type);
			/* trace_open checked t_start <= ts: no wrap */
			uint64_t off, end, pos, at = o->timeline ? rec->ts - tr->hdr.t_start : 0;
			unsigned fi, ph = rec->phase < r->nph ? rec->phase : 0;

			if ((rec->type == TR_FSYNC || rec->type == TR_FDATASYNC) &&
			    rec->result == 0 && path[0] && file_find(&r->f, path, &fi)) {
				struct rp_io x = {
				        .file = fi,
				        .at = at,
				        .phase = (uint16_t)ph,
				        .write = LLMIO_IO_SYNC,
				};

				r->ph[ph].syncs++;
				r->nios++;
				ret = push(&r->thr[slot], &x, &caps[slot]);
				continue;
			}
			if (!is_data(rec, path))
				continue;
			if (!file_find(&r->f, path, &fi)) {
				ret = -ENOENT; /* count() saw every data file: a bug if reached */
				break;
			}
			if (rec->offset + (uint64_t)rec->result > r->f.sizes[fi])
				r->f.sizes[fi] = rec->offset + (uint64_t)rec->result;
			if (rd)
				r->f.read[fi] = true;
			if (!r->ph[ph].orig_first || rec->ts < r->ph[ph].orig_first)
				r->ph[ph].orig_first = rec->ts;
			if (rec->ts + rec->dur > r->ph[ph].orig_last)
				r->ph[ph].orig_last = rec->ts + rec->dur;
			r->ph[ph].bytes += (uint64_t)rec->result;
			/* O_DIRECT: widen to the alignment, as a direct-I/O program must */
			data_range(rec, align, &off, &end);
			for (pos = off; pos < end && !ret; pos += o->bs) {
				struct rp_io x = {
				        .file = fi,
				        .off = pos,
				        .len = (uint32_t)(end - pos < o->bs ? end - pos : o->bs),
				        .at = at,
				        .phase = (uint16_t)ph,
				        .write = wr,
				};

				r->nios++;
				ret = push(&r->thr[slot], &x, &caps[slot]);
			}
		}
		if (slot + 1 > r->nthr)
			r->nthr = slot + 1;
	}
	if (ret)
		goto fail;
	if (!r->f.n) {
		ret = llmio_err(
		        e, -EINVAL,
		        "the trace has no reads or writes of files to replay (only metadata "
		        "calls, pipes or mmap'd data)");
		goto fail;
	}
	/* each size is below 2^63 (trace_open): stop the sum before it could wrap */
	for (unsigned i = 0; i < r->f.n; i++) {
		if (r->f.sizes[i] > TRACE_POS_MAX - total) {
			ret = llmio_err(
			        e, -EINVAL,
			        "the trace's files add up to more than 2^63 - 1 bytes (file %s "
			        "alone is %" PRIu64 " bytes)",
			        r->f.orig[i], r->f.sizes[i]);
			goto fail;
		}
		total += r->f.sizes[i];
	}
	*out = r;
	return 0;
fail:
	if (ret == -ENOMEM)
		llmio_err(e, ret, "out of memory planning the replay");
	else if (ret == -E2BIG)
		llmio_err(e, ret, "the trace touches more than 65535 files");
	else if (ret == -ENOENT)
		llmio_err(e, ret, "replay planner: a data file was not counted");
	if (ret != -ENOMEM)
		ret = -EINVAL;
	replay_plan_destroy(r);
	return ret;
nomem:
	return llmio_err(e, -ENOMEM, "out of memory planning the replay");
}

/* Replay names: "NNNNN-basename" in the directory, so distinct paths never collide. */
static int name_files(struct wl *w, struct rp_files *f, uint32_t align)
{
	f->paths = calloc(f->n, sizeof(*f->paths));
	f->files = calloc(f->n, sizeof(*f->files));
	if (!f->paths || !f->files)
		return -ENOMEM;
	for (unsigned i = 0; i < f->n; i++) {
		const char *base = strrchr(f->orig[i], '/');

		if (wl_path(w, f->paths[i], sizeof(f->paths[i]), "replay-%05u-%.100s", i,
		            base ? base + 1 : f->orig[i]))
			return -ENAMETOOLONG;
		f->files[i] = (struct llmio_file){
		        .path = f->paths[i],
		        .size = (f->sizes[i] + align - 1) / align * align,
		        /* written-only files start empty, as the program's did */
		        .flags = f->read[i] ? 0 : LLMIO_FILE_FRESH,
		};
	}
	return 0;
}

static void report(struct wl_phase *ph, struct trace *tr, struct replay_plan *r)
{
	for (unsigned p = 0; p < r->nph; p++) {
		const struct rp_phase *x = &r->ph[p];
		const char *name = tr->phase_name[p][0] ? tr->phase_name[p] : "none";
		char key[40];

		if (!x->bytes)
			continue;
		snprintf(key, sizeof(key), "%.20s.original_s", name);
		wl_metric(ph, key, (double)(x->orig_last - x->orig_first) / 1e9, "s");
		snprintf(key, sizeof(key), "%.20s.replay_s", name);
		wl_metric(ph, key, x->last > x->first ? (double)(x->last - x->first) / 1e9 : 0,
		          "s");
		snprintf(key, sizeof(key), "%.20s.bytes", name);
		wl_metric(ph, key, (double)x->done_bytes, "B");
		if (x->syncs) {
			snprintf(key, sizeof(key), "%.20s.fsyncs", name);
			wl_metric(ph, key, (double)x->done_syncs, "");
		}
	}
}

static const struct llmio_optdesc params[] = {
        WL_PARAM("trace", OPTD_STRING, 0, 0, "",
                 "trace file from `llmio trace` or `llmio trace import-strace`"),
        WL_PARAM("timeline", OPTD_UINT, 0, 0, "0",
                 "1: issue each I/O at its original time after the start"),
        WL_PARAM("bs", OPTD_SIZE, 4096, 64 << 20, "1m",
                 "largest I/O (larger traced calls are split)"),
        {.name = NULL},
};

static int run(struct wl *w, struct llmio_error *e)
{
	struct replay_plan *r = NULL;
	struct trace *tr = NULL;
	struct llmio_job_opts o;
	uint64_t bs, timeline;
	struct wl_phase *ph;
	int ret;

	if ((ret = wl_u64(w, "bs", &bs, e)) || (ret = wl_u64(w, "timeline", &timeline, e)))
		goto out;
	if (!wl_str(w, "trace")[0]) {
		ret = llmio_err(e, -EINVAL, "replay needs --trace FILE");
		goto out;
	}
	ret = trace_open(wl_str(w, "trace"), 0, &tr, e);
	if (ret) {
		if (ret != -EINVAL)
			ret = -EINVAL; /* a trace that cannot be read is the user's input */
		goto out;
	}
	ret = replay_plan_build(tr,
	                        &(struct replay_plan_opts){
	                                .bs = bs, .align = wl_align(w), .timeline = timeline != 0},
	                        &r, e);
	if (ret) {
		llmio_err_prefix(e, "%s", wl_str(w, "trace"));
		goto out;
	}
	ret = name_files(w, &r->f, wl_align(w));
	if (ret) {
		llmio_err(e, ret, "--directory is too long, or out of memory");
		goto out;
	}
	ret = wl_check_space(w, r->f.files, r->f.n, e);
	if (ret)
		goto out;
	r->src = (struct llmio_io_source){.next = rp_next, .done = rp_done, .arg = r};
	wl_job_opts(w, &o);
	o.files = r->f.files;
	o.nfiles_list = r->f.n;
	o.io_source = &r->src;
	o.numjobs = r->nthr;
	o.bs = bs;
	o.rw = LLMIO_RW_RANDRW; /* files that are read get their data first */
	o.rwmixread = 50;
	ph = wl_phase_new(w, "replay");
	if (!ph) {
		ret = -E2BIG;
		goto out;
	}
	for (unsigned p = 0; p < r->nph; p++)
		ph->promised_bytes += r->ph[p].bytes;
	ret = wl_job(w, ph, timeline ? "timeline" : "as-fast-as-possible", &o, e);
	if (ph->nstreams)
		ph->wall_s = ph->streams[0]->runtime_s;
	snprintf(ph->note, sizeof(ph->note),
	         "%u traced threads on %u workers; %u files; original run %.3f s%s",
	         (unsigned)(tr->nthr), r->nthr, r->f.n,
	         (double)(tr->hdr.t_end - tr->hdr.t_start) / 1e9,
	         tr->nthr > MAX_THREADS ? " (threads folded onto 64 workers)" : "");
	report(ph, tr, r);
out:
	replay_plan_destroy(r);
	trace_close(tr);
	return ret;
}

const struct recipe recipe_replay = {
        .name = "replay",
        .summary = "replay a trace from `llmio trace` through any engine, as fast as possible "
                   "or on its original timeline",
        .params = params,
        .needs_model = false,
        .run = run,
};
