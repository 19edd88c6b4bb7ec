/* SPDX-License-Identifier: MIT */
/*
 * Sweeps: matrix expansion (lists, x and + ranges, exclusions, counts), job file errors that
 * name the file, line and key, canonical hashing, steady-state detection on synthetic series,
 * the journal's handling of a torn last line, and the runner as a library (runner.c): plan
 * and order, the dry-run estimate, a run reported through callbacks, resume, bad input.  Counts are
 * checked against the arithmetic of the file, not against the code's own enumeration.
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
#include "sweep/steady.h"
#include "sweep/sweep.h"

static char dir[4096];

#include "write_file.h"

static struct sweep_file *load_ok(const char *text)
{
	struct sweep_file *f = NULL;
	struct llmio_error err = {0};
	int ret = sweep_file_load(write_file("ok.ini", text), NULL, &f, &err);

	if (ret)
		print_message("load: %s\n", err.msg);
	assert_int_equal(ret, 0);
	return f;
}

static size_t count_points(const char *text, struct sweep_plan *plan_out)
{
	struct sweep_file *f = load_ok(text);
	struct sweep_plan plan;
	struct llmio_error err = {0};
	size_t n;

	assert_int_equal(sweep_plan_build(f, &plan, &err), 0);
	n = plan.n;
	if (plan_out)
		*plan_out = plan;
	else
		sweep_plan_release(&plan);
	sweep_file_free(f);
	return n;
}

static void lists_and_ranges(void **state)
{
	struct sweep_file *f;
	const struct sweep_dim *d;

	(void)state;
	f = load_ok("[global]\nioengine=null\n[s]\nbs=4k,8k,16k\niodepth=1..32:x2\n"
	            "numjobs=1..3:+1\nsize=1m..4m:+1m\n");
	assert_int_equal(f->nsec, 1);
	assert_int_equal(f->sec[0].ndims, 5);
	d = &f->sec[0].dims[1];
	assert_string_equal(d->key, "bs");
	assert_int_equal(d->n, 3);
	assert_string_equal(d->v[0].canon, "4096");
	assert_string_equal(d->v[2].canon, "16384");
	d = &f->sec[0].dims[2];
	assert_int_equal(d->n, 6); /* 1 2 4 8 16 32 */
	assert_string_equal(d->v[5].canon, "32");
	assert_int_equal(f->sec[0].dims[3].n, 3);
	d = &f->sec[0].dims[4];
	assert_int_equal(d->n, 4);
	assert_string_equal(d->v[3].canon, "4194304");
	sweep_file_free(f);
	/* a range stops at the last value not above its end */
	assert_int_equal(count_points("[s]\nioengine=null\niodepth=3..40:x2\n", NULL), 4);
	/* 3 x 6 x 3 = 54 */
	assert_int_equal(count_points("[s]\nioengine=null\nbs=4k,8k,16k\niodepth=1..32:x2\n"
	                              "numjobs=1..3:+1\n",
	                              NULL),
	                 54);
}

static void exclusions(void **state)
{
	struct sweep_plan plan;

	(void)state;
	/* 54 minus bs=16k with iodepth 16, 32 (x 3 numjobs) = 48 */
	assert_int_equal(count_points("[s]\nioengine=null\nbs=4k,8k,16k\niodepth=1..32:x2\n"
	                              "numjobs=1..3\nexclude=bs==16k && iodepth>8\n",
	                              NULL),
	                 48);
	/* several exclude= lines are OR-ed; ! and () work; sizes compare canonically */
	assert_int_equal(count_points("[global]\nexclude=bs<=4096\n[s]\nioengine=null\n"
	                              "bs=4k,8k,16k\niodepth=1,2\n"
	                              "exclude=!(iodepth==1) && (bs==16k || bs==8k)\n",
	                              NULL),
	                 2);
	/* engine options of another engine are not part of a point: psync x sqpoll=0,1 is one
	 * point, io_uring x sqpoll=0,1 two; excluding sqpoll with io_uring leaves psync's */
	assert_int_equal(count_points("[s]\nioengine=psync,io_uring\nsqpoll=0,1\n", &plan), 3);
	assert_int_equal(plan.duplicates, 1);
	sweep_plan_release(&plan);
	assert_int_equal(count_points("[s]\nioengine=psync,io_uring\nsqpoll=0,1\n"
	                              "exclude=ioengine==io_uring\n",
	                              NULL),
	                 1);
	/* sections are separate products, each inheriting [global] */
	assert_int_equal(count_points("[global]\nioengine=null\nbs=4k,8k\n[a]\niodepth=1,2\n"
	                              "[b]\nbs=1m\nnumjobs=1..4\n",
	                              NULL),
	                 4 + 4);
}

