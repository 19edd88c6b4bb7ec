/* SPDX-License-Identifier: MIT */
/*
 * Jobs through the public API: exact I/O counts, op mix, runtime and ramp, rate limit, think
 * time, fsync cadence, device counters, interruption and option errors.  Each figure is
 * checked against something independent of the code that measures it: the arithmetic of the
 * job, the clock, or the block device's own counters.
 *
 * Two suites in one program.  Without arguments (ctest test_job, make test): what holds
 * however loaded the machine is (a limit is never exceeded, the asked time is never cut
 * short).  With --perf (ctest perf_job, label perf, make check-perf, behind
 * tests/perf_gate.sh): the timed tests again with their windows against the clock too (a job
 * ends within 10 % of its runtime, reaches its rate, is not slowed by its think time beyond
 * the sleeps), which only hold when the job's threads get a CPU when they want one.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
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
#include "base/hash.h"
#include "llmio/llmio.h"

static char dir[4096];
static bool perf; /* --perf: the windows against the clock too */

#include "job_run.h"

static void exact_counts(void **state)
{
	struct llmio_job_opts o;
	struct llmio_result *r;

	(void)state;
	base(&o, "null", NULL);
	o.rw = LLMIO_RW_RANDREAD;
	o.size = 64 << 20;
	o.io_size = 8 << 20;
	o.numjobs = 2;
	o.iodepth = 16;
	r = run_ok(&o);
	assert_int_equal(r->read.ios, 2 * 2048); /* 8 MiB / 4 KiB per thread */
	assert_int_equal(r->read.bytes, 2ull * (8 << 20));
	assert_int_equal(r->read.clat.count, r->read.ios);
	assert_int_equal(r->read.slat.count, r->read.ios);
	assert_int_equal(r->write.ios, 0);
	assert_false(r->interrupted);
	llmio_result_destroy(r);
}

static void mix(void **state)
{
	struct llmio_job_opts o;
	struct llmio_result *r;
	double frac;

	(void)state;
	base(&o, "null", NULL);
	o.rw = LLMIO_RW_RANDRW;
	o.rwmixread = 70;
	o.io_size = 200000ull * 4096;
	o.size = o.io_size;
	r = run_ok(&o);
	frac = (double)r->read.ios / (double)(r->read.ios + r->write.ios);
	assert_int_equal(r->read.ios + r->write.ios, 200000);
	assert_true(frac > 0.69 && frac < 0.71);
	llmio_result_destroy(r);
}

static void runtime_and_ramp(void **state)
{
	struct llmio_job_opts o;
	struct llmio_result *r;
	uint64_t t0 = now_ns();
	double wall;

	(void)state;
	base(&o, "null", NULL);
	o.rw = LLMIO_RW_READ;
	o.runtime_ns = 300000000ull;
	o.ramp_time_ns = 200000000ull;
	r = run_ok(&o);
	wall = (double)(now_ns() - t0) / 1e9;
	print_message("runtime %.4f s, wall %.4f s\n", r->runtime_s, wall);
	assert_true(r->runtime_s > 0.29);
	assert_true(wall > 0.49);                /* the ramp ran, */
	assert_true(r->runtime_s + 0.19 < wall); /* uncounted */
	assert_true(r->read.ios > 0);
	if (perf) {
		assert_true(r->runtime_s < 0.33);
		assert_true(r->read.ios > 1000);
	}
	llmio_result_destroy(r);
}

static void rate_limit(void **state)
{
	struct llmio_job_opts o;
	struct llmio_result *r;

	(void)state;
	base(&o, "null", NULL);
	o.rw = LLMIO_RW_RANDREAD;
	o.rate = 4 << 20; /* 4 MiB/s each of two threads (fio's rate, per clone) */
	o.numjobs = 2;
	o.runtime_ns = 1000000000ull;
	r = run_ok(&o);
	print_message("rate: %.0f B/s for 2 x %.0f asked\n", r->read.bw_bytes, (double)o.rate);
	/* never faster (a stalled thread catches up to the rate, not past it) */
	assert_true(r->read.bw_bytes < 1.1 * 2 * o.rate);
	assert_true(r->read.ios > 0);
	if (perf)
		assert_true(r->read.bw_bytes > 0.9 * 2 * o.rate);
	llmio_result_destroy(r);
}

