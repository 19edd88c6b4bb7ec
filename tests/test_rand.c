/* SPDX-License-Identifier: MIT */
/* Random generators: uniform coverage, Zipf shape, determinism under a seed. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "base/rand.h"

static void uniform_coverage(void **state)
{
	enum { K = 1000, DRAWS = 2000000 };
	uint32_t *count = calloc(K, sizeof(*count));
	double chi2 = 0, expect = (double)DRAWS / K;
	struct rng r;

	(void)state;
	rng_seed(&r, 1);
	for (int i = 0; i < DRAWS; i++)
		count[rng_below(&r, K)]++;
	for (int k = 0; k < K; k++) {
		assert_true(count[k] > 0); /* every block reached */
		chi2 += (count[k] - expect) * (count[k] - expect) / expect;
	}
	/* chi-square with 999 degrees of freedom: mean 999, sd ~44.7; 6 sd is far out */
	assert_true(chi2 < 999 + 6 * 44.7);
	free(count);
}

static void zipf_shape(void **state)
{
	static const double thetas[] = {0.8, 1.0, 1.2};
	enum { N = 100000, DRAWS = 2000000 };

	(void)state;
	for (size_t t = 0; t < sizeof(thetas) / sizeof(thetas[0]); t++) {
		uint32_t *count = calloc(N, sizeof(*count));
		double theta = thetas[t], norm = 0;
		struct zipf z;
		struct rng r;

		rng_seed(&r, 3);
		zipf_init(&z, N, theta);
		for (int i = 0; i < DRAWS; i++) {
			uint64_t k = zipf_next(&z, &r);

			assert_true(k < N);
			count[k]++;
		}
		for (int k = 1; k <= N; k++)
			norm += pow(k, -theta);
		/* the first ranks match the pmf 1/(k^theta * H) within 3 % */
		for (int k = 1; k <= 5; k++) {
			double expect = DRAWS * pow(k, -theta) / norm;

			assert_true(fabs(count[k - 1] - expect) < 0.03 * expect);
		}
		/* and rank 1 : rank 2 is 2^theta */
		assert_true(fabs((double)count[0] / count[1] - pow(2, theta)) <
		            0.05 * pow(2, theta));
		free(count);
	}
}

static void deterministic(void **state)
{
	struct rng a, b, c;
	int differ = 0;

	(void)state;
	rng_seed(&a, 99);
	rng_seed(&b, 99);
	rng_seed(&c, 100);
	for (int i = 0; i < 1000; i++) {
		uint64_t x = rng_next(&a);

		assert_int_equal(x, rng_next(&b));
		differ += x != rng_next(&c);
	}
	assert_true(differ > 990);
}

/* The random map: every slot exactly once per pass, for sizes around powers of 4, and a new
 * order each pass */
static void randmap_permutes(void **state)
{
	static const uint64_t sizes[] = {1, 2, 3, 4, 5, 15, 16, 17, 1000, 4095, 4096, 4097, 65537};
	struct rng r;

	(void)state;
	rng_seed(&r, 7);
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		const uint64_t n = sizes[s];
		uint8_t *seen = calloc(n, 1);
		uint64_t first[2] = {0, 0};
		struct randmap m;

		assert_non_null(seen);
		randmap_init(&m, n, &r);
		for (int pass = 0; pass < 2; pass++) {
			memset(seen, 0, n);
			for (uint64_t i = 0; i < n; i++) {
				const uint64_t x = randmap_next(&m, &r);

				assert_true(x < n);
				assert_int_equal(seen[x], 0);
				seen[x] = 1;
				if (i < 2)
					first[pass] = first[pass] * n + x;
			}
		}
		if (n >= 1000) /* a new key: another order (equal by chance: 1 in n^2) */
			assert_true(first[0] != first[1]);
		free(seen);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(uniform_coverage),
	        cmocka_unit_test(zipf_shape),
	        cmocka_unit_test(deterministic),
	        cmocka_unit_test(randmap_permutes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
