/* SPDX-License-Identifier: MIT */
/*
 * fio's averaged logs (fio_log.h).  A bandwidth or IOPS line is the interval's count over
 * log_avg_msec, the last (partial) interval's too, so value x log_avg_msec / 1000 adds up to
 * the thread's I/Os (KiB for bandwidth) exactly.  A latency line is the mean of the interval's
 * I/Os and is written only for an interval that completed some, as fio does; a direction the
 * thread never did gets no line, and slat only with an engine that submits apart from
 * queueing (a synchronous engine has none, as in fio).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "report/fio_log.h"
#include "job/iolog.h"

/* The value of one line, false when the interval has none (latency without I/O). */
static bool value(enum iolog_kind k, const struct llmio_log_sample *s, int d, uint64_t step_ms,
                  uint64_t *v)
{
	switch (k) {
	case IOLOG_BW:
		*v = s->bytes[d] * 1000 / (step_ms * 1024);
		return true;
	case IOLOG_IOPS:
		*v = s->ios[d] * 1000 / step_ms;
		return true;
	case IOLOG_SLAT:
		*v = s->ios[d] ? s->slat_ns[d] / s->ios[d] : 0;
		break;
	case IOLOG_CLAT:
		*v = s->ios[d] ? s->clat_ns[d] / s->ios[d] : 0;
		break;
	default: /* IOLOG_LAT */
		*v = s->ios[d] ? s->lat_ns[d] / s->ios[d] : 0;
		break;
	}
	return s->ios[d] > 0;
}

static int write_one(const struct llmio_thread_result *t, const char *name, unsigned idx,
                     enum iolog_kind k, uint64_t step_ms, bool offset, struct llmio_error *e)
{
	const struct llmio_op_result *op[2] = {&t->read, &t->write};
	char path[LLMIO_PATH_MAX];
	FILE *f;
	int ret = iolog_path(path, sizeof(path), name, iolog_kind_name[k], idx, e);

	if (ret)
		return ret;
	f = fopen(path, "we");
	if (!f)
		return llmio_err(e, -errno, "cannot write the log %s: %s", path, strerror(errno));
	for (size_t i = 0; i < t->nlog; i++)
		for (int d = 0; d < 2; d++) {
			uint64_t v;

			if (!op[d]->ios || (k == IOLOG_SLAT && !op[d]->slat.count))
				continue;
			if (value(k, &t->log[i], d, step_ms, &v))
				fprintf(f, "%" PRIu64 ", %" PRIu64 ", %d, 0, %s0\n", t->log[i].t_ms,
				        v, d, offset ? "0, " : "");
		}
	if (ferror(f) | fclose(f))
		return llmio_err(e, -EIO, "cannot write the log %s", path);
	return 0;
}

int fio_log_write(const struct llmio_result *r, bool *truncated, struct llmio_error *e)
{
	const char *names[] = {r->opts.write_bw_log, r->opts.write_iops_log, r->opts.write_lat_log,
	                       r->opts.write_lat_log, r->opts.write_lat_log};
	const uint64_t step_ms = r->opts.log_avg_msec ? r->opts.log_avg_msec : 1000;

	if (truncated)
		*truncated = false;
	for (uint32_t i = 0; r->threads && i < r->nthreads; i++) {
		const struct llmio_thread_result *t = &r->threads[i];

		if (!t->log)
			continue;
		for (int k = IOLOG_BW; k <= IOLOG_LAT; k++) {
			int ret = names[k][0] ? write_one(t, names[k], i + r->opts.log_index, k,
			                                  step_ms, r->opts.log_offset, e)
			                      : 0;

			if (ret)
				return ret;
		}
		if (truncated)
			*truncated |= t->log_truncated;
	}
	return 0;
}
