/* SPDX-License-Identifier: MIT */
/*
 * Trace files and their analysis: a synthetic trace whose numbers are known (written with the
 * builder, read back, analysed, checked through --json), phase inference, the per-thread
 * index, damaged files, and the import of the stored strace sample (tests/data), whose
 * numbers were counted from the log by hand.  Hostile inputs (issue 15): every key of the
 * id map (UINT64_MAX included), the limits every reader applies before it sizes anything
 * (trace files, strace logs, raw per-process files, the replay planner).
 */
#include <cjson/cJSON.h>
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

#include "trace/trace_map.h"
#include "base/error.h"
#include "trace/trace_report.h"
#include "trace/trace_write.h"
#include "workload/replay.h"

static char path_buf[4096];

static const char *scratch(const char *name)
{
	const char *dir = getenv("LLMIO_TEST_DIR");

	if (!dir)
		dir = "/tmp";
	mkdir(dir, 0755);
	snprintf(path_buf, sizeof(path_buf), "%s/test_trace.%d.%s", dir, (int)getpid(), name);
	return path_buf;
}

static void add(struct trace_builder *b, uint16_t type, uint32_t pid, uint32_t tid,
                const char *path, uint64_t ts, uint64_t off, uint64_t req, int64_t res,
                uint32_t phase)
{
	struct trace_rec r = {.ts = ts,
	                      .dur = 1000,
	                      .offset = off,
	                      .req = req,
	                      .result = res,
	                      .pid = pid,
	                      .tid = tid,
	                      .fd = 3,
	                      .phase = (uint16_t)phase,
	                      .type = type};

	assert_int_equal(trace_builder_str(b, path, &r.path), 0);
	assert_int_equal(trace_builder_rec(b, &r), 0);
}

static void write_trace(struct trace_builder *b, const char *path)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(trace_builder_write(b, f), 0);
	assert_int_equal(fclose(f), 0);
	trace_builder_release(b);
}

static cJSON *report_json(struct trace *t)
{
	struct trace_analysis *a = trace_analyze(t);
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	cJSON *j;

	assert_non_null(a);
	assert_non_null(m);
	assert_int_equal(trace_analysis_fit(a), 0); /* as `llmio trace report` does */
	assert_int_equal(trace_report_json(a, m), 0);
	fclose(m);
	j = cJSON_Parse(text);
	assert_non_null(j);
	free(text);
	trace_analysis_destroy(a);
	return j;
}

static double num(const cJSON *o, const char *a, const char *b, const char *c)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);

	if (b)
		x = cJSON_GetObjectItemCaseSensitive(x, b);
	if (c)
		x = cJSON_GetObjectItemCaseSensitive(x, c);
	assert_non_null(x);
	return x->valuedouble;
}

/*
 * The writer's sort by start time is stable, on input made like a merge's: runs of calls in
 * order (a chunk per thread), runs of one record, a run of one value, ties across runs, and
 * runs in reverse.  The record's offset is its place in the input: records of one time must
 * keep that order.
 */
static void sort_stable(void **state)
{
	const char *file = scratch("sort.trace");
	struct trace_builder b;
	struct trace *t;
	struct llmio_error err = {0};
	uint64_t k = 0;

	(void)state;
	assert_int_equal(trace_builder_init(&b), 0);
	assert_non_null(trace_builder_proc(&b, 10, 1, "sorted", 0));
	for (int run = 0; run < 37; run++) {
		int len = run % 5 == 0 ? 1 : 1 + (run * 131) % 700;

		for (int i = 0; i < len; i++) {
			uint64_t ts = run % 7 == 3   ? 5000
			              : run % 3 == 0 ? (uint64_t)(len - i) * 10
			                             : (uint64_t)(run + i) * 10;

			add(&b, TR_READ, 10, 10, "/d/f", ts, k++, 1, 1, 0);
		}
	}
	write_trace(&b, file);
	assert_int_equal(trace_open(file, 0, &t, &err), 0);
	assert_int_equal(t->nrec, k);
	for (size_t i = 1; i < t->nrec; i++) {
		assert_true(t->rec[i].ts >= t->rec[i - 1].ts);
		if (t->rec[i].ts == t->rec[i - 1].ts)
			assert_true(t->rec[i].offset > t->rec[i - 1].offset);
	}
	trace_close(t);
	trace_builder_release(&b);
}

