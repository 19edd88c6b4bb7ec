/* SPDX-License-Identifier: MIT */
/*
 * The adaptive sweep (src/sweep/adaptive.c) on synthetic journals whose answers are known.
 * Every point's record is made as the sweep makes it (sweep_point_record over a result whose
 * figures come from a formula), so the advisor (advise_journal_answers) reads it like a real
 * one.  The "full" answer is the advisor's over every point's record; the adaptive search's
 * evaluator appends one point's record to its own journal.  Shapes: throughput rising with
 * iodepth and threads (monotone), a peak in the middle of iodepth, datapaths that tie inside
 * the noise (the advisor then chooses by GB/s per core), and noise within the tolerance.  On
 * the study matrix's grid (225 points) the search must give the full answers with at most
 * 20 % of the points; on small grids the number of points it measures is known by hand.
 */
#include <errno.h>
#include <math.h>
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

#include "llmio/llmio.h"
#include "report/report.h"
#include "stats/result_json.h"
#include "stats/record.h"
#include "sweep/adaptive.h"
#include "sweep/journal.h"
#include "sweep/sweep.h"

static char dir[4096];

enum shape { MONOTONE, PEAK, TIES, NOISE };

struct synth {
	enum shape shape;
	struct sweep_file *f;
	struct sweep_plan plan;
	char journal[4200];
	size_t evaluated;
};

/* A deterministic number in [-1, 1] from a point's hash (the "noise"). */
static double jitter(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return (double)(h % 2001) / 1000.0 - 1.0;
}

/* Datapath strength by section: the shapes' winners differ. */
static double path_factor(const struct synth *s, const char *section)
{
	static const char *const names[] = {"libaio", "io_uring", "io_uring-iopoll",
	                                    "io_uring-sqpoll", "io_uring-sqpoll-regfiles"};
	static const double base[][5] = {
	        [MONOTONE] = {1.00, 1.10, 1.35, 1.20, 1.25},
	        [PEAK] = {1.30, 1.00, 1.10, 1.15, 1.05},
	        [TIES] = {1.00, 1.01, 1.00, 1.02, 1.01}, /* all within 2 %: GB/s per core decides */
	        [NOISE] = {1.00, 1.20, 1.10, 1.40, 1.30},
	};

	for (size_t i = 0; i < 5; i++)
		if (!strcmp(section, names[i]))
			return base[s->shape][i];
	return 1.0;
}

/* Relative throughput at (iodepth, numjobs): one peak (at the top for MONOTONE). */
static double depth_curve(const struct synth *s, double qd, double nj)
{
	double q = log2(qd), j = log2(nj);

	if (s->shape == PEAK) /* best at iodepth 8, 4 threads; falls on both sides */
		return 1.0 / (1.0 + 0.2 * fabs(q - 3) + 0.15 * fabs(j - 2));
	return (1.0 + 0.3 * q) * (1.0 + 0.25 * j); /* more is better */
}

