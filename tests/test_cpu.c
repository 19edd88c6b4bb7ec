/* SPDX-License-Identifier: MIT */
/*
 * CPU accounting against the kernel's own per-thread run-time counters, and proof that an
 * io_uring SQPOLL run counts the kernel poller thread (which fio's per-thread getrusage
 * leaves out).
 *
 * Two suites in one program.  Without arguments (ctest test_cpu, make test): what holds
 * however loaded the machine is, because each figure is compared with the kernel's own
 * counters over the same interval, never with the clock.  With --perf (ctest perf_cpu, label
 * perf, make check-perf, behind tests/perf_gate.sh): also the thresholds against the clock
 * (a spinning thread runs all its wall time, the poller takes a core, a thread watching the
 * ring is not woken per I/O), which only hold when the job has CPUs to itself.
 */
#include <dirent.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "base/clock.h"
#include "job/cpu.h"
#include "engine/spin_window.h"
#include "llmio/llmio.h"

static char dir[4096];
static bool perf; /* --perf: the thresholds against the clock too */

/*
 * The scheduler updates a thread's run time when it switches or ticks, so the counter of a
 * thread running on another CPU lags by up to a tick (10 ms at HZ=100); getrusage reads the
 * same counters.  Two readings of either may differ by this much at each end.
 */
#define TICK_SLACK_S 0.02

/* Sum of /proc/self/task/<tid>/schedstat run times (of the tasks whose comm starts with
 * prefix, or all with NULL): the scheduler's own ns counters.  -1 when no task matched. */
static double schedstat_seconds_of(const char *prefix)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	double total = -1;

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		char path[300], comm[64] = "";
		unsigned long long run = 0;
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		if (prefix) {
			snprintf(path, sizeof(path), "/proc/self/task/%s/comm", de->d_name);
			f = fopen(path, "r");
			if (!f)
				continue;
			if (!fgets(comm, sizeof(comm), f))
				comm[0] = '\0';
			fclose(f);
			if (strncmp(comm, prefix, strlen(prefix)))
				continue;
		}
		snprintf(path, sizeof(path), "/proc/self/task/%s/schedstat", de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%llu", &run) == 1)
			total = (total < 0 ? 0 : total) + (double)run / 1e9;
		fclose(f);
	}
	closedir(d);
	return total;
}

static double schedstat_seconds(void)
{
	double s = schedstat_seconds_of(NULL);

	assert_true(s >= 0);
	return s;
}

static atomic_int spin_stop;

/* Spins until told to stop, so that it is alive at every reading of the test. */
static void *spin(void *arg)
{
	volatile uint64_t x = 0;

	(void)arg;
	while (!atomic_load_explicit(&spin_stop, memory_order_relaxed))
		x++;
	return NULL;
}

/*
 * A spinning thread and a sleeping one: the process figure (getrusage over two snapshots) is
 * the scheduler's, however much CPU the spinner got.  The scheduler's counters are read just
 * outside and just inside the two snapshots, so the process figure lies between the two sums,
 * give or take a tick at each end.  With --perf also: it matches the outer sum within 5 % and
 * a spinner with a CPU to itself runs all of its wall time.
 */
static void busy_thread(void **state)
{
	struct cpu_snap a, b;
	pthread_t t;
	double outer0, outer1, inner0, inner1, ours, outer, inner, wall_s;
	uint64_t t0;

	(void)state;
	atomic_store(&spin_stop, 0);
	assert_int_equal(pthread_create(&t, NULL, spin, NULL), 0);
	outer0 = schedstat_seconds();
	assert_int_equal(cpu_snap_take(&a), 0);
	t0 = now_ns();
	inner0 = schedstat_seconds();
	usleep(400000);
	inner1 = schedstat_seconds();
	assert_int_equal(cpu_snap_take(&b), 0);
	outer1 = schedstat_seconds();
	wall_s = (double)(now_ns() - t0) / 1e9;
	atomic_store(&spin_stop, 1);
	pthread_join(t, NULL);
	ours = (b.usr_s + b.sys_s) - (a.usr_s + a.sys_s);
	outer = outer1 - outer0;
	inner = inner1 - inner0;
	print_message("getrusage %.4f s, schedstat %.4f s inside and %.4f s outside its snapshots, "
	              "wall %.4f s\n",
	              ours, inner, outer, wall_s);
	assert_true(ours >= inner - TICK_SLACK_S);
	assert_true(ours <= outer + TICK_SLACK_S);
	assert_true(b.sys_busy_s >= a.sys_busy_s);
	if (!perf)
		return;
	assert_true(ours > outer * 0.95 - 0.002 && ours < outer * 1.05 + 0.002);
	/* a spinning thread runs all of its wall time: within 5 % when no one else competes */
	assert_true(ours <= wall_s * 1.05 + 0.01);
	if (b.sys_busy_s - a.sys_busy_s < ours + 0.3 * wall_s)
		assert_true(ours >= wall_s * 0.95);
	else
		print_message("other load on the machine: lower bound against wall not checked\n");
}