/*
 * pid 10 (phase load) reads /d/big: 9 sequential reads of 100 bytes from 0, then one at 5000
 * (random); pid 11 (phase train, thread 12 too) reads /d/small1 (50 bytes) and writes
 * /d/small2 (50 bytes) and fsyncs it.  Every call takes 1000 ns.
 */
static void synthetic(void **state)
{
	const char *file = scratch("synthetic.trace");
	struct trace_builder b;
	const struct trace_thread *th;
	struct trace *t;
	uint32_t load, train;
	struct llmio_error err = {0};
	size_t nth;
	cJSON *j, *keys;
	int n = 0;

	(void)state;
	assert_int_equal(trace_builder_init(&b), 0);
	assert_int_equal(trace_builder_phase(&b, "load", 0, &load), 0);
	assert_int_equal(trace_builder_phase(&b, "train", 0, &train), 0);
	assert_non_null(trace_builder_proc(&b, 10, 1, "python3 train.py", 100));
	assert_non_null(trace_builder_proc(&b, 11, 10, "python3 train.py", 200));
	for (int i = 0; i < 9; i++)
		add(&b, TR_READ, 10, 10, "/d/big", 1000 + i * 2000, (uint64_t)i * 100, 100, 100,
		    load);
	add(&b, TR_PREAD, 10, 10, "/d/big", 30000, 5000, 100, 100, load);
	/* added out of order: the writer sorts by time */
	add(&b, TR_FSYNC, 11, 12, "/d/small2", 60000, TRACE_OFF_NONE, 0, 0, train);
	add(&b, TR_WRITE, 11, 12, "/d/small2", 50000, 0, 50, 50, train);
	add(&b, TR_READ, 11, 11, "/d/small1", 40000, 0, 64, 50, train);
	write_trace(&b, file);

	assert_int_equal(trace_open(file, 0, &t, &err), 0);
	assert_int_equal(t->nrec, 13);
	assert_int_equal(t->nproc, 2);
	for (size_t i = 1; i < t->nrec; i++)
		assert_true(t->rec[i].ts >= t->rec[i - 1].ts);
	assert_string_equal(trace_rec_path(t, &t->rec[12]), "/d/small2");
	assert_int_equal(t->rec[12].type, TR_FSYNC);
	assert_false(t->inferred);
	assert_int_equal(trace_proc_find(t, 11)->ppid, 10);
	th = trace_threads(t, &nth);
	assert_int_equal(nth, 3);
	for (size_t k = 0; k < nth; k++) {
		n += (int)th[k].n;
		for (size_t i = 0; i < th[k].n; i++)
			assert_int_equal(t->rec[th[k].idx[i]].tid, th[k].tid);
		if (th[k].tid == 10)
			assert_int_equal(th[k].n, 10);
	}
	assert_int_equal(n, 13);

	j = report_json(t);
	n = 0;
	cJSON_ArrayForEach(keys, j) n++;
	assert_int_equal(n, 7); /* files, processes, phases, totals, distribution, time, tails */
	assert_string_equal(
	        cJSON_GetObjectItem(
	                cJSON_GetObjectItem(cJSON_GetObjectItem(j, "distribution"), "bytes"),
	                "verdict")
	                ->valuestring,
	        "too few files");
	assert_true(num(j, "totals", "bytes_read", NULL) == 1050);
	assert_true(num(j, "totals", "bytes_written", NULL) == 50);
	assert_true(num(j, "totals", "read_calls", NULL) == 11);
	assert_true(num(j, "totals", "write_calls", NULL) == 1);
	assert_true(num(j, "totals", "fsyncs", NULL) == 1);
	assert_true(num(j, "files", "/d/big", "bytes_read") == 1000);
	assert_true(num(j, "files", "/d/big", "sequential_fraction") == 0.9);
	assert_true(num(j, "files", "/d/small2", "fsyncs") == 1);
	assert_true(cJSON_GetObjectItemCaseSensitive(
	                    cJSON_GetObjectItemCaseSensitive(
	                            cJSON_GetObjectItemCaseSensitive(
	                                    cJSON_GetObjectItemCaseSensitive(j, "files"), "/d/big"),
	                            "by_pid"),
	                    "10") != NULL);
	assert_true(num(j, "phases", "load", "bytes_read") == 1000);
	assert_true(num(j, "phases", "train", "bytes_written") == 50);
	assert_true(num(j, "processes", "11", "parent") == 10);
	/* 1100 bytes over 3 files: /d/big alone carries 90.9 % */
	assert_true(num(j, "totals", "concentration", "files_for_50pct") == 1.0 / 3);
	assert_true(num(j, "totals", "concentration", "files_for_90pct") == 1.0 / 3);
	assert_true(num(j, "totals", "concentration", "files_for_99pct") == 1.0);
	{
		cJSON *lat = cJSON_GetObjectItemCaseSensitive(
		        cJSON_GetObjectItemCaseSensitive(
		                cJSON_GetObjectItemCaseSensitive(j, "totals"), "latency_ns"),
		        "read");

		assert_true(num(lat, "p50", NULL, NULL) == 1000);
		assert_true(num(lat, "calls", NULL, NULL) == 10);
	}
	cJSON_Delete(j);
	trace_close(t);
	unlink(file);
}