/* The record of plan point idx, as the sweep writes it. */
static cJSON *synth_record(const struct synth *s, size_t idx)
{
	struct sweep_point *p = malloc(sizeof(*p));
	struct llmio_result *r = calloc(1, sizeof(*r));
	struct sweep_outcome o = {0};
	struct llmio_error e = {0};
	const char *rw;
	cJSON *rec, *ph, *jobs;
	double qd, nj, bs, pf, bw, iops, lat, noise, rfrac;

	assert_non_null(p);
	assert_non_null(r);
	assert_int_equal(sweep_point_make(s->f, &s->plan, idx, 0, p, &e), 0);
	assert_int_equal(sweep_point_opts(p, &r->opts, &e), 0);
	rw = sweep_config_get(&p->cfg, "rw");
	qd = (double)strtoull(sweep_config_get(&p->cfg, "iodepth"), NULL, 10);
	nj = (double)strtoull(sweep_config_get(&p->cfg, "numjobs"), NULL, 10);
	bs = (double)strtoull(sweep_config_get(&p->cfg, "bs"), NULL, 10);
	pf = path_factor(s, p->section);
	noise = s->shape == NOISE ? 1 + 0.01 * jitter(p->hash) : 1; /* +-1 %: inside 5 % */
	/* throughput grows with bs (A1) and follows the depth curve (A2) */
	bw = 1e8 * pf * depth_curve(s, qd, nj) * sqrt(bs / 2048) * noise;
	iops = bw / bs;
	/* latency: grows with depth, threads and bs; a faster datapath is quicker */
	lat = 20000.0 / pf * (1 + 0.5 * log2(qd)) * (1 + 0.4 * log2(nj)) * (1 + bs / 65536) * noise;
	rfrac = !strcmp(rw, "randread") ? 1 : !strcmp(rw, "randwrite") ? 0 : 0.7;
	r->runtime_s = 2;
	for (int op = 0; op < 2; op++) {
		struct llmio_op_result *x = op ? &r->write : &r->read;
		double share = op ? 1 - rfrac : rfrac;

		llmio_hist_init(&x->clat);
		llmio_hist_init(&x->slat);
		llmio_hist_init(&x->lat);
		if (!(share > 0))
			continue;
		x->iops = iops * share;
		x->bw_bytes = bw * share;
		x->ios = (uint64_t)(x->iops * r->runtime_s);
		x->bytes = x->ios * (uint64_t)bs;
		llmio_hist_add_n(&x->clat, (uint64_t)lat, x->ios ? x->ios : 1);
	}
	llmio_hist_init(&r->sync_lat);
	/* CPU: the datapaths differ in GB/s per core (what decides a tie) */
	r->cpu.cores_busy = 0.5 + 0.1 * (double)(strlen(p->section) % 5);
	r->gb_per_s_per_core = bw / 1e9 / r->cpu.cores_busy;
	r->service = LLMIO_SERVICE_DEVICE;
	snprintf(r->service_reason, sizeof(r->service_reason), "synthetic");
	jobs = cJSON_CreateArray();
	cJSON_AddItemToArray(jobs, result_job_json(r));
	ph = cJSON_CreateObject();
	cJSON_AddStringToObject(ph, RK_NAME, "run");
	cJSON_AddNumberToObject(ph, RK_WALL_S, 2);
	cJSON_AddItemToObject(ph, RK_JOBS, jobs);
	o.phases = cJSON_CreateArray();
	cJSON_AddItemToArray(o.phases, ph);
	o.wall_s = 2.5;
	rec = sweep_point_record(p, &o);
	assert_non_null(rec);
	free(r);
	free(p);
	return rec;
}

static void append(const char *path, cJSON *rec)
{
	struct journal j;
	struct llmio_error e = {0};

	assert_int_equal(journal_open(&j, path, &e), 0);
	assert_int_equal(journal_append(&j, rec), 0);
	journal_close(&j);
	cJSON_Delete(rec);
}

static int synth_eval(void *arg, size_t idx, struct llmio_error *e)
{
	struct synth *s = arg;

	(void)e;
	s->evaluated++;
	append(s->journal, synth_record(s, idx));
	return 0;
}

static int synth_answers(void *arg, struct adapt_answers *out, struct llmio_error *e)
{
	struct synth *s = arg;

	return advise_journal_answers(s->journal, out, e);
}

static unsigned synth_classes(void *arg, const struct sweep_config *c, unsigned *latency)
{
	(void)arg;
	return advise_config_classes(c, latency);
}

#include "write_file.h"

/* The study matrix's grid (examples/sweeps/study_cpu_matrix.ini): 225 points. */
static const char study[] =
        "[global]\nfilename=x.dat\nsize=1g\ndirect=1\nruntime=2s\n"
        "rw=randread,randwrite,randrw\nrwmixread=70\nbs=2k..16k:x2,1m\niodepth=1,8,32\n"
        "numjobs=1,4,16\nexclude=numjobs>1 && iodepth!=8\n"
        "exclude=rw!=randread && bs!=4k && bs!=1m\n"
        "[libaio]\nioengine=libaio\n[io_uring]\nioengine=io_uring\nregfiles=0\n"
        "[io_uring-iopoll]\nioengine=io_uring\niopoll=1\nregfiles=0\n"
        "[io_uring-sqpoll]\nioengine=io_uring\nsqpoll=1\nregfiles=0\n"
        "[io_uring-sqpoll-regfiles]\nioengine=io_uring\nsqpoll=1\nregfiles=1\n";

