/* SPDX-License-Identifier: MIT */
/*
 * fio's latency_target search (src/job/lat_target.c) fed made-up windows: each case's depth
 * sequence was worked by hand from fio 3.33's io_u.c (lat_target_success,
 * __lat_target_failed, lat_target_check), step by step in the comments.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "job/lat_target.h"

#define W 100 /* window, ns */

/* One window of n I/Os, `late` of them over the target, ending at *t; returns the step. */
static enum lat_target_step window(struct lat_target *lt, uint64_t *t, uint64_t *ios, unsigned n,
                                   unsigned late)
{
	bool fatal = false;

	for (unsigned i = 0; i < n; i++) {
		(*ios)++;
		if (i < late)
			fatal |= lat_target_miss(lt, *t, *ios);
	}
	assert_false(fatal);
	*t += W;
	return lat_target_check(lt, *t, *ios);
}

/* Every window passes: 1 doubles to the job's iodepth, then one final window, then done. */
static void test_met(void **state)
{
	struct lat_target lt;
	uint64_t t = 0, ios = 0;
	const uint32_t want[] = {2, 4, 8, 16};

	(void)state;
	lat_target_init(&lt, 1000, W, 99.0, 16, false, t, ios);
	assert_int_equal(lt.qd, 1);
	for (unsigned i = 0; i < 4; i++) {
		assert_int_equal(window(&lt, &t, &ios, 10, 0), LAT_TARGET_GO);
		assert_int_equal(lt.qd, want[i]);
	}
	assert_int_equal(window(&lt, &t, &ios, 10, 0), LAT_TARGET_RESET); /* 32 capped: same */
	assert_int_equal(lt.qd, 16);
	assert_int_equal(window(&lt, &t, &ios, 10, 0), LAT_TARGET_DONE);
	assert_int_equal(lt.qd, 16);
}

/* A window not over yet decides nothing. */
static void test_window_open(void **state)
{
	struct lat_target lt;

	(void)state;
	lat_target_init(&lt, 1000, W, 99.0, 16, false, 0, 0);
	assert_int_equal(lat_target_check(&lt, W - 1, 50), LAT_TARGET_GO);
	assert_int_equal(lt.qd, 1);
	assert_int_equal(lat_target_check(&lt, W, 50), LAT_TARGET_GO);
	assert_int_equal(lt.qd, 2);
}

/*
 * Depth 8 fails (2 of 10 late, 80 % < 90 %): 2, 4, 8, then (8+4)/2 = 6, (6+8)/2 = 7,
 * (7+8)/2 = 7 again: the final window, and done.
 */
static void test_bisect(void **state)
{
	struct lat_target lt;
	uint64_t t = 0, ios = 0;

	(void)state;
	lat_target_init(&lt, 1000, W, 90.0, 16, false, t, ios);
	window(&lt, &t, &ios, 10, 1); /* 90 % meets 90 % */
	assert_int_equal(lt.qd, 2);
	window(&lt, &t, &ios, 10, 0);
	window(&lt, &t, &ios, 10, 0);
	assert_int_equal(lt.qd, 8);
	assert_int_equal(window(&lt, &t, &ios, 10, 2), LAT_TARGET_GO);
	assert_int_equal(lt.qd, 6);
	window(&lt, &t, &ios, 10, 0);
	assert_int_equal(lt.qd, 7);
	assert_int_equal(window(&lt, &t, &ios, 10, 0), LAT_TARGET_RESET);
	assert_int_equal(lt.qd, 7);
	assert_int_equal(window(&lt, &t, &ios, 10, 0), LAT_TARGET_DONE);
}

/* latency_run: three passes one below the failing depth try one deeper (fio's heuristic). */
static void test_run_creeps(void **state)
{
	struct lat_target lt;
	uint64_t t = 0, ios = 0;

	(void)state;
	lat_target_init(&lt, 1000, W, 90.0, 16, true, t, ios);
	window(&lt, &t, &ios, 10, 0);
	window(&lt, &t, &ios, 10, 0);
	window(&lt, &t, &ios, 10, 0);
	window(&lt, &t, &ios, 10, 5); /* 8 fails: 6 */
	window(&lt, &t, &ios, 10, 0); /* 7, high 8 */
	assert_int_equal(lt.qd, 7);
	assert_int_equal(window(&lt, &t, &ios, 10, 0), LAT_TARGET_GO); /* stable 1 */
	assert_int_equal(window(&lt, &t, &ios, 10, 0), LAT_TARGET_GO); /* stable 2 */
	assert_int_equal(lt.qd, 7);
	assert_int_equal(window(&lt, &t, &ios, 10, 0), LAT_TARGET_GO); /* 3: high 9, (7+9)/2 */
	assert_int_equal(lt.qd, 8);
}

/* latency_percentile 100: each late I/O steps down at once; at depth 1 the job fails. */
static void test_pct100(void **state)
{
	struct lat_target lt;
	uint64_t t = 0, ios = 0;

	(void)state;
	lat_target_init(&lt, 1000, W, 100.0, 16, false, t, ios);
	window(&lt, &t, &ios, 10, 0);
	window(&lt, &t, &ios, 10, 0);
	assert_int_equal(lt.qd, 4);
	assert_false(lat_target_miss(&lt, t, ++ios)); /* high 4, (4+2)/2 */
	assert_int_equal(lt.qd, 3);
	assert_false(lat_target_miss(&lt, t, ++ios)); /* high 3, (3+2)/2 */
	assert_int_equal(lt.qd, 2);
	assert_false(lat_target_miss(&lt, t, ++ios)); /* low was 2: 1, (2+1)/2 */
	assert_int_equal(lt.qd, 1);
	assert_true(lat_target_miss(&lt, t, ++ios));
}

/* An impossible target under a percentile: depth 1 stays, its window judged at every check. */
static void test_impossible(void **state)
{
	struct lat_target lt;
	uint64_t t = 0, ios = 0;

	(void)state;
	lat_target_init(&lt, 1, W, 50.0, 16, false, t, ios);
	for (unsigned i = 0; i < 5; i++) {
		assert_int_equal(window(&lt, &t, &ios, 10, 10), LAT_TARGET_GO);
		assert_int_equal(lt.qd, 1);
	}
	assert_int_equal(lt.t_cycle, 0); /* fio leaves the window open at depth 1 */
}

/* A window with no completions fails (fio's 0/0 compares false). */
static void test_empty_window(void **state)
{
	struct lat_target lt;
	uint64_t t = 0, ios = 0;

	(void)state;
	lat_target_init(&lt, 1000, W, 90.0, 16, false, t, ios);
	window(&lt, &t, &ios, 10, 0);
	assert_int_equal(lt.qd, 2);
	window(&lt, &t, &ios, 0, 0);
	assert_int_equal(lt.qd, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_met),          cmocka_unit_test(test_window_open),
	        cmocka_unit_test(test_bisect),       cmocka_unit_test(test_run_creeps),
	        cmocka_unit_test(test_pct100),       cmocka_unit_test(test_impossible),
	        cmocka_unit_test(test_empty_window),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
