/* SPDX-License-Identifier: MIT */
/* Random generators: uniform coverage, Zipf shape, determinism under a seed. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
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

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(uniform_coverage),
	        cmocka_unit_test(zipf_shape),
	        cmocka_unit_test(deterministic),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