/* No markers: checkpoint, data and load are recognised from the files. */
/*
 * The latency tail explained, on a trace whose misses are known: 985 preads of /d/a served
 * by the page cache in about 1 us, 15 served by the device in about 1 ms (phase cold), and 100
 * reads of /d/b whose service the tracer could not ask (phase other).  The p99 of preads is
 * inside the device reads: every pread at or above it was the device's.
 */
static void tail_attribution(void **state)
{
	const char *file = scratch("tail.trace");
	struct trace_builder b;
	struct llmio_error err = {0};
	struct trace *t;
	uint32_t cold, other;
	uint64_t ts = 1000;
	cJSON *j, *pr, *all;

	(void)state;
	assert_int_equal(trace_builder_init(&b), 0);
	assert_int_equal(trace_builder_phase(&b, "cold", 0, &cold), 0);
	assert_int_equal(trace_builder_phase(&b, "other", 0, &other), 0);
	assert_non_null(trace_builder_proc(&b, 10, 1, "reader", 1000));
	for (int i = 0; i < 1000; i++) {
		struct trace_rec r = {.ts = ts,
		                      .dur = 0,
		                      .offset = (uint64_t)i * 4096,
		                      .req = 4096,
		                      .result = 4096,
		                      .pid = 10,
		                      .tid = 10,
		                      .fd = 3,
		                      .path2 = 0,
		                      .phase = (uint16_t)cold,
		                      .type = TR_PREAD};

		r.path2 = i < 15 ? TRACE_SERVED_DEVICE : TRACE_SERVED_CACHE;
		r.dur = i < 15 ? 1000000 + (uint64_t)i : 1000 + (uint64_t)i;
		assert_int_equal(trace_builder_str(&b, "/d/a", &r.path), 0);
		assert_int_equal(trace_builder_rec(&b, &r), 0);
		ts += r.dur + 100;
	}
	for (int i = 0; i < 100; i++) {
		add(&b, TR_READ, 10, 10, "/d/b", ts, (uint64_t)i * 100, 100, 100, other);
		ts += 2000;
	}
	write_trace(&b, file);
	assert_int_equal(trace_open(file, 0, &t, &err), 0);
	j = report_json(t);
	pr = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "tails"), "by_call"),
	                         "pread");
	assert_non_null(pr);
	assert_true(num(pr, "reads", "device", NULL) == 15);
	assert_true(num(pr, "reads", "page_cache", NULL) == 985);
	assert_true(num(pr, "p99_and_above", "page_cache", NULL) == 0);
	assert_true(num(pr, "p99_and_above", "device", NULL) >= 10);
	assert_true(num(pr, "p99_and_above", "device_share", NULL) == 1);
	assert_true(num(pr, "p99_9_and_above", "device_share", NULL) == 1);
	assert_true(num(pr, "p99_ns", NULL, NULL) >= 980000); /* a bucket's low edge */
	all = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "tails"), "all_reads");
	assert_true(num(all, "reads", "unknown", NULL) == 100); /* /d/b: not asked */
	assert_true(num(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "tails"), "by_phase"), "cold",
	                "reads", "device") == 15);
	assert_true(num(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "tails"), "by_file"), "/d/a",
	                "p99_and_above", "device_share") == 1);
	cJSON_Delete(j);
	trace_close(t);
	unlink(file);
}

