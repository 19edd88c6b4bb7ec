/* SPDX-License-Identifier: MIT */
/*
 * The plan of `llmio quick` (src/sweep/quick.c): which engines run which pattern, each
 * point's job options, the scratch size, and the best engine of a pattern chosen from
 * made-up results: GB/s first, GB/s per core within 3%, interrupted results never ranked, a
 * synchronous engine's QD 1 run named only when it beat the deeper ones.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sweep/quick.h"

static const struct quick_pattern *find(const char *name, uint32_t qd)
{
	for (size_t i = 0; i < quick_npatterns; i++)
		if (!strcmp(quick_patterns[i].name, name) && quick_patterns[i].iodepth == qd)
			return &quick_patterns[i];
	fail_msg("no pattern %s QD%u", name, qd);
	return NULL;
}

static void patterns_and_engines(void **state)
{
	struct llmio_engine_info sync = {.name = "psync", .async = false};
	struct llmio_engine_info async = {.name = "libaio", .async = true};
	size_t sync_runs = 0;

	(void)state;
	/* inference: 4k and 128k random reads at QD 1 and 32; training: 1m seq read and write */
	assert_int_equal(quick_npatterns, 6);
	assert_int_equal(find("4k rand read", 32)->bs, 4096);
	assert_int_equal(find("1m seq write", 8)->rw, LLMIO_RW_WRITE);
	assert_string_equal(find("1m seq read", 8)->phase, "training");
	for (size_t i = 0; i < quick_npatterns; i++) {
		assert_true(quick_engine_runs(&async, &quick_patterns[i]));
		sync_runs += quick_engine_runs(&sync, &quick_patterns[i]);
	}
	/* a synchronous engine leaves out the QD 32 random patterns (its QD 1 run again) */
	assert_int_equal(sync_runs, 4);
	assert_false(quick_engine_runs(&sync, find("128k rand read", 32)));
	assert_true(quick_engine_runs(&sync, find("1m seq read", 8)));
	{
		struct llmio_engine_info null = {.name = "null"}, ps = {.name = "psync"};
		struct llmio_engine_info pm = {.name = "pmem2"}, uc = {.name = "uring_cmd"};
		struct llmio_engine_info sp = {.name = "spdk"};

		assert_false(quick_engine_measured(&null)); /* does no I/O */
		assert_true(quick_engine_measured(&ps));
		assert_true(quick_engine_measured(&pm)); /* a file engine like mmap */
		/* their target is an NVMe namespace, not the scratch file quick measures */
		assert_false(quick_engine_measured(&uc));
		assert_false(quick_engine_measured(&sp));
	}
}

static void job_opts(void **state)
{
	struct llmio_job_opts o;

	(void)state;
	quick_job_opts(&o, "io_uring", "/tmp/x/scratch", 64 << 20, 2000000000ull, true,
	               find("128k rand read", 32));
	assert_string_equal(o.engine, "io_uring");
	assert_string_equal(o.filename, "/tmp/x/scratch");
	assert_int_equal(o.size, 64 << 20);
	assert_int_equal(o.rw, LLMIO_RW_RANDREAD);
	assert_int_equal(o.bs, 128 << 10);
	assert_int_equal(o.iodepth, 32);
	assert_true(o.direct);
	assert_int_equal(o.runtime_ns, 2000000000ull);
	assert_int_equal(o.ramp_time_ns, 500000000ull); /* a quarter of the runtime */
}

static void scratch_size(void **state)
{
	uint64_t size = 0, free_bytes = 0;

	(void)state;
	assert_int_equal(quick_choose_size("/nonexistent/llmio", 0, &size, &free_bytes), -ENOENT);
	if (quick_choose_size(".", 0, &size, &free_bytes) == 0) {
		/* the default, or a quarter of the free space in whole MiB */
		assert_true(size == QUICK_DEFAULT_SIZE || size <= free_bytes / 4);
		assert_int_equal(size % (1 << 20), 0);
		assert_true(size >= QUICK_MIN_SIZE);
	}
	/* more than is free is refused, and the free space is told */
	assert_int_equal(quick_choose_size(".", UINT64_MAX / 2, &size, &free_bytes), -ENOSPC);
	assert_true(free_bytes > 0);
}

static struct llmio_result *result(const char *engine, double gbps, double per_core, uint32_t qd,
                                   bool direct)
{
	struct llmio_result *r = calloc(1, sizeof(*r));

	assert_non_null(r);
	snprintf(r->opts.engine, sizeof(r->opts.engine), "%s", engine);
	r->read.bw_bytes = gbps * 1e9;
	r->gb_per_s_per_core = per_core;
	r->iodepth_effective = qd;
	r->direct_in_effect = direct;
	return r;
}

static void best_per_pattern(void **state)
{
	const struct quick_pattern *deep = find("4k rand read", 32), *qd1 = find("4k rand read", 1);
	struct llmio_result *res[8];
	const struct quick_pattern *pat[8];
	struct quick_best b;
	size_t n = 0;

	(void)state;
	pat[n] = deep, res[n++] = result("libaio", 2.00, 1.0, 32, true);
	pat[n] = deep, res[n++] = result("io_uring", 2.04, 3.0, 32, true); /* within 3%, leaner */
	pat[n] = deep, res[n++] = result("spdk", 9.00, 9.0, 32, true);     /* interrupted */
	pat[n] = deep, res[n++] = result("psync", 0.50, 1.0, 1, true);     /* sync, QD 1 */
	pat[n] = deep, res[n++] = result("mmap", 5.00, 1.0, 32, false);    /* page cache */
	pat[n] = qd1, res[n++] = result("libaio", 7.00, 1.0, 1, true);     /* another pattern */
	res[2]->interrupted = true;

	quick_best(res, pat, n, deep, true, &b);
	assert_non_null(b.at);
	assert_string_equal(b.at->opts.engine, "io_uring");
	assert_null(b.low); /* the QD 1 run was slower: not named */
	quick_best(res, pat, n, deep, false, &b);
	assert_string_equal(b.at->opts.engine, "mmap"); /* ranked apart from direct */
	assert_null(b.low);

	/* a QD 1 run more than 3% faster than every deep one is named beside the best */
	res[3]->read.bw_bytes = 3.0e9;
	quick_best(res, pat, n, deep, true, &b);
	assert_string_equal(b.at->opts.engine, "io_uring");
	assert_non_null(b.low);
	assert_string_equal(b.low->opts.engine, "psync");
	/* and named alone when nothing ran at the depth */
	quick_best(res + 3, pat + 3, 1, deep, true, &b);
	assert_null(b.at);
	assert_string_equal(b.low->opts.engine, "psync");
	/* the QD 1 pattern has no shallower run to name */
	quick_best(res, pat, n, qd1, true, &b);
	assert_string_equal(b.at->opts.engine, "libaio");
	assert_null(b.low);
	assert_true(quick_gbps(res[5]) > 6.99 && quick_gbps(res[5]) < 7.01);
	for (size_t i = 0; i < n; i++)
		free(res[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(patterns_and_engines),
	        cmocka_unit_test(job_opts),
	        cmocka_unit_test(scratch_size),
	        cmocka_unit_test(best_per_pattern),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
