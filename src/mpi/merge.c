/* SPDX-License-Identifier: MIT */
/*
 * Exact merge of the ranks' results (dist.h) and the "mpi" object of a record.  Plain C with no
 * MPI: rank 0 runs it on the results ranks_gather() brought, and tests/test_dist.c runs it on
 * results it builds.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "mpi/ranks.h"
#include "llmio/hist.h"
#include "stats/record.h"
#include "stats/result_json.h"

static void op_clear(struct llmio_op_result *op)
{
	memset(op, 0, sizeof(*op));
	llmio_hist_init(&op->clat);
	llmio_hist_init(&op->slat);
	llmio_hist_init(&op->lat);
}

static void op_add(struct llmio_op_result *dst, const struct llmio_op_result *src)
{
	dst->ios += src->ios;
	dst->bytes += src->bytes;
	llmio_hist_merge(&dst->clat, &src->clat);
	llmio_hist_merge(&dst->slat, &src->slat);
	llmio_hist_merge(&dst->lat, &src->lat);
}

static void op_rates(struct llmio_op_result *op, double s)
{
	op->iops = s > 0 ? (double)op->ios / s : 0;
	op->bw_bytes = s > 0 ? (double)op->bytes / s : 0;
}

static double start_s(const struct llmio_result *r)
{
	return (double)r->start_epoch_ms / 1e3;
}

/* Is ranks[i] the first rank of its host?  Host-wide counters are taken from it alone. */
static bool host_leader(const struct ranks_rank *ranks, unsigned i)
{
	for (unsigned k = 0; k < i; k++)
		if (!strcmp(ranks[k].host, ranks[i].host))
			return false;
	return true;
}

int ranks_merge(const struct ranks_rank *ranks, unsigned n, struct llmio_result *agg,
                struct ranks_summary *s)
{
	double first = 0, last_start = 0, end = 0;
	uint64_t bytes;

	if (!n)
		return -EINVAL;
	memset(s, 0, sizeof(*s));
	/* rank 0's options, host facts and device description; every count below is rebuilt */
	*agg = *ranks[0].r;
	/* the per-thread logs are each process's own memory (fio's logs are not merged): the copy
	 * must not own rank 0's, which its caller frees, nor another rank's pointers */
	agg->threads = NULL;
	agg->thread_wire = NULL;
	agg->nthreads = 0;
	op_clear(&agg->read);
	op_clear(&agg->write);
	llmio_hist_init(&agg->sync_lat);
	memset(&agg->cpu, 0, sizeof(agg->cpu));
	agg->fsyncs = 0;
	agg->target_bytes = 0;
	agg->device.read_bytes = agg->device.write_bytes = 0;
	agg->device.read_ios = agg->device.write_ios = agg->device.irqs = 0;
	agg->process_io.read_bytes = agg->process_io.write_bytes = 0;
	for (unsigned i = 0; i < n; i++) {
		const struct llmio_result *r = ranks[i].r;
		double a = start_s(r), b = a + r->runtime_s;

		op_add(&agg->read, &r->read);
		op_add(&agg->write, &r->write);
		agg->fsyncs += r->fsyncs;
		llmio_hist_merge(&agg->sync_lat, &r->sync_lat);
		agg->cpu.usr_s += r->cpu.usr_s;
		agg->cpu.sys_s += r->cpu.sys_s;
		agg->cpu.proc_s += r->cpu.proc_s;
		agg->cpu.ctx_voluntary += r->cpu.ctx_voluntary;
		agg->cpu.ctx_involuntary += r->cpu.ctx_involuntary;
		agg->process_io.known &= r->process_io.known;
		agg->process_io.read_bytes += r->process_io.read_bytes;
		agg->process_io.write_bytes += r->process_io.write_bytes;
		agg->interrupted |= r->interrupted;
		if (r->error && !agg->error) {
			agg->error = r->error;
			snprintf(agg->error_msg, sizeof(agg->error_msg), "rank %u: %.480s",
			         ranks[i].rank, r->error_msg);
		}
		/* every rank's own file counts; a shared file is counted once (the largest view) */
		if (strcmp(r->opts.filename, ranks[0].r->opts.filename) || !i)
			agg->target_bytes += r->target_bytes;
		else if (r->target_bytes > agg->target_bytes)
			agg->target_bytes = r->target_bytes;
		if (!i || a < first)
			first = a;
		if (!i || a > last_start)
			last_start = a;
		if (!i || b > end)
			end = b;
		if (!host_leader(ranks, i))
			continue;
		/* the whole host's counters: the same numbers in every rank of a host */
		s->hosts++;
		agg->cpu.system_busy_s += r->cpu.system_busy_s;
		agg->cpu.online_cpus += r->cpu.online_cpus;
		agg->device.known &= r->device.known;
		agg->device.read_bytes += r->device.read_bytes;
		agg->device.write_bytes += r->device.write_bytes;
		agg->device.read_ios += r->device.read_ios;
		agg->device.write_ios += r->device.write_ios;
		agg->device.irqs += r->device.irqs;
	}
	s->ranks = n;
	s->phase_s = end - first;
	s->start_skew_s = last_start - first;
	agg->start_epoch_ms = (uint64_t)(first * 1e3 + 0.5);
	agg->runtime_s = s->phase_s;
	op_rates(&agg->read, agg->runtime_s);
	op_rates(&agg->write, agg->runtime_s);
	if (agg->runtime_s > 0) {
		agg->cpu.cores_busy = agg->cpu.proc_s / agg->runtime_s;
		agg->cpu.system_cores_busy = agg->cpu.system_busy_s / agg->runtime_s;
	}
	bytes = agg->read.bytes + agg->write.bytes;
	agg->gb_per_s_per_core =
	        agg->cpu.cores_busy > 0 && agg->runtime_s > 0
	                ? (double)bytes / 1e9 / agg->runtime_s / agg->cpu.cores_busy
	                : 0;
	llmio_result_judge(agg);
	return 0;
}