static void think_time(void **state)
{
	struct llmio_job_opts o;
	struct llmio_result *r;

	(void)state;
	base(&o, "null", NULL);
	o.rw = LLMIO_RW_RANDREAD;
	o.thinktime_ns = 1000000; /* 1 ms after every 4 I/Os: at most 4000 I/Os per second */
	o.thinktime_blocks = 4;
	o.runtime_ns = 500000000ull;
	r = run_ok(&o);
	print_message("think time: %llu I/Os in %.3f s\n", (unsigned long long)r->read.ios,
	              r->runtime_s);
	assert_true(r->read.ios <= 2004 + 4);
	assert_true(r->read.ios > 0);
	if (perf)
		assert_true(r->read.ios > 800); /* sleeps overshoot a little, never by 2x */
	llmio_result_destroy(r);
}

static void fsync_cadence(void **state)
{
	struct llmio_job_opts o;
	struct llmio_result *r;

	(void)state;
	base(&o, "psync", "fsync");
	o.rw = LLMIO_RW_WRITE;
	o.bs = 64 << 10;
	o.size = 4 << 20; /* 64 writes */
	o.fsync = 4;
	o.end_fsync = true;
	r = run_ok(&o);
	assert_int_equal(r->write.ios, 64);
	assert_int_equal(r->fsyncs, 16); /* every 4th write; nothing left dirty at the end */
	assert_int_equal(r->sync_lat.count, 16);
	llmio_result_destroy(r);
}

/* O_DIRECT reads must show up at the block device, byte for byte at least. */
static void device_counters(void **state)
{
	struct llmio_job_opts o;
	struct llmio_result *r;

	(void)state;
	base(&o, "io_uring", "devcount");
	o.rw = LLMIO_RW_READ;
	o.bs = 1 << 20;
	o.iodepth = 4;
	o.size = 32 << 20;
	o.direct = true;
	r = run_ok(&o);
	if (!r->device.known) {
		print_message("skip: %s has no block device underneath\n", dir);
		llmio_result_destroy(r);
		skip();
	}
	assert_true(r->direct_in_effect);
	assert_int_equal(r->read.bytes, 32 << 20);
	print_message("device read %llu bytes for %llu\n", (unsigned long long)r->device.read_bytes,
	              (unsigned long long)r->read.bytes);
	assert_true(r->device.read_bytes >= r->read.bytes);
	/*
	 * Interrupts: when sysfs shows the device's vectors, each completed request raised at
	 * most one (virtio and NVMe may coalesce, never multiply), and some CPU took them.
	 */
	print_message("device: %llu requests, %llu interrupts on CPU %s\n",
	              (unsigned long long)r->device.read_ios, (unsigned long long)r->device.irqs,
	              r->device.irq_cpus);
	if (r->device.irqs) {
		assert_true(r->device.irqs <= r->device.read_ios + r->device.write_ios + 200);
		assert_true(r->device.irq_cpus[0] != '\0');
		assert_non_null(strstr(r->engine_notes, "completions interrupted CPU"));
	}
	llmio_result_destroy(r);
}

static void *stop_later(void *arg)
{
	usleep(300000);
	__atomic_store_n((volatile int *)arg, 1, __ATOMIC_RELAXED); /* as llmio/job.h asks */
	return NULL;
}

static void interrupted(void **state)
{
	static volatile int stop;
	struct llmio_job_opts o;
	struct llmio_result *r;
	pthread_t t;

	(void)state;
	base(&o, "null", NULL);
	o.rw = LLMIO_RW_RANDREAD;
	o.runtime_ns = 30000000000ull;
	o.stop = &stop;
	assert_int_equal(pthread_create(&t, NULL, stop_later, (void *)&stop), 0);
	r = run_ok(&o);
	pthread_join(t, NULL);
	assert_true(r->interrupted);
	assert_true(r->runtime_s < 29); /* well before its 30 s */
	assert_true(r->read.ios > 0);
	if (perf) /* about the 0.3 s of stop_later */
		assert_true(r->runtime_s > 0.2 && r->runtime_s < 2);
	llmio_result_destroy(r);
}

