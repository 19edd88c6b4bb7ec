/* SPDX-License-Identifier: MIT */
/*
 * Explicit file lists and I/O sources (what workload recipes and trace replay drive the
 * engines with): exact file sizes, every I/O the source asks for done once and reported back,
 * fresh files written from scratch, the timeline (at_ns), "not ready yet" (-EAGAIN), and a
 * failing or buggy source turning into a clear error.  Checked against the source's own
 * bookkeeping, the files on disk and the clock.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
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

#define CHUNK    4096u
#define MAXFILES 4
#define MAXTHR   2

/* Reads (or writes) every file whole in CHUNK pieces; thread t takes files t, t+n, ... */
struct whole {
	unsigned nfiles, nthreads;
	uint64_t sizes[MAXFILES];
	uint64_t next_off[MAXTHR];
	unsigned file[MAXTHR];
	int write;
	uint64_t at_step; /* > 0: I/O k of a thread is due at k * at_step ns */
	uint64_t issued[MAXTHR];
	_Atomic uint64_t done_bytes, done_calls, max_lat;
	bool gate; /* at most one I/O in flight per thread: -EAGAIN until done */
	atomic_int inflight[MAXTHR];
	_Atomic uint64_t eagain;
};

static int whole_next(void *arg, unsigned t, struct llmio_io *io)
{
	struct whole *s = arg;

	if (s->gate && atomic_load(&s->inflight[t])) {
		atomic_fetch_add(&s->eagain, 1);
		return -EAGAIN;
	}
	while (s->file[t] < s->nfiles && s->next_off[t] >= s->sizes[s->file[t]]) {
		s->file[t] += s->nthreads;
		s->next_off[t] = 0;
	}
	if (s->file[t] >= s->nfiles)
		return 0;
	io->file = s->file[t];
	io->off = s->next_off[t];
	io->len = (uint32_t)(s->sizes[io->file] - io->off < CHUNK ? s->sizes[io->file] - io->off
	                                                          : CHUNK);
	io->write = s->write;
	io->at_ns = s->at_step * s->issued[t];
	io->tag = ((uint64_t)io->file << 48) | io->off;
	s->next_off[t] += io->len;
	s->issued[t]++;
	atomic_fetch_add(&s->inflight[t], 1);
	return 1;
}

static void whole_done(void *arg, unsigned t, const struct llmio_io *io, int64_t res,
                       uint64_t lat_ns)
{
	struct whole *s = arg;
	uint64_t m = atomic_load(&s->max_lat);

	assert_int_equal(io->tag, ((uint64_t)io->file << 48) | io->off);
	assert_int_equal(res, io->len);
	atomic_fetch_add(&s->done_bytes, (uint64_t)res);
	atomic_fetch_add(&s->done_calls, 1);
	atomic_fetch_sub(&s->inflight[t], 1);
	while (lat_ns > m && !atomic_compare_exchange_weak(&s->max_lat, &m, lat_ns))
		;
}

static const uint64_t sizes[] = {10000, 3 * 4096, 5000, 70001};

/* Everything one job of these tests needs; static, so the 16 KiB of paths stay off the stack. */
struct fixture {
	char paths[MAXFILES][4200];
	struct llmio_file files[MAXFILES];
	struct llmio_io_source src;
	struct llmio_job_opts o;
	struct whole s;
};

static struct fixture *setup_job(const char *engine, const char *tag)
{
	static struct fixture fx;
	struct fixture *x = &fx;

	memset(x, 0, sizeof(*x));
	x->s.nfiles = MAXFILES;
	for (unsigned f = 0; f < MAXFILES; f++) {
		snprintf(x->paths[f], sizeof(x->paths[f]), "%.4000s/%s.%u", dir, tag, f);
		x->files[f] = (struct llmio_file){.path = x->paths[f], .size = sizes[f]};
		x->s.sizes[f] = sizes[f];
	}
	for (unsigned t = 0; t < MAXTHR; t++)
		x->s.file[t] = t;
	x->src = (struct llmio_io_source){.next = whole_next, .done = whole_done, .arg = &x->s};
	llmio_job_opts_init(&x->o);
	snprintf(x->o.engine, sizeof(x->o.engine), "%s", engine);
	x->o.files = x->files;
	x->o.nfiles_list = MAXFILES;
	x->o.io_source = &x->src;
	x->o.bs = CHUNK;
	x->o.rw = LLMIO_RW_READ;
	return x;
}

static struct llmio_result *run(const struct llmio_job_opts *o, int want, const char *msg)
{
	struct llmio_result *r = NULL;
	struct llmio_error err = {0};
	int ret = llmio_job_run(o, &r, &err);

	if (ret != want)
		print_message("llmio_job_run: %d %s\n", ret, err.msg);
	assert_int_equal(ret, want);
	if (msg)
		assert_non_null(strstr(err.msg, msg));
	return r;
}

static uint64_t total(void)
{
	uint64_t t = 0;

	for (unsigned f = 0; f < MAXFILES; f++)
		t += sizes[f];
	return t;
}

