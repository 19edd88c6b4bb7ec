/* SPDX-License-Identifier: MIT */
/*
 * Log-linear latency histogram.
 *
 * Error bound.  Values v < 2^7 = 128 ns have one bucket each and are exact.  Above that, the
 * power of two [2^e, 2^(e+1)) is split into 2^6 = 64 equal buckets of width 2^(e-6), so a
 * bucket's width relative to its lowest value is 2^(e-6) / ((64 + sub) * 2^(e-6)) =
 * 1 / (64 + sub) <= 1/64.  Reporting the bucket's midpoint halves that: any value in the
 * bucket is within 1/128 (0.78 %) of the reported one, which is the <= 1 % bound the
 * percentiles promise.  (fio's stat.h uses the same scheme with the same 6 sub-bits.)
 *
 * Size.  Exponents 7..47 (up to 2^48 ns, 78 hours) take 41 x 64 buckets plus 128 linear ones:
 * 2752 counters, 22 KiB per histogram; a worker keeps three per op type.  Adding is an index
 * computation with one clz and an increment: no allocation, no branch on the value's size
 * beyond the linear test.
 */
#include <string.h>

#include "llmio/hist.h"

void llmio_hist_init(struct llmio_hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

uint64_t llmio_hist_bucket_low(unsigned idx)
{
	const unsigned lin = 1u << LLMIO_HIST_LINEAR_BITS;
	unsigned e, sub;

	if (idx < lin)
		return idx;
	idx -= lin;
	e = LLMIO_HIST_LINEAR_BITS + (idx >> LLMIO_HIST_SUB_BITS);
	sub = idx & ((1u << LLMIO_HIST_SUB_BITS) - 1);
	return ((uint64_t)(1u << LLMIO_HIST_SUB_BITS) + sub) << (e - LLMIO_HIST_SUB_BITS);
}

uint64_t llmio_hist_bucket_value(unsigned idx)
{
	const unsigned lin = 1u << LLMIO_HIST_LINEAR_BITS;
	unsigned e;

	if (idx < lin)
		return idx;
	e = LLMIO_HIST_LINEAR_BITS + ((idx - lin) >> LLMIO_HIST_SUB_BITS);
	return llmio_hist_bucket_low(idx) + ((uint64_t)1 << (e - LLMIO_HIST_SUB_BITS)) / 2;
}

void llmio_hist_merge(struct llmio_hist *dst, const struct llmio_hist *src)
{
	if (!src->count)
		return;
	for (unsigned i = 0; i < LLMIO_HIST_BUCKETS; i++)
		dst->bucket[i] += src->bucket[i];
	dst->count += src->count;
	dst->sum += src->sum;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
}

uint64_t llmio_hist_percentile(const struct llmio_hist *h, double p)
{
	uint64_t rank, seen = 0, v;

	if (!h->count)
		return 0;
	if (p <= 0)
		return h->min;
	if (p >= 100)
		return h->max;
	/* the ceil(p/100 * n)-th smallest value (1-based), as in the nearest-rank definition */
	rank = (uint64_t)((p / 100.0) * (double)h->count);
	if ((double)rank < (p / 100.0) * (double)h->count)
		rank++;
	if (rank == 0)
		rank = 1;
	for (unsigned i = 0; i < LLMIO_HIST_BUCKETS; i++) {
		seen += h->bucket[i];
		if (seen < rank)
			continue;
		v = llmio_hist_bucket_value(i);
		if (v < h->min)
			v = h->min;
		if (v > h->max)
			v = h->max;
		return v;
	}
	return h->max;
}

double llmio_hist_mean(const struct llmio_hist *h)
{
	return h->count ? (double)h->sum / (double)h->count : 0.0;
}