static void inference(void **state)
{
	const char *file = scratch("infer.trace");
	struct trace_builder b;
	struct trace *t;
	struct llmio_error err = {0};
	char name[64];
	const uint64_t MiB = 1 << 20;

	(void)state;
	assert_int_equal(trace_builder_init(&b), 0);
	add(&b, TR_READ, 1, 1, "/m/model.safetensors", 10, 0, 2 * MiB, 2 * MiB, 0);
	for (int i = 0; i < 10; i++) {
		snprintf(name, sizeof(name), "/ds/shard%d", i);
		add(&b, TR_READ, 2 + (uint32_t)(i % 2), 5, name, 100 + (uint64_t)i, 0, 4096, 4096,
		    0);
	}
	add(&b, TR_WRITE, 1, 1, "/ck/step1.tmp", 1000, 0, MiB, MiB, 0);
	add(&b, TR_WRITE, 1, 1, "/ck/step1.tmp", 1001, MiB, MiB, MiB, 0);
	add(&b, TR_FSYNC, 1, 1, "/ck/step1.tmp", 1002, TRACE_OFF_NONE, 0, 0, 0);
	add(&b, TR_WRITE, 1, 1, "/log.txt", 2000, 0, 10, 10, 0);
	write_trace(&b, file);

	assert_int_equal(trace_open(file, 0, &t, &err), 0);
	assert_true(t->inferred);
	for (size_t i = 0; i < t->nrec; i++) {
		const char *p = trace_rec_path(t, &t->rec[i]), *ph = t->phase_name[t->rec[i].phase];

		assert_true(t->phase[t->rec[i].phase].flags & TRACE_PHASE_INFERRED);
		if (!strncmp(p, "/m/", 3))
			assert_string_equal(ph, "load");
		else if (!strncmp(p, "/ds/", 4))
			assert_string_equal(ph, "data");
		else if (!strncmp(p, "/ck/", 4))
			assert_string_equal(ph, "checkpoint");
		else
			assert_string_equal(ph, "other");
	}
	trace_close(t);
	/* the raw view keeps the (absent) markers */
	assert_int_equal(trace_open(file, TRACE_OPEN_RAW_PHASES, &t, &err), 0);
	assert_false(t->inferred);
	assert_int_equal(t->rec[0].phase, 0);
	trace_close(t);
	unlink(file);
}

static void damaged(void **state)
{
	const char *file = scratch("damaged.trace");
	struct trace_builder b;
	struct trace *t;
	struct stat st;
	struct llmio_error err = {0};

	(void)state;
	assert_int_equal(trace_builder_init(&b), 0);
	add(&b, TR_READ, 1, 1, "/x", 10, 0, 10, 10, 0);
	write_trace(&b, file);
	assert_int_equal(stat(file, &st), 0);
	assert_int_equal(truncate(file, st.st_size - 40), 0);
	assert_int_equal(trace_open(file, 0, &t, &err), -EINVAL);
	assert_null(t);
	assert_int_equal(truncate(file, 10), 0);
	assert_int_equal(trace_open(file, 0, &t, &err), -EINVAL);
	assert_true(strstr(err.msg, "not an llmio trace") != NULL);
	unlink(file);
	assert_int_equal(trace_open(file, 0, &t, &err), -ENOENT);
}

/*
 * tests/data/strace_sample.log: `strace -f -y -ttt -T` of a shell that runs dd (3 writes of
 * 4096 bytes to data), cat data > copy (copy_file_range: no read/write), cat data | wc
 * (2 reads: 12288 bytes, then EOF), mv copy moved, rm moved; 7 processes.
 */
static void strace_import(void **state)
{
	const char *data = getenv("LLMIO_TEST_DATA"), *file = scratch("strace.trace");
	struct trace_builder b;
	struct trace *t;
	struct llmio_error err = {0};
	char log[4096];
	bool renamed = false, unlinked = false;
	cJSON *j, *f;
	FILE *in;

	(void)state;
	snprintf(log, sizeof(log), "%s/strace_sample.log", data ? data : "tests/data");
	in = fopen(log, "r");
	assert_non_null(in);
	assert_int_equal(trace_builder_init(&b), 0);
	assert_int_equal(trace_import_strace(&b, in, &err), 0);
	fclose(in);
	write_trace(&b, file);
	assert_int_equal(trace_open(file, 0, &t, &err), 0);
	assert_true(t->hdr.flags & TRACE_F_STRACE);
	assert_int_equal(t->nproc, 7);
	for (size_t i = 0; i < t->nrec; i++) {
		const struct trace_rec *r = &t->rec[i];
		const char *p = trace_rec_path(t, r);

		/* the default scope: no libraries, /dev, pipes; /etc/locale.alias is data */
		assert_true(!strncmp(p, "/tmp/", 5) || !strcmp(p, "/etc/locale.alias"));
		if (r->type == TR_RENAME &&
		    !strcmp(trace_str(t, r->path2), "/tmp/llmio-strace-sample/moved"))
			renamed = !strcmp(p, "/tmp/llmio-strace-sample/copy");
		unlinked |= r->type == TR_UNLINK && !strcmp(p, "/tmp/llmio-strace-sample/moved");
	}
	assert_true(renamed);
	assert_true(unlinked);
	j = report_json(t);
	f = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "files"),
	                                     "/tmp/llmio-strace-sample/data");
	assert_non_null(f);
	assert_true(num(f, "bytes_written", NULL, NULL) == 12288);
	assert_true(num(f, "write_calls", NULL, NULL) == 3);
	assert_true(num(f, "bytes_read", NULL, NULL) == 12288);
	assert_true(num(f, "read_calls", NULL, NULL) == 2);
	assert_true(num(f, "opens", NULL, NULL) == 3);
	/* dd's writes went to fd 1 after dup2: offsets 0, 4096, 8192 are sequential */
	assert_true(num(f, "sequential_fraction", NULL, NULL) == 1.0);
	cJSON_Delete(j);
	trace_close(t);
	unlink(file);
}