/* Every byte of every file read once, files at their exact sizes, on each engine. */
static void read_whole_files(void **state)
{
	static const char *engines[] = {"psync", "libaio", "io_uring", "mmap"};
	struct fixture *x;
	struct llmio_result *r;
	struct stat st;

	(void)state;
	for (size_t e = 0; e < sizeof(engines) / sizeof(engines[0]); e++) {
		x = setup_job(engines[e], "rd");
		x->s.nthreads = 2;
		x->o.numjobs = 2;
		x->o.iodepth = 4;
		r = run(&x->o, 0, NULL);
		assert_int_equal(r->read.bytes, total());
		assert_int_equal(x->s.done_bytes, total());
		assert_int_equal(x->s.done_calls, r->read.ios);
		assert_int_equal(r->target_bytes, total());
		assert_int_equal(r->write.ios, 0);
		for (unsigned f = 0; f < MAXFILES; f++) {
			assert_int_equal(stat(x->paths[f], &st), 0);
			assert_int_equal((uint64_t)st.st_size, sizes[f]);
		}
		llmio_result_destroy(r);
	}
}

/* Fresh files are created empty and grow to exactly what was written. */
static void write_fresh_files(void **state)
{
	struct fixture *x;
	struct llmio_result *r;
	struct stat st;
	FILE *f;

	(void)state;
	x = setup_job("io_uring", "wr");
	/* a stale, longer file of the same name is replaced, not merged into */
	f = fopen(x->paths[0], "w");
	assert_non_null(f);
	assert_int_equal(ftruncate(fileno(f), 1 << 20), 0);
	fclose(f);
	for (unsigned i = 0; i < MAXFILES; i++)
		x->files[i].flags = LLMIO_FILE_FRESH;
	x->s.nthreads = 1;
	x->s.write = 1;
	x->o.rw = LLMIO_RW_WRITE;
	x->o.iodepth = 8;
	x->o.end_fsync = true;
	r = run(&x->o, 0, NULL);
	assert_int_equal(r->write.bytes, total());
	assert_int_equal(r->fsyncs, MAXFILES);
	for (unsigned i = 0; i < MAXFILES; i++) {
		assert_int_equal(stat(x->paths[i], &st), 0);
		assert_int_equal((uint64_t)st.st_size, sizes[i]);
	}
	llmio_result_destroy(r);
}

/* I/O k is not issued before k * 15 ms: the run lasts as long as the timeline says. */
static void timeline(void **state)
{
	struct fixture *x;
	struct llmio_result *r;

	(void)state;
	x = setup_job("psync", "tl");
	x->s.nthreads = 1;
	x->s.nfiles = 1; /* 10000 bytes: 3 I/Os, due at 0, 15 and 30 ms */
	x->s.at_step = 15000000;
	r = run(&x->o, 0, NULL);
	assert_int_equal(r->read.ios, 3);
	assert_true(r->runtime_s >= 0.030);
	assert_true(r->runtime_s < 0.5);
	llmio_result_destroy(r);
}

/* A source that is not ready (-EAGAIN) until its I/O completes still gets everything done. */
static void not_ready(void **state)
{
	struct fixture *x;
	struct llmio_result *r;

	(void)state;
	x = setup_job("io_uring", "rd");
	x->s.nthreads = 1;
	x->s.gate = true;
	x->o.iodepth = 8;
	r = run(&x->o, 0, NULL);
	assert_int_equal(r->read.bytes, total());
	assert_true(x->s.eagain > 0);
	llmio_result_destroy(r);
}

static int failing_next(void *arg, unsigned t, struct llmio_io *io)
{
	(void)arg;
	(void)t;
	(void)io;
	return -EIO;
}

static int oversized_next(void *arg, unsigned t, struct llmio_io *io)
{
	(void)arg;
	(void)t;
	*io = (struct llmio_io){.len = 2 * CHUNK};
	return 1;
}

static void bad_sources(void **state)
{
	struct fixture *x;
	struct llmio_result *r;

	(void)state;
	x = setup_job("psync", "rd");
	x->src.next = failing_next;
	r = run(&x->o, -EIO, "I/O source failed");
	llmio_result_destroy(r);
	x->src.next = oversized_next;
	r = run(&x->o, -EIO, "bug in the recipe");
	llmio_result_destroy(r);
	/* a file list and a filename together are a usage error */
	x->src.next = whole_next;
	snprintf(x->o.filename, sizeof(x->o.filename), "%.4000s", x->paths[0]);
	r = run(&x->o, -EINVAL, "file list replaces");
	assert_null(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(read_whole_files), cmocka_unit_test(write_fresh_files),
	        cmocka_unit_test(timeline),         cmocka_unit_test(not_ready),
	        cmocka_unit_test(bad_sources),
	};
	const char *b = getenv("LLMIO_TEST_DIR");

	snprintf(dir, sizeof(dir), "%s/source", b ? b : "/tmp/llmio-test");
	mkdir(b ? b : "/tmp/llmio-test", 0755);
	mkdir(dir, 0755);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
