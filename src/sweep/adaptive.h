/* SPDX-License-Identifier: MIT */
/*
 * The adaptive sweep (`llmio sweep --adaptive`, docs/sweeps.md, "Adaptive sweeps"): the
 * per-phase answers of `llmio advise` from a fraction of a job file's points.  The search
 * knows nothing of how a point is measured or how an answer is chosen: the caller gives it an
 * evaluator (the real runner, or a lookup in a journal measured before, for tests) and a
 * scorer (the advisor over what has been measured so far).
 *
 * Ordered axes: bs, iodepth, numjobs.  A point's "group" is every other key (the datapath,
 * rw, the target ...).  Assumptions (the ways the search may miss the full sweep's answer):
 *  A1 a throughput metric does not fall as bs grows, and latency and IOPS do not improve as
 *     bs grows, so within one group a phase class is decided at its largest bs (throughput)
 *     or its smallest (latency);
 *  A2 along iodepth and numjobs the metric has one peak (unimodal): when a neighbour on both
 *     sides of the best point is no better, the points beyond are no better either;
 *  A3 a datapath that is behind the best one, at the best one's settings, by more than the
 *     tie tolerance does not win at settings of its own; one within the tolerance (a tie)
 *     is refined around its own best like the winner.
 */
#ifndef LLMIO_SWEEP_ADAPTIVE_H
#define LLMIO_SWEEP_ADAPTIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sweep/sweep.h"
#include "base/error.h"

#define ADAPT_MAX_ANSWERS 32
#define ADAPT_MAX_PATHS   16

/* One datapath's best measured point in a phase class, as the scorer ranks them. */
struct adapt_path {
	uint64_t hash; /* config_hash of its best point */
	double value;  /* the ranking metric (GB/s, or p99 ns when latency) */
};

/* One per-phase answer of the scorer. */
struct adapt_answer {
	unsigned cls, svc; /* the scorer's phase class and service class */
	bool latency;      /* ranked by latency: lower value is better */
	uint64_t best;     /* config_hash of the answer's point (0: no answer) */
	uint64_t lead;     /* latency: the point of the most IOPS, which sets who may compete */
	size_t npaths;     /* datapaths ranked, best first */
	struct adapt_path path[ADAPT_MAX_PATHS];
	char phase[64];     /* "inference, device": the phase and who served it */
	char datapath[128]; /* the answer: "io_uring sqpoll=1" */
	char settings[192]; /* "rw=randread bs=4 KiB iodepth=1 numjobs=1 direct=1" */
};

struct adapt_answers {
	size_t n;
	struct adapt_answer a[ADAPT_MAX_ANSWERS];
};

struct adapt_ops {
	/*
	 * Measure point idx of the plan (every repeat of it), so that answers() sees it.
	 * \return 0 (a point that failed is measured too: its record holds the error), or
	 *         -errno with a message to stop the search.
	 */
	int (*eval)(void *arg, size_t idx, struct llmio_error *e);
	/* The per-phase answers from the points measured so far. */
	int (*answers)(void *arg, struct adapt_answers *out, struct llmio_error *e);
	/* The phase classes of a point (a bit mask), and in *latency those ranked by latency. */
	unsigned (*classes)(void *arg, const struct sweep_config *c, unsigned *latency);
	void *arg;
};

struct adapt_opts {
	unsigned repeats; /* hashes of repeats 0 .. repeats-1 name the same point (>= 1) */
	double tie_pct;   /* datapaths within this percent of the best are refined too */
};

struct adapt_stats {
	size_t points;    /* in the plan */
	size_t evaluated; /* measured by the search */
	size_t rounds;
};

/*
 * Run the search over plan's points.  \return 0 with the answers of the points measured in
 * *out (may be NULL), or the first -errno of ops (with its message).
 */
int sweep_adaptive(const struct sweep_file *f, const struct sweep_plan *plan,
                   const struct adapt_opts *o, const struct adapt_ops *ops,
                   struct adapt_answers *out, struct adapt_stats *st, struct llmio_error *e);

/*
 * Compare two answer sets (the adaptive one and the full sweep's): *same_paths when every
 * phase has the same datapath, *same_settings when its settings are the same too; a phase in
 * one set only is a difference.  \return the number of phases compared.
 */
size_t adapt_compare(const struct adapt_answers *a, const struct adapt_answers *b, bool *same_paths,
                     bool *same_settings);

#endif