static void expect_error(const char *text, const char *want1, const char *want2)
{
	struct sweep_file *f = NULL;
	struct llmio_error err = {0};
	int ret = sweep_file_load(write_file("bad.ini", text), NULL, &f, &err);

	if (ret != -EINVAL || !strstr(err.msg, want1) || (want2 && !strstr(err.msg, want2)))
		print_message("got %d: %s\n(wanted '%s' and '%s')\n", ret, err.msg, want1,
		              want2 ? want2 : "");
	assert_int_equal(ret, -EINVAL);
	assert_null(f);
	assert_non_null(strstr(err.msg, want1));
	if (want2)
		assert_non_null(strstr(err.msg, want2));
}

static void parse_errors(void **state)
{
	(void)state;
	expect_error("[global]\nioengine=null\n\n[s]\nbsz=4k\n", "bad.ini:5: bsz: unknown key",
	             NULL);
	expect_error("[s]\nbs=4k,4q\n", "bad.ini:2: bs: bs=4q is not valid", "size");
	expect_error("[s]\nrw=read\nbs=\n", "bad.ini:3: bs: empty list", NULL);
	expect_error("[s]\nbs=4k,,8k\n", "bad.ini:2: bs: empty value", NULL);
	expect_error("[s]\niodepth=1..64:x1\n", "bad.ini:2: iodepth: range", "never ends");
	expect_error("[s]\niodepth=1..64:+0\n", "bad.ini:2: iodepth:", "never ends");
	expect_error("[s]\niodepth=0..64:x2\n", "bad.ini:2: iodepth:", "never ends");
	expect_error("[s]\niodepth=64..1\n", "bad.ini:2: iodepth: range", "empty");
	expect_error("[s]\nrw=read..write\n", "bad.ini:2: rw:", "does not take a range");
	expect_error("[s]\nioengine=nope\n", "bad.ini:2: ioengine: unknown engine 'nope'", NULL);
	expect_error("[s]\nsqpoll=maybe\n", "bad.ini:2: sqpoll:", NULL);
	expect_error("[s]\nexclude=bs=4k\n", "bad.ini:2: exclude:", "column");
	expect_error("[s]\nexclude=bs==4k &&\n", "bad.ini:2: exclude:", "expected a key");
	expect_error("[s]\nexclude=nokey==1\n", "bad.ini:2: exclude: unknown key", NULL);
	expect_error("[s]\nbs=4k\nbs=8k\n", "bad.ini:3: bs: given twice", NULL);
	expect_error("[s]\nmodel=Llama-3.2-1B\n", "bad.ini:2: model:", "workload=");
	expect_error("[s]\nworkload=pretrain\nss=iops:0%\n", "bad.ini:3: ss:", NULL);
	expect_error("[s]\njust a line\n", "bad.ini:2:", "key=value");
	/* unknown keys are recipe parameters in workload sections, and only there */
	assert_int_equal(
	        count_points("[s]\nworkload=ckpt\nmodel=Llama-3.2-1B\nranks=1..8:x2\n", NULL), 4);
}

static uint64_t first_hash(const char *text, unsigned repeat)
{
	struct sweep_file *f = load_ok(text);
	struct sweep_plan plan;
	struct sweep_point *p = malloc(sizeof(*p));
	struct llmio_error err = {0};
	uint64_t h;

	assert_non_null(p);
	assert_int_equal(sweep_plan_build(f, &plan, &err), 0);
	assert_int_equal(sweep_point_make(f, &plan, 0, repeat, p, &err), 0);
	h = p->hash;
	free(p);
	sweep_plan_release(&plan);
	sweep_file_free(f);
	return h;
}