static void not_strace(void **state)
{
	struct trace_builder b;
	struct llmio_error err = {0};
	FILE *in = fmemopen((char[]){"hello\nworld\n"}, 12, "r");

	(void)state;
	assert_non_null(in);
	assert_int_equal(trace_builder_init(&b), 0);
	assert_int_equal(trace_import_strace(&b, in, &err), -EINVAL);
	fclose(in);
	trace_builder_release(&b);
}

/* Every 64-bit key is a key: UINT64_MAX was the "empty" mark once (key + 1 wrapped to 0). */
static void map_all_keys(void **state)
{
	static const uint64_t keys[] = {UINT64_MAX, 0, UINT64_MAX - 1, 1, 0xFFFFFFFFull << 32};
	struct tmap m = {0};

	(void)state;
	for (size_t i = 0; i < 5; i++)
		assert_int_equal(tmap_index(&m, keys[i]), (int64_t)i);
	for (uint64_t k = 2; k < 1000; k++) /* through a few rehashes */
		assert_true(tmap_index(&m, k << 20) >= 5);
	for (size_t i = 0; i < 5; i++) {
		assert_int_equal(tmap_find(&m, keys[i]), (int64_t)i);
		assert_int_equal(tmap_index(&m, keys[i]), (int64_t)i);
	}
	assert_int_equal(tmap_find(&m, 12345), -1);
	tmap_release(&m);
	assert_int_equal(tmap_find(&m, UINT64_MAX), -1);
}

/* Write b to memory and open it with trace_open_mem (the fuzzers' entry point). */
static int open_built(struct trace_builder *b, struct trace **t, struct llmio_error *e)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	int ret;

	assert_non_null(m);
	assert_int_equal(trace_builder_write(b, m), 0);
	assert_int_equal(fclose(m), 0);
	trace_builder_release(b);
	ret = trace_open_mem(buf, len, "mem.trace", 0, t, e);
	free(buf);
	return ret;
}

/* pid = tid = 0xFFFFFFFF: its records are found again (issue 15.1: out-of-bounds before). */
static void thread_max_pid(void **state)
{
	const struct trace_thread *th;
	struct trace_builder b;
	struct trace *t;
	struct llmio_error err = {0};
	size_t n;

	(void)state;
	assert_int_equal(trace_builder_init(&b), 0);
	add(&b, TR_READ, UINT32_MAX, UINT32_MAX, "/d/f", 100, 0, 10, 10, 0);
	add(&b, TR_READ, 7, 8, "/d/g", 200, 0, 10, 10, 0);
	add(&b, TR_READ, UINT32_MAX, UINT32_MAX, "/d/f", 300, 10, 10, 10, 0);
	assert_int_equal(open_built(&b, &t, &err), 0);
	th = trace_threads(t, &n);
	assert_non_null(th);
	assert_int_equal(n, 2);
	assert_int_equal(th[0].pid, UINT32_MAX);
	assert_int_equal(th[0].tid, UINT32_MAX);
	assert_int_equal(th[0].n, 2);
	assert_int_equal(t->rec[th[0].idx[0]].ts, 100);
	assert_int_equal(t->rec[th[0].idx[1]].ts, 300);
	assert_int_equal(th[1].n, 1);
	assert_int_equal(t->rec[th[1].idx[0]].pid, 7);
	trace_close(t);
}