static void synth_open(struct synth *s, enum shape shape, const char *ini)
{
	struct llmio_error e = {0};

	memset(s, 0, sizeof(*s));
	s->shape = shape;
	assert_int_equal(sweep_file_load(write_file("grid.ini", ini), NULL, &s->f, &e), 0);
	assert_int_equal(sweep_plan_build(s->f, &s->plan, &e), 0);
}

static void synth_close(struct synth *s)
{
	sweep_plan_release(&s->plan);
	sweep_file_free(s->f);
}

/* The full sweep's answers: every point's record in one journal. */
static void full_answers(struct synth *s, struct adapt_answers *out)
{
	struct llmio_error e = {0};

	snprintf(s->journal, sizeof(s->journal), "%s/full.jsonl", dir);
	unlink(s->journal);
	for (size_t i = 0; i < s->plan.n; i++)
		append(s->journal, synth_record(s, i));
	assert_int_equal(advise_journal_answers(s->journal, out, &e), 0);
}

static size_t adaptive_answers(struct synth *s, struct adapt_answers *out)
{
	struct adapt_ops ops = {synth_eval, synth_answers, synth_classes, s};
	struct adapt_opts o = {.repeats = 1, .tie_pct = 5};
	struct adapt_stats st;
	struct llmio_error e = {0};

	snprintf(s->journal, sizeof(s->journal), "%s/adaptive.jsonl", dir);
	unlink(s->journal);
	s->evaluated = 0;
	assert_int_equal(sweep_adaptive(s->f, &s->plan, &o, &ops, out, &st, &e), 0);
	assert_int_equal(st.evaluated, s->evaluated);
	assert_int_equal(st.points, s->plan.n);
	return st.evaluated;
}

static void answers_decided(const struct adapt_answers *a, size_t want)
{
	size_t n = 0;

	for (size_t i = 0; i < a->n; i++)
		n += a->a[i].best != 0;
	assert_int_equal(n, want);
}

/* The study grid, one shape: the same answers as the full sweep with at most max_pct % of the
 * points. */
static void study_shape(enum shape shape, const char *want_spill, size_t max_pct)
{
	struct adapt_answers *full = malloc(sizeof(*full)), *ad = malloc(sizeof(*ad));
	struct synth s;
	bool paths, settings;
	size_t n;

	assert_non_null(full);
	assert_non_null(ad);
	synth_open(&s, shape, study);
	assert_int_equal(s.plan.n, 225);
	full_answers(&s, full);
	/* inference, shuffled loading, spill and KV offload: the four phases of the grid */
	answers_decided(full, 4);
	n = adaptive_answers(&s, ad);
	answers_decided(ad, 4);
	assert_int_equal(adapt_compare(ad, full, &paths, &settings), 4);
	for (size_t i = 0; i < full->n; i++)
		if (full->a[i].best)
			print_message("  %-30s full: %-26s %-55s\n", full->a[i].phase,
			              full->a[i].datapath, full->a[i].settings);
	for (size_t i = 0; i < ad->n; i++)
		if (ad->a[i].best)
			print_message("  %-30s adap: %-26s %-55s\n", ad->a[i].phase,
			              ad->a[i].datapath, ad->a[i].settings);
	print_message("  %zu of %zu points (%.1f %%)\n", n, s.plan.n, 100.0 * (double)n / 225);
	assert_true(paths);
	assert_true(settings);
	assert_true(n * 100 <= s.plan.n * max_pct);
	for (size_t i = 0; want_spill && i < ad->n; i++)
		if (ad->a[i].best && strstr(ad->a[i].phase, "spill"))
			assert_string_equal(ad->a[i].datapath, want_spill);
	synth_close(&s);
	free(full);
	free(ad);
}

static void study_monotone(void **state)
{
	(void)state;
	study_shape(MONOTONE, "io_uring iopoll=1 regfiles=0", 20);
}

static void study_peak(void **state)
{
	(void)state;
	study_shape(PEAK, "libaio", 20);
}

/* every datapath within 2 % of the others: each one is refined around its own best (A3), so
 * this costs more than the 20 % of a grid where one datapath leads */
static void study_ties(void **state)
{
	(void)state;
	study_shape(TIES, NULL, 30);
}

