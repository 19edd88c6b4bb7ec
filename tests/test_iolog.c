/* SPDX-License-Identifier: MIT */
/*
 * fio's averaged logs per thread (src/stats/iolog.h): a completion lands in the interval of
 * its time, [k, k+1) x log_avg_msec from the window's start, empty intervals are kept, the
 * last partial interval ends after the last whole one, counts add up exactly, a new window
 * starts over, and a full buffer keeps its first intervals and says so.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "stats/iolog.h"

#define MS 1000000ull
#define T0 (5000 * MS) /* the window's start, an arbitrary clock value */

static void opts(struct llmio_job_opts *o, uint32_t avg_ms, uint64_t runtime_ns)
{
	memset(o, 0, sizeof(*o));
	snprintf(o->write_bw_log, sizeof(o->write_bw_log), "x");
	o->log_avg_msec = avg_ms;
	o->runtime_ns = runtime_ns;
}

static void intervals(void **state)
{
	struct llmio_job_opts o;
	struct iolog l;

	(void)state;
	opts(&o, 100, 1000 * MS);
	assert_true(iolog_wanted(&o));
	assert_int_equal(iolog_init(&l, &o), 0);
	assert_int_equal(l.cap, 12); /* 10 intervals, the partial one, a spare */
	/* two reads in the first 100 ms (one on its last ns), a write exactly at 100 ms */
	iolog_add(&l, T0, 0, T0 + 1 * MS, 4096, 1, 10, 11);
	iolog_add(&l, T0, 0, T0 + 100 * MS - 1, 4096, 3, 30, 33);
	iolog_add(&l, T0, 1, T0 + 100 * MS, 8192, 0, 50, 50);
	/* nothing in [200, 300): that interval is kept, empty */
	iolog_add(&l, T0, 0, T0 + 321 * MS, 512, 0, 7, 7);
	iolog_finish(&l, T0 + 350 * MS + 1);
	assert_int_equal(l.n, 4);
	assert_int_equal(l.buf[0].t_ms, 100);
	assert_int_equal(l.buf[0].ios[0], 2);
	assert_int_equal(l.buf[0].ios[1], 0);
	assert_int_equal(l.buf[0].bytes[0], 8192);
	assert_int_equal(l.buf[0].slat_ns[0], 4);
	assert_int_equal(l.buf[0].clat_ns[0], 40);
	assert_int_equal(l.buf[0].lat_ns[0], 44);
	assert_int_equal(l.buf[1].t_ms, 200);
	assert_int_equal(l.buf[1].ios[1], 1);
	assert_int_equal(l.buf[1].bytes[1], 8192);
	assert_int_equal(l.buf[2].t_ms, 300);
	assert_int_equal(l.buf[2].ios[0] + l.buf[2].ios[1], 0);
	/* the thread ended at 350 ms + 1 ns, rounded up: the partial interval holds the read */
	assert_int_equal(l.buf[3].t_ms, 351);
	assert_int_equal(l.buf[3].ios[0], 1);
	assert_int_equal(l.buf[3].bytes[0], 512);
	assert_false(l.truncated);
	iolog_release(&l);
}

static void partial_and_reset(void **state)
{
	struct llmio_job_opts o;
	struct iolog l;
	uint64_t ios = 0;

	(void)state;
	opts(&o, 0, 0); /* 0 = 1000 ms; no runtime: the default buffer */
	assert_int_equal(iolog_step_ns(&o), 1000 * MS);
	assert_int_equal(iolog_init(&l, &o), 0);
	assert_int_equal(l.cap, IOLOG_DEFAULT_CAP);
	iolog_add(&l, T0, 0, T0 + 10 * MS, 4096, 0, 1, 1);
	/* the ramp ended: a new window, at a later start */
	iolog_reset(&l);
	for (uint64_t t = 0; t < 2500; t += 7, ios++)
		iolog_add(&l, T0 + 10000 * MS, 1, T0 + 10000 * MS + t * MS, 4096, 0, 1, 1);
	iolog_finish(&l, T0 + 10000 * MS + 2500 * MS);
	assert_int_equal(l.n, 3);
	assert_int_equal(l.buf[0].t_ms, 1000);
	assert_int_equal(l.buf[2].t_ms, 2500);
	assert_int_equal(l.buf[0].ios[1] + l.buf[1].ios[1] + l.buf[2].ios[1], ios);
	assert_int_equal(l.buf[0].ios[0] + l.buf[1].ios[0] + l.buf[2].ios[0], 0);
	iolog_release(&l);
}

static void truncated(void **state)
{
	struct llmio_job_opts o;
	struct iolog l;

	(void)state;
	opts(&o, 10, 30 * MS); /* 3 intervals + 2 */
	assert_int_equal(iolog_init(&l, &o), 0);
	assert_int_equal(l.cap, 5);
	iolog_add(&l, T0, 0, T0 + 1 * MS, 4096, 0, 1, 1);
	/* a stall of an hour: the buffer fills with empty intervals and stops, at once */
	iolog_add(&l, T0, 0, T0 + 3600000 * MS, 4096, 0, 1, 1);
	assert_int_equal(l.n, 5);
	assert_true(l.truncated);
	assert_int_equal(l.buf[0].ios[0], 1);
	assert_int_equal(l.buf[4].t_ms, 50);
	iolog_add(&l, T0, 0, T0 + 3600001 * MS, 4096, 0, 1, 1);
	iolog_finish(&l, T0 + 3600002 * MS);
	assert_int_equal(l.n, 5);
	iolog_release(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(intervals),
	        cmocka_unit_test(partial_and_reset),
	        cmocka_unit_test(truncated),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
