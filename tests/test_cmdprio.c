/* SPDX-License-Identifier: MIT */
/*
 * fio's cmdprio_bssplit text into its table per block size (job/cmdprio.c), read as fio 3.33's
 * parse_cmdprio_bssplit_entry() and engines/cmdprio.c read it: each size's row of 100 draws,
 * the shares in the order written, what they leave the thread's; fio's clamps, its best effort
 * for class 0, its fifth field read as nothing; and what fio refuses refused.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "job/cmdprio.h"

#define RT(l)   (uint16_t)(1 << 13 | (l))
#define BE(l)   (uint16_t)(2 << 13 | (l))
#define IDLE(l) (uint16_t)(3 << 13 | (l))

static struct cmdprio_table t;

/* How many of row's 100 draws give prio. */
static unsigned count(const uint16_t *row, uint16_t prio)
{
	unsigned n = 0;

	for (unsigned r = 0; r < 100; r++)
		n += row[r] == prio;
	return n;
}

static int parse(const char *text)
{
	struct llmio_error e;

	llmio_error_init(&e);
	return cmdprio_table_parse(text, 1, 2, &t, &e);
}

/* fio's HOWTO example: reads and writes lists, cmdprio_class/cmdprio for the simple form */
static void simple_form(void **state)
{
	const uint16_t *row;

	(void)state;
	assert_int_equal(parse("64k/40:1m/0,1m/100"), 0);
	assert_int_equal(t.n[0], 1); /* 1m/0 picks nothing: no row */
	row = cmdprio_row(&t, 0, 65536);
	assert_non_null(row);
	assert_int_equal(count(row, RT(2)), 40);
	assert_int_equal(count(row, CMDPRIO_JOB), 60);
	for (unsigned r = 0; r < 40; r++) /* the share first, in draw order, as fio's */
		assert_int_equal(row[r], RT(2));
	assert_null(cmdprio_row(&t, 0, 1 << 20));
	assert_int_equal(count(cmdprio_row(&t, 1, 1 << 20), RT(2)), 100);
	assert_null(cmdprio_row(&t, 1, 65536));
}

/* one list without a comma is both directions'; a third list (trims') is not read */
static void one_list_both_directions(void **state)
{
	(void)state;
	assert_int_equal(parse("4k/10"), 0);
	assert_int_equal(count(cmdprio_row(&t, 0, 4096), RT(2)), 10);
	assert_int_equal(count(cmdprio_row(&t, 1, 4096), RT(2)), 10);
	assert_int_equal(parse("4k/10,8k/20,anything"), 0);
	assert_null(cmdprio_row(&t, 1, 4096));
	assert_int_equal(count(cmdprio_row(&t, 1, 8192), RT(2)), 20);
}

/* CLASS/LEVEL per share; several shares of one size in the order written */
static void advanced_form(void **state)
{
	const uint16_t *row;

	(void)state;
	assert_int_equal(parse("64k/25/1/1:1m/10:64k/75/3/2"), 0);
	row = cmdprio_row(&t, 0, 65536);
	assert_int_equal(count(row, RT(1)), 25);
	assert_int_equal(count(row, IDLE(2)), 75);
	assert_int_equal(row[24], RT(1));
	assert_int_equal(row[25], IDLE(2));
	assert_int_equal(count(cmdprio_row(&t, 0, 1 << 20), RT(2)), 10);
}

/* fio 3.33: values above the range are the largest, class 0 is best effort, a fifth field is
 * read as nothing, "BS/" and "BS" pick nothing, a trailing ':' ends the list */
static void fio_readings(void **state)
{
	(void)state;
	assert_int_equal(parse("4k/150/9/9"), 0);
	assert_int_equal(count(cmdprio_row(&t, 0, 4096), IDLE(7)), 100);
	assert_int_equal(parse("4k/30/0/4:8k/10/2/0/3"), 0);
	assert_int_equal(count(cmdprio_row(&t, 0, 4096), BE(4)), 30);
	assert_int_equal(count(cmdprio_row(&t, 0, 8192), BE(0)), 10);
	assert_int_equal(parse("4k/:8k:16k/5:"), 0);
	assert_int_equal(t.n[0], 1);
	assert_int_equal(count(cmdprio_row(&t, 0, 16384), RT(2)), 5);
}

/* what fio refuses (CLASS without LEVEL; one size's shares above 100) and what is no entry */
static void refused(void **state)
{
	static const char *const bad[] = {"4k/10/1",      "4k/60/1/0:4k/50/2/0", "4k/x",  "x/10",
	                                  "4k/1/2/3/4/5", "4k/10::8k/10",        "4k/-1", "0/10"};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct llmio_error e;

		llmio_error_init(&e);
		assert_int_equal(cmdprio_table_parse(bad[i], 1, 0, &t, &e), -EINVAL);
		assert_non_null(strstr(e.msg, "cmdprio_bssplit"));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(simple_form),   cmocka_unit_test(one_list_both_directions),
	        cmocka_unit_test(advanced_form), cmocka_unit_test(fio_readings),
	        cmocka_unit_test(refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