/*
 * Watches io_uring's SQPOLL thread (iou-sqp-PID, a task of this process) while a job runs:
 * its run time at the first and the last sighting, from the scheduler's counters; and the
 * watcher's own CPU time, which the job's process figure also holds.
 */
struct poller_watch {
	atomic_int stop;
	int seen;
	double first_s, last_s, self_s;
};

static void *watch_poller(void *arg)
{
	struct poller_watch *w = arg;

	while (!atomic_load(&w->stop)) {
		double s = schedstat_seconds_of("iou-sqp");

		if (s >= 0) {
			if (!w->seen++)
				w->first_s = s;
			w->last_s = s;
		}
		usleep(20000);
	}
	w->self_s = cpu_thread_seconds();
	return NULL;
}

static struct llmio_result *sqpoll_job(const char *engine_opts, uint64_t thinktime_ns,
                                       unsigned numjobs)
{
	struct llmio_job_opts o;
	struct llmio_result *r = NULL;
	struct llmio_error err = {0};
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
	ret = llmio_job_run(&o, &r, &err);
	if (ret)
		print_message("%s\n", err.msg);
	assert_int_equal(ret, 0);
	return r;
}

/*
 * The submitting thread sleeps 2 ms between I/Os, so by itself it uses little CPU.  With SQPOLL
 * the kernel's iou-sqp thread spins for sq_thread_idle (1 s) after each submission: llmio's
 * process figure must include it.  Counted at all: the process figure holds at least the run
 * time the scheduler gave the poller while the job ran, whatever share of a CPU it got (the
 * slack is the poller's spin between its creation and the job's first snapshot, and after the
 * last before the ring closes: one or two 20 ms sightings at most).  With --perf also: the poller
 * took more than half a core and the plain run a quarter at most.
 */
static void sqpoll_counted(void **state)
{
	struct llmio_result *plain, *sq;
	struct poller_watch w = {0};
	pthread_t t;
	char why[256];
	double poller_s;

	(void)state;
	if (llmio_engine_probe("io_uring", why, sizeof(why))) {
		print_message("skip: %s\n", why);
		skip();
	}
	/* the job thread sleeps 2 ms after each I/O, most of the time */
	plain = sqpoll_job("sqpoll=0", 2000000, 1);
	assert_int_equal(pthread_create(&t, NULL, watch_poller, &w), 0);
	sq = sqpoll_job("sqpoll=1,sq_thread_idle=1000", 2000000, 1);
	atomic_store(&w.stop, 1);
	pthread_join(t, NULL);
	poller_s = w.last_s - w.first_s;
	print_message("cores busy: plain %.3f, sqpoll %.3f; process %.3f s, of it the poller "
	              "%.3f s (seen %d times) and the watcher %.3f s\n",
	              plain->cpu.cores_busy, sq->cpu.cores_busy, sq->cpu.proc_s, poller_s, w.seen,
	              w.self_s);
	assert_non_null(strstr(sq->engine_notes, "sqpoll on"));
	/* the kernel runs the poller as a task of this process (Linux >= 5.12) */
	assert_true(w.seen > 0);
	assert_true(sq->cpu.proc_s - w.self_s >= poller_s - 0.05);
	if (perf) {
		assert_true(plain->cpu.cores_busy < 0.25);
		assert_true(sq->cpu.cores_busy > 0.5);
		assert_true(sq->cpu.proc_s > plain->cpu.proc_s + 0.4);
	}
	llmio_result_destroy(plain);
	llmio_result_destroy(sq);
}

/*
 * SQPOLL completions: the mode each setting and the CPU count choose, as the engine reports
 * it.  With --perf also what each mode does: a thread that sleeps for each completion is
 * woken once per I/O (a voluntary context switch each, from the kernel's own counter); one
 * that watches the ring first is not.  Cached 4 KiB reads at QD 1 complete in a few
 * microseconds, well inside 200 us, when the poller has a CPU of its own; when it must wait
 * for one, the watching thread sleeps too.
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
	assert_true(sleeps->read.ios > 0 && spins->read.ios > 0);
	if (perf) {
		assert_true(per_io_sleep > 0.5);
		assert_true(per_io_spin < 0.05);
	}
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

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(busy_thread),
	        cmocka_unit_test(sqpoll_counted),
	        cmocka_unit_test(sqpoll_spin),
	        cmocka_unit_test(spin_window_adapts),
	};
	const struct CMUnitTest perf_tests[] = {
	        cmocka_unit_test(busy_thread),
	        cmocka_unit_test(sqpoll_counted),
	        cmocka_unit_test(sqpoll_spin),
	};
	const char *base = getenv("LLMIO_TEST_DIR");

	perf = argc > 1 && !strcmp(argv[1], "--perf");
	snprintf(dir, sizeof(dir), "%s/cpu", base ? base : "/tmp/llmio-test");
	mkdir(base ? base : "/tmp/llmio-test", 0755);
	mkdir(dir, 0755);
	if (perf)
		return cmocka_run_group_tests_name("perf_cpu", perf_tests, NULL, NULL);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