/* One record out of the limits: trace_open fails naming the record and the value. */
static void expect_refused(uint16_t type, uint64_t ts, uint64_t off, int64_t res, const char *what)
{
	struct trace_builder b;
	struct trace *t;
	struct llmio_error err = {0};

	assert_int_equal(trace_builder_init(&b), 0);
	add(&b, TR_OPEN, 1, 1, "/d/f", 1, TRACE_OFF_NONE, 0, 3, 0);
	add(&b, type, 1, 1, "/d/f", ts, off, 1, res, 0);
	assert_int_equal(open_built(&b, &t, &err), -EINVAL);
	assert_null(t);
	if (!strstr(err.msg, "mem.trace: trace record 1: ") || !strstr(err.msg, what))
		fail_msg("message '%s' lacks '%s'", err.msg, what);
}

static void reader_limits(void **state)
{
	struct trace_builder b;
	struct trace *t;
	struct llmio_error err = {0};

	(void)state;
	/* issue 15.3: a read of 2^48 bytes; an offset near 2^64; a time that would wrap */
	expect_refused(TR_READ, 10, 0, 1ll << 48, "read result 281474976710656 is over 2147479552");
	expect_refused(TR_PREAD, 10, UINT64_MAX - 4096, 1, "pread at offset 18446744073709547519");
	expect_refused(TR_WRITE, 10, (1ull << 63) - 1, 1, "ends past 2^63 - 1");
	expect_refused(TR_FREAD, 10, 0, (1ll << 40) + 1, "fread result 1099511627777 is over");
	expect_refused(TR_READ, UINT64_MAX - 10, 0, 1, "time 18446744073709551605 ns");
	/* the limits themselves are accepted; a failed call keeps whatever offset it was given */
	assert_int_equal(trace_builder_init(&b), 0);
	add(&b, TR_READ, 1, 1, "/d/f", 10, 0, TRACE_IO_MAX, TRACE_IO_MAX, 0);
	add(&b, TR_FWRITE, 1, 1, "/d/f", 20, 0, TRACE_STDIO_MAX, TRACE_STDIO_MAX, 0);
	add(&b, TR_PREAD, 1, 1, "/d/f", 30, UINT64_MAX - 4, 10, -EINVAL, 0);
	add(&b, TR_PWRITE, 1, 1, "/d/f", 40, TRACE_POS_MAX - 1, 1, 1, 0);
	assert_int_equal(open_built(&b, &t, &err), 0);
	trace_close(t);
	/* a header whose span does not cover its records (timeline waits are offsets in it) */
	assert_int_equal(trace_builder_init(&b), 0);
	add(&b, TR_READ, 1, 1, "/d/f", 1000, 0, 1, 1, 0);
	{
		char *buf = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&buf, &len);

		assert_int_equal(trace_builder_write(&b, m), 0);
		fclose(m);
		trace_builder_release(&b);
		((struct trace_file_hdr *)(void *)buf)->t_start = 2000;
		((struct trace_file_hdr *)(void *)buf)->t_end = 3000;
		assert_int_equal(trace_open_mem(buf, len, NULL, 0, &t, &err), -EINVAL);
		assert_non_null(strstr(err.msg, "lies outside the trace's span"));
		free(buf);
	}
}

/* Import an strace log held in memory; \return trace_import_strace's result. */
static int import_text(const char *text, struct trace **t, struct llmio_error *e)
{
	struct trace_builder b;
	FILE *in = fmemopen((void *)text, strlen(text), "r");
	int ret;

	assert_non_null(in);
	assert_int_equal(trace_builder_init(&b), 0);
	ret = trace_import_strace(&b, in, e);
	fclose(in);
	if (ret) {
		trace_builder_release(&b);
		return ret;
	}
	return open_built(&b, t, e);
}

