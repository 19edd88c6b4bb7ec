/* SPDX-License-Identifier: MIT */
/*
 * Trace files and their analysis: a synthetic trace whose numbers are known (written with the
 * builder, read back, analysed, checked through --json), phase inference, the per-thread
 * index, damaged files, and the import of the stored strace sample (tests/data), whose
 * numbers were counted from the log by hand.
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

#include "trace/trace_report.h"
#include "trace/trace_write.h"

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
	char err[256];
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

	assert_int_equal(trace_open(file, 0, &t, err, sizeof(err)), 0);
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
	assert_int_equal(n, 4);
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
static void inference(void **state)
{
	const char *file = scratch("infer.trace");
	struct trace_builder b;
	struct trace *t;
	char err[256], name[64];
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

	assert_int_equal(trace_open(file, 0, &t, err, sizeof(err)), 0);
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
	assert_int_equal(trace_open(file, TRACE_OPEN_RAW_PHASES, &t, err, sizeof(err)), 0);
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
	char err[256];

	(void)state;
	assert_int_equal(trace_builder_init(&b), 0);
	add(&b, TR_READ, 1, 1, "/x", 10, 0, 10, 10, 0);
	write_trace(&b, file);
	assert_int_equal(stat(file, &st), 0);
	assert_int_equal(truncate(file, st.st_size - 40), 0);
	assert_int_equal(trace_open(file, 0, &t, err, sizeof(err)), -EINVAL);
	assert_null(t);
	assert_int_equal(truncate(file, 10), 0);
	assert_int_equal(trace_open(file, 0, &t, err, sizeof(err)), -EINVAL);
	assert_true(strstr(err, "not an llmio trace") != NULL);
	unlink(file);
	assert_int_equal(trace_open(file, 0, &t, err, sizeof(err)), -ENOENT);
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
	char log[4096], err[256];
	bool renamed = false, unlinked = false;
	cJSON *j, *f;
	FILE *in;

	(void)state;
	snprintf(log, sizeof(log), "%s/strace_sample.log", data ? data : "tests/data");
	in = fopen(log, "r");
	assert_non_null(in);
	assert_int_equal(trace_builder_init(&b), 0);
	assert_int_equal(trace_import_strace(&b, in, err, sizeof(err)), 0);
	fclose(in);
	write_trace(&b, file);
	assert_int_equal(trace_open(file, 0, &t, err, sizeof(err)), 0);
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
	char err[256];
	FILE *in = fmemopen((char[]){"hello\nworld\n"}, 12, "r");

	(void)state;
	assert_non_null(in);
	assert_int_equal(trace_builder_init(&b), 0);
	assert_int_equal(trace_import_strace(&b, in, err, sizeof(err)), -EINVAL);
	fclose(in);
	trace_builder_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(synthetic),  cmocka_unit_test(inference),
	        cmocka_unit_test(damaged),    cmocka_unit_test(strace_import),
	        cmocka_unit_test(not_strace),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
