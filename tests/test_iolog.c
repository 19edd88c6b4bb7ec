/* SPDX-License-Identifier: MIT */
/*
 * fio's averaged logs per thread (src/job/iolog.h): a completion lands in the interval of
 * its time, [k, k+1) x log_avg_msec from the window's start, empty intervals are kept, the
 * last partial interval ends after the last whole one, counts add up exactly, a new window
 * starts over, and a full buffer keeps its first intervals and says so.  Per-I/O logs
 * (log_avg_msec 0): one line per I/O in fio 3.33's layout, written out whenever the bounded
 * buffer fills and at the end, the offset column with log_offset, no slat lines for an engine
 * without a submission latency, a new window empties the files, and a log that cannot be
 * created fails at once, naming its file.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "job/iolog.h"

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
	assert_int_equal(iolog_init(&l, &o, 0, false, NULL), 0);
	assert_int_equal(l.cap, 12); /* 10 intervals, the partial one, a spare */
	/* two reads in the first 100 ms (one on its last ns), a write exactly at 100 ms */
	iolog_add(&l, T0, 0, T0 + 1 * MS, 4096, 0, 1, 10, 0);
	iolog_add(&l, T0, 0, T0 + 100 * MS - 1, 4096, 0, 3, 30, 0);
	iolog_add(&l, T0, 1, T0 + 100 * MS, 8192, 0, 0, 50, 0);
	/* nothing in [200, 300): that interval is kept, empty */
	iolog_add(&l, T0, 0, T0 + 321 * MS, 512, 0, 0, 7, 0);
	iolog_finish(&l, T0 + 350 * MS + 1, NULL);
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
	opts(&o, 1000, 0); /* no runtime: the default buffer */
	assert_int_equal(iolog_step_ns(&o), 1000 * MS);
	assert_false(iolog_per_io(&o));
	assert_int_equal(iolog_init(&l, &o, 0, false, NULL), 0);
	assert_int_equal(l.cap, IOLOG_DEFAULT_CAP);
	iolog_add(&l, T0, 0, T0 + 10 * MS, 4096, 0, 0, 1, 0);
	/* the ramp ended: a new window, at a later start */
	iolog_reset(&l);
	for (uint64_t t = 0; t < 2500; t += 7, ios++)
		iolog_add(&l, T0 + 10000 * MS, 1, T0 + 10000 * MS + t * MS, 4096, 0, 0, 1, 0);
	iolog_finish(&l, T0 + 10000 * MS + 2500 * MS, NULL);
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
	assert_int_equal(iolog_init(&l, &o, 0, false, NULL), 0);
	assert_int_equal(l.cap, 5);
	iolog_add(&l, T0, 0, T0 + 1 * MS, 4096, 0, 0, 1, 0);
	/* a stall of an hour: the buffer fills with empty intervals and stops, at once */
	iolog_add(&l, T0, 0, T0 + 3600000 * MS, 4096, 0, 0, 1, 0);
	assert_int_equal(l.n, 5);
	assert_true(l.truncated);
	assert_int_equal(l.buf[0].ios[0], 1);
	assert_int_equal(l.buf[4].t_ms, 50);
	iolog_add(&l, T0, 0, T0 + 3600001 * MS, 4096, 0, 0, 1, 0);
	iolog_finish(&l, T0 + 3600002 * MS, NULL);
	assert_int_equal(l.n, 5);
	iolog_release(&l);
}

