/* SPDX-License-Identifier: MIT */
/* The plan of `llmio quick` (quick.h). */
#include <errno.h>
#include <stdio.h>
#include <sys/statvfs.h>

#include "engine/engine.h"
#include "sweep/quick.h"

const struct quick_pattern quick_patterns[] = {
        {"inference", "4k rand read", LLMIO_RW_RANDREAD, 4096, 1},
        {"inference", "4k rand read", LLMIO_RW_RANDREAD, 4096, 32},
        {"inference", "128k rand read", LLMIO_RW_RANDREAD, 128 << 10, 1},
        {"inference", "128k rand read", LLMIO_RW_RANDREAD, 128 << 10, 32},
        {"training", "1m seq read", LLMIO_RW_READ, 1 << 20, 8},
        {"training", "1m seq write", LLMIO_RW_WRITE, 1 << 20, 8},
};

const size_t quick_npatterns = sizeof(quick_patterns) / sizeof(quick_patterns[0]);

bool quick_engine_measured(const struct llmio_engine_info *e)
{
	const struct engine_ops *ops = engine_find(e->name);

	/* quick measures files: engines of other targets (s3://, an NVMe namespace) are left out */
	return ops && !(ops->caps & (ENGINE_CAP_NO_IO | ENGINE_CAP_OWN_TARGET |
	                             ENGINE_CAP_NAMESPACE | ENGINE_CAP_FILE_OPS));
}

bool quick_engine_runs(const struct llmio_engine_info *e, const struct quick_pattern *p)
{
	return e->async || p->iodepth <= 1 || p->rw == LLMIO_RW_READ || p->rw == LLMIO_RW_WRITE;
}

void quick_job_opts(struct llmio_job_opts *o, const char *engine, const char *file, uint64_t size,
                    uint64_t runtime_ns, bool direct, const struct quick_pattern *p)
{
	llmio_job_opts_init(o);
	snprintf(o->engine, sizeof(o->engine), "%s", engine);
	snprintf(o->filename, sizeof(o->filename), "%s", file);
	o->size = size;
	o->rw = p->rw;
	o->bs = p->bs;
	o->iodepth = p->iodepth;
	o->direct = direct;
	o->runtime_ns = runtime_ns;
	o->ramp_time_ns = runtime_ns / 4;
}

int quick_choose_size(const char *dir, uint64_t requested, uint64_t *size, uint64_t *free_bytes)
{
	struct statvfs sv;
	uint64_t want = requested ? requested : QUICK_DEFAULT_SIZE;

	if (statvfs(dir, &sv))
		return -errno;
	*free_bytes = (uint64_t)sv.f_bavail * sv.f_frsize;
	if (!requested && want > *free_bytes / 4)
		want = *free_bytes / 4 & ~((1ull << 20) - 1);
	if (want < QUICK_MIN_SIZE || want > *free_bytes)
		return -ENOSPC;
	*size = want;
	return 0;
}

double quick_gbps(const struct llmio_result *r)
{
	return (r->read.bw_bytes + r->write.bw_bytes) / 1e9;
}

/*
 * The best finished result of pattern p among the direct (or page-cache) ones that ran at
 * exactly depth qd (the pattern's, or 1 for the synchronous engines' QD 1 runs of it).
 */
static const struct llmio_result *best_of(struct llmio_result *const *res,
                                          const struct quick_pattern *const *pat, size_t n,
                                          const struct quick_pattern *p, bool direct, uint32_t qd)
{
	const struct llmio_result *best = NULL;

	for (size_t i = 0; i < n; i++) {
		const struct llmio_result *r = res[i];

		if (pat[i] != p || r->direct_in_effect != direct || r->interrupted ||
		    r->iodepth_effective != qd)
			continue;
		if (!best || quick_gbps(r) > quick_gbps(best) * 1.03 ||
		    (quick_gbps(r) > quick_gbps(best) * 0.97 &&
		     r->gb_per_s_per_core > best->gb_per_s_per_core))
			best = r;
	}
	return best;
}

void quick_best(struct llmio_result *const *res, const struct quick_pattern *const *pat, size_t n,
                const struct quick_pattern *p, bool direct, struct quick_best *best)
{
	const struct llmio_result *low = p->iodepth > 1 ? best_of(res, pat, n, p, direct, 1) : NULL;

	best->at = best_of(res, pat, n, p, direct, p->iodepth);
	/* a shallower run is never the pattern's best, but is named when it beat them */
	best->low =
	        low && (!best->at || quick_gbps(low) > quick_gbps(best->at) * 1.03) ? low : NULL;
}