static void bad_options(void **state)
{
	struct llmio_job_opts o;
	struct llmio_result *r = NULL;
	struct llmio_error err = {0};

	(void)state;
	base(&o, "warp-drive", "x");
	assert_int_equal(llmio_job_run(&o, &r, &err), -EINVAL);
	assert_null(r);
	assert_non_null(strstr(err.msg, "io_uring")); /* lists the engines that exist */

	base(&o, "mmap", "x");
	o.direct = true;
	assert_int_equal(llmio_job_run(&o, &r, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "direct=0"));

	base(&o, "psync", NULL);
	assert_int_equal(llmio_job_run(&o, &r, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "--filename"));

	base(&o, "io_uring", "x");
	snprintf(o.engine_opts, sizeof(o.engine_opts), "warp=9");
	assert_int_equal(llmio_job_run(&o, &r, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "sqpoll")); /* lists the engine's options */

	base(&o, "null", NULL);
	o.rw = LLMIO_RW_READ;
	o.random_distribution = LLMIO_DIST_ZIPF;
	o.zipf_theta = 1.1;
	assert_int_equal(llmio_job_run(&o, &r, &err), -EINVAL);
}

/* The error carrier at the API's edge: the code and one line on failure, NULL allowed, and a
 * success leaves what the last failure said (one carrier serves a sequence of calls). */
static void error_carrier(void **state)
{
	struct llmio_job_opts o;
	struct llmio_result *r = NULL;
	struct llmio_error err;

	(void)state;
	llmio_error_init(&err);
	assert_int_equal(err.code, 0);
	assert_string_equal(err.msg, "");
	base(&o, "psync", NULL);
	assert_int_equal(llmio_job_run(&o, &r, &err), -EINVAL);
	assert_null(r);
	assert_int_equal(err.code, -EINVAL);
	assert_non_null(strstr(err.msg, "--filename"));
	assert_null(strchr(err.msg, '\n'));
	assert_int_equal(llmio_job_run(&o, &r, NULL), -EINVAL);
	assert_null(r);

	base(&o, "null", NULL);
	o.size = 1 << 20;
	o.io_size = 1 << 20;
	assert_int_equal(llmio_job_run(&o, &r, &err), 0);
	llmio_result_destroy(r);
	assert_int_equal(err.code, -EINVAL);
	assert_non_null(strstr(err.msg, "--filename"));
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Written data must not deduplicate: one buffer (psync) written 256 times over a file leaves
 * 256 x 16 distinct 4 KiB blocks.  Checked on the file itself with a hash of each block.
 */
static void writes_unique(void **state)
{
	enum { BLOCKS = 256 * 16 };
	struct llmio_job_opts o;
	struct llmio_result *r;
	uint64_t *h = calloc(BLOCKS, sizeof(*h));
	char *blk = malloc(4096);
	FILE *f;

	(void)state;
	base(&o, "psync", "unique");
	o.rw = LLMIO_RW_WRITE;
	o.bs = 64 << 10;
	o.size = (uint64_t)BLOCKS * 4096;
	r = run_ok(&o);
	assert_int_equal(r->write.ios, 256);
	llmio_result_destroy(r);
	f = fopen(o.filename, "rb");
	assert_non_null(f);
	for (unsigned i = 0; i < BLOCKS; i++) {
		assert_int_equal(fread(blk, 1, 4096, f), 4096);
		h[i] = hash64(0, blk, 4096);
	}
	fclose(f);
	qsort(h, BLOCKS, sizeof(*h), cmp_u64);
	for (unsigned i = 1; i < BLOCKS; i++)
		assert_true(h[i] != h[i - 1]);
	free(h);
	free(blk);
}

/* iodepth_effective: what each engine can really keep in progress at once. */
static void effective_depth(void **state)
{
	static const struct {
		const char *engine;
		bool direct;
		unsigned want;
	} cases[] = {
	        {"psync", false, 1}, {"mmap", false, 1},     {"libaio", false, 1},
	        {"libaio", true, 8}, {"io_uring", false, 8}, {"io_uring", true, 8},
	};
	char why[256];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct llmio_job_opts o;
		struct llmio_result *r;

		if (llmio_engine_probe(cases[i].engine, why, sizeof(why))) {
			print_message("%s not checked: %s\n", cases[i].engine, why);
			continue;
		}
		base(&o, cases[i].engine, "depth");
		o.rw = LLMIO_RW_RANDREAD;
		o.iodepth = 8;
		o.size = 4 << 20;
		o.io_size = 1 << 20;
		o.direct = cases[i].direct;
		r = run_ok(&o);
		print_message("%s direct=%d: iodepth_effective %u\n", cases[i].engine,
		              cases[i].direct, r->iodepth_effective);
		assert_int_equal(r->iodepth_effective, cases[i].want);
		llmio_result_destroy(r);
	}
}

/* What each job thread's own affinity mask is, read on the thread by the kernel's call. */
static cpu_set_t seen[2];

