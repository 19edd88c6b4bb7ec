/* SPDX-License-Identifier: MIT */
/*
 * A result owns what it holds (include/llmio/result.h): after llmio_job_run() returns, the
 * caller may free the file list, its path strings, the stop flag, the progress argument and
 * the io_source, and the result still reads, writes as JSON and CSV, and frees cleanly.  The
 * freed memory is overwritten first, so a result that still pointed into it would show it
 * here even without AddressSanitizer (which reports the read itself in the ASan build).
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

#include "llmio/llmio.h"

static char dir[4096];

/* Overwrite, then free: a dangling read then sees garbage, not the old value. */
static void scrub_free(void *p, size_t len)
{
	memset(p, 0xa5, len);
	free(p);
}

static void progress_cb(void *arg, double elapsed_s, double eta_s, double iops, double bw)
{
	(void)arg;
	(void)elapsed_s;
	(void)eta_s;
	(void)iops;
	(void)bw;
}

/* The result can be written out, in full, with nothing of the caller's left alive. */
static void write_out(struct llmio_result *r)
{
	struct llmio_result *const rs[] = {r};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(llmio_results_write_json(f, rs, 1), 0);
	assert_int_equal(llmio_results_write_csv(f, rs, 1), 0);
	assert_int_equal(fclose(f), 0);
	assert_non_null(strstr(buf, "\"ioengine\":"));
	free(buf);
}

/* A job over a heap-allocated file list, stop flag and progress argument. */
static void files_freed(void **state)
{
	const size_t nfiles = 2, pathlen = 4200;
	struct llmio_file *files = calloc(nfiles, sizeof(*files));
	volatile int *stop = calloc(1, sizeof(*stop));
	char *parg = calloc(1, 64);
	struct llmio_job_opts *o = calloc(1, sizeof(*o));
	struct llmio_result *r = NULL;
	struct llmio_error err = {0};
	int ret;

	(void)state;
	assert_non_null(files);
	assert_non_null(stop);
	assert_non_null(parg);
	assert_non_null(o);
	for (size_t i = 0; i < nfiles; i++) {
		char *path = malloc(pathlen);

		assert_non_null(path);
		snprintf(path, pathlen, "%.4000s/owned%zu", dir, i);
		files[i] = (struct llmio_file){.path = path, .size = 1 << 20};
	}
	llmio_job_opts_init(o);
	o->rw = LLMIO_RW_WRITE;
	o->bs = 64 << 10;
	o->files = files;
	o->nfiles_list = (uint32_t)nfiles;
	o->stop = stop;
	o->progress = progress_cb;
	o->progress_arg = parg;
	ret = llmio_job_run(o, &r, &err);
	if (ret)
		print_message("llmio_job_run: %s\n", err.msg);
	assert_int_equal(ret, 0);
	assert_non_null(r);

	for (size_t i = 0; i < nfiles; i++) {
		unlink(files[i].path);
		scrub_free((void *)files[i].path, pathlen);
	}
	scrub_free(files, nfiles * sizeof(*files));
	scrub_free((void *)stop, sizeof(*stop));
	scrub_free(parg, 64);
	scrub_free(o, sizeof(*o));

	assert_null(r->opts.files);
	assert_null(r->opts.stop);
	assert_null(r->opts.progress);
	assert_null(r->opts.progress_arg);
	assert_null(r->opts.io_source);
	assert_int_equal(r->opts.nfiles_list, nfiles); /* the count stays */
	assert_string_equal(r->opts.engine, "psync");
	assert_int_equal(r->write.bytes, 2 << 20);
	write_out(r);
	llmio_result_destroy(r);
}

/* An io_source on the heap: ten 4 KiB reads of one file. */
struct src {
	unsigned issued;
};

static int src_next(void *arg, unsigned thread, struct llmio_io *io)
{
	struct src *s = arg;

	(void)thread;
	if (s->issued == 10)
		return 0;
	*io = (struct llmio_io){.file = 0, .len = 4096, .off = (uint64_t)s->issued++ * 4096};
	return 1;
}

static void source_freed(void **state)
{
	struct llmio_io_source *source = calloc(1, sizeof(*source));
	struct src *s = calloc(1, sizeof(*s));
	struct llmio_file file = {.path = NULL, .size = 1 << 20};
	char path[4200];
	struct llmio_job_opts o;
	struct llmio_result *r = NULL;
	struct llmio_error err = {0};
	int ret;

	(void)state;
	assert_non_null(source);
	assert_non_null(s);
	snprintf(path, sizeof(path), "%.4000s/source", dir);
	file.path = path;
	*source = (struct llmio_io_source){.next = src_next, .arg = s};
	llmio_job_opts_init(&o);
	o.rw = LLMIO_RW_READ;
	o.files = &file;
	o.nfiles_list = 1;
	o.io_source = source;
	ret = llmio_job_run(&o, &r, &err);
	if (ret)
		print_message("llmio_job_run: %s\n", err.msg);
	assert_int_equal(ret, 0);
	unlink(path);
	scrub_free(source, sizeof(*source));
	scrub_free(s, sizeof(*s));

	assert_null(r->opts.io_source);
	assert_null(r->opts.files);
	assert_int_equal(r->read.ios, 10);
	write_out(r);
	llmio_result_destroy(r);
}

/* The library says how large its results are: as large as this program knows them. */
static void result_size(void **state)
{
	(void)state;
	assert_int_equal(llmio_result_size(), sizeof(struct llmio_result));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(files_freed),
	        cmocka_unit_test(source_freed),
	        cmocka_unit_test(result_size),
	};
	const char *b = getenv("LLMIO_TEST_DIR");

	snprintf(dir, sizeof(dir), "%s/result", b ? b : "/tmp/llmio-test");
	mkdir(b ? b : "/tmp/llmio-test", 0755);
	mkdir(dir, 0755);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