/* The whole of a file, or "" when it is empty. */
static char *slurp(const char *path)
{
	static char buf[4096];
	FILE *f = fopen(path, "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* A scratch directory, made the current one (the logs go there, as fio's). */
static void enter_scratch(char *dir, char *old, size_t len)
{
	assert_non_null(getcwd(old, len));
	assert_non_null(mkdtemp(dir));
	assert_int_equal(chdir(dir), 0);
}

static void leave_scratch(const char *dir, const char *old)
{
	char cmd[512];

	assert_int_equal(chdir(old), 0);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

static void per_io(void **state)
{
	char dir[] = "/tmp/test_iolog.XXXXXX", old[1024];
	struct llmio_job_opts o;
	struct llmio_error e = {0};
	struct iolog l;

	(void)state;
	enter_scratch(dir, old, sizeof(old));
	opts(&o, 0, 0);
	snprintf(o.write_bw_log, sizeof(o.write_bw_log), "b");
	snprintf(o.write_iops_log, sizeof(o.write_iops_log), "i");
	snprintf(o.write_lat_log, sizeof(o.write_lat_log), "l");
	assert_true(iolog_per_io(&o));
	/* thread 2 (index 1) of an engine with a submission latency */
	assert_int_equal(iolog_init(&l, &o, 1, true, &e), 0);
	assert_int_equal(l.iocap, IOLOG_IO_CAP);
	l.iocap = 2; /* written out after every second I/O: the flush path, three times */
	iolog_add(&l, T0, 0, T0 + 1 * MS + 5, 4096, 8192, 100, 4000, 0);
	iolog_add(&l, T0, 1, T0 + 2 * MS, 8192, 0, 0, 1000000, 0);
	assert_int_equal(l.nio, 2);
	iolog_add(&l, T0, 0, T0 + 1999 * MS, 512, 1ull << 40, 7, 0, 0);
	assert_int_equal(l.nio, 1); /* the first two went out */
	iolog_add(&l, T0, 1, T0 + 2000 * MS, 4096, 4096, 1, 2, 0);
	iolog_add(&l, T0, 0, T0 + 2001 * MS, 4096, 0, 3, 3, 0);
	assert_int_equal(iolog_finish(&l, T0 + 3000 * MS, &e), 0);
	/* fio's columns: ms, value, direction, bs, priority */
	assert_string_equal(slurp("l_clat.2.log"), "1, 4000, 0, 4096, 0\n"
	                                           "2, 1000000, 1, 8192, 0\n"
	                                           "1999, 0, 0, 512, 0\n"
	                                           "2000, 2, 1, 4096, 0\n"
	                                           "2001, 3, 0, 4096, 0\n");
	assert_string_equal(slurp("l_slat.2.log"), "1, 100, 0, 4096, 0\n"
	                                           "2, 0, 1, 8192, 0\n"
	                                           "1999, 7, 0, 512, 0\n"
	                                           "2000, 1, 1, 4096, 0\n"
	                                           "2001, 3, 0, 4096, 0\n");
	assert_string_equal(slurp("l_lat.2.log"), "1, 4100, 0, 4096, 0\n"
	                                          "2, 1000000, 1, 8192, 0\n"
	                                          "1999, 7, 0, 512, 0\n"
	                                          "2000, 3, 1, 4096, 0\n"
	                                          "2001, 6, 0, 4096, 0\n");
	/* bw as fio computes it per I/O: bytes x 10^6 / clat ns; 0 for a clat of 0 */
	assert_string_equal(slurp("b_bw.2.log"), "1, 1024000, 0, 4096, 0\n"
	                                         "2, 8192, 1, 8192, 0\n"
	                                         "1999, 0, 0, 512, 0\n"
	                                         "2000, 2048000000, 1, 4096, 0\n"
	                                         "2001, 1365333333, 0, 4096, 0\n");
	assert_string_equal(slurp("i_iops.2.log"), "1, 1, 0, 4096, 0\n"
	                                           "2, 1, 1, 8192, 0\n"
	                                           "1999, 1, 0, 512, 0\n"
	                                           "2000, 1, 1, 4096, 0\n"
	                                           "2001, 1, 0, 4096, 0\n");
	assert_int_equal(access("l_clat.1.log", F_OK), -1); /* thread 2's only */
	iolog_release(&l);
	leave_scratch(dir, old);
}

static void per_io_offset_reset_noslat(void **state)
{
	char dir[] = "/tmp/test_iolog.XXXXXX", old[1024];
	struct llmio_job_opts o;
	struct iolog l;

	(void)state;
	enter_scratch(dir, old, sizeof(old));
	opts(&o, 0, 0);
	o.write_bw_log[0] = '\0';
	snprintf(o.write_lat_log, sizeof(o.write_lat_log), "x");
	o.log_offset = true;
	assert_int_equal(iolog_init(&l, &o, 0, false, NULL), 0);
	l.iocap = 1;
	/* the ramp's I/Os, some already written out, then the measured window starts over */
	iolog_add(&l, T0, 0, T0 + 1 * MS, 4096, 4096, 0, 10, 0);
	iolog_add(&l, T0, 0, T0 + 2 * MS, 4096, 4096, 0, 10, 0);
	iolog_reset(&l);
	iolog_add(&l, T0, 1, T0 + 5 * MS, 4096, 123 << 12, 9, 20, 0);
	assert_int_equal(iolog_finish(&l, T0 + 6 * MS, NULL), 0);
	/* log_offset: the offset before the priority, as fio 3.33 */
	assert_string_equal(slurp("x_clat.1.log"), "5, 20, 1, 4096, 503808, 0\n");
	assert_string_equal(slurp("x_lat.1.log"), "5, 29, 1, 4096, 503808, 0\n");
	/* no submission latency (a synchronous engine): the file is there, empty, as fio's */
	assert_string_equal(slurp("x_slat.1.log"), "");
	assert_int_equal(access("x_bw.1.log", F_OK), -1);
	iolog_release(&l);
	leave_scratch(dir, old);
}

static void per_io_unwritable(void **state)
{
	struct llmio_job_opts o;
	struct llmio_error e = {0};
	struct iolog l;

	(void)state;
	opts(&o, 0, 0);
	snprintf(o.write_bw_log, sizeof(o.write_bw_log), "/nonexistent-dir/q");
	assert_int_equal(iolog_init(&l, &o, 0, false, &e), -ENOENT);
	assert_non_null(strstr(e.msg, "/nonexistent-dir/q_bw.1.log"));
	iolog_release(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(intervals),
	        cmocka_unit_test(partial_and_reset),
	        cmocka_unit_test(truncated),
	        cmocka_unit_test(per_io),
	        cmocka_unit_test(per_io_offset_reset_noslat),
	        cmocka_unit_test(per_io_unwritable),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
