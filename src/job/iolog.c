/* SPDX-License-Identifier: MIT */
/* fio's logs per thread (iolog.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "job/iolog.h"

const char *const iolog_kind_name[IOLOG_KINDS] = {"bw", "iops", "slat", "clat", "lat"};

bool iolog_wanted(const struct llmio_job_opts *o)
{
	return o->write_bw_log[0] || o->write_lat_log[0] || o->write_iops_log[0];
}

bool iolog_per_io(const struct llmio_job_opts *o)
{
	return iolog_wanted(o) && !o->log_avg_msec;
}

uint64_t iolog_step_ns(const struct llmio_job_opts *o)
{
	return (o->log_avg_msec ? o->log_avg_msec : 1000) * 1000000ull;
}

int iolog_path(char *buf, size_t len, const char *name, const char *kind, unsigned idx,
               struct llmio_error *e)
{
	int n = snprintf(buf, len, "%s_%s.%u.log", name, kind, idx + 1);

	if (n < 0 || (size_t)n >= len)
		return llmio_err(e, -ENAMETOOLONG, "log name %s: too long", name);
	return 0;
}

/* The per-I/O files o asks for, created (emptied) now: a log that cannot be written fails here. */
static int open_files(struct iolog *l, const struct llmio_job_opts *o, unsigned idx,
                      struct llmio_error *e)
{
	const char *names[IOLOG_KINDS] = {o->write_bw_log, o->write_iops_log, o->write_lat_log,
	                                  o->write_lat_log, o->write_lat_log};
	char path[LLMIO_PATH_MAX];

	for (int k = 0; k < IOLOG_KINDS; k++) {
		int ret;

		if (!names[k][0])
			continue;
		l->name[k] = names[k];
		ret = iolog_path(path, sizeof(path), names[k], iolog_kind_name[k], idx, e);
		if (ret)
			return ret;
		l->f[k] = fopen(path, "we");
		if (!l->f[k])
			return llmio_err(e, -errno, "cannot write the log %s: %s", path,
			                 strerror(errno));
	}
	return 0;
}

int iolog_init(struct iolog *l, const struct llmio_job_opts *o, unsigned idx, bool slat,
               struct llmio_error *e)
{
	memset(l, 0, sizeof(*l));
	idx += o->log_index; /* fio numbers the threads of a job file across it */
	if (iolog_per_io(o)) {
		l->slat = slat;
		l->offset = o->log_offset;
		l->prio = o->log_prio;
		l->idx = idx;
		l->iocap = IOLOG_IO_CAP;
		/* malloc, not calloc: the pages are touched as the buffer fills, not before */
		l->ios = malloc(l->iocap * sizeof(*l->ios));
		if (!l->ios)
			return llmio_err(e, -ENOMEM, "no memory for the logs (write_*_log)");
		return open_files(l, o, idx, e);
	}
	l->step = iolog_step_ns(o);
	/* a runtime bounds the window: its intervals, the partial last one and one spare */
	l->cap = o->runtime_ns ? (size_t)(o->runtime_ns / l->step) + 2 : IOLOG_DEFAULT_CAP;
	if (l->cap > IOLOG_DEFAULT_CAP * 16)
		l->cap = IOLOG_DEFAULT_CAP * 16;
	l->buf = calloc(l->cap, sizeof(*l->buf));
	return l->buf ? 0 : llmio_err(e, -ENOMEM, "no memory for the logs (write_*_log)");
}

void iolog_release(struct iolog *l)
{
	free(l->buf);
	l->buf = NULL;
	free(l->ios);
	l->ios = NULL;
	for (int k = 0; k < IOLOG_KINDS; k++)
		if (l->f[k]) {
			fclose(l->f[k]);
			l->f[k] = NULL;
		}
}

void iolog_reset(struct iolog *l)
{
	l->n = 0;
	l->next = 0;
	l->truncated = false;
	memset(&l->cur, 0, sizeof(l->cur));
	l->nio = 0;
	/* what a flush wrote before the window started is not the window's */
	for (int k = 0; k < IOLOG_KINDS; k++)
		if (l->f[k] && !fflush(l->f[k]) && ftruncate(fileno(l->f[k]), 0) == 0)
			rewind(l->f[k]);
}

static void push(struct iolog *l, uint64_t t_ms)
{
	if (l->n < l->cap) {
		l->cur.t_ms = t_ms;
		l->buf[l->n++] = l->cur;
	} else {
		l->truncated = true;
	}
	memset(&l->cur, 0, sizeof(l->cur));
}

