/* SPDX-License-Identifier: MIT */
/*
 * The sweep runner as a library (src/sweep/runner.c): a job file planned into an ordered
 * list of points, the dry-run estimate, every point run into the journal with the caller told
 * through callbacks (and nothing printed), a resumed sweep leaving out what the journal holds,
 * and a job file error reported as bad input.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "sweep/journal.h"
#include "sweep/runner.h"

static char dir[4096];

/* four points: 2 block sizes x 2 queue depths, on the null engine (no disk involved) */
static const char tiny[] = "[global]\n"
                           "ioengine=null\n"
                           "rw=randread\n"
                           "size=16m\n"
                           "runtime=100ms\n"
                           "\n"
                           "[tiny]\n"
                           "bs=4k,16k\n"
                           "iodepth=1..2:x2\n";

static const char *write_file(const char *name, const char *text)
{
	static char path[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return path;
}

struct seen {
	size_t ended, done, failed, skipped_lines;
	size_t k[16];
	char label[16][128];
};

static void on_ended(void *arg)
{
	((struct seen *)arg)->ended++;
}

static void on_done(void *arg, const struct sweep_point_done *d)
{
	struct seen *s = arg;

	if (s->done < 16) {
		s->k[s->done] = d->k;
		snprintf(s->label[s->done], sizeof(s->label[0]), "%s", d->label);
	}
	s->done++;
	s->failed += d->error != 0;
	assert_true(d->error || d->iops > 0);
}

static void on_skipped(void *arg, const char *message)
{
	(void)message;
	((struct seen *)arg)->skipped_lines++;
}

static int count_records(void *arg, unsigned line, const cJSON *rec, const char *skipped)
{
	(void)line;
	(void)skipped;
	*(size_t *)arg += rec != NULL;
	return 0;
}

static void plan_and_estimate(void **state)
{
	struct sweep_run_opts o = {.path = write_file("plan.ini", tiny), .repeat = 3};
	struct sweep_runner r;
	struct sweep_estimate e;
	char err[512], label[256];

	(void)state;
	assert_int_equal(sweep_runner_prepare(&r, &o, NULL, err, sizeof(err)), 0);
	/* 2 x 2 points, three rounds of them in file order */
	assert_int_equal(r.plan.n, 4);
	assert_int_equal(r.norder, 12);
	assert_int_equal(r.order[5].idx, 1);
	assert_int_equal(r.order[5].repeat, 1);
	sweep_runner_label(&r, 3, label, sizeof(label));
	assert_string_equal(label, "[tiny] bs=16k iodepth=2");
	assert_int_equal(sweep_runner_estimate(&r, &e, err, sizeof(err)), 0);
	/* 12 points of 100 ms each plus the setup allowance, nothing already done */
	assert_true(e.total_s > 12 * (0.1 + e.setup_s) - 1e-9);
	assert_true(e.total_s < 12 * (0.1 + e.setup_s) + 1e-9);
	assert_int_equal(e.already, 0);
	sweep_runner_release(&r);

	/* shuffled: the same points, another order, the same for the same seed */
	o.shuffle = true;
	o.seed = 7;
	assert_int_equal(sweep_runner_prepare(&r, &o, NULL, err, sizeof(err)), 0);
	{
		size_t count[4] = {0}, moved = 0;

		for (size_t i = 0; i < r.norder; i++) {
			count[r.order[i].idx]++;
			moved += r.order[i].idx != i % 4;
		}
		for (size_t i = 0; i < 4; i++)
			assert_int_equal(count[i], 3);
		assert_true(moved > 0);
	}
	sweep_runner_release(&r);
}

static void run_and_resume(void **state)
{
	char journal[4200], err[1024];
	struct sweep_run_opts o = {.path = write_file("run.ini", tiny), .keep_cache = true};
	struct seen s = {0};
	struct sweep_events ev = {.point_ended = on_ended,
	                          .point_done = on_done,
	                          .skipped_line = on_skipped,
	                          .arg = &s};
	struct sweep_runner r;
	volatile int abort_flag = 0, point_stop = 0;
	size_t records = 0;
	FILE *f;

	(void)state;
	snprintf(journal, sizeof(journal), "%s/run.jsonl", dir);
	unlink(journal);
	o.journal = journal;
	assert_int_equal(sweep_runner_prepare(&r, &o, &ev, err, sizeof(err)), 0);
	assert_int_equal(sweep_runner_run(&r, &ev, &abort_flag, &point_stop, err, sizeof(err)), 0);
	assert_true(r.started);
	assert_int_equal(r.ran, 4);
	assert_int_equal(r.failed, 0);
	assert_int_equal(s.ended, 4);
	assert_int_equal(s.done, 4);
	assert_int_equal(s.k[3], 3);
	assert_string_equal(s.label[0], "[tiny] bs=4k iodepth=1");
	sweep_runner_release(&r);
	assert_int_equal(journal_read(journal, count_records, &records, err, sizeof(err)), 0);
	assert_int_equal(records, 4);

	/* a torn last line, then --resume: nothing runs again, the bad line is reported */
	f = fopen(journal, "a");
	assert_non_null(f);
	fputs("{\"config_hash\":\"fedc", f);
	fclose(f);
	memset(&s, 0, sizeof(s));
	o.resume = true;
	assert_int_equal(sweep_runner_prepare(&r, &o, &ev, err, sizeof(err)), 0);
	assert_int_equal(r.ndone, 4);
	assert_int_equal(s.skipped_lines, 1);
	assert_int_equal(sweep_runner_run(&r, &ev, &abort_flag, &point_stop, err, sizeof(err)), 0);
	assert_int_equal(r.ran, 0);
	assert_int_equal(r.skipped, 4);
	assert_int_equal(s.done, 0);
	sweep_runner_release(&r);

	/* an abort before the start: no point runs */
	unlink(journal);
	o.resume = false;
	abort_flag = 1;
	assert_int_equal(sweep_runner_prepare(&r, &o, &ev, err, sizeof(err)), 0);
	assert_int_equal(sweep_runner_run(&r, &ev, &abort_flag, &point_stop, err, sizeof(err)), 0);
	assert_int_equal(r.ran, 0);
	sweep_runner_release(&r);
}

static void bad_input(void **state)
{
	struct sweep_run_opts o = {.path = write_file("bad.ini", "[s]\nbs=4k,banana\n")};
	struct sweep_runner r;
	char err[1024];

	(void)state;
	assert_int_equal(sweep_runner_prepare(&r, &o, NULL, err, sizeof(err)), -EINVAL);
	assert_true(r.bad_input);
	assert_non_null(strstr(err, "bad.ini"));
	sweep_runner_release(&r);

	o.path = "/nonexistent/llmio/job.ini";
	assert_int_not_equal(sweep_runner_prepare(&r, &o, NULL, err, sizeof(err)), 0);
	assert_true(r.bad_input);
	sweep_runner_release(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(plan_and_estimate),
	        cmocka_unit_test(run_and_resume),
	        cmocka_unit_test(bad_input),
	};
	const char *base = getenv("LLMIO_TEST_DIR");

	snprintf(dir, sizeof(dir), "%s/test_runner.%d", base ? base : "/tmp", (int)getpid());
	mkdir(base ? base : "/tmp", 0755);
	if (mkdir(dir, 0755)) {
		perror(dir);
		return 1;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
