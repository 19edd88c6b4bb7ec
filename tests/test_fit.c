/* SPDX-License-Identifier: MIT */
/*
 * The power-law fit of trace reports (src/trace/trace_fit.c) on samples whose law is known,
 * drawn here by inversion from a generator of this file's own (not llmio's): the exponent of a
 * power law is recovered within 5 % at 10^4 files (and its xmin where a uniform body lies below
 * it), the verdict is "power law"; lognormal and exponential samples are called "not a power
 * law", with the likelihood ratio favouring the alternative; the Gini coefficient of known
 * shapes; too few values are not fitted.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "trace/trace_fit.h"

#define N 10000

/* a 64-bit LCG (Knuth's MMIX constants): uniform in (0, 1) */
static uint64_t lcg = 12345;
static double unit(void)
{
	lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
	return ((double)(lcg >> 11) + 0.5) * 0x1.0p-53;
}

static double normal(void)
{
	return sqrt(-2 * log(unit())) * cos(2 * M_PI * unit());
}

static double *power_law(double alpha, double xmin, size_t n)
{
	double *x = malloc(n * sizeof(*x));

	assert_non_null(x);
	for (size_t i = 0; i < n; i++)
		x[i] = floor(xmin * pow(unit(), -1 / (alpha - 1)));
	return x;
}

static void recovers(double alpha)
{
	double *x = power_law(alpha, 4096, N);
	struct fit_result r;

	assert_int_equal(trace_fit_power_law(x, N, 100, &r), 0);
	print_message("alpha %.2f: fitted %.4f +- %.4f, xmin %.0f (%zu in the tail), D %.4f, "
	              "p %.2f, vs lognormal R %.2f p %.2f, vs exponential R %.2f p %.3g: %s\n",
	              alpha, r.alpha, r.sigma, r.xmin, r.n_tail, r.ks, r.p_gof, r.lognormal.R,
	              r.lognormal.p, r.exponential.R, r.exponential.p, trace_fit_verdict(&r));
	assert_true(r.fitted);
	assert_true(fabs(r.alpha - alpha) / alpha < 0.05);
	assert_true(r.sigma > 0 && r.sigma < 0.05 * alpha);
	assert_true(r.p_gof >= 0.1);
	assert_true(r.exponential.R > 0 && r.exponential.p < 0.1); /* a power law beats it */
	assert_string_equal(trace_fit_verdict(&r), "power law");
	free(x);
}

static void alpha_2(void **state)
{
	(void)state;
	recovers(2.0);
}

static void alpha_2_5(void **state)
{
	(void)state;
	recovers(2.5);
}

static void alpha_3(void **state)
{
	(void)state;
	recovers(3.0);
}

/* a power law above 64 KiB, a uniform body below it: xmin is found near 64 KiB */
static void finds_xmin(void **state)
{
	double *x = power_law(2.2, 65536, N);
	struct fit_result r;

	(void)state;
	for (size_t i = 0; i < N / 2; i++)
		x[i] = floor(1024 + unit() * (65536 - 1024));
	assert_int_equal(trace_fit_power_law(x, N, 50, &r), 0);
	print_message("body + tail: xmin %.0f, alpha %.4f, tail %zu\n", r.xmin, r.alpha, r.n_tail);
	assert_true(r.xmin >= 65536 * 0.7 && r.xmin <= 65536 * 2.5);
	assert_true(fabs(r.alpha - 2.2) / 2.2 < 0.05);
	free(x);
}

static void lognormal(void **state)
{
	double *x = malloc(N * sizeof(*x));
	struct fit_result r;

	(void)state;
	for (size_t i = 0; i < N; i++)
		x[i] = floor(exp(12 + 1.0 * normal()));
	assert_int_equal(trace_fit_power_law(x, N, 100, &r), 0);
	print_message("lognormal: alpha %.3f, xmin %.0f (%zu), p %.2f, vs lognormal R %.2f p %.3g "
	              "(mu %.2f sigma %.2f): %s\n",
	              r.alpha, r.xmin, r.n_tail, r.p_gof, r.lognormal.R, r.lognormal.p,
	              r.lognormal.param1, r.lognormal.param2, trace_fit_verdict(&r));
	assert_string_equal(trace_fit_verdict(&r), "not a power law");
	assert_true(r.p_gof < 0.1 || (r.lognormal.R < 0 && r.lognormal.p < 0.1));
	assert_true(r.lognormal.R < 0); /* the likelihood ratio leans to the lognormal */
	free(x);
}

static void exponential(void **state)
{
	double *x = malloc(N * sizeof(*x));
	struct fit_result r;

	(void)state;
	for (size_t i = 0; i < N; i++)
		x[i] = floor(4096 - 100000 * log(unit()));
	assert_int_equal(trace_fit_power_law(x, N, 100, &r), 0);
	print_message("exponential: alpha %.3f, p %.2f, vs exponential R %.2f p %.3g: %s\n",
	              r.alpha, r.p_gof, r.exponential.R, r.exponential.p, trace_fit_verdict(&r));
	assert_string_equal(trace_fit_verdict(&r), "not a power law");
	free(x);
}

static void gini(void **state)
{
	double x[100];

	(void)state;
	for (int i = 0; i < 100; i++)
		x[i] = 7;
	assert_true(fabs(trace_fit_gini(x, 100)) < 1e-12);
	memset(x, 0, sizeof(x));
	x[42] = 5;
	assert_true(fabs(trace_fit_gini(x, 100) - 0.99) < 1e-12); /* (n - 1) / n */
	for (int i = 0; i < 100; i++)
		x[i] = i + 1; /* uniform 1..n: (n - 1) / (3n) */
	assert_true(fabs(trace_fit_gini(x, 100) - 99.0 / 300) < 1e-12);
}

static void too_few(void **state)
{
	double x[FIT_MIN_N - 1];
	struct fit_result r;

	(void)state;
	for (int i = 0; i < FIT_MIN_N - 1; i++)
		x[i] = 1000 * (i + 1);
	assert_int_equal(trace_fit_power_law(x, FIT_MIN_N - 1, 10, &r), 0);
	assert_false(r.fitted);
	assert_string_equal(trace_fit_verdict(&r), "too few files");
	assert_true(r.gini > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(alpha_2),   cmocka_unit_test(alpha_2_5),
	        cmocka_unit_test(alpha_3),   cmocka_unit_test(finds_xmin),
	        cmocka_unit_test(lognormal), cmocka_unit_test(exponential),
	        cmocka_unit_test(gini),      cmocka_unit_test(too_few),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