static void study_noise(void **state)
{
	(void)state;
	study_shape(NOISE, "io_uring regfiles=0 sqpoll=1", 20);
}

/*
 * One datapath, randread 1m (one throughput class), iodepth 1..32:x2: seed at the lower
 * median (4), then its neighbours 2 and 8; the peak shape stops at 8 after measuring 16
 * (4 points: 1 and 32 are never run); the monotone one climbs to 32 (5 points: 1 is not).
 */
static void counted(void **state)
{
	static const char ini[] =
	        "[global]\nfilename=x.dat\nsize=1g\nruntime=2s\nrw=randread\nbs=1m\n"
	        "iodepth=1..32:x2\n[io_uring]\nioengine=io_uring\n";
	struct adapt_answers *full = malloc(sizeof(*full)), *ad = malloc(sizeof(*ad));
	struct synth s;
	bool paths, settings;

	(void)state;
	assert_non_null(full);
	assert_non_null(ad);
	synth_open(&s, PEAK, ini);
	assert_int_equal(s.plan.n, 6);
	full_answers(&s, full);
	assert_int_equal(adaptive_answers(&s, ad), 4);
	assert_int_equal(adapt_compare(ad, full, &paths, &settings), 1);
	assert_true(paths && settings);
	synth_close(&s);

	synth_open(&s, MONOTONE, ini);
	full_answers(&s, full);
	assert_int_equal(adaptive_answers(&s, ad), 5);
	assert_int_equal(adapt_compare(ad, full, &paths, &settings), 1);
	assert_true(paths && settings);
	synth_close(&s);

	/* two datapaths: the second is measured at the first's best settings (A3) only, unless
	 * it ties: 4 + 1 points for the peak shape (libaio 1.30 against io_uring 1.00) */
	synth_open(&s, PEAK,
	           "[global]\nfilename=x.dat\nsize=1g\nruntime=2s\nrw=randread\nbs=1m\n"
	           "iodepth=1..32:x2\n[libaio]\nioengine=libaio\n[io_uring]\nioengine=io_uring\n");
	full_answers(&s, full);
	assert_int_equal(adaptive_answers(&s, ad), 5);
	assert_int_equal(adapt_compare(ad, full, &paths, &settings), 1);
	assert_true(paths && settings);
	synth_close(&s);
	free(full);
	free(ad);
}

/* adapt_compare: a different datapath, different settings, a phase on one side only. */
static void compare(void **state)
{
	struct adapt_answers a = {.n = 2}, b;
	bool paths, settings;

	(void)state;
	a.a[0] = (struct adapt_answer){.cls = 0, .svc = 0, .best = 1};
	snprintf(a.a[0].datapath, sizeof(a.a[0].datapath), "libaio");
	snprintf(a.a[0].settings, sizeof(a.a[0].settings), "bs=4k");
	a.a[1] = (struct adapt_answer){.cls = 1, .svc = 0, .best = 0}; /* no data */
	b = a;
	assert_int_equal(adapt_compare(&a, &b, &paths, &settings), 1);
	assert_true(paths && settings);
	snprintf(b.a[0].settings, sizeof(b.a[0].settings), "bs=8k");
	adapt_compare(&a, &b, &paths, &settings);
	assert_true(paths);
	assert_false(settings);
	snprintf(b.a[0].datapath, sizeof(b.a[0].datapath), "io_uring");
	adapt_compare(&a, &b, &paths, &settings);
	assert_false(paths);
	b = a;
	b.a[1].best = 7; /* answered by one side only */
	snprintf(b.a[1].datapath, sizeof(b.a[1].datapath), "psync");
	adapt_compare(&a, &b, &paths, &settings);
	assert_false(paths);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(compare),        cmocka_unit_test(counted),
	        cmocka_unit_test(study_monotone), cmocka_unit_test(study_peak),
	        cmocka_unit_test(study_ties),     cmocka_unit_test(study_noise),
	};
	const char *base = getenv("LLMIO_TEST_DIR");

	snprintf(dir, sizeof(dir), "%s/adaptive.%d", base ? base : "/tmp", (int)getpid());
	mkdir(base ? base : "/tmp", 0755);
	if (mkdir(dir, 0755)) {
		perror(dir);
		return 1;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
