/* SPDX-License-Identifier: MIT */
/* The latency histogram: bucket mapping, the 1 % error bound against exact percentiles of
 * 10^6 random values, and merging equal to counting everything in one. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "base/rand.h"
#include "llmio/hist.h"

#define N 1000000

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void mapping(void **state)
{
	(void)state;
	for (uint64_t v = 0; v < 128; v++)
		assert_int_equal(llmio_hist_bucket_value(llmio_hist_index(v)), v);
	/* every bucket's low value maps back to it, and the one below maps to the previous */
	for (unsigned i = 1; i < LLMIO_HIST_BUCKETS - 1; i++) {
		uint64_t lo = llmio_hist_bucket_low(i);

		assert_int_equal(llmio_hist_index(lo), i);
		assert_int_equal(llmio_hist_index(lo - 1), i - 1);
		assert_true(llmio_hist_bucket_low(i + 1) > lo);
	}
	assert_int_equal(llmio_hist_index(UINT64_MAX), LLMIO_HIST_BUCKETS - 1);
}

/* Values spread over six decades (100 ns .. 100 ms), like real latencies with a long tail. */
static uint64_t sample(struct rng *r)
{
	return (uint64_t)(100.0 * pow(10.0, 6.0 * rng_unit(r) * rng_unit(r)));
}

static void error_bound(void **state)
{
	static const double pct[] = {1, 10, 50, 90, 99, 99.9, 99.99, 100};
	uint64_t *v = malloc(N * sizeof(*v));
	struct llmio_hist *h = malloc(sizeof(*h));
	struct rng r;

	(void)state;
	assert_non_null(v);
	assert_non_null(h);
	rng_seed(&r, 42);
	llmio_hist_init(h);
	for (size_t i = 0; i < N; i++) {
		v[i] = sample(&r);
		llmio_hist_add(h, v[i]);
	}
	qsort(v, N, sizeof(*v), cmp_u64);
	assert_int_equal(h->count, N);
	assert_int_equal(h->min, v[0]);
	assert_int_equal(h->max, v[N - 1]);
	for (size_t i = 0; i < sizeof(pct) / sizeof(pct[0]); i++) {
		size_t rank = (size_t)ceil(pct[i] / 100.0 * N); /* nearest-rank, 1-based */
		double exact = (double)v[rank - 1];
		double got = (double)llmio_hist_percentile(h, pct[i]);

		assert_true(fabs(got - exact) <= exact / 128.0 + 0.5);
	}
	free(v);
	free(h);
}

static void merge_equals_combined(void **state)
{
	struct llmio_hist *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b)),
	                  *all = malloc(sizeof(*all));
	struct rng r;

	(void)state;
	rng_seed(&r, 7);
	llmio_hist_init(a);
	llmio_hist_init(b);
	llmio_hist_init(all);
	for (int i = 0; i < 100000; i++) {
		uint64_t x = sample(&r);

		llmio_hist_add(i % 3 ? a : b, x);
		llmio_hist_add(all, x);
	}
	llmio_hist_merge(a, b);
	assert_memory_equal(a, all, sizeof(*a));
	for (double p = 0.5; p <= 100; p += 0.5)
		assert_int_equal(llmio_hist_percentile(a, p), llmio_hist_percentile(all, p));
	free(a);
	free(b);
	free(all);
}

static void empty_and_batch(void **state)
{
	struct llmio_hist *h = malloc(sizeof(*h));

	(void)state;
	llmio_hist_init(h);
	assert_int_equal(llmio_hist_percentile(h, 99), 0);
	assert_true(llmio_hist_mean(h) == 0);
	llmio_hist_add_n(h, 1000, 10);
	assert_int_equal(h->count, 10);
	assert_true(fabs(llmio_hist_mean(h) - 1000) < 1e-9);
	assert_int_equal(llmio_hist_percentile(h, 50), 1000); /* clamped to min = max */
	free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(mapping),
	        cmocka_unit_test(error_bound),
	        cmocka_unit_test(merge_equals_combined),
	        cmocka_unit_test(empty_and_batch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
