/* SPDX-License-Identifier: MIT */
/*
 * CPU accounting against the kernel's own per-thread run-time counters, and proof that an
 * io_uring SQPOLL run counts the kernel poller thread (which fio's per-thread getrusage
 * leaves out).
 */
#include <dirent.h>
#include <pthread.h>
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

#include "core/clock.h"
#include "core/cpu.h"
#include "engine/spin_window.h"
#include "llmio/llmio.h"

static char dir[4096];

/* Sum of /proc/self/task/<tid>/schedstat run times: the scheduler's own ns counters. */
static double schedstat_seconds(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	double total = 0;

	assert_non_null(d);
	while ((de = readdir(d))) {
		char path[300];
		unsigned long long run = 0;
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/schedstat", de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%llu", &run) == 1)
			total += (double)run / 1e9;
		fclose(f);
	}
	closedir(d);
	return total;
}

static void *spin(void *arg)
{
	uint64_t end = now_ns() + 500000000ull;
	volatile uint64_t x = 0;

	(void)arg;
	while (now_ns() < end)
		x++;
	return NULL;
}

/* A thread busy for 0.5 s of wall time: the process figure matches the scheduler's within 5 %. */
static void busy_thread(void **state)
{
	struct cpu_snap a, b;
	pthread_t t;
	double sched0, sched1, ours, theirs;
	uint64_t t0, wall;

	(void)state;
	assert_int_equal(pthread_create(&t, NULL, spin, NULL), 0);
	/* both snapshots while the spinner is alive, so its schedstat is counted at each end */
	sched0 = schedstat_seconds();
	assert_int_equal(cpu_snap_take(&a), 0);
	t0 = now_ns();
	usleep(400000);
	assert_int_equal(cpu_snap_take(&b), 0);
	sched1 = schedstat_seconds();
	wall = now_ns() - t0;
	pthread_join(t, NULL);
	ours = (b.usr_s + b.sys_s) - (a.usr_s + a.sys_s);
	theirs = sched1 - sched0;
	print_message("getrusage %.4f s, schedstat %.4f s, wall %.4f s\n", ours, theirs,
	              (double)wall / 1e9);
	assert_true(ours > theirs * 0.95 - 0.002 && ours < theirs * 1.05 + 0.002);
	/* a spinning thread runs all of its wall time: within 5 % when no one else competes */
	assert_true(ours <= (double)wall / 1e9 * 1.05 + 0.01);
	if (b.sys_busy_s - a.sys_busy_s < ours + 0.3 * (double)wall / 1e9)
		assert_true(ours >= (double)wall / 1e9 * 0.95);
	else
		print_message("other load on the machine: lower bound against wall not checked\n");
	assert_true(b.sys_busy_s >= a.sys_busy_s);
}

static struct llmio_result *sqpoll_job(const char *engine_opts, uint64_t thinktime_ns,
                                       unsigned numjobs)
{
	struct llmio_job_opts o;
	struct llmio_result *r = NULL;
	char err[512];
	int ret;

	llmio_job_opts_init(&o);
	snprintf(o.filename, sizeof(o.filename), "%.4000s/sqpoll", dir);
	snprintf(o.engine, sizeof(o.engine), "io_uring");
	snprintf(o.engine_opts, sizeof(o.engine_opts), "%s", engine_opts);
	o.size = 4 << 20;
	o.rw = LLMIO_RW_RANDREAD;
	o.runtime_ns = 1000000000ull;
	o.thinktime_ns = thinktime_ns;
	o.numjobs = numjobs;
	o.invalidate = false;
	ret = llmio_job_run(&o, &r, err, sizeof(err));
	if (ret)
		print_message("%s\n", err);
	assert_int_equal(ret, 0);
	return r;
}

/*
 * The submitting thread sleeps 2 ms between I/Os, so by itself it uses little CPU.  With SQPOLL
 * the kernel's iou-sqp thread spins for sq_thread_idle (1 s) after each submission, about one
 * core: llmio's process figure must include it.
 */
static void sqpoll_counted(void **state)
{
	struct llmio_result *plain, *sq;
	char why[256];

	(void)state;
	if (llmio_engine_probe("io_uring", why, sizeof(why))) {
		print_message("skip: %s\n", why);
		skip();
	}
	/* the job thread sleeps 2 ms after each I/O, most of the time */
	plain = sqpoll_job("sqpoll=0", 2000000, 1);
	sq = sqpoll_job("sqpoll=1,sq_thread_idle=1000", 2000000, 1);
	print_message("cores busy: plain %.3f, sqpoll %.3f\n", plain->cpu.cores_busy,
	              sq->cpu.cores_busy);
	assert_true(plain->cpu.cores_busy < 0.25);
	assert_true(sq->cpu.cores_busy > 0.5);
	assert_true(sq->cpu.proc_s > plain->cpu.proc_s + 0.4);
	llmio_result_destroy(plain);
	llmio_result_destroy(sq);
}

