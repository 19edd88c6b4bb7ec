/* SPDX-License-Identifier: MIT */
/*
 * The plan of `llmio quick`: the LLM-phase patterns it measures, which engines run which
 * pattern, each point's job options, the scratch file's size, and how the best engine of a
 * pattern is chosen.  Data and decisions only: `llmio quick` (src/cli/cmd_quick.c) runs the
 * points and prints the table.
 */
#ifndef LLMIO_SWEEP_QUICK_H
#define LLMIO_SWEEP_QUICK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "llmio/engine.h"
#include "llmio/job.h"
#include "llmio/result.h"

struct quick_pattern {
	const char *phase;
	const char *name; /* without the depth: rows say the depth that ran */
	enum llmio_rw rw;
	uint64_t bs;
	uint32_t iodepth;
};

/*
 * Inference reads KV-cache blocks and weights at random in small and medium blocks, shallow
 * (one request) and deep (batched serving); training streams dataset shards and writes
 * checkpoints in large sequential blocks.
 */
extern const struct quick_pattern quick_patterns[];
extern const size_t quick_npatterns;

/* The smallest scratch file quick runs on, and the one it prefers. */
#define QUICK_MIN_SIZE     (16ull << 20)
#define QUICK_DEFAULT_SIZE (1ull << 30)

/* Does quick measure this engine at all?  Not one that does no I/O: it measures llmio. */
bool quick_engine_measured(const struct llmio_engine_info *e);

/*
 * Does engine e run pattern p?  A synchronous engine runs QD 1 only: a deeper random pattern
 * would be the same run as its QD 1 one, so it is left out.
 */
bool quick_engine_runs(const struct llmio_engine_info *e, const struct quick_pattern *p);

/* The job options of one point: pattern p on file, ramp a quarter of the runtime. */
void quick_job_opts(struct llmio_job_opts *o, const char *engine, const char *file, uint64_t size,
                    uint64_t runtime_ns, bool direct, const struct quick_pattern *p);

/*
 * The scratch file's size in dir: requested (0 for the default), or, for the default, a
 * quarter of the free space when that is less.  \return 0, or -ENOSPC when less than
 * QUICK_MIN_SIZE (or than requested) is free (*free_bytes says how much), or -errno.
 */
int quick_choose_size(const char *dir, uint64_t requested, uint64_t *size, uint64_t *free_bytes);

/* GB/s of a result, reads and writes together. */
double quick_gbps(const struct llmio_result *r);

/* What a pattern's best line names, for direct or page-cache results. */
struct quick_best {
	/* the best finished result at the pattern's depth (NULL when none ran there) */
	const struct llmio_result *at;
	/*
	 * a synchronous engine's QD 1 run of a deeper pattern, named beside it when it beat
	 * the best at the depth or when nothing ran there; NULL otherwise
	 */
	const struct llmio_result *low;
};

/*
 * The best of pattern p among n results (pat[i] is res[i]'s pattern): highest GB/s, GB/s
 * per core breaking ties within 3%; interrupted results are never ranked.
 */
void quick_best(struct llmio_result *const *res, const struct quick_pattern *const *pat, size_t n,
                const struct quick_pattern *p, bool direct, struct quick_best *best);

#endif