static void hashing(void **state)
{
	uint64_t h = first_hash("[s]\nioengine=psync\nbs=4k\nruntime=1\n", 0);

	(void)state;
	assert_int_equal(h, first_hash("[x]\nengine=sync\nbs=4096\nruntime=1000ms\n", 0));
	assert_int_equal(h, first_hash("[s]\nblocksize=4KiB\nruntime=1s\n", 0));
	assert_int_not_equal(h, first_hash("[s]\nioengine=psync\nbs=4k\nruntime=1\n", 1));
	assert_int_not_equal(h, first_hash("[s]\nioengine=psync\nbs=8k\nruntime=1\n", 0));
	/* an engine option at its default is the same point as no option */
	assert_int_equal(first_hash("[s]\nioengine=io_uring\n", 0),
	                 first_hash("[s]\nioengine=io_uring\nsqpoll=0\nhipri=off\n", 0));
	/* the documented scheme: FNV-1a 64 of "key=value\n" in key order: spot-check that
	 * changing a key's name (not only its value) changes the hash */
	assert_int_not_equal(first_hash("[s]\nworkload=load\nalpha=1\n", 0),
	                     first_hash("[s]\nworkload=load\nbeta=1\n", 0));
}

static void steady_series(void **state)
{
	struct steady_cfg cfg;
	struct steady s;
	double t = 0;
	int i;

	(void)state;
	assert_int_equal(steady_parse("iops:5%", &cfg, NULL), 0);
	assert_true(cfg.enabled);
	assert_int_equal(steady_parse("bw:2", &cfg, NULL), 0);
	assert_int_equal(cfg.metric, STEADY_BW);
	assert_int_equal(steady_parse("iops", &cfg, NULL), -EINVAL);
	assert_int_equal(steady_parse("lat:5%", &cfg, NULL), -EINVAL);

	/* within +-3 % of 1000 from the start: steady at the 5th sample */
	cfg = (struct steady_cfg){
	        .enabled = true, .metric = STEADY_IOPS, .window = 5, .tolerance_pct = 5};
	steady_init(&s, &cfg);
	for (i = 1; i <= 20 && !steady_add(&s, i, 1000 + ((i % 3) - 1) * 30); i++)
		;
	assert_int_equal(i, 5);
	assert_true(s.reached);

	/* a warm-up ramp (doubling each second) then flat from the 8th sample: the first window
	 * of flat samples only is 8..12 */
	steady_init(&s, &cfg);
	for (i = 1; i <= 30; i++) {
		double v = i < 8 ? 50 << i : 12800;

		if (steady_add(&s, i, v))
			break;
	}
	assert_int_equal(i, 12);

	/* a drifting series (+4 % per second) never settles within 5 % over 5 samples */
	steady_init(&s, &cfg);
	for (i = 1, t = 1000; i <= 60; i++, t *= 1.04)
		assert_false(steady_add(&s, i, t));

	/* min_s holds it back; a window of zeros is not a steady state */
	cfg.min_s = 12;
	steady_init(&s, &cfg);
	for (i = 1; i <= 20 && !steady_add(&s, i, 500); i++)
		;
	assert_int_equal(i, 12);
	cfg.min_s = 0;
	steady_init(&s, &cfg);
	for (i = 1; i <= 10; i++)
		assert_false(steady_add(&s, i, 0));
}

/*
 * ss=iops_ci: stops once the 95 % confidence interval of the mean of every sample is within
 * the tolerance (and at least `window` samples); the statistic's arithmetic is checked by
 * hand: samples 1000, 1010, 990, 1000 have sd 8.165, so the half-width after 4 samples is
 * t(3) = 3.182 x 8.165 / 2 = 12.99, 1.30 % of the mean.
 */
