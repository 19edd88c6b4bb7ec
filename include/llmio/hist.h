/* SPDX-License-Identifier: MIT */
/*
 * Latency histogram: a fixed log-linear table of counters (see src/stats/hist.c for the error
 * bound).  Histograms are plain data: they merge exactly across threads, phases, runs and
 * ranks by adding bucket counts.  Not thread-safe: each thread owns its own.
 */
#ifndef LLMIO_HIST_H
#define LLMIO_HIST_H

#include <stdbool.h>
#include <stdint.h>
#include "llmio/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Values below 2^LLMIO_HIST_LINEAR_BITS are counted exactly, one bucket per value. */
#define LLMIO_HIST_LINEAR_BITS 7
/** Each power of two above that is split into 2^LLMIO_HIST_SUB_BITS equal buckets. */
#define LLMIO_HIST_SUB_BITS 6
/** Largest exponent kept; larger values (2^48 ns, about 78 hours) land in the last bucket. */
#define LLMIO_HIST_MAX_EXP 47
#define LLMIO_HIST_BUCKETS                                                                         \
	((1u << LLMIO_HIST_LINEAR_BITS) +                                                          \
	 (LLMIO_HIST_MAX_EXP - LLMIO_HIST_LINEAR_BITS + 1) * (1u << LLMIO_HIST_SUB_BITS))

struct llmio_hist {
	uint64_t count;
	uint64_t sum; /* sum of the exact values, for the mean */
	uint64_t min; /* exact, UINT64_MAX when empty */
	uint64_t max; /* exact */
	uint64_t bucket[LLMIO_HIST_BUCKETS];
};

/** Reset to empty. */
LLMIO_API void llmio_hist_init(struct llmio_hist *h);

/** Bucket index of a value (ns); exposed for tests and for tools that read raw buckets. */
static inline unsigned llmio_hist_index(uint64_t v)
{
	const unsigned lin = 1u << LLMIO_HIST_LINEAR_BITS;
	unsigned e, sub;

	if (v < lin)
		return (unsigned)v;
	e = 63u - (unsigned)__builtin_clzll(v);
	if (e > LLMIO_HIST_MAX_EXP)
		return LLMIO_HIST_BUCKETS - 1;
	sub = (unsigned)(v >> (e - LLMIO_HIST_SUB_BITS)) & ((1u << LLMIO_HIST_SUB_BITS) - 1);
	return lin + ((e - LLMIO_HIST_LINEAR_BITS) << LLMIO_HIST_SUB_BITS) + sub;
}

/** Count one value; inline because it is on the per-I/O path. */
static inline void llmio_hist_add(struct llmio_hist *h, uint64_t v)
{
	h->bucket[llmio_hist_index(v)]++;
	h->count++;
	h->sum += v;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
}

/** Count n equal values at once (one batch of I/Os timed together). */
static inline void llmio_hist_add_n(struct llmio_hist *h, uint64_t v, uint64_t n)
{
	h->bucket[llmio_hist_index(v)] += n;
	h->count += n;
	h->sum += v * n;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
}

/** Lowest value that falls in bucket idx. */
LLMIO_API uint64_t llmio_hist_bucket_low(unsigned idx);
/** Value reported for bucket idx: its midpoint (exact in the linear range). */
LLMIO_API uint64_t llmio_hist_bucket_value(unsigned idx);

/** dst += src, exactly. */
LLMIO_API void llmio_hist_merge(struct llmio_hist *dst, const struct llmio_hist *src);

/**
 * Value at percentile p (0 < p <= 100): the bucket holding the ceil(p/100 * count)-th smallest
 * value, reported as that bucket's midpoint clamped to [min, max].  Relative error <= 1/128.
 * \return 0 for an empty histogram.
 */
LLMIO_API uint64_t llmio_hist_percentile(const struct llmio_hist *h, double p);

/** Mean of the exact values; 0 when empty. */
LLMIO_API double llmio_hist_mean(const struct llmio_hist *h);

#ifdef __cplusplus
}
#endif
#endif