static void strace_limits(void **state)
{
	static const char open_f[] =
	        "1 1700000000.000001 openat(AT_FDCWD, \"/data/f\", O_RDONLY) = 3</data/f> "
	        "<0.000001>\n";
	struct llmio_error err = {0};
	char text[1024];
	struct trace *t;
	size_t n;

	(void)state;
	/* issue 15.1: pid 4294967295 imports, and its thread is found */
	assert_int_equal(
	        import_text("4294967295 1700000000.000001 openat(AT_FDCWD, \"/data/f\", O_RDONLY) "
	                    "= 3</data/f> <0.000001>\n"
	                    "4294967295 1700000000.000002 read(3</data/f>, \"x\", 1) = 1 "
	                    "<0.000001>\n",
	                    &t, &err),
	        0);
	assert_non_null(trace_threads(t, &n));
	assert_int_equal(n, 1);
	assert_int_equal(t->thr[0].n, 2);
	/* -ttt times are exact (integer parsing; a double rounds 1.7e18 ns) */
	assert_int_equal(t->rec[1].ts - t->rec[0].ts, 1000);
	trace_close(t);
	/* issue 15.8: times and durations a double cannot turn into uint64_t ns */
	snprintf(text, sizeof(text), "%s1 99999999999999999999.5 read(3</data/f>, \"x\", 1) = 1\n",
	         open_f);
	assert_int_equal(import_text(text, &t, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "line 2: time stamp"));
	snprintf(text, sizeof(text),
	         "%s1 1700000000.1 read(3</data/f>, \"x\", 1) = 1 <1e300>\n"
	         "1 1700000000.2 read(3</data/f>, \"x\", 1) = 1 <4611686018.5>\n",
	         open_f);
	assert_int_equal(import_text(text, &t, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "line 3: duration <4611686018.5>"));
	snprintf(text, sizeof(text),
	         "1 23:59:60.5 read(3</data/f>, \"x\", 1) = 1\n"
	         "1 99:00:00.0 read(3</data/f>, \"x\", 1) = 1\n");
	assert_int_equal(import_text(text, &t, &err), 0);
	assert_int_equal(t->rec[0].ts, 86400500000000ull);
	trace_close(t);
	/* issue 15.3 at the import: a read of 2^48, data ending past 2^63 */
	snprintf(text, sizeof(text),
	         "%s1 1700000000.1 read(3</data/f>, \"x\", 1) = 281474976710656\n", open_f);
	assert_int_equal(import_text(text, &t, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "line 2: read result 281474976710656 is over 2147479552"));
	snprintf(text, sizeof(text),
	         "%s1 1700000000.1 pread64(3</data/f>, \"x\", 4096, 9223372036854775807) = 4096\n",
	         open_f);
	assert_int_equal(import_text(text, &t, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "line 2: pread at offset 9223372036854775807"));
	snprintf(text, sizeof(text), "1 openat(AT_FDCWD, \"/data/f\", O_RDONLY) = 99999999999\n");
	assert_int_equal(import_text(text, &t, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "openat result 99999999999 is not a descriptor"));
}

/* A raw per-process file in memory: header, one chunk owned by tid 5. */
struct raw {
	struct trace_raw_hdr h;
	struct trace_rec slot[TRACE_CHUNK / sizeof(struct trace_rec)];
};

static struct raw *raw_new(void)
{
	struct raw *r = calloc(1, sizeof(*r));

	assert_non_null(r);
	memcpy(r->h.magic, TRACE_RAW_MAGIC, 8);
	r->h.version = TRACE_VERSION;
	r->h.chunk_size = TRACE_CHUNK;
	r->h.pid = 5;
	r->slot[0] = (struct trace_rec){.tid = 5, .type = TR_RAW_CHUNK};
	/* string 1 = "/d/f" */
	r->slot[1] = (struct trace_rec){.path = 1, .req = 4, .type = TR_RAW_STR};
	memcpy(&r->slot[2], "/d/f", 5);
	r->slot[3] = (struct trace_rec){
	        .ts = 10, .result = 4096, .pid = 5, .tid = 5, .path = 1, .type = TR_READ};
	return r;
}

static int merge_raw(const struct raw *r, struct llmio_error *e)
{
	struct trace_builder b;
	uint64_t first = UINT64_MAX;
	int ret;

	assert_int_equal(trace_builder_init(&b), 0);
	ret = trace_merge_raw(&b, r, sizeof(*r), "5.0.trace", &first, e);
	if (!ret)
		assert_int_equal(b.nrec, 1);
	trace_builder_release(&b);
	return ret;
}

static void raw_limits(void **state)
{
	struct raw *r = raw_new();
	struct llmio_error err = {0};

	(void)state;
	assert_int_equal(merge_raw(r, &err), 0);
	/* issue 15.3: string id 0xFFFFFFFF sized a 16 GiB id table, zeroed */
	r->slot[1].path = UINT32_MAX;
	assert_int_equal(merge_raw(r, &err), -EINVAL);
	assert_non_null(
	        strstr(err.msg, "5.0.trace: raw trace slot 1: string id 4294967295 is over"));
	r->slot[1].path = 1;
	r->slot[3].result = 1ll << 48;
	assert_int_equal(merge_raw(r, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "raw trace slot 3: read result 281474976710656"));
	free(r);
}