static void steady_ci(void **state)
{
	static const double v[] = {1000, 1010, 990, 1000, 1005, 995};
	struct steady_cfg cfg;
	struct steady s;
	int i;

	(void)state;
	assert_int_equal(steady_parse("iops_ci:2%", &cfg, NULL), 0);
	assert_true(cfg.enabled);
	assert_int_equal(cfg.test, STEADY_CI);
	assert_int_equal(cfg.metric, STEADY_IOPS);
	assert_int_equal(steady_parse("bw_ci:1", &cfg, NULL), 0);
	assert_int_equal(cfg.metric, STEADY_BW);
	assert_int_equal(cfg.test, STEADY_CI);
	assert_int_equal(steady_parse("iops_cx:1", &cfg, NULL), -EINVAL);
	{
		char buf[32];

		steady_format(&cfg, buf, sizeof(buf));
		assert_string_equal(buf, "bw_ci:1");
	}
	assert_int_equal(steady_window_samples(1.0, 0.25), 4);
	assert_int_equal(steady_window_samples(0.1, 0.25), 2);
	assert_int_equal(steady_window_samples(5, 1), 5);
	assert_true(steady_t95(3) > 3.18 && steady_t95(3) < 3.19);
	assert_true(steady_t95(1000) > 1.95 && steady_t95(1000) < 1.97);

	/* 1.5 %: not after 3 samples (t(2) = 4.3: 3.6 %), reached at the 4th (1.30 %) */
	cfg = (struct steady_cfg){.enabled = true,
	                          .metric = STEADY_IOPS,
	                          .test = STEADY_CI,
	                          .window = 3,
	                          .tolerance_pct = 1.5};
	steady_init(&s, &cfg);
	for (i = 0; i < 6 && !steady_add(&s, 0.25 * (i + 1), v[i]); i++)
		;
	assert_int_equal(i, 3);
	assert_true(s.ci_pct > 1.29 && s.ci_pct < 1.31);
	/* 1.0 %: the 4th is not enough, more agreeing samples narrow it */
	cfg.tolerance_pct = 1.0;
	steady_init(&s, &cfg);
	for (i = 0; i < 6 && !steady_add(&s, 0.25 * (i + 1), v[i]); i++)
		;
	assert_int_equal(i, 4);
	/* the window is a minimum: identical samples still wait for it */
	cfg.window = 8;
	steady_init(&s, &cfg);
	for (i = 0; i < 20 && !steady_add(&s, 0.25 * (i + 1), 500); i++)
		;
	assert_int_equal(i, 7);
	/* a window of 2 still waits for 4 samples: 2 that agree by chance prove nothing */
	cfg.window = 2;
	steady_init(&s, &cfg);
	for (i = 0; i < 20 && !steady_add(&s, 0.25 * (i + 1), 500); i++)
		;
	assert_int_equal(i, STEADY_CI_MIN_SAMPLES - 1);
	/* a series that alternates 500 / 1500 never gets within 5 % in 40 samples */
	cfg.window = 4;
	cfg.tolerance_pct = 5;
	steady_init(&s, &cfg);
	for (i = 0; i < 40; i++)
		assert_false(steady_add(&s, 0.25 * (i + 1), i % 2 ? 1500 : 500));
	/* ... but 40 % is met once the interval has narrowed */
	cfg.tolerance_pct = 40;
	steady_init(&s, &cfg);
	for (i = 0; i < 40 && !steady_add(&s, 0.25 * (i + 1), i % 2 ? 1500 : 500); i++)
		;
	assert_true(i < 40);
}

/* ss_interval is part of a point only when the file sets it, so older journals keep their
 * hashes; set, it samples finer and the window counts samples of it */
static void steady_interval_point(void **state)
{
	struct llmio_error err = {0};
	struct sweep_file *f;
	struct sweep_plan plan;
	struct sweep_point p;

	(void)state;
	f = load_ok("[s]\nioengine=null\nruntime=4s\nss=iops_ci:2%\nss_window=1s\n"
	            "ss_interval=250ms\n");
	assert_int_equal(sweep_plan_build(f, &plan, &err), 0);
	assert_int_equal(sweep_point_make(f, &plan, 0, 0, &p, &err), 0);
	assert_true(p.ss.enabled);
	assert_int_equal(p.ss.test, STEADY_CI);
	assert_int_equal(p.ss.window, 4);
	assert_true(p.ss.interval_s > 0.249 && p.ss.interval_s < 0.251);
	assert_string_equal(sweep_config_get(&p.cfg, "ss_interval"), "250000000");
	sweep_plan_release(&plan);
	sweep_file_free(f);
	assert_int_not_equal(first_hash("[s]\nss=iops:5%\n", 0),
	                     first_hash("[s]\nss=iops:5%\nss_interval=250ms\n", 0));
	assert_int_equal(first_hash("[s]\nss=iops:5%\n", 0),
	                 first_hash("[s]\nss=iops:5%\nss_window=5s\n", 0));
}

