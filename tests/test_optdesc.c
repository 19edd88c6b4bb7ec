/* SPDX-License-Identifier: MIT */
/* base/optdesc.c: one parser and range check for every type of described option. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "base/optdesc.h"
#include "llmio/common.h"

static void check(const struct llmio_optdesc *d, const char *text, int want, const char *msg)
{
	struct llmio_optval v;
	struct llmio_error err = {0};

	assert_int_equal(optdesc_parse(d, text, &v, &err), want);
	if (msg)
		assert_string_equal(err.msg, msg);
}

static void test_uint_range(void **state)
{
	const struct llmio_optdesc d = {
	        .name = "threads", .type = OPTD_UINT, .def = "4", .min = 1, .max = 64};
	struct llmio_optval v;

	(void)state;
	assert_int_equal(optdesc_parse(&d, NULL, &v, NULL), 0);
	assert_int_equal(v.u, 4);
	check(&d, "1", 0, NULL);
	check(&d, "64", 0, NULL);
	check(&d, "0", -ERANGE, "--threads=0 is out of range: it takes 1..64 (e.g. --threads=4)");
	check(&d, "65", -ERANGE, NULL);
	check(&d, "x", -EINVAL, "--threads=x is not a whole number (e.g. --threads=4)");
}

static void test_size_and_time(void **state)
{
	const struct llmio_optdesc bs = {
	        .name = "bs", .type = OPTD_SIZE, .def = "1m", .min = 4096, .max = 64 << 20};
	const struct llmio_optdesc dur = {
	        .name = "duration", .type = OPTD_DURATION, .def = "10s", .min = 1};
	struct llmio_optval v;

	(void)state;
	assert_int_equal(optdesc_parse(&bs, "64m", &v, NULL), 0);
	assert_int_equal(v.u, 64u << 20);
	check(&bs, "4k", 0, NULL);
	check(&bs, "65m", -ERANGE, "--bs=65m is out of range: it takes 4k..64m (e.g. --bs=1m)");
	assert_int_equal(optdesc_parse(&dur, "2s", &v, NULL), 0);
	assert_int_equal(v.u, 2000000000ull);
	check(&dur, "0", -ERANGE, NULL);
}

static void test_double_bool_enum(void **state)
{
	const struct llmio_optdesc sc = {.name = "scale", .type = OPTD_DOUBLE, .def = "1"};
	const struct llmio_optdesc b = {.name = "direct", .type = OPTD_BOOL, .def = "0"};
	const struct llmio_optdesc e = {
	        .name = "cache", .type = OPTD_ENUM, .def = "both", .choices = "both|cold|warm"};
	struct llmio_optval v;

	(void)state;
	assert_int_equal(optdesc_parse(&sc, "0.25", &v, NULL), 0);
	assert_true(v.d == 0.25);
	check(&sc, "-1", -ERANGE, "--scale=-1 is out of range: it takes >= 0 (e.g. --scale=1)");
	check(&sc, "inf", -EINVAL, NULL);
	assert_int_equal(optdesc_parse(&b, "yes", &v, NULL), 0);
	assert_true(v.b);
	check(&b, "maybe", -EINVAL, NULL);
	check(&e, "cold", 0, NULL);
	check(&e, "col", -EINVAL, "--cache=col is not one of both|cold|warm (e.g. --cache=both)");
	assert_string_equal(optdesc_type_name(&(struct llmio_optdesc){.type = OPTD_DURATION}),
	                    "time");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_uint_range),
	        cmocka_unit_test(test_size_and_time),
	        cmocka_unit_test(test_double_bool_enum),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
