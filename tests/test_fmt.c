/* SPDX-License-Identifier: MIT */
/*
 * The number formats and the fitted table of the report layer (src/base/fmt.c, table.c):
 * three significant digits and never an exponent, keys in words, paths shortened in the
 * middle, and tables that fit FMT_COLUMNS by moving columns into a further table.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "base/fmt.h"

#define EXPECT(call, want)                                                                         \
	do {                                                                                       \
		char buf_[64];                                                                     \
		call;                                                                              \
		assert_string_equal(buf_, want);                                                   \
	} while (0)

static void times(void **state)
{
	(void)state;
	EXPECT(fmt_ns(buf_, sizeof(buf_), 812), "812 ns");
	EXPECT(fmt_ns(buf_, sizeof(buf_), 12500), "12.5 us");
	EXPECT(fmt_ns(buf_, sizeof(buf_), 7897088), "7.90 ms");
	EXPECT(fmt_ns(buf_, sizeof(buf_), 999600), "1.00 ms"); /* rounds up to the next unit */
	EXPECT(fmt_ns(buf_, sizeof(buf_), 16320000000ull), "16.3 s");
	EXPECT(fmt_seconds(buf_, sizeof(buf_), 0.0456), "45.6 ms");
	EXPECT(fmt_seconds(buf_, sizeof(buf_), 1234), "1234 s");
	EXPECT(fmt_seconds(buf_, sizeof(buf_), 7500), "2 h 05 min");
	EXPECT(fmt_seconds(buf_, sizeof(buf_), -1), "0.00 s");
}

static void bytes_and_rates(void **state)
{
	(void)state;
	EXPECT(fmt_bytes(buf_, sizeof(buf_), 512), "512 B");
	EXPECT(fmt_bytes(buf_, sizeof(buf_), 1000), "0.98 KiB");
	EXPECT(fmt_bytes(buf_, sizeof(buf_), 4096), "4.00 KiB");
	EXPECT(fmt_bytes(buf_, sizeof(buf_), 525353384), "501 MiB");
	EXPECT(fmt_bytes(buf_, sizeof(buf_), 1.387e10), "12.9 GiB");
	EXPECT(fmt_rate(buf_, sizeof(buf_), 378e6), "378 MB/s");
	EXPECT(fmt_rate(buf_, sizeof(buf_), 1.769e9), "1.77 GB/s");
	EXPECT(fmt_metric(buf_, sizeof(buf_), 1.632e4, "us"), "16.3 ms");
	EXPECT(fmt_metric(buf_, sizeof(buf_), 5.254e8, "B"), "501 MiB");
	EXPECT(fmt_metric(buf_, sizeof(buf_), 0.3794, "GB/s"), "379 MB/s");
	EXPECT(fmt_metric(buf_, sizeof(buf_), 1.739, "DWPD"), "1.74 DWPD");
	EXPECT(fmt_metric(buf_, sizeof(buf_), 8, ""), "8");
	EXPECT(fmt_number(buf_, sizeof(buf_), 1.30417e7), "13.04M");
	EXPECT(fmt_number(buf_, sizeof(buf_), 0.00001), "<0.001");
}

static void words(void **state)
{
	(void)state;
	EXPECT(fmt_words(buf_, sizeof(buf_), "load_time_s"), "load time");
	EXPECT(fmt_words(buf_, sizeof(buf_), "cpu_s"), "CPU");
	EXPECT(fmt_words(buf_, sizeof(buf_), "samples_per_s"), "samples");
	EXPECT(fmt_words(buf_, sizeof(buf_), "throughput_min_rank_GBps"), "throughput min rank");
	EXPECT(fmt_words(buf_, sizeof(buf_), "GBps"), "throughput");
	EXPECT(fmt_words(buf_, sizeof(buf_), "kv_tokens_restored_per_s"), "KV tokens restored");
	EXPECT(fmt_words(buf_, sizeof(buf_), "drive_writes_per_day"), "drive writes per day");
}

static void paths(void **state)
{
	(void)state;
	EXPECT(fmt_path(buf_, sizeof(buf_), "/data/ckpt.pt", 20), "/data/ckpt.pt");
	EXPECT(fmt_path(buf_, sizeof(buf_), "/data/run/a/long/way/down/ckpt-rank00007.pt", 24),
	       "/data/run/a...nk00007.pt"); /* 24 columns */
}

/* The table fitted into FMT_COLUMNS: a wide column moves into a second table with the keys. */
static void fitted_table(void **state)
{
	static const char wide[] = "a settings text long enough to need a table of its own, beside "
	                           "the key column of the first: it goes below";
	const char *cells[] = {"phase", "engine", "settings", "inference", "io_uring", wide};
	const struct fmt_table t = {
	        .cells = cells, .rows = 2, .ncols = 3, .nkey = 1, .sep = " | ", .indent = 2};
	char *text = NULL, *line, *save = NULL;
	size_t len = 0, n = 0;
	FILE *f = open_memstream(&text, &len);

	(void)state;
	assert_non_null(f);
	fmt_table_print(f, &t);
	fclose(f);
	assert_non_null(strstr(text, "  phase     | engine\n  inference | io_uring\n\n"));
	assert_non_null(strstr(text, "  phase     | settings\n  inference | a settings text"));
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save), n++)
		assert_true(strlen(line) <= FMT_COLUMNS);
	assert_int_equal(n, 5); /* 2 + 3: the wide cell wrapped onto a second line */
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(times), cmocka_unit_test(bytes_and_rates), cmocka_unit_test(words),
	        cmocka_unit_test(paths), cmocka_unit_test(fitted_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