struct seen {
	unsigned records, skipped;
	char msg[256];
};

static int count_lines(void *arg, unsigned line, const cJSON *rec, const char *skipped)
{
	struct seen *s = arg;

	(void)line;
	if (rec)
		s->records++;
	else {
		s->skipped++;
		snprintf(s->msg, sizeof(s->msg), "%s", skipped);
	}
	return 0;
}

static void torn_journal(void **state)
{
	struct llmio_error err = {0};
	char path[4200];
	struct journal j;
	struct seen s = {0};
	cJSON *rec = cJSON_Parse("{\"config_hash\":\"0123456789abcdef\",\"x\":1}");
	FILE *f;

	(void)state;
	assert_non_null(rec);
	snprintf(path, sizeof(path), "%s/torn.jsonl", dir);
	unlink(path);
	assert_int_equal(journal_open(&j, path, &err), 0);
	assert_int_equal(journal_append(&j, rec), 0);
	assert_int_equal(journal_append(&j, rec), 0);
	journal_close(&j);
	f = fopen(path, "a");
	fputs("{\"config_hash\":\"fedcba98", f); /* killed mid-write */
	fclose(f);
	assert_int_equal(journal_read(path, count_lines, &s, &err), 0);
	assert_int_equal(s.records, 2);
	assert_int_equal(s.skipped, 1);
	assert_non_null(strstr(s.msg, "line 3 is incomplete"));
	/* resuming appends a newline, never truncates; the torn line stays skipped */
	assert_int_equal(journal_open(&j, path, &err), 0);
	assert_int_equal(journal_append(&j, rec), 0);
	journal_close(&j);
	memset(&s, 0, sizeof(s));
	assert_int_equal(journal_read(path, count_lines, &s, &err), 0);
	assert_int_equal(s.records, 3);
	assert_int_equal(s.skipped, 1);
	assert_non_null(strstr(s.msg, "line 3 is not valid JSON"));
	cJSON_Delete(rec);
}

/* ---- the runner ---- */

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

struct events_seen {
	size_t ended, done, failed, skipped_lines;
	size_t k[16];
	char label[16][128];
};

static void on_ended(void *arg)
{
	((struct events_seen *)arg)->ended++;
}

static void on_done(void *arg, const struct sweep_point_done *d)
{
	struct events_seen *s = arg;

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
	((struct events_seen *)arg)->skipped_lines++;
}

