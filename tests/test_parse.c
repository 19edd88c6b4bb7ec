/* SPDX-License-Identifier: MIT */
/* Sizes, durations and job options: valid and invalid text. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "llmio/llmio.h"

static void sizes_valid(void **state)
{
	static const struct {
		const char *text;
		uint64_t bytes;
	} ok[] = {
	        {"4096", 4096},     {"4k", 4096},           {"4K", 4096},
	        {"4KiB", 4096},     {"4kib", 4096},         {"1m", 1048576},
	        {"1MiB", 1048576},  {"1.5GiB", 1610612736}, {"2g", 2147483648ull},
	        {"1t", 1ull << 40}, {"512b", 512},          {"0", 0},
	        {"0.5k", 512},
	};
	uint64_t v;

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		v = 1;
		assert_int_equal(llmio_parse_size(ok[i].text, &v), 0);
		assert_int_equal(v, ok[i].bytes);
	}
}

static void sizes_invalid(void **state)
{
	static const char *const bad[] = {"",     "k",    "-4k", "4x",    "4 k", " 4k",  "4kk",
	                                  "1.3k", "0x10", "1e3", "4KiBs", "abc", "4.k.2"};
	uint64_t v = 7;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(llmio_parse_size(bad[i], &v), -EINVAL);
		assert_int_equal(v, 7); /* untouched on error */
	}
	assert_int_equal(llmio_parse_size("99999999999t", &v), -ERANGE);
}

static void durations(void **state)
{
	uint64_t ns;

	(void)state;
	assert_int_equal(llmio_parse_duration("10", &ns), 0);
	assert_int_equal(ns, 10000000000ull);
	assert_int_equal(llmio_parse_duration("500ms", &ns), 0);
	assert_int_equal(ns, 500000000ull);
	assert_int_equal(llmio_parse_duration("2m", &ns), 0);
	assert_int_equal(ns, 120000000000ull);
	assert_int_equal(llmio_parse_duration("250us", &ns), 0);
	assert_int_equal(ns, 250000ull);
	assert_int_equal(llmio_parse_duration("10 s", &ns), -EINVAL);
	assert_int_equal(llmio_parse_duration("fast", &ns), -EINVAL);
}

static void job_options(void **state)
{
	struct llmio_job_opts o;
	struct llmio_error err = {0};

	(void)state;
	llmio_job_opts_init(&o);
	assert_int_equal(o.opts_size, sizeof(o));
	assert_string_equal(o.engine, "psync");
	assert_int_equal(o.bs, 4096);
	assert_int_equal(o.iodepth, 1);
	assert_true(o.invalidate);

	assert_int_equal(llmio_job_opts_set(&o, "bs", "128k", &err), 0);
	assert_int_equal(o.bs, 131072);
	assert_int_equal(llmio_job_opts_set(&o, "engine", "io_uring", &err), 0);
	assert_string_equal(o.engine, "io_uring");
	assert_int_equal(llmio_job_opts_set(&o, "rw", "randrw", &err), 0);
	assert_int_equal(o.rw, LLMIO_RW_RANDRW);
	assert_int_equal(llmio_job_opts_set(&o, "direct", "", &err), 0);
	assert_true(o.direct);
	assert_int_equal(llmio_job_opts_set(&o, "random_distribution", "zipf:1.2", &err), 0);
	assert_int_equal(o.random_distribution, LLMIO_DIST_ZIPF);
	assert_true(o.zipf_theta > 1.19 && o.zipf_theta < 1.21);
	assert_int_equal(llmio_job_opts_set(&o, "thinktime", "250", &err), 0);
	assert_int_equal(o.thinktime_ns, 250000); /* bare number = microseconds, as fio */
	assert_int_equal(llmio_job_opts_set(&o, "runtime", "1.5", &err), 0);
	assert_int_equal(o.runtime_ns, 1500000000ull);

	assert_int_equal(llmio_job_opts_set(&o, "bs", "4q", &err), -EINVAL);
	assert_non_null(strstr(err.msg, "bs=4q"));
	assert_int_equal(llmio_job_opts_set(&o, "iodepth", "0", &err), -ERANGE);
	assert_non_null(strstr(err.msg, "iodepth"));
	assert_int_equal(llmio_job_opts_set(&o, "rw", "sideways", &err), -EINVAL);
	assert_non_null(strstr(err.msg, "randread"));
	assert_int_equal(llmio_job_opts_set(&o, "random_distribution", "zipf:-1", &err), -EINVAL);
	assert_int_equal(llmio_job_opts_set(&o, "nosuch", "1", &err), -ENOENT);
	assert_int_equal(llmio_job_opts_set(&o, "rwmixread", "101", &err), -ERANGE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(sizes_valid),
	        cmocka_unit_test(sizes_invalid),
	        cmocka_unit_test(durations),
	        cmocka_unit_test(job_options),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
