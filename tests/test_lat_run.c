/* SPDX-License-Identifier: MIT */
/*
 * The worker's runs of equal latencies (src/job/lat_run.h) give the clat and lat histograms
 * that one add per I/O gives, bit for bit: batches of completions with shared, differing and
 * interleaved timestamps, both directions, and single I/Os.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "base/rand.h"
#include "job/lat_run.h"

struct done_io {
	int op;
	uint64_t t_submit, t_queue;
};

static void reset(struct llmio_op_result st[2])
{
	memset(st, 0, 2 * sizeof(*st));
	for (int op = 0; op < 2; op++) {
		llmio_hist_init(&st[op].clat);
		llmio_hist_init(&st[op].lat);
	}
}

static void assert_same(const struct llmio_op_result *a, const struct llmio_op_result *b)
{
	for (int op = 0; op < 2; op++) {
		assert_memory_equal(&a[op].clat, &b[op].clat, sizeof(a[op].clat));
		assert_memory_equal(&a[op].lat, &b[op].lat, sizeof(a[op].lat));
	}
}

/* One reap of n completions seen at t: both ways, into one and into runs. */
static void reap_both(struct llmio_op_result *one, struct llmio_op_result *runs,
                      const struct done_io *d, unsigned n, uint64_t t)
{
	struct lat_run run = {NULL, 0, 0, 0};

	for (unsigned i = 0; i < n; i++) {
		llmio_hist_add(&one[d[i].op].clat, t - d[i].t_submit);
		llmio_hist_add(&one[d[i].op].lat, t - d[i].t_queue);
		lat_run_add(&run, &runs[d[i].op], t, d[i].t_submit, d[i].t_queue);
	}
	lat_run_flush(&run, t);
}

static void equal_to_one_add_per_io(void **state)
{
	static struct llmio_op_result one[2], runs[2];
	struct done_io d[64];
	struct rng r;
	uint64_t t = 1000000;
	unsigned total = 0;

	(void)state;
	reset(one);
	reset(runs);
	rng_seed(&r, 42);
	for (int round = 0; round < 20000; round++) {
		/* a reap: up to 64 completions from up to 4 submit batches, either direction */
		unsigned n = (unsigned)rng_below(&r, 65), batches = 1 + (unsigned)rng_below(&r, 4);
		uint64_t sub[4], que[4];

		/* batches that share one of the two timestamps but not the other, too */
		for (unsigned b = 0; b < batches; b++) {
			que[b] = b && !rng_below(&r, 3) ? que[0]
			                                : t - 10000 - rng_below(&r, 5000000);
			sub[b] = b && !rng_below(&r, 3)
			                 ? sub[0]
			                 : que[b] + rng_below(&r, 3) * rng_below(&r, 2000);
		}
		for (unsigned i = 0; i < n; i++) {
			/* mostly in runs, sometimes interleaved, so both run ends are exercised */
			unsigned b = rng_below(&r, 8) ? (i * batches) / (n ? n : 1)
			                              : (unsigned)rng_below(&r, batches);

			d[i] = (struct done_io){(int)rng_below(&r, 4) == 0, sub[b], que[b]};
		}
		reap_both(one, runs, d, n, t);
		total += n;
		t += 1 + rng_below(&r, 100000);
	}
	assert_same(one, runs);
	assert_int_equal(one[0].clat.count + one[1].clat.count, total);
	assert_true(one[0].clat.count > 0 && one[1].clat.count > 0);
}

/* A run flushed with nothing pending, and one I/O alone, are what single adds give. */
static void empty_and_single(void **state)
{
	static struct llmio_op_result one[2], runs[2];
	struct lat_run run = {NULL, 0, 0, 0};
	const struct done_io d = {1, 500, 400};

	(void)state;
	reset(one);
	reset(runs);
	lat_run_flush(&run, 900);
	assert_same(one, runs);
	reap_both(one, runs, &d, 1, 900);
	assert_same(one, runs);
	assert_int_equal(runs[1].clat.count, 1);
	assert_int_equal(runs[1].clat.sum, 400);
	assert_int_equal(runs[1].lat.min, 500);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(equal_to_one_add_per_io),
	        cmocka_unit_test(empty_and_single),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