static void plan_and_estimate(void **state)
{
	struct sweep_run_opts o = {.path = write_file("plan.ini", tiny), .repeat = 3};
	struct sweep_runner r;
	struct sweep_estimate e;
	struct llmio_error err = {0};
	char label[256];

	(void)state;
	assert_int_equal(sweep_runner_prepare(&r, &o, NULL, &err), 0);
	/* 2 x 2 points, three rounds of them in file order */
	assert_int_equal(r.plan.n, 4);
	assert_int_equal(r.norder, 12);
	assert_int_equal(r.order[5].idx, 1);
	assert_int_equal(r.order[5].repeat, 1);
	sweep_runner_label(&r, 3, label, sizeof(label));
	assert_string_equal(label, "[tiny] bs=16k iodepth=2");
	assert_int_equal(sweep_runner_estimate(&r, &e, &err), 0);
	/* 12 points of 100 ms each plus the setup allowance, nothing already done */
	assert_true(e.total_s > 12 * (0.1 + e.setup_s) - 1e-9);
	assert_true(e.total_s < 12 * (0.1 + e.setup_s) + 1e-9);
	assert_int_equal(e.already, 0);
	sweep_runner_release(&r);

	/* shuffled: the same points, another order, the same for the same seed */
	o.shuffle = true;
	o.seed = 7;
	assert_int_equal(sweep_runner_prepare(&r, &o, NULL, &err), 0);
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
	struct llmio_error err = {0};
	char journal[4200];
	struct sweep_run_opts o = {.path = write_file("run.ini", tiny), .keep_cache = true};
	struct events_seen s = {0};
	struct sweep_events ev = {.point_ended = on_ended,
	                          .point_done = on_done,
	                          .skipped_line = on_skipped,
	                          .arg = &s};
	struct sweep_runner r;
	volatile int abort_flag = 0, point_stop = 0;
	struct seen lines = {0};
	FILE *f;

	(void)state;
	snprintf(journal, sizeof(journal), "%s/run.jsonl", dir);
	unlink(journal);
	o.journal = journal;
	assert_int_equal(sweep_runner_prepare(&r, &o, &ev, &err), 0);
	assert_int_equal(sweep_runner_run(&r, &ev, &abort_flag, &point_stop, &err), 0);
	assert_true(r.started);
	assert_int_equal(r.ran, 4);
	assert_int_equal(r.failed, 0);
	assert_int_equal(s.ended, 4);
	assert_int_equal(s.done, 4);
	assert_int_equal(s.k[3], 3);
	assert_string_equal(s.label[0], "[tiny] bs=4k iodepth=1");
	sweep_runner_release(&r);
	assert_int_equal(journal_read(journal, count_lines, &lines, &err), 0);
	assert_int_equal(lines.records, 4);

	/* a torn last line, then --resume: nothing runs again, the bad line is reported */
	f = fopen(journal, "a");
	assert_non_null(f);
	fputs("{\"config_hash\":\"fedc", f);
	fclose(f);
	memset(&s, 0, sizeof(s));
	o.resume = true;
	assert_int_equal(sweep_runner_prepare(&r, &o, &ev, &err), 0);
	assert_int_equal(r.ndone, 4);
	assert_int_equal(s.skipped_lines, 1);
	assert_int_equal(sweep_runner_run(&r, &ev, &abort_flag, &point_stop, &err), 0);
	assert_int_equal(r.ran, 0);
	assert_int_equal(r.skipped, 4);
	assert_int_equal(s.done, 0);
	sweep_runner_release(&r);

	/* an abort before the start: no point runs */
	unlink(journal);
	o.resume = false;
	abort_flag = 1;
	assert_int_equal(sweep_runner_prepare(&r, &o, &ev, &err), 0);
	assert_int_equal(sweep_runner_run(&r, &ev, &abort_flag, &point_stop, &err), 0);
	assert_int_equal(r.ran, 0);
	sweep_runner_release(&r);
}

static void bad_input(void **state)
{
	struct sweep_run_opts o = {.path = write_file("bad.ini", "[s]\nbs=4k,banana\n")};
	struct sweep_runner r;
	struct llmio_error err = {0};

	(void)state;
	assert_int_equal(sweep_runner_prepare(&r, &o, NULL, &err), -EINVAL);
	assert_true(r.bad_input);
	assert_non_null(strstr(err.msg, "bad.ini"));
	sweep_runner_release(&r);

	o.path = "/nonexistent/llmio/job.ini";
	assert_int_not_equal(sweep_runner_prepare(&r, &o, NULL, &err), 0);
	assert_true(r.bad_input);
	sweep_runner_release(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(lists_and_ranges),
	        cmocka_unit_test(exclusions),
	        cmocka_unit_test(parse_errors),
	        cmocka_unit_test(hashing),
	        cmocka_unit_test(steady_series),
	        cmocka_unit_test(steady_ci),
	        cmocka_unit_test(steady_interval_point),
	        cmocka_unit_test(torn_journal),
	        cmocka_unit_test(plan_and_estimate),
	        cmocka_unit_test(run_and_resume),
	        cmocka_unit_test(bad_input),
	};
	const char *base = getenv("LLMIO_TEST_DIR");

	snprintf(dir, sizeof(dir), "%s/test_sweep.%d", base ? base : "/tmp", (int)getpid());
	mkdir(base ? base : "/tmp", 0755);
	if (mkdir(dir, 0755)) {
		perror(dir);
		return 1;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
