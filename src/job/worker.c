/* SPDX-License-Identifier: MIT */
/*
 * The worker loop: one thread, one engine instance, iodepth I/Os.  It fills the queue up to
 * the engine's depth, commits, reaps, and accounts each completion into its own counters and
 * histograms; nothing here allocates, locks or logs per I/O.
 *
 * Timing.  Clock reads are shared by I/Os that move together: one read before a batch is
 * queued (t_queue), one after it is committed (t_submit), one after each reap (completion
 * seen).  clat = completion seen - t_submit, slat = t_submit - t_queue, lat = sum of both.  For
 * synchronous engines the clock read after one I/O is the queue time of the next, so each
 * I/O costs one clock read.
 */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "job/bufplace.h"
#include "base/clock.h"
#include "base/error.h"
#include "job/cpu.h"
#include "job/flow.h"
#include "job/verify.h"
#include "job/job_internal.h"
#include "job/options.h"
#include "job/pattern.h"
#include "job/lat_run.h"

#define STATE_READY  1
#define STATE_FAILED 2
#define STATE_DONE   3

/* The longest nap of a job ahead of its rate, between looks at its stop flag. */
#define RATE_NAP_NS 10000000ull

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void reset_stats(struct worker *w)
{
	for (int op = 0; op < 2; op++) {
		w->st[op].ios = 0;
		w->st[op].bytes = 0;
		llmio_hist_init(&w->st[op].clat);
		llmio_hist_init(&w->st[op].slat);
		llmio_hist_init(&w->st[op].lat);
	}
	w->fsyncs = 0;
	llmio_hist_init(&w->sync_lat);
	if (w->log)
		iolog_reset(w->log);
	memset(&w->ctx.counters, 0, sizeof(w->ctx.counters)); /* every one, however many */
}