static int record_cpus(void *arg, unsigned thread, struct llmio_io *io)
{
	(void)arg;
	(void)io;
	if (thread < 2)
		assert_int_equal(sched_getaffinity(0, sizeof(seen[thread]), &seen[thread]), 0);
	return 0; /* no I/O: the thread ends */
}

static void cpus_run(const char *list, const char *policy, unsigned numjobs)
{
	const struct llmio_io_source src = {.next = record_cpus};
	struct llmio_job_opts o;

	base(&o, "null", NULL);
	o.io_source = &src;
	o.numjobs = numjobs;
	assert_true(snprintf(o.cpus_allowed, sizeof(o.cpus_allowed), "%s", list) <
	            (int)sizeof(o.cpus_allowed));
	snprintf(o.cpus_allowed_policy, sizeof(o.cpus_allowed_policy), "%s", policy);
	memset(seen, 0, sizeof(seen));
	llmio_result_destroy(run_ok(&o));
}

/* cpus_allowed pins the job threads: shared = the whole list, split = one CPU each. */
static void cpus_allowed(void **state)
{
	struct llmio_job_opts o;
	struct llmio_result *r = NULL;
	struct llmio_error err = {0};
	char list[32]; /* two CPU numbers */
	cpu_set_t may;
	int a, b;

	(void)state;
	assert_int_equal(sched_getaffinity(0, sizeof(may), &may), 0);
	for (a = 0; !CPU_ISSET(a, &may); a++)
		;
	cpus_run("", "shared", 1); /* no list: where the process may run */
	assert_true(CPU_EQUAL(&seen[0], &may));
	snprintf(list, sizeof(list), "%d", a);
	cpus_run(list, "shared", 1);
	assert_int_equal(CPU_COUNT(&seen[0]), 1);
	assert_true(CPU_ISSET(a, &seen[0]));

	for (b = a + 1; b < CPU_SETSIZE && !CPU_ISSET(b, &may); b++)
		;
	if (b < CPU_SETSIZE) {
		snprintf(list, sizeof(list), "%d,%d", a, b);
		cpus_run(list, "split", 2);
		assert_int_equal(CPU_COUNT(&seen[0]), 1);
		assert_int_equal(CPU_COUNT(&seen[1]), 1);
		assert_true(CPU_ISSET(a, &seen[0]) && CPU_ISSET(b, &seen[1]));
		cpus_run(list, "shared", 2);
		assert_int_equal(CPU_COUNT(&seen[1]), 2);
	} else {
		print_message("one CPU: split policy across two CPUs not checked\n");
	}

	base(&o, "null", NULL);
	snprintf(o.cpus_allowed, sizeof(o.cpus_allowed), "%d", CPU_SETSIZE - 1);
	assert_int_equal(llmio_job_run(&o, &r, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "not one this process may run on"));
	snprintf(o.cpus_allowed, sizeof(o.cpus_allowed), "0-");
	assert_int_equal(llmio_job_run(&o, &r, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "not a CPU list"));
	snprintf(o.cpus_allowed, sizeof(o.cpus_allowed), "%d", a);
	snprintf(o.cpus_allowed_policy, sizeof(o.cpus_allowed_policy), "both");
	assert_int_equal(llmio_job_run(&o, &r, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "shared or split"));
	assert_null(r);
}

/* An io_source that writes 16 blocks, asks for an fsync, writes 16 more, fsyncs again. */
struct sync_src {
	unsigned issued, written, synced;
	unsigned written_at_sync[2];
	int sync_res[2];
};

static int sync_next(void *arg, unsigned thread, struct llmio_io *io)
{
	struct sync_src *s = arg;
	unsigned i = s->issued++;

	(void)thread;
	if (i == 16 || i == 33) {
		*io = (struct llmio_io){.file = 0, .write = LLMIO_IO_SYNC};
		return 1;
	}
	if (i > 33)
		return 0;
	*io = (struct llmio_io){
	        .file = 0, .len = 65536, .off = (uint64_t)(i % 17) * 65536, .write = 1};
	return 1;
}

static void sync_done(void *arg, unsigned thread, const struct llmio_io *io, int64_t res,
                      uint64_t lat_ns)
{
	struct sync_src *s = arg;

	(void)thread;
	(void)lat_ns;
	if (io->write != LLMIO_IO_SYNC) {
		assert_int_equal(res, 65536);
		s->written++;
		return;
	}
	assert_true(s->synced < 2);
	s->written_at_sync[s->synced] = s->written;
	s->sync_res[s->synced++] = (int)res;
}