void iolog_roll(struct iolog *l, uint64_t t, uint64_t t0)
{
	if (!l->next) {
		l->t0 = t0;
		l->next = t0 + l->step;
	}
	while (t >= l->next) {
		push(l, (l->next - l->t0) / 1000000u);
		l->next += l->step;
		if (l->truncated) {
			/* nothing more is kept: skip the empty intervals at once */
			l->next = l->t0 + ((t - l->t0) / l->step + 1) * l->step;
			break;
		}
	}
}

/* v in decimal at p; the end.  By hand, not printf: a flush writes millions of these. */
static char *num(char *p, uint64_t v)
{
	char d[20];
	int n = 0;

	do {
		d[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = d[--n];
	return p;
}

static char *col(char *p, uint64_t v)
{
	*p++ = ',';
	*p++ = ' ';
	return num(p, v);
}

/*
 * One I/O's line in the log of kind k, as fio 3.33 writes it (iolog.c, flush_samples()):
 * "time, value, direction, bs, [offset,] priority": time in ms of the window, the value (bw:
 * bs over clat in KiB/s as fio computes it, bytes * 10^6 / clat ns; iops: 1; latencies in
 * ns), 0 read / 1 write, the bytes moved, the offset with log_offset, and the priority: with
 * log_prio its ioprio value in hex ("0x6000"), else 1 for a realtime one and 0 otherwise.
 */
static size_t line(char *buf, const struct iolog *l, const struct iolog_io *x, int k)
{
	const uint64_t v[IOLOG_KINDS] = {
	        [IOLOG_BW] = x->clat ? (uint64_t)x->bs * 1000000u / x->clat : 0,
	        [IOLOG_IOPS] = 1,
	        [IOLOG_SLAT] = x->slat,
	        [IOLOG_CLAT] = x->clat,
	        [IOLOG_LAT] = x->slat + x->clat,
	};
	char *p = num(buf, x->t / 1000000u);

	p = col(p, v[k]);
	p = col(p, x->op);
	p = col(p, x->bs);
	if (l->offset)
		p = col(p, x->off);
	if (l->prio) {
		static const char hex[] = "0123456789abcdef";

		memcpy(p, ", 0x", 4);
		p += 4;
		for (int s = 12; s >= 0; s -= 4)
			*p++ = hex[(x->prio >> s) & 15];
	} else {
		p = col(p, x->prio >> 13 == 1); /* IOPRIO_CLASS_RT */
	}
	*p++ = '\n';
	return (size_t)(p - buf);
}

/* The write to kind k's file failed: the first error, naming the file, is kept. */
static void failed(struct iolog *l, int k, int errnum)
{
	char path[LLMIO_PATH_MAX];

	if (l->err.code)
		return;
	if (iolog_path(path, sizeof(path), l->name[k], iolog_kind_name[k], l->idx, NULL))
		snprintf(path, sizeof(path), "%s", l->name[k]);
	llmio_err(&l->err, -errnum, "cannot write the log %s: %s", path, strerror(errnum));
}

void iolog_flush(struct iolog *l)
{
	char buf[160];

	for (int k = 0; k < IOLOG_KINDS && !l->err.code; k++) {
		if (!l->f[k] || (k == IOLOG_SLAT && !l->slat))
			continue;
		for (size_t i = 0; i < l->nio; i++) {
			size_t n = line(buf, l, &l->ios[i], k);

			if (fwrite(buf, 1, n, l->f[k]) != n) {
				failed(l, k, errno ? errno : EIO);
				break;
			}
		}
	}
	l->nio = 0;
}

int iolog_finish(struct iolog *l, uint64_t t_end, struct llmio_error *e)
{
	if (l->ios) {
		iolog_flush(l);
		for (int k = 0; k < IOLOG_KINDS; k++) {
			if (l->f[k] && fclose(l->f[k]))
				failed(l, k, errno ? errno : EIO);
			l->f[k] = NULL;
		}
		return l->err.code ? llmio_err(e, l->err.code, "%s", l->err.msg) : 0;
	}
	if (!l->next || !(l->cur.ios[0] || l->cur.ios[1]))
		return 0;
	/* rounded up: after the last whole interval, never on it */
	push(l, t_end > l->t0 ? (t_end - l->t0 + 999999u) / 1000000u : 0);
	return 0;
}