/* Block number -> (file, offset).  Files are few; a binary search over prefix sums. */
/* The file that holds block of the job's files laid end to end. */
static unsigned file_of(const struct job *j, uint64_t block)
{
	unsigned lo = 0, hi = j->target.nfiles;

	while (hi - lo > 1) {
		unsigned mid = (lo + hi) / 2;

		if (j->file_first_block[mid] <= block)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

static void place(const struct job *j, uint64_t block, struct io_req *io)
{
	unsigned f = file_of(j, block);

	io->file = (uint16_t)f;
	io->off = (block - j->file_first_block[f]) * j->o.bs;
}

/*
 * bssplit: the size (in grains) of an I/O of direction d, drawn by its weights, that fits in
 * room grains (the file's end, the thread's slice, io_size): a size that does not fit becomes
 * the largest of d's that does, where fio draws again; 0 when not even d's smallest fits.
 */
static uint64_t draw_len(struct worker *w, unsigned d, uint64_t room)
{
	const struct job_bssplit *s = &w->job->bss;
	const uint64_t grain = w->job->o.bs;
	uint32_t r;
	unsigned i = 0;
	uint64_t best = 0;

	if (s->range[d]) {
		/* bsrange: fio's MIN + U x MAX, down to a multiple of MIN, capped at MAX: each
		 * multiple of MIN up to MAX alike */
		const uint64_t unit = s->dmin[d] / grain;
		uint64_t k = rng_below(&w->rng, s->range[d] / s->dmin[d]) + 1;

		if (k * unit > room)
			k = room / unit;
		return k * unit;
	}
	r = (uint32_t)rng_below(&w->rng, 100);
	while (i + 1 < s->n[d] && r >= s->cum[d][i])
		i++;
	if (s->bs[d][i] / grain <= room)
		return s->bs[d][i] / grain;
	for (unsigned k = 0; k < s->n[d]; k++)
		if (s->bs[d][k] / grain <= room && s->bs[d][k] > best)
			best = s->bs[d][k];
	return best / grain;
}

/*
 * A random slot of slots (blocks of unit bytes: bs, or blockalign's multiple): uniform, or by
 * fio's zoned distribution, where a draw in 0..99 picks the zone and the slot is uniform
 * within it, as fio's __get_next_rand_offset_zoned() and its _abs twin draw them.
 */
static uint64_t rand_slot(struct worker *w, uint64_t slots, uint64_t unit)
{
	const struct job_zones *z = &w->job->zones;
	uint64_t first, n;
	uint32_t r;
	unsigned i = 0;

	if (!z->n)
		return rng_below(&w->rng, slots);
	r = (uint32_t)rng_below(&w->rng, 100);
	while (i + 1 < z->n && r >= z->cum[i])
		i++;
	if (z->abs) {
		first = z->start[i] / unit;
		n = z->size[i] / unit;
	} else {
		first = z->start_pct[i] * slots / 100;
		n = slots * z->size_pct[i] / 100;
	}
	return first + (n ? rng_below(&w->rng, n) : 0);
}

/* Grains from block to the end of its file. */
static uint64_t to_file_end(const struct job *j, uint64_t block)
{
	if (j->target.nfiles <= 1)
		return j->total_blocks - block;
	return j->file_first_block[file_of(j, block) + 1] - block;
}

/*
 * prep()'s block and length with bssplit (io->op chosen): a sequential I/O goes on where the
 * last ended, back at the slice's start when its drawn size no longer fits (fio's wrap at the
 * file's end); a random one starts at a multiple of its direction's smallest size (fio's
 * blockalign), drawn again (up to 16 times) where even that size does not fit before the
 * file's end.  left: grains the thread may still issue (io_size).
 */
static uint64_t prep_split(struct worker *w, const struct io_req *io, uint64_t left, uint64_t *n)
{
	const struct job *j = w->job;
	const unsigned d = io->op == ENGINE_OP_WRITE;
	const uint64_t a = j->align_blocks ? j->align_blocks : j->bss.dmin[d] / j->o.bs;
	uint64_t block = 0, room;

	if (j->o.rw == LLMIO_RW_READ || j->o.rw == LLMIO_RW_WRITE || j->o.rw == LLMIO_RW_RW) {
		for (int pass = 0; pass < 2; pass++) {
			block = w->region_first + w->seq_next;
			room = w->region_blocks - w->seq_next;
			if (to_file_end(j, block) < room)
				room = to_file_end(j, block);
			*n = draw_len(w, d, left && left < room ? left : room);
			if (*n || left < a)
				break;
			w->seq_next = 0;
		}
		if (!*n)
			*n = 1; /* io_size ends inside this direction's smallest size: one grain */
		w->seq_next += *n;
		if (w->seq_next >= w->region_blocks)
			w->seq_next = 0;
		return block;
	}
	for (int tries = 0; tries < 16; tries++) {
		const uint64_t slots = j->total_blocks / a ? j->total_blocks / a : 1;

		block = rand_slot(w, slots, a * j->o.bs) * a;
		room = to_file_end(j, block);
		/* io_size's last bytes, fewer than this direction's smallest size: that size,
		 * past io_size, as fio's last I/O */
		if (left && left < room && left >= j->bss.dmin[d] / j->o.bs)
			room = left;
		*n = draw_len(w, d, room);
		if (*n)
			return block;
	}
	*n = 1;
	return block;
}

/*
 * The next block of a sequential thread's slice.  fio's rw=TYPE:N: each I/O after the first
 * starts skip blocks past where the last ended (before, when negative), and a start beyond
 * either end of the slice wraps as fio's get_next_seq_offset() does at the file's: to the start
 * going forward, skip blocks before the end going back.
 */
static uint64_t seq_block(struct worker *w, int64_t skip)
{
	uint64_t b = w->seq_next;

	if (skip && b) {
		b += (uint64_t)skip;
		if (b >= w->region_blocks)
			b = skip > 0 || (uint64_t)-skip > w->region_blocks
			            ? 0
			            : w->region_blocks + (uint64_t)skip;
	}
	w->seq_next = b + 1;
	if (!skip && w->seq_next == w->region_blocks)
		w->seq_next = 0;
	return b;
}

/*
 * The next block of a sequential thread in fio's strided zones (its setup_strided_zone_mode()):
 * after zonesize bytes the next zone, zonerange + zoneskip on, or the start past the end; inside
 * a zone, from its start again at its end.
 */
static uint64_t zone_block(struct worker *w)
{
	const struct job *j = w->job;

	if (w->zone_done >= j->zone_size) {
		w->zone_done = 0;
		w->zone_first += j->zone_step;
		if (w->zone_first >= w->region_blocks)
			w->zone_first = 0;
		w->seq_next = w->zone_first;
	}
	if (w->seq_next >= w->zone_first + j->zone_range || w->seq_next >= w->region_blocks)
		w->seq_next = w->zone_first;
	w->zone_done++;
	return w->seq_next++;
}

/*
 * The next generated I/O; left: bytes the thread may still issue (io_size), for bssplit; op: a
 * mixed job's direction, decided by its rates (rate_op()), or -1 to draw it here.
 */
static void prep(struct worker *w, struct io_req *io, uint64_t left, int op)
{
	const struct job *j = w->job;
	uint64_t block = 0, n = 1;

	switch (j->o.rw) {
	case LLMIO_RW_READ:
	case LLMIO_RW_WRITE:
	case LLMIO_RW_RW:
		io->op = j->o.rw == LLMIO_RW_READ ? ENGINE_OP_READ : ENGINE_OP_WRITE;
		if (j->o.rw == LLMIO_RW_RW) /* fio's rw=rw: in order, each I/O a read or a write */
			io->op = op >= 0                                    ? (uint8_t)op
			         : rng_below(&w->rng, 100) < j->o.rwmixread ? ENGINE_OP_READ
			                                                    : ENGINE_OP_WRITE;
		if (j->bss_on)
			break;
		block = w->region_first +
		        (j->zone_size ? zone_block(w) : seq_block(w, j->skip_blocks));
		break;
	default:
		/* the offset first, then the direction: a run without bssplit draws them so */
		if (!j->bss_on && j->o.random_distribution == LLMIO_DIST_ZIPF)
			block = (uint64_t)((unsigned __int128)zipf_next(&j->zipf, &w->rng) *
			                   j->zipf_mult % j->total_blocks);
		else if (j->use_map)
			block = w->map_first + randmap_next(&w->map, &w->rng);
		else if (!j->bss_on && j->align_blocks > 1 && j->total_blocks >= j->align_blocks)
			block = rand_slot(w, j->total_blocks / j->align_blocks,
			                  j->align_blocks * j->o.bs) *
			        j->align_blocks;
		else if (!j->bss_on)
			block = rand_slot(w, j->total_blocks, j->o.bs);
		if (j->o.rw == LLMIO_RW_RANDREAD)
			io->op = ENGINE_OP_READ;
		else if (j->o.rw == LLMIO_RW_RANDWRITE)
			io->op = ENGINE_OP_WRITE;
		else
			io->op = op >= 0                                    ? (uint8_t)op
			         : rng_below(&w->rng, 100) < j->o.rwmixread ? ENGINE_OP_READ
			                                                    : ENGINE_OP_WRITE;
		break;
	}
	if (j->bss_on)
		block = prep_split(w, io, left / j->o.bs, &n);
	if (j->target.nfiles == 1) {
		io->file = 0;
		io->off = block * j->o.bs;
	} else {
		place(j, block, io);
	}
	io->len = (uint32_t)(n * j->o.bs);
}

/*
 * fio's dedupe_percentage: a write's data is a function of a key, (thread, k) for the thread's
 * k-th unique write, and a duplicate takes an earlier key, so its bytes repeat that write's
 * whole.  The key, mixed, is where in target_pattern's stream of 2^61 words the data starts:
 * two keys' data overlap with a chance of a write's words in 2^61.  Every write refills its buffer,
 * as fio's refill_buffers, which dedupe implies there: a read into the slot must not leak into a
 * later write.
 */
static void dedupe_fill(struct worker *w, struct io_req *io)
{
	const struct llmio_job_opts *o = &w->job->o;
	const uint64_t self = (uint64_t)o->log_index + w->idx;
	uint64_t stream = self, k, x;

	if (o->dedupe_percentage < 100 && rng_below(&w->dedupe_rng, 100) >= o->dedupe_percentage) {
		k = w->dedupe_unique++;
	} else if (o->dedupe_percentage == 100 || o->dedupe_mode == LLMIO_DEDUPE_REPEAT) {
		/* fio repeats the last unique write; before any, the first one to come */
		k = w->dedupe_unique ? w->dedupe_unique - 1 : 0;
	} else {
		k = rng_below(&w->dedupe_rng, w->dedupe_ws);
		if (o->dedupe_global && o->dedupe_threads > 1) {
			/* fio's global set: runs of ws / threads keys, each run another thread's
			 * first unique writes, starting with this thread's own */
			uint64_t run = w->dedupe_ws / o->dedupe_threads
			                       ? w->dedupe_ws / o->dedupe_threads
			                       : 1;

			stream = (self + k / run) % o->dedupe_threads;
			k %= run;
		}
	}
	/* splitmix64's finaliser: neighbouring keys start far apart */
	x = (stream << 40 ^ k) + 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	x ^= x >> 31;
	target_pattern(io->buf, io->len & ~7u, x & ~7ull, o->randseed);
}

/*
 * fio's buffer_compress_percentage: each chunk of buffer_compress_chunk bytes (fio's default
 * 512; the block when larger; the block's last chunk may be shorter) keeps its first
 * (100 - percentage) % of bytes, rounded down, and the rest is zeros, or buffer_pattern's bytes
 * from the rest's start, as fio's fill_random_buf_percentage() lays a chunk out: a compressor
 * keeps about the first part.
 */
static void compress_fill(const struct job *j, struct io_req *io)
{
	const uint32_t chunk = j->o.buffer_compress_chunk && j->o.buffer_compress_chunk < io->len
	                               ? j->o.buffer_compress_chunk
	                               : io->len;
	uint8_t *p = io->buf;

	for (uint32_t at = 0; at < io->len; at += chunk) {
		const uint32_t n = io->len - at < chunk ? io->len - at : chunk;
		const uint32_t keep =
		        (uint32_t)((uint64_t)n * (100 - j->o.buffer_compress_percentage) / 100);

		if (j->pattern_len)
			pattern_fill(p + at + keep, n - keep, j->pattern, j->pattern_len);
		else
			memset(p + at + keep, 0, n - keep);
	}
}

/*
 * Make a write's data unique: the first 16 bytes of every 4 KiB get the block's file offset
 * and a per-thread write count (xored with the thread's number in the job file, as fio numbers
 * threads across it), so neither place, time nor another job of the file repeats a block and a
 * deduplicating device sees no two alike (docs/metrics.md, Buffers).  false when verify= could
 * not compute the block's digest (w->err set).
 */
static bool stamp(struct worker *w, struct io_req *io)
{
	char *p = io->buf;
	uint64_t v[2] = {0, ++w->writes ^ ((uint64_t)(w->job->o.log_index + w->idx) << 48)};
	struct llmio_error e; /* written only on a failure */
	int ret;

	if (w->job->vpattern_len) {
		/* fio's verify_pattern: every block the pattern, the headers on top (below) */
		pattern_fill(io->buf, io->len, w->job->vpattern, w->job->vpattern_len);
	} else if (w->job->o.buffer_compress_percentage) {
		/* fresh data every write, as fio's refill_buffers, which compression implies */
		dedupe_fill(w, io);
		compress_fill(w->job, io);
	} else if (w->job->pattern_len) {
		/* fio's buffer_pattern: every write the same bytes (a read may have filled the
		 * slot) */
		pattern_fill(io->buf, io->len, w->job->pattern, w->job->pattern_len);
	} else if (w->job->o.dedupe_percentage) {
		dedupe_fill(w, io);
	} else {
		for (uint32_t at = 0; at + sizeof(v) <= io->len; at += 4096) {
			v[0] = io->off + at;
			memcpy(p + at, v, sizeof(v));
		}
	}
	if (!w->job->o.verify)
		return true;
	if (w->job->o.verify == VERIFY_META) {
		/* fio's thread numbers start at 1; its numberio counts the thread's writes before
		 * this one */
		verify_meta_stamp(io->buf, io->len, io->off, w->job->o.verify_interval,
		                  (uint16_t)(w->idx + 1), (uint16_t)(w->writes - 1));
		return true;
	}
	ret = verify_stamp(w->job->o.verify, io->buf, io->len, io->off, &e);
	if (!ret)
		return true;
	w->err = ret;
	snprintf(w->errmsg, sizeof(w->errmsg), "%.*s", (int)sizeof(w->errmsg) - 1, e.msg);
	return false;
}

static void fail_io(struct worker *w, const struct io_req *io)
{
	const struct job *j = w->job;
	int e = io->res < 0 ? (int)-io->res : EIO;

	w->err = -e;
	if (io->res < 0 && w->ctx.ioerr[0])
		snprintf(w->errmsg, sizeof(w->errmsg), "%s error at offset %llu (%u bytes): %s",
		         io->op == ENGINE_OP_READ ? "read" : "write", (unsigned long long)io->off,
		         io->len, w->ctx.ioerr);
	else if (io->res < 0)
		snprintf(w->errmsg, sizeof(w->errmsg),
		         "%s error at offset %llu (%u bytes) of %s: %s (errno %d)",
		         io->op == ENGINE_OP_READ ? "read" : "write", (unsigned long long)io->off,
		         io->len, j->target.nfiles ? j->target.paths[io->file] : "(no file)",
		         strerror(e), e);
	else
		snprintf(w->errmsg, sizeof(w->errmsg),
		         "%s at offset %llu of %s returned 0 bytes (end of file): the target is "
		         "smaller than the job expects",
		         io->op == ENGINE_OP_READ ? "read" : "write", (unsigned long long)io->off,
		         j->target.nfiles ? j->target.paths[io->file] : "(no file)");
}

/*
 * The next I/O of an io_source into io: 1 ready; 0 the source has no more for this thread, or
 * asked for an fsync first (w->sync_asked);
 * -EAGAIN not now (not produced yet, or its time on the source's timeline has not come: then
 * w->pending holds it and w->pending.at_ns says when); another -errno: the job fails.
 */
static int source_fill(struct worker *w, struct io_req *io, uint64_t t)
{
	const struct job *j = w->job;
	const struct llmio_io_source *src = j->o.io_source;
	struct llmio_io *p = &w->pending;

	if (!w->has_pending) {
		int r = src->next(src->arg, w->idx, p);

		if (r == 0) {
			w->src_done = true;
			return 0;
		}
		if (r == -EAGAIN) {
			p->at_ns = 0;
			return r;
		}
		if (r < 0) {
			w->err = r;
			snprintf(w->errmsg, sizeof(w->errmsg),
			         "the workload's I/O source failed: %s", strerror(-r));
			return r;
		}
		if ((p->write != LLMIO_IO_SYNC && (!p->len || p->len > j->o.bs)) ||
		    (j->target.nfiles && p->file >= j->target.nfiles)) {
			w->err = -EINVAL;
			snprintf(
			        w->errmsg, sizeof(w->errmsg),
			        "the workload asked for %u bytes of file %u, beyond bs=%llu or the "
			        "%u files of the job (a bug in the recipe)",
			        p->len, p->file, (unsigned long long)j->o.bs, j->target.nfiles);
			return -EINVAL;
		}
		w->has_pending = true;
	}
	if (p->at_ns && j->t_measure + p->at_ns > t)
		return -EAGAIN;
	w->has_pending = false;
	if (p->write == LLMIO_IO_SYNC) {
		w->sync_asked = true; /* done after a drain: w->pending keeps its file and tag */
		return 0;
	}
	io->file = (uint16_t)p->file;
	io->off = p->off;
	io->len = p->len;
	io->op = p->write ? ENGINE_OP_WRITE : ENGINE_OP_READ;
	io->tag = p->tag;
	return 1;
}

/* Tell the io_source that one of its I/Os completed. */
static void source_done(const struct worker *w, const struct io_req *io, uint64_t t)
{
	const struct llmio_io_source *src = w->job->o.io_source;
	const struct llmio_io d = {
	        .file = io->file,
	        .len = io->len,
	        .off = io->off,
	        .write = io->op == ENGINE_OP_WRITE,
	        .tag = io->tag,
	};

	src->done(src->arg, w->idx, &d, io->res, t - io->t_queue);
}

/* verify=: a read block checked, a written one marked for the read-back; false on a mismatch */
static bool verify_io(struct worker *w, const struct io_req *io)
{
	struct job *j = w->job;
	struct llmio_error e; /* written only on a mismatch: nothing to clear per I/O */
	int ret;

	if (io->op == ENGINE_OP_WRITE) {
		if (j->verify_written)
			verify_mark(j, io->file, io->off);
		return true;
	}
	if ((uint64_t)io->res != io->len ||
	    !(ret = verify_block(j, io->buf, io->len, io->off, j->target.paths[io->file], &e)))
		return true;
	snprintf(w->errmsg, sizeof(w->errmsg), "%.*s", (int)sizeof(w->errmsg) - 1, e.msg);
	w->err = ret;
	return false;
}

/* An I/O the engine abandoned because the job stopped (engine_setup.stop): not a failure. */
static inline bool abandoned(const struct worker *w, const struct io_req *io)
{
	return io->res == -ECANCELED && atomic_load_explicit(&w->job->stop, memory_order_relaxed);
}

/*
 * Account one completion but its latencies (the caller adds those: one by one, or in runs of
 * equal values, lat_run.h); false when the I/O failed and the job must stop.  hooks: the job
 * has an io_source with done() or verify=, read once by the caller.
 */
static inline bool complete_io(struct worker *w, struct io_req *io, uint64_t t, bool measuring,
                               bool hooks)
{
	if (hooks && w->job->o.io_source && w->job->o.io_source->done)
		source_done(w, io, t);
	if (io->res <= 0) {
		fail_io(w, io);
		return false;
	}
	if (io->op == ENGINE_OP_WRITE && w->dirty)
		w->dirty[io->file] = true;
	if (hooks && w->job->o.verify && !verify_io(w, io))
		return false;
	if (measuring) {
		struct llmio_op_result *st = &w->st[io->op];

		st->ios++;
		st->bytes += (uint64_t)io->res;
	}
	return true;
}

/* Whether complete_io() has an io_source's done() or a verify to call. */
static inline bool complete_hooks(const struct job *j)
{
	return (j->o.io_source && j->o.io_source->done) || j->o.verify;
}

/* One measured completion into fio's logs (write_*_log), when the job keeps them. */
static inline void log_io(struct worker *w, const struct io_req *io, uint64_t t)
{
	if (w->log)
		iolog_add(w->log, w->job->t_measure, io->op, t, (uint64_t)io->res, io->off,
		          io->t_submit - io->t_queue, t - io->t_submit, io->prio);
}

/*
 * fio's latency_target: judge n I/Os completed at t, then the window.  \return false when the
 * job must fail (a late I/O at depth 1 with latency_percentile 100, fio's ETIMEDOUT).
 */
static bool lat_target_seen(struct worker *w, struct io_req *const *ios, unsigned n, uint64_t t)
{
	struct lat_target *lt = &w->lt;

	for (unsigned i = 0; i < n; i++) {
		const uint64_t lat = t - ios[i]->t_queue;

		w->lt_ios++;
		if (lat > lt->target_ns && lat_target_miss(lt, t, w->lt_ios)) {
			w->err = -ETIMEDOUT;
			snprintf(w->errmsg, sizeof(w->errmsg),
			         "latency of %llu ns exceeds latency_target (%llu ns) at depth 1; "
			         "raise "
			         "latency_target or lower latency_percentile",
			         (unsigned long long)lat, (unsigned long long)lt->target_ns);
			return false;
		}
	}
	if (lat_target_check(lt, t, w->lt_ios) == LAT_TARGET_DONE)
		w->lt_cap = 0;
	else if (w->lt_cap)
		w->lt_cap = lt->qd;
	return true;
}

/* The engine's peer ended the transfer (engine_ctx.ended): no more I/O, and no failure. */
static inline bool peer_ended(struct worker *w, const struct io_req *io)
{
	if (io->res || !w->ctx.ended)
		return false;
	w->src_done = true;
	return true;
}

/*
 * fio's fill_device: a write the filesystem has no room for (ENOSPC, EDQUOT) is the job's end,
 * not a failure; its bytes are not counted, and the thread issues nothing more.
 */
static inline bool filled(struct worker *w, const struct io_req *io)
{
	if (!w->job->o.fill_device || io->op != ENGINE_OP_WRITE ||
	    (io->res != -ENOSPC && io->res != -EDQUOT))
		return false;
	w->src_done = true;
	return true;
}

/* Account one completion with its latencies; false when the job must stop. */
static inline bool complete(struct worker *w, struct io_req *io, uint64_t t, bool measuring)
{
	if (abandoned(w, io) || peer_ended(w, io) || filled(w, io))
		return true;
	if (!complete_io(w, io, t, measuring, complete_hooks(w->job)))
		return false;
	if (measuring) {
		struct llmio_op_result *st = &w->st[io->op];

		llmio_hist_add(&st->clat, t - io->t_submit);
		llmio_hist_add(&st->lat, t - io->t_queue);
		log_io(w, io, t);
	}
	return true;
}

static void publish(struct worker *w)
{
	for (int d = 0; d < 2; d++) {
		atomic_store_explicit(&w->live_ios[d], w->st[d].ios, memory_order_relaxed);
		atomic_store_explicit(&w->live_bytes[d], w->st[d].bytes, memory_order_relaxed);
	}
}

/* fsync file f, timing the call; the caller has drained all I/O. */
static int sync_file(struct worker *w, unsigned f, bool measuring)
{
	const struct job *j = w->job;
	uint64_t t0 = now_ns();
	int ret = j->engine->sync ? j->engine->sync(&w->ctx, f)
	                          : (fsync(w->fds ? w->fds[f] : j->target.fds[f]) ? -errno : 0);

	if (ret) {
		w->err = ret;
		snprintf(w->errmsg, sizeof(w->errmsg), "fsync of %s failed: %s", j->target.paths[f],
		         strerror(-ret));
		return ret;
	}
	w->dirty[f] = false;
	if (measuring) {
		w->fsyncs++;
		llmio_hist_add(&w->sync_lat, now_ns() - t0);
	}
	return 0;
}

/* fsync every dirty file; the caller has drained all I/O. */
static int sync_files(struct worker *w, bool measuring)
{
	for (unsigned f = 0; f < w->job->target.nfiles; f++)
		if (w->dirty[f] && sync_file(w, f, measuring))
			return w->err;
	return 0;
}

/* The io_source's fsync (LLMIO_IO_SYNC) of w->pending.file, reported to its done(). */
static int source_sync(struct worker *w, bool measuring)
{
	const struct llmio_io_source *src = w->job->o.io_source;
	const struct llmio_io d = {
	        .file = w->pending.file, .write = LLMIO_IO_SYNC, .tag = w->pending.tag};
	uint64_t t0 = now_ns();
	/* an engine without files (null) has nothing to make durable */
	int ret = w->job->target.nfiles ? sync_file(w, d.file, measuring) : 0;

	w->sync_asked = false;
	if (src->done)
		src->done(src->arg, w->idx, &d, ret, now_ns() - t0);
	return ret;
}

/* Buffer i from the engine (GPU memory), holding the same data a host buffer would. */
static int engine_buf(struct worker *w, unsigned i, struct llmio_error *e)
{
	const struct job *j = w->job;
	void *init = calloc(1, j->io_max);
	int ret;

	if (!init)
		return llmio_err(e, -ENOMEM, "out of memory for a %llu-byte buffer",
		                 (unsigned long long)j->io_max);
	target_pattern(init, j->io_max & ~7ull, (uint64_t)i * j->io_max, j->o.randseed);
	ret = j->engine->buf_alloc(j->engine_opts, &w->bufs[i], j->io_max, init, e);
	free(init);
	return ret;
}

/*
 * A host I/O buffer; *mem gets what to free.  It starts where job/bufplace.h says (the
 * placement that measured fastest for the kernel's copy on this CPU); written through the
 * page cache above 512 KiB it is on 2 MiB-aligned huge pages, whose copy out into the page
 * cache was faster (reads gained nothing); under O_DIRECT above 512 KiB also on huge pages:
 * physically contiguous memory makes a 1 MiB O_DIRECT I/O one segment instead of 256 pages,
 * which a device with a 254-segment limit (virtio-blk) would otherwise split in two
 * (docs/engines.md, Buffers; docs/accuracy.md).
 */
static void *host_buf(uint64_t bs, bool direct, bool writes, void **mem)
{
	const size_t huge = 2u << 20;
	const size_t offset = buf_page_offset(bs, direct);
	size_t len = offset ? bs + 4096 : bs;
	void *p = NULL;

	*mem = NULL;
	if (bs > (512u << 10) && (direct || writes)) {
		len = (len + huge - 1) & ~(size_t)(huge - 1);
		if (posix_memalign(&p, huge, len))
			return NULL;
		madvise(p, len, MADV_HUGEPAGE); /* advice only: 4 KiB pages work too */
	} else if (posix_memalign(&p, 4096, len)) {
		return NULL;
	}
	*mem = p;
	return (char *)p + offset;
}

/*
 * Each thread's own open file descriptions of the job's files.  Threads sharing one struct
 * file all bump its reference count on every pread/pwrite (fdget on a shared descriptor
 * table), a cache line that then bounces between CPUs at a million I/Os per second; fio's job
 * threads each open their files themselves.  Reopening through /proc/self/fd keeps the
 * checks target_open made (same inode, same flags).  With many files (thousands of shards x
 * threads would exhaust the descriptor limit) or when a reopen fails, threads share.
 */
#define OWN_FDS_MAX_FILES 64

static void own_fds(struct worker *w)
{
	const struct job *j = w->job;
	const unsigned n = j->target.nfiles;

	if (j->o.numjobs < 2 || !n || n > OWN_FDS_MAX_FILES)
		return;
	w->fds = malloc(n * sizeof(*w->fds));
	if (!w->fds)
		return;
	for (unsigned f = 0; f < n; f++) {
		char path[64];
		int flags = fcntl(j->target.fds[f], F_GETFL);

		snprintf(path, sizeof(path), "/proc/self/fd/%d", j->target.fds[f]);
		w->fds[f] = flags < 0 ? -1
		                      : open(path, (flags & (O_ACCMODE | O_DIRECT | O_SYNC |
		                                             O_DSYNC | O_NOATIME)) |
		                                           O_CLOEXEC);
		if (w->fds[f] < 0) {
			while (f--)
				close(w->fds[f]);
			free(w->fds);
			w->fds = NULL;
			return;
		}
	}
	/* fadvise_hint's readahead is of each open file: these get the job's too (job.c) */
	if (job_fadvise_advice(&j->o) >= 0 && !engine_owns_target(j->engine, j->engine_opts))
		target_advise(w->fds, n, job_fadvise_advice(&j->o));
}

static int setup(struct worker *w, struct llmio_error *e)
{
	struct job *j = w->job;
	const bool async = j->engine->caps & ENGINE_CAP_ASYNC;
	struct engine_setup s;
	int ret;

	w->depth = async ? j->o.iodepth : 1;
	w->lt_cap = w->depth;
	w->ios = calloc(w->depth, sizeof(*w->ios));
	w->free_ios = calloc(w->depth, sizeof(*w->free_ios));
	w->evs = calloc(w->depth, sizeof(*w->evs));
	w->batch = calloc(w->depth, sizeof(*w->batch));
	w->bufs = calloc(w->depth, sizeof(*w->bufs));
	w->buf_mem = calloc(w->depth, sizeof(*w->buf_mem));
	if (j->target.nfiles)
		w->dirty = calloc(j->target.nfiles, sizeof(*w->dirty));
	if (!w->ios || !w->free_ios || !w->evs || !w->batch || !w->bufs || !w->buf_mem ||
	    (j->target.nfiles && !w->dirty))
		goto err_nomem;
	for (unsigned i = 0; i < w->depth; i++) {
		if (j->engine->buf_alloc) {
			ret = engine_buf(w, i, e);
			if (ret)
				return ret;
		} else {
			w->bufs[i] = host_buf(j->io_max, j->target.direct, j->target.writable,
			                      &w->buf_mem[i]);
			if (!w->bufs[i])
				goto err_nomem;
			/* writes carry incompressible data; reads overwrite it */
			target_pattern(w->bufs[i], j->io_max & ~7ull, (uint64_t)i * j->io_max,
			               j->o.randseed);
		}
		w->ios[i].buf = w->bufs[i];
		w->ios[i].buf_idx = (uint16_t)i;
		w->free_ios[i] = &w->ios[i];
	}
	rng_seed(&w->rng, j->o.randseed * 0x9e3779b97f4a7c15ull + w->idx);
	/* sequential: thread i walks its own slice, so threads never read the same blocks */
	w->region_first = j->total_blocks * w->idx / j->nworkers;
	w->region_blocks = j->total_blocks * (w->idx + 1) / j->nworkers - w->region_first;
	if (!w->region_blocks)
		w->region_blocks = 1;
	if (j->use_map) {
		w->map_first = j->map_sliced ? w->region_first : 0;
		randmap_init(&w->map, j->map_sliced ? w->region_blocks : j->total_blocks, &w->rng);
	}
	reset_stats(w);
	own_fds(w);

	s = (struct engine_setup){
	        .fds = w->fds ? w->fds : j->target.fds,
	        .file_sizes = j->target.sizes,
	        .nfiles = j->target.nfiles,
	        .bufs = w->bufs,
	        .nbufs = w->depth,
	        .buf_len = j->io_max,
	        .iodepth = w->depth,
	        .nworkers = j->o.numjobs,
	        .direct = j->target.direct,
	        .writable = j->target.writable,
	        .dev_io_poll = j->target.dev.known ? j->target.dev.io_poll : -1,
	        .devname = j->target.dev.known ? j->target.dev.name : "",
	        .names = (const char *const *)j->target.paths,
	        .created = j->target.created,
	        .opts = j->engine_opts,
	        .stop = &j->stop,
	        .fadvise = job_fadvise_advice(&j->o),
	        .trims = j->trims,
	        .job_name = j->o.name,
	        .runtime_ns = j->o.runtime_ns,
	};
	ret = j->engine->init(&w->ctx, &s, e);
	if (ret && !llmio_err_msg(e)[0]) /* e is worker_main's own, empty before */
		llmio_err(e, ret, "engine %s could not start: %s", j->engine->name, strerror(-ret));
	if (!ret && (j->o.prio || j->o.prioclass)) {
		/* fio's prio and prioclass: this thread's I/O priority (the kernel's default for
		 * its I/Os), once, before any I/O; IOPRIO_WHO_PROCESS 0 is the calling thread */
		w->ioprio = (uint16_t)(j->o.prioclass << 13 | j->o.prio);
		if (syscall(SYS_ioprio_set, 1, 0, (int)w->ioprio))
			return llmio_err(e, -errno,
			                 "prioclass=%u prio=%u: the kernel refused the priority "
			                 "(ioprio_set: %s%s)",
			                 j->o.prioclass, j->o.prio, strerror(errno),
			                 errno == EPERM ? "; realtime needs CAP_SYS_ADMIN or "
			                                  "CAP_SYS_NICE"
			                                : "");
	}
	w->cmdprio = (uint16_t)(j->o.cmdprio_class << 13 | j->o.cmdprio);
	rng_seed(&w->prio_rng, j->o.randseed * 0xbf58476d1ce4e5b9ull + w->idx + 1);
	rng_seed(&w->dedupe_rng, j->o.randseed * 0x94d049bb133111ebull + j->o.log_index + w->idx);
	w->dedupe_ws = j->total_blocks * j->o.dedupe_working_set_percentage / 100;
	if (!w->dedupe_ws)
		w->dedupe_ws = 1;
	if (!ret && j->o.flow && !(w->flow = job_flow_get(j->o.flow_id, j->o.flow)))
		return llmio_err(e, -ENOMEM, "no memory for flow_id=%u (at most 64 flows)",
		                 j->o.flow_id);
	return ret;

err_nomem:
	return llmio_err(e, -ENOMEM, "out of memory for %u buffers of %llu bytes", w->depth,
	                 (unsigned long long)j->io_max);
}

static void teardown(struct worker *w)
{
	job_flow_put(w->flow, w->flow_count, w->job->o.flow);
	w->flow = NULL;
	if (w->ctx.priv)
		w->job->engine->cleanup(&w->ctx);
	for (unsigned i = 0; w->bufs && i < w->depth; i++) {
		if (w->job->engine->buf_free && w->bufs[i])
			w->job->engine->buf_free(w->job->engine_opts, w->bufs[i]);
		else if (w->buf_mem)
			free(w->buf_mem[i]);
	}
	free(w->bufs);
	free(w->buf_mem);
	free(w->evs);
	free(w->batch);
	free(w->free_ios);
	free(w->ios);
	free(w->dirty);
	for (unsigned f = 0; w->fds && f < w->job->target.nfiles; f++)
		close(w->fds[f]);
	free(w->fds);
}

/*
 * reap()'s loop for the common case: counted, no io_source done() or verify, no fio logs.
 * Counts and bytes add up in locals and go to w->st once per reap, where complete_io()
 * updates them in memory per I/O; the histograms get the same runs.  Equal to the general
 * loop in every counter and bucket (tests/test_batch.c).  false: an I/O failed (w->err set).
 */
static inline bool reap_counted(struct worker *w, unsigned n, uint64_t t, unsigned *nfree)
{
	struct io_req **evs = w->evs, **fr = w->free_ios + *nfree;
	uint64_t ios[2] = {0, 0}, bytes[2] = {0, 0};
	struct lat_run run = {NULL, 0, 0, 0};
	bool *dirty = w->dirty;
	unsigned i;

	for (i = 0; i < n; i++) {
		struct io_req *io = evs[i];

		fr[i] = io;
		if (io->res <= 0)
			break;
		if (io->op == ENGINE_OP_WRITE && dirty)
			dirty[io->file] = true;
		ios[io->op]++;
		bytes[io->op] += (uint64_t)io->res;
		lat_run_add(&run, &w->st[io->op], t, io->t_submit, io->t_queue);
	}
	lat_run_flush(&run, t);
	for (int op = 0; op < 2; op++) {
		w->st[op].ios += ios[op];
		w->st[op].bytes += bytes[op];
	}
	if (i < n) {
		*nfree += i + 1; /* the failed one too, as in the general loop */
		fail_io(w, evs[i]);
		return false;
	}
	*nfree += n;
	return true;
}

/* reap()'s loop for everything else, one completion at a time; false: the job must stop. */
static bool reap_each(struct worker *w, unsigned n, uint64_t t, bool counting, bool hooks,
                      unsigned *nfree)
{
	struct lat_run run = {NULL, 0, 0, 0}; /* I/Os that moved together: one add per run */
	unsigned nf = *nfree;
	bool ok = true;

	for (unsigned i = 0; i < n && ok; i++) {
		struct io_req *io = w->evs[i];

		w->free_ios[nf++] = io;
		ok = complete_io(w, io, t, counting, hooks);
		if (!ok || !counting)
			continue;
		lat_run_add(&run, &w->st[io->op], t, io->t_submit, io->t_queue);
		log_io(w, io, t);
	}
	lat_run_flush(&run, t);
	*nfree = nf;
	return ok;
}

/*
 * The I/Os out of the n completions in w->evs that are neither counted nor failed: those an
 * engine abandoned because the job stopped (engine_setup.stop, -ECANCELED), and a fill_device
 * job's writes the full filesystem refused (filled()).  Returns how many are left.
 */
static unsigned drop_uncounted(struct worker *w, unsigned n, unsigned *inflight, unsigned *nfree)
{
	unsigned k = 0;

	if (!atomic_load_explicit(&w->job->stop, memory_order_relaxed) && !w->job->o.fill_device)
		return n;
	for (unsigned i = 0; i < n; i++) {
		if (abandoned(w, w->evs[i]) || filled(w, w->evs[i])) {
			w->free_ios[(*nfree)++] = w->evs[i];
			(*inflight)--;
		} else {
			w->evs[k++] = w->evs[i];
		}
	}
	return k;
}

/* Wait until `min` I/Os completed (all of them when draining), accounting them. */
static int reap(struct worker *w, unsigned min, unsigned *inflight, unsigned *nfree, bool measuring,
                bool count)
{
	int n = w->job->engine->reap(&w->ctx, min, w->evs, w->depth);
	const bool counting = measuring && count, hooks = complete_hooks(w->job);
	bool ok;
	uint64_t t;

	if (n < 0) {
		w->err = n;
		snprintf(w->errmsg, sizeof(w->errmsg), "engine %s failed to reap completions: %s",
		         w->job->engine->name, strerror(-n));
		return n;
	}
	n = (int)drop_uncounted(w, (unsigned)n, inflight, nfree);
	t = now_ns();
	if (w->lt_on && !lat_target_seen(w, w->evs, (unsigned)n, t))
		return -ETIMEDOUT;
	if (counting && !hooks && !w->log)
		ok = reap_counted(w, (unsigned)n, t, nfree);
	else
		ok = reap_each(w, (unsigned)n, t, counting, hooks, nfree);
	if (!ok)
		return -EIO;
	*inflight -= (unsigned)n;
	return n;
}

static int drain(struct worker *w, unsigned *inflight, unsigned *nfree, bool measuring, bool count)
{
	const struct engine_ops *e = w->job->engine;

	if (*inflight && e->commit && e->commit(&w->ctx) < 0)
		return -EIO;
	while (*inflight) {
		int n = reap(w, *inflight, inflight, nfree, measuring, count);

		if (n < 0)
			return n;
	}
	return 0;
}

/* What one worker's loop carries from round to round. */
struct loop {
	uint64_t io_limit; /* bytes to issue, 0 = until stopped */
	uint64_t rate[2];  /* this thread's bytes per second per enum engine_op, 0 = unlimited */
	uint64_t t_start;
	uint64_t issued, since_think, writes_since_sync;
	uint64_t t;        /* the last clock read: the queue time of the next I/O */
	unsigned inflight; /* queued and not reaped */
	int batch_op;      /* this round's batch is all this enum engine_op (fill_batch), or -1 */
	unsigned nfree;    /* w->free_ios[0 .. nfree) */
	bool measuring;    /* past the ramp: completions are counted */
	bool t_fresh;      /* l->t was read right after the previous I/O completed */
	bool flow_wait;    /* ahead of its flow's share: no I/O queued until it is not */
	/* bytes issued per enum engine_op since t_start, which the rates pace */
	uint64_t issued_op[2];
	uint64_t rmin_t, rmin_bytes[2]; /* rate_min's last check (0: none yet) and its bytes */
};

/* A new epoch (the ramp ended, or a sweep point began): counters start over. */
static inline void new_epoch(struct worker *w, struct loop *l)
{
	unsigned epoch = atomic_load_explicit(&w->job->epoch, memory_order_relaxed);

	if (epoch == w->epoch_seen)
		return;
	w->epoch_seen = epoch;
	reset_stats(w);
	l->issued = 0; /* io_size counts from the end of the ramp */
	l->issued_op[0] = l->issued_op[1] = 0;
	l->rmin_t = 0; /* rate_min's checks start over with the counters */
	/* so does the rate: with the ramp's time kept and its bytes forgotten, the window began
	 * with a burst of ramp_time x rate (a paced job measured 8 % above its rate_iops) */
	l->t_start = now_ns();
	l->measuring = true;
}

/*
 * fio's rate_min: 2 s after the measured window began, and then every second (fio's
 * ratecycle), each direction that moved bytes must have moved rate_min bytes per second since
 * the previous check, or the job fails with EIO, as fio's.  \return false when it failed.
 */
static bool rate_min_met(struct worker *w, struct loop *l)
{
	const uint64_t min = w->job->o.rate_min, t = l->t;

	if (t < l->t_start + 2000000000ULL || (l->rmin_t && t - l->rmin_t < 1000000000ULL))
		return true;
	for (int d = 0; l->rmin_t && d < 2; d++) {
		const uint64_t moved = w->st[d].bytes - l->rmin_bytes[d];
		const double got = (double)moved * 1e9 / (double)(t - l->rmin_t);

		if (w->st[d].bytes && got < (double)min) {
			w->err = -EIO;
			snprintf(w->errmsg, sizeof(w->errmsg),
			         "rate_min=%" PRIu64 " B/s not met by thread %u's %s: %.0f B/s "
			         "over the last %.1f s",
			         min, w->idx, d ? "writes" : "reads", got,
			         (double)(t - l->rmin_t) / 1e9);
			return false;
		}
	}
	l->rmin_t = t;
	l->rmin_bytes[0] = w->st[0].bytes;
	l->rmin_bytes[1] = w->st[1].bytes;
	return true;
}

/*
 * The batched fill: uniform random offsets into one file in one direction, no rate limit,
 * and an engine with queue_batch (io_uring, null).  Every free slot gets its I/O first, with
 * the generator's state in locals for the batch, then one indirect call queues them all
 * where fill_queue() makes one per I/O.  The slots, their order and the offsets drawn are
 * fill_queue()'s (tests/test_batch.c checks both paths count the same).  \return 0, or -1
 * when the job must stop (w->err set).
 */
static inline int fill_batch(struct worker *w, struct loop *l, unsigned *queued, uint8_t op,
                             bool stamps)
{
	const struct job *j = w->job;
	const uint64_t bs = j->o.bs, blocks = j->total_blocks, t = l->t;
	/* io_size: the I/Os that start while fewer than io_limit bytes were issued */
	const uint64_t left = !l->io_limit               ? UINT64_MAX
	                      : l->issued >= l->io_limit ? 0
	                                                 : (l->io_limit - l->issued - 1) / bs + 1;
	const unsigned n = left < l->nfree ? (unsigned)left : l->nfree;
	struct io_req **batch = w->batch + *queued;
	struct rng rng = w->rng;
	int k;

	for (unsigned i = 0; i < n; i++) {
		struct io_req *io = w->free_ios[l->nfree - 1 - i]; /* fill_queue()'s order */

		io->off = (j->use_map ? w->map_first + randmap_next(&w->map, &rng)
		                      : rng_below(&rng, blocks)) *
		          bs;
		io->file = 0;
		io->len = (uint32_t)bs;
		io->op = op;
		io->t_queue = t;
		batch[i] = io;
	}
	w->rng = rng;
	for (unsigned i = 0; stamps && op == ENGINE_OP_WRITE && i < n; i++)
		if (!stamp(w, batch[i]))
			return -1;
	k = n ? j->engine->queue_batch(&w->ctx, batch, n) : 0;
	if (k < 0) {
		w->err = k;
		snprintf(w->errmsg, sizeof(w->errmsg), "engine %s failed to queue I/O: %s",
		         j->engine->name, strerror(-k));
		return -1;
	}
	l->nfree -= (unsigned)k;
	l->issued += (uint64_t)k * bs;
	l->since_think += (unsigned)k;
	if (op == ENGINE_OP_WRITE)
		l->writes_since_sync += (unsigned)k;
	l->inflight += (unsigned)k;
	*queued += (unsigned)k;
	l->batch_op = op;
	return 0;
}

/*
 * The I/O a busy engine refused last time, moved to the top of the free slots (reaps pushed
 * others above it since) so that the slot taken is the one queued.
 */
static struct io_req *take_held(struct worker *w, unsigned nfree)
{
	struct io_req *io = w->held;

	w->held = NULL;
	for (unsigned i = nfree; i-- > 0;)
		if (w->free_ios[i] == io) {
			w->free_ios[i] = w->free_ios[nfree - 1];
			w->free_ios[nfree - 1] = io;
			break;
		}
	return io;
}

/* When direction op may issue its next I/O (fio's usec_for_io()): ns after t_start. */
static inline double rate_due(const struct loop *l, int op)
{
	return l->rate[op] ? (double)l->issued_op[op] * 1e9 / (double)l->rate[op] : 0;
}

/*
 * fio's rate_ddir(): a mixed job (rw, randrw) draws its direction by rwmixread, and when that
 * direction is ahead of its rate the I/O goes the other way if the other is not (or is due
 * first) and has a share of the mix; each direction is then paced on its own (fill_queue()).
 * -1 for a job of one direction: prep() decides.
 */
static int rate_op(struct worker *w, const struct loop *l)
{
	const struct job *j = w->job;
	const double now = (double)(l->t - l->t_start);
	int op, other;

	if (j->o.rw != LLMIO_RW_RW && j->o.rw != LLMIO_RW_RANDRW)
		return -1;
	op = rng_below(&w->rng, 100) < j->o.rwmixread ? ENGINE_OP_READ : ENGINE_OP_WRITE;
	other = op ^ 1;
	if (rate_due(l, op) <= now ||
	    !(other == ENGINE_OP_READ ? j->o.rwmixread : 100 - j->o.rwmixread))
		return op;
	return rate_due(l, other) < rate_due(l, op) ? other : op;
}

/*
 * An I/O's priority: fio's cmdprio_percentage or cmdprio_bssplit drawn for it from a generator
 * of their own (the job's offsets and sizes stay those of the job without them), else the
 * thread's (prioclass, prio).
 */
static inline uint16_t draw_prio(struct worker *w, const struct io_req *io, uint32_t pct)
{
	const struct cmdprio_table *t = w->job->cmdprio_bss;
	const uint16_t *row;
	uint16_t p;

	if (pct)
		return rng_below(&w->prio_rng, 100) < pct ? w->cmdprio : w->ioprio;
	if (!t || io->op > ENGINE_OP_WRITE || !(row = cmdprio_row(t, io->op, io->len)))
		return w->ioprio;
	p = row[rng_below(&w->prio_rng, 100)];
	return p == CMDPRIO_JOB ? w->ioprio : p;
}

/*
 * Queue I/Os while there are free slots, the rate allows and the source has some.  The I/Os
 * an engine only queued go to w->batch[0 .. *queued) for the commit; one it completed at once
 * (a synchronous engine) is accounted here.  *src_wait: the io_source is not ready yet.
 * \return 0, or -1 when the job must stop (w->err set).
 */
static inline int fill_queue(struct worker *w, struct loop *l, unsigned *queued, bool *src_wait)
{
	struct job *j = w->job;
	const struct engine_ops *e = j->engine;
	const bool async = e->caps & ENGINE_CAP_ASYNC;
	/* an engine's own buffers only when they are host memory (SPDK's, not a GPU's) */
	const bool stamps = (!e->buf_alloc || (e->caps & ENGINE_CAP_HOST_BUFS)) &&
	                    (!(e->caps & ENGINE_CAP_NO_IO) || (e->caps & ENGINE_CAP_SOCKET));
	const struct llmio_io_source *src = j->o.io_source;
	/*
	 * The job's constants and the loop's counters live in locals for the loop: after the
	 * engine's queue(), an indirect call, the compiler would reload every one of them through
	 * w, j and l (a third of the worker's instructions per I/O).  Uniform random offsets in
	 * one file in a fixed direction (the cached 4 KiB randread job) skip prep()'s switch;
	 * they draw the same numbers from the same generator.
	 */
	const uint64_t limit = l->io_limit ? l->io_limit : UINT64_MAX;
	const bool rated = l->rate[0] || l->rate[1];
	const uint64_t bs = j->o.bs, blocks = j->total_blocks;
	const int fast_op = src || j->target.nfiles > 1 ||
	                                    j->o.random_distribution == LLMIO_DIST_ZIPF ||
	                                    j->bss_on || j->align_blocks > 1 || j->zones.n
	                            ? -1
	                    : j->o.rw == LLMIO_RW_RANDREAD  ? ENGINE_OP_READ
	                    : j->o.rw == LLMIO_RW_RANDWRITE ? ENGINE_OP_WRITE
	                                                    : -1;
	unsigned nfree = l->nfree, nq = *queued, inflight = l->inflight;
	uint64_t issued = l->issued;
	int ret = 0;

	const uint32_t cmdprio_pct = j->o.cmdprio_percentage;
	const bool prio_on = cmdprio_pct || w->ioprio || j->cmdprio_bss;

	if (fast_op >= 0 && !rated && !w->flow && !prio_on && !w->lt_on && e->queue_batch)
		return fill_batch(w, l, queued, (uint8_t)fast_op, stamps);

	while (nfree && inflight < w->lt_cap && issued < limit && (!w->src_done || w->held)) {
		struct io_req *io = w->free_ios[nfree - 1];
		int q;

		const bool again = w->held; /* prepared and stamped already */

		if (w->flow && !again && job_flow_ahead(w->flow, &w->flow_count, j->o.flow)) {
			l->flow_wait = true;
			break; /* fio's: the I/Os in flight complete, then flow_sleep */
		}
		if (again) {
			io = take_held(w, nfree);
		} else if (fast_op >= 0) {
			io->off = (j->use_map ? w->map_first + randmap_next(&w->map, &w->rng)
			                      : rng_below(&w->rng, blocks)) *
			          bs;
			io->file = 0;
			io->len = (uint32_t)bs;
			io->op = (uint8_t)fast_op;
		} else if (!src) {
			prep(w, io, limit - issued, rated ? rate_op(w, l) : -1);
		} else {
			int r = source_fill(w, io, l->t);

			*src_wait = r == -EAGAIN;
			if (*src_wait)
				break;
			if (r < 0) {
				ret = -1;
				break;
			}
			if (r == 0)
				break; /* no more, or an fsync first (below) */
		}
		if (prio_on && !again)
			io->prio = draw_prio(w, io, cmdprio_pct);
		if (!again && io->op == ENGINE_OP_WRITE && stamps && !stamp(w, io)) {
			ret = -1;
			break;
		}
		if (rated && rate_due(l, io->op) > (double)(l->t - l->t_start)) {
			/* ahead of its direction's rate: the I/Os in flight complete first (fio's
			 * io_u_quiesce), this one waits prepared, as a busy engine's does */
			const double ahead = rate_due(l, io->op) - (double)(l->t - l->t_start);

			if (inflight || nq || ahead > (double)RATE_NAP_NS) {
				/* a long wait in naps: the job's stop and runtime are seen between
				 * them (fio's rate_ddir() sleeps no further than the runtime) */
				if (!inflight && !nq)
					sleep_ns(RATE_NAP_NS);
				w->held = io;
				break;
			}
			sleep_ns((uint64_t)ahead);
			l->t = now_ns();
		}
		io->t_queue = l->t;
		q = e->queue(&w->ctx, io);
		if (q == ENGINE_Q_BUSY) {
			w->held = io;
			break;
		}
		nfree--;
		issued += io->len;
		l->issued_op[io->op] += io->len;
		l->since_think++;
		if (io->op == ENGINE_OP_WRITE)
			l->writes_since_sync++;
		if (q == ENGINE_Q_COMPLETED) {
			uint64_t done = now_ns();

			io->t_submit = l->t;
			w->free_ios[nfree++] = io;
			if (w->lt_on && !lat_target_seen(w, &io, 1, done)) {
				ret = -1;
				break;
			}
			if (!complete(w, io, done, l->measuring)) {
				ret = -1;
				break;
			}
			l->t = done; /* the next I/O is queued now */
			if (!async) {
				l->t_fresh = true;
				break; /* check stop / epoch / think time between sync I/Os */
			}
			continue;
		}
		w->batch[nq++] = io;
		inflight++;
	}
	l->nfree = nfree;
	l->issued = issued;
	l->inflight = inflight;
	*queued = nq;
	return ret;
}

/* Commit the batch and stamp its submission time (slat).  \return 0, or -1 (w->err set). */
static inline int commit_batch(struct worker *w, const struct loop *l, unsigned queued)
{
	const struct engine_ops *e = w->job->engine;
	uint64_t ts, n[2] = {0, 0};

	if (e->commit(&w->ctx) < 0) {
		w->err = -EIO;
		snprintf(w->errmsg, sizeof(w->errmsg), "engine %s failed to submit", e->name);
		return -1;
	}
	ts = now_ns();
	/* the batch shares one slat: one histogram add per direction */
	for (unsigned i = 0; i < queued; i++)
		w->batch[i]->t_submit = ts;
	if (l->batch_op >= 0)
		n[l->batch_op] = queued;
	else
		for (unsigned i = 0; i < queued; i++)
			n[w->batch[i]->op]++;
	for (int op = 0; l->measuring && op < 2; op++)
		if (n[op])
			llmio_hist_add_n(&w->st[op].slat, ts - l->t, n[op]);
	return 0;
}

/* Nothing in flight and the io_source is not ready: sleep until its next I/O is due. */
static void wait_for_source(const struct worker *w)
{
	uint64_t now = now_ns(), until = now + 20000;

	if (w->has_pending && w->pending.at_ns)
		until = w->job->t_measure + w->pending.at_ns;
	if (until > now)
		sleep_ns(until - now < 1000000 ? until - now : 1000000);
}

/*
 * Between rounds: the fsync a source asked for, fsync=N, and thinktime, each after draining
 * the queue.  None of them is the next I/O's latency, so the clock is read again after.
 * \return 0, or nonzero when the job must stop.
 */
static int sync_and_think(struct worker *w, struct loop *l)
{
	const struct job *j = w->job;

	if (w->sync_asked) {
		if (drain(w, &l->inflight, &l->nfree, l->measuring, true) ||
		    source_sync(w, l->measuring))
			return -1;
		l->t_fresh = false;
	}
	if (j->o.fsync && l->writes_since_sync >= j->o.fsync) {
		if (drain(w, &l->inflight, &l->nfree, l->measuring, true) ||
		    sync_files(w, l->measuring))
			return -1;
		l->writes_since_sync = 0;
		l->t_fresh = false;
	}
	if (j->o.thinktime_ns && l->since_think >= j->o.thinktime_blocks) {
		if (drain(w, &l->inflight, &l->nfree, l->measuring, true))
			return -1;
		sleep_ns(j->o.thinktime_ns);
		l->since_think = 0;
		l->t_fresh = false;
	}
	return 0;
}

/* The loop ended: drain, end_fsync, the final counters and the source's end. */
static void finish(struct worker *w, struct loop *l)
{
	struct job *j = w->job;
	int ret;

	w->t_end = now_ns();
	/* I/Os still in flight when time ran out finish uncounted, as in fio */
	if (drain(w, &l->inflight, &l->nfree, l->measuring, !atomic_load(&j->stop)))
		return;
	/* the flow's other threads go on at their own ratio */
	job_flow_put(w->flow, w->flow_count, j->o.flow);
	w->flow = NULL;
	if (j->o.end_fsync && sync_files(w, l->measuring))
		return;
	/* the engine's word on what the job wrote (s3: every upload it began completed) */
	ret = j->engine->finish ? j->engine->finish(&w->ctx) : 0;
	if (ret) {
		w->err = ret;
		w->err_at_end = true;
		snprintf(w->errmsg, sizeof(w->errmsg), "%s", w->ctx.ioerr);
		return;
	}
	if (!atomic_load(&j->stop))
		w->t_end = now_ns();
	if (w->log) {
		struct llmio_error le = {0};

		/* a log that could not be written fails the job; what was measured stays */
		w->err = iolog_finish(w->log, w->t_end, &le);
		if (w->err)
			snprintf(w->errmsg, sizeof(w->errmsg), "%.*s", (int)sizeof(w->errmsg) - 1,
			         le.msg);
	}
	publish(w);
	if (j->o.io_source && j->o.io_source->end)
		j->o.io_source->end(j->o.io_source->arg, w->idx);
}

static void run(struct worker *w)
{
	struct job *j = w->job;
	struct loop l = {
	        .io_limit = j->o.io_size,
	        .rate = {j->o.rate, j->trims ? j->o.rate_trim : j->o.rate_write}, /* per thread */
	        .t_start = now_ns(),
	        .nfree = w->depth,
	        .measuring = atomic_load(&j->epoch) > 0,
	};

	w->epoch_seen = atomic_load(&j->epoch);
	w->lt_on = j->o.latency_target_ns != 0;
	if (w->lt_on) {
		lat_target_init(&w->lt, j->o.latency_target_ns, j->o.latency_window_ns,
		                j->o.latency_percentile, w->depth, j->o.latency_run, l.t_start, 0);
		w->lt_cap = w->lt.qd;
	}
	for (;;) {
		unsigned queued = 0;
		bool src_wait = false;

		if (atomic_load_explicit(&j->stop, memory_order_relaxed))
			break;
		new_epoch(w, &l);
		if (l.io_limit && l.issued >= l.io_limit && !l.inflight)
			break;
		if (w->src_done && !l.inflight)
			break;
		if (!w->lt_cap && !l.inflight)
			break; /* latency_target found its depth (fio's: the job is done) */

		if (!l.t_fresh)
			l.t = now_ns();
		l.t_fresh = false;
		l.batch_op = -1;
		if (fill_queue(w, &l, &queued, &src_wait))
			return;
		if (queued && commit_batch(w, &l, queued))
			return;
		if (l.inflight && reap(w, 1, &l.inflight, &l.nfree, l.measuring, true) < 0)
			return;
		if (j->o.rate_min && l.measuring && !rate_min_met(w, &l))
			return;
		if (src_wait && !l.inflight)
			wait_for_source(w);
		if (l.flow_wait && !l.inflight) {
			/* fio's flow_sleep; without it fio spins, llmio yields its CPU (to the
			 * threads it waits for, on a busy machine) */
			if (j->o.flow_sleep_ns)
				sleep_ns(j->o.flow_sleep_ns);
			else
				sched_yield();
		}
		l.flow_wait = false;
		if (l.measuring)
			publish(w);
		if (sync_and_think(w, &l))
			return;
	}
	finish(w, &l);
}

/*
 * cpus_allowed.  Applied after setup, so that an SQPOLL poller created by the engine is not
 * bound to the thread's CPUs (a poller on its own thread's only CPU would starve it); pin the
 * poller with the engine's sqpoll_cpu.
 */
static int pin(struct worker *w, struct llmio_error *e)
{
	const struct job *j = w->job;
	cpu_set_t one;
	int ret;

	if (!CPU_COUNT(&j->cpus))
		return 0;
	if (j->cpus_split) {
		CPU_ZERO(&one);
		CPU_SET(cpu_set_nth(&j->cpus, w->idx), &one);
	}
	ret = pthread_setaffinity_np(pthread_self(), sizeof(cpu_set_t),
	                             j->cpus_split ? &one : &j->cpus);
	if (ret)
		llmio_err(e, -ret, "cannot pin thread %u to %s=%s: %s", w->idx,
		          j->o.numa_cpu_nodes[0] ? "numa_cpu_nodes" : "cpus_allowed",
		          j->o.numa_cpu_nodes[0] ? j->o.numa_cpu_nodes : j->o.cpus_allowed,
		          strerror(ret));
	return -ret;
}

static void wake_control(const struct job *j)
{
	const uint64_t one = 1;

	if (j->wake_fd >= 0)
		(void)!write(j->wake_fd, &one, sizeof(one));
}

void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct job *j = w->job;
	struct llmio_error e;
	int go, ret;

	llmio_error_init(&e);
	/* numa_mem_policy first: the thread's buffers, allocated in setup, follow it */
	ret = cpu_mempolicy_apply(&j->mpol);
	if (ret)
		llmio_err(&e, ret, "cannot set thread %u's numa_mem_policy=%s: %s", w->idx,
		          j->o.numa_mem_policy, strerror(-ret));
	else
		ret = setup(w, &e);
	if (!ret)
		ret = pin(w, &e);
	if (ret) {
		w->err = ret;
		snprintf(w->errmsg, sizeof(w->errmsg), "%.*s", (int)sizeof(w->errmsg) - 1, e.msg);
		atomic_store(&w->state, STATE_FAILED);
		wake_control(j);
		teardown(w);
		return NULL;
	}
	atomic_store(&w->state, STATE_READY);
	while ((go = atomic_load(&j->go)) == 0)
		sleep_ns(200000);
	if (go > 0)
		run(w);
	teardown(w);
	atomic_store(&w->state, STATE_DONE);
	wake_control(j);
	return NULL;
}