/* n reads of len bytes each of /d/f by one thread, every one at offset off. */
static struct trace *reads(unsigned n, int64_t len, uint64_t off)
{
	struct trace_builder b;
	struct trace *t;
	struct llmio_error err = {0};

	assert_int_equal(trace_builder_init(&b), 0);
	for (unsigned i = 0; i < n; i++)
		add(&b, TR_PREAD, 1, 1, "/d/f", 10 + i, off, (uint64_t)len, len, 0);
	assert_int_equal(open_built(&b, &t, &err), 0);
	return t;
}

static void replay_plan_limits(void **state)
{
	struct replay_plan_opts o = {.bs = 4096, .align = 1};
	struct replay_plan *p;
	struct trace *t;
	struct llmio_error err = {0};

	(void)state;
	/* 4 reads of 1 MiB in 4 KiB pieces: 1024 I/Os; the file is 1 MiB */
	t = reads(4, 1 << 20, 0);
	assert_int_equal(replay_plan_build(t, &o, &p, &err), 0);
	assert_int_equal(replay_plan_ios(p), 1024);
	assert_int_equal(replay_plan_files(p), 1);
	assert_int_equal(replay_plan_file_size(p, 0), 1 << 20);
	replay_plan_destroy(p);
	/* a plan that would be larger than the limit is refused before it is built */
	o.max_ios = 1000;
	assert_int_equal(replay_plan_build(t, &o, &p, &err), -EINVAL);
	assert_null(p);
	assert_non_null(
	        strstr(err.msg, "trace record 3: the replay would need more than 1000 I/Os"));
	assert_non_null(strstr(err.msg, "larger --bs"));
	trace_close(t);
	/* 2 GiB reads ending at 2^63 - 1: at the limits, planned without wrapping */
	o = (struct replay_plan_opts){.bs = 64u << 20, .align = 4096, .timeline = true};
	t = reads(2, TRACE_IO_MAX, TRACE_POS_MAX - TRACE_IO_MAX);
	assert_int_equal(replay_plan_build(t, &o, &p, &err), 0);
	assert_int_equal(replay_plan_ios(p), 2 * 32); /* 2 GiB - 4 KiB, widened: 32 x 64 MiB */
	assert_int_equal(replay_plan_file_size(p, 0), TRACE_POS_MAX);
	replay_plan_destroy(p);
	trace_close(t);
	/* two files of 2^63 - 1 bytes: their total would wrap a uint64_t space check */
	{
		struct trace_builder b;

		assert_int_equal(trace_builder_init(&b), 0);
		add(&b, TR_PWRITE, 1, 1, "/d/f", 10, TRACE_POS_MAX - 1, 1, 1, 0);
		add(&b, TR_PWRITE, 1, 1, "/d/g", 20, TRACE_POS_MAX - 1, 1, 1, 0);
		assert_int_equal(open_built(&b, &t, &err), 0);
	}
	assert_int_equal(replay_plan_build(t, &o, &p, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "add up to more than 2^63 - 1 bytes (file /d/g alone"));
	/* the default limit: 129 reads of 2 GiB in 4 KiB pieces need 2^26 + ... I/Os */
	o = (struct replay_plan_opts){.bs = 4096, .align = 1};
	trace_close(t);
	t = reads(129, TRACE_IO_MAX, 0);
	assert_int_equal(replay_plan_build(t, &o, &p, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "more than 67108864 I/Os"));
	/* options out of range */
	o.bs = 1;
	assert_int_equal(replay_plan_build(t, &o, &p, &err), -EINVAL);
	trace_close(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(synthetic),
	        cmocka_unit_test(sort_stable),
	        cmocka_unit_test(inference),
	        cmocka_unit_test(tail_attribution),
	        cmocka_unit_test(damaged),
	        cmocka_unit_test(strace_import),
	        cmocka_unit_test(not_strace),
	        cmocka_unit_test(map_all_keys),
	        cmocka_unit_test(thread_max_pid),
	        cmocka_unit_test(reader_limits),
	        cmocka_unit_test(strace_limits),
	        cmocka_unit_test(raw_limits),
	        cmocka_unit_test(replay_plan_limits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