/*
 * SQPOLL completions: a thread that sleeps for each one is woken once per I/O (a voluntary
 * context switch each, from the kernel's own counter); one that watches the ring first is
 * not.  Cached 4 KiB reads at QD 1 complete in a few microseconds, well inside 200 us.
 */
static void sqpoll_spin(void **state)
{
	struct llmio_result *sleeps, *spins, *aut;
	char why[256];
	double per_io_sleep, per_io_spin;

	(void)state;
	if (llmio_engine_probe("io_uring", why, sizeof(why))) {
		print_message("skip: %s\n", why);
		skip();
	}
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		print_message("skip: one CPU: the thread and its poller cannot both run\n");
		skip();
	}
	sleeps = sqpoll_job("sqpoll=1,sqpoll_spin=0", 0, 1);
	spins = sqpoll_job("sqpoll=1,sqpoll_spin=200", 0, 1);
	per_io_sleep = (double)sleeps->cpu.ctx_voluntary / (double)sleeps->read.ios;
	per_io_spin = (double)spins->cpu.ctx_voluntary / (double)spins->read.ios;
	print_message("voluntary switches per I/O: sleep %.3f, spin %.4f; IOPS %.0f vs %.0f\n",
	              per_io_sleep, per_io_spin, sleeps->read.iops, spins->read.iops);
	assert_non_null(strstr(sleeps->engine_notes, "sleep at once (sqpoll_spin=0)"));
	assert_non_null(strstr(spins->engine_notes, "watch the ring 200 us"));
	assert_true(per_io_sleep > 0.5);
	assert_true(per_io_spin < 0.05);
	llmio_result_destroy(sleeps);
	llmio_result_destroy(spins);

	/* auto: one thread per two CPUs watches; more threads than that sleep at once */
	aut = sqpoll_job("sqpoll=1", 0, 1);
	/* a cached file: the poller does the copies, so the window may grow to 4 ms */
	assert_non_null(strstr(aut->engine_notes, "watch the ring 200-4000 us (wider for gaps"));
	llmio_result_destroy(aut);
	aut = sqpoll_job("sqpoll=1,sq_thread_idle=10", 0, (unsigned)sysconf(_SC_NPROCESSORS_ONLN));
	assert_non_null(strstr(aut->engine_notes, "sleep at once (auto"));
	llmio_result_destroy(aut);
}

/*
 * The SQPOLL watch window: a gap it missed but the cap covers widens it past that gap (the
 * next one is watched through); gaps past the cap halve it back; it stays within its bounds;
 * a fixed window (min = max) never moves.
 */
static void spin_window_adapts(void **state)
{
	struct spin_window w = {200000, 200000, 1000000};
	struct spin_window fixed = {300000, 300000, 300000};

	(void)state;
	spin_window_slept(&w, 480000); /* a virtio disk's QD 8 burst gap */
	assert_int_equal(w.ns, 600000);
	spin_window_slept(&w, 400000); /* shorter gaps do not narrow it */
	assert_int_equal(w.ns, 600000);
	spin_window_slept(&w, 950000); /* capped */
	assert_int_equal(w.ns, 1000000);
	spin_window_slept(&w, 5000000); /* not worth watching: back towards the minimum */
	assert_int_equal(w.ns, 500000);
	spin_window_slept(&w, 5000000);
	spin_window_slept(&w, 5000000);
	assert_int_equal(w.ns, 200000);
	spin_window_slept(&fixed, 250000);
	spin_window_slept(&fixed, 5000000);
	assert_int_equal(fixed.ns, 300000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(busy_thread),
	        cmocka_unit_test(sqpoll_counted),
	        cmocka_unit_test(sqpoll_spin),
	        cmocka_unit_test(spin_window_adapts),
	};
	const char *base = getenv("LLMIO_TEST_DIR");

	snprintf(dir, sizeof(dir), "%s/cpu", base ? base : "/tmp/llmio-test");
	mkdir(base ? base : "/tmp/llmio-test", 0755);
	mkdir(dir, 0755);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