static cJSON *host_json(const struct ranks_rank *ranks, unsigned n, unsigned leader)
{
	cJSON *h = cJSON_CreateObject(), *list;
	const struct llmio_result *l = ranks[leader].r;
	double proc = 0;

	if (!h)
		return NULL;
	cJSON_AddStringToObject(h, RK_HOST, ranks[leader].host);
	list = cJSON_AddArrayToObject(h, RK_RANKS);
	for (unsigned i = 0; i < n; i++)
		if (!strcmp(ranks[i].host, ranks[leader].host)) {
			cJSON_AddItemToArray(list, cJSON_CreateNumber(ranks[i].rank));
			proc += ranks[i].r->cpu.proc_s;
		}
	cJSON_AddNumberToObject(h, RK_PROC_S, proc);
	cJSON_AddNumberToObject(h, "system_busy_s", l->cpu.system_busy_s);
	cJSON_AddStringToObject(h, RK_DEVICE, l->device.known ? l->device.name : "");
	cJSON_AddNumberToObject(h, RK_DEVICE "_" RK_READ_BYTES, (double)l->device.read_bytes);
	cJSON_AddNumberToObject(h, RK_DEVICE "_" RK_WRITE_BYTES, (double)l->device.write_bytes);
	return h;
}

cJSON *ranks_json(const struct ranks_rank *ranks, unsigned n, const struct ranks_summary *s,
                  const char *layout)
{
	cJSON *m = cJSON_CreateObject(), *hosts, *per;

	if (!m)
		return NULL;
	cJSON_AddNumberToObject(m, RK_RANKS, s->ranks);
	cJSON_AddNumberToObject(m, RK_HOSTS, s->hosts);
	if (layout)
		cJSON_AddStringToObject(m, RK_FILE_LAYOUT, layout);
	cJSON_AddNumberToObject(m, RK_PHASE_S, s->phase_s);
	cJSON_AddNumberToObject(m, RK_START_SKEW_S, s->start_skew_s);
	hosts = cJSON_AddArrayToObject(m, RK_BY_HOST);
	for (unsigned i = 0; hosts && i < n; i++)
		if (host_leader(ranks, i))
			cJSON_AddItemToArray(hosts, host_json(ranks, n, i));
	per = cJSON_AddArrayToObject(m, RK_PER_RANK);
	for (unsigned i = 0; per && i < n; i++) {
		cJSON *o = cJSON_CreateObject();

		if (!o || !cJSON_AddItemToArray(per, o)) {
			cJSON_Delete(o);
			break;
		}
		cJSON_AddNumberToObject(o, "rank", ranks[i].rank);
		cJSON_AddStringToObject(o, RK_HOST, ranks[i].host);
		cJSON_AddItemToObject(o, RK_JOB, result_job_json(ranks[i].r));
	}
	return m;
}