/* An io_source's fsync waits for every earlier I/O of its thread and is timed as a sync. */
static void source_fsync(void **state)
{
	struct sync_src s = {0};
	const struct llmio_io_source src = {.next = sync_next, .done = sync_done, .arg = &s};
	struct llmio_job_opts o;
	struct llmio_result *r;

	(void)state;
	base(&o, "io_uring", "srcsync");
	o.rw = LLMIO_RW_WRITE;
	o.bs = 64 << 10;
	o.size = 2 << 20;
	o.iodepth = 8;
	o.io_source = &src;
	r = run_ok(&o);
	assert_int_equal(s.synced, 2);
	assert_int_equal(s.written_at_sync[0], 16); /* all 16 writes before it had completed */
	assert_int_equal(s.written_at_sync[1], 32);
	assert_int_equal(s.sync_res[0], 0);
	assert_int_equal(s.sync_res[1], 0);
	assert_int_equal(r->write.ios, 32);
	assert_int_equal(r->fsyncs, 2);
	assert_int_equal(r->sync_lat.count, 2);
	llmio_result_destroy(r);
}

/* Four reads, all due 300 ms after the window starts: past a 100 ms runtime. */
static int late_next(void *arg, unsigned thread, struct llmio_io *io)
{
	unsigned *n = arg;

	(void)thread;
	if (*n >= 4)
		return 0;
	*io = (struct llmio_io){
	        .file = 0, .len = 4096, .off = (uint64_t)*n * 4096, .at_ns = 300000000ull};
	++*n;
	return 1;
}

/*
 * A thread that has completed nothing when the runtime ends keeps the window open until its
 * first completion (docs/metrics.md): on a contended disk one I/O can outlast a short runtime,
 * and the run must not report a working thread as idle.  Rates divide by the real window.
 */
static void late_first_io(void **state)
{
	unsigned n = 0;
	const struct llmio_io_source src = {.next = late_next, .arg = &n};
	struct llmio_job_opts o;
	struct llmio_result *r;

	(void)state;
	base(&o, "null", NULL);
	o.size = 1 << 20;
	o.runtime_ns = 100000000ull;
	o.io_source = &src;
	r = run_ok(&o);
	assert_true(r->read.ios >= 1 && r->read.ios <= 4);
	assert_true(r->runtime_s >= 0.3);
	llmio_result_destroy(r);
}

/* A caller built against an older, shorter options struct still works. */
static void older_opts(void **state)
{
	struct llmio_job_opts o;
	struct llmio_result *r;

	(void)state;
	base(&o, "null", NULL);
	o.io_size = 1 << 20;
	o.size = 1 << 20;
	o.opts_size = offsetof(struct llmio_job_opts, allow_destructive);
	r = run_ok(&o);
	assert_int_equal(r->read.ios, 256);
	llmio_result_destroy(r);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(exact_counts),     cmocka_unit_test(mix),
	        cmocka_unit_test(runtime_and_ramp), cmocka_unit_test(rate_limit),
	        cmocka_unit_test(think_time),       cmocka_unit_test(fsync_cadence),
	        cmocka_unit_test(device_counters),  cmocka_unit_test(interrupted),
	        cmocka_unit_test(bad_options),      cmocka_unit_test(older_opts),
	        cmocka_unit_test(cpus_allowed),     cmocka_unit_test(effective_depth),
	        cmocka_unit_test(writes_unique),    cmocka_unit_test(source_fsync),
	        cmocka_unit_test(error_carrier),    cmocka_unit_test(late_first_io),
	};
	/* the tests with windows against the clock */
	const struct CMUnitTest perf_tests[] = {
	        cmocka_unit_test(runtime_and_ramp),
	        cmocka_unit_test(rate_limit),
	        cmocka_unit_test(think_time),
	        cmocka_unit_test(interrupted),
	};
	const char *b = getenv("LLMIO_TEST_DIR");

	perf = argc > 1 && !strcmp(argv[1], "--perf");
	snprintf(dir, sizeof(dir), "%s/job", b ? b : "/tmp/llmio-test");
	mkdir(b ? b : "/tmp/llmio-test", 0755);
	mkdir(dir, 0755);
	if (perf)
		return cmocka_run_group_tests_name("perf_job", perf_tests, NULL, NULL);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
