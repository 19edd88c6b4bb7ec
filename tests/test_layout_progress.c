/* SPDX-License-Identifier: MIT */
/*
 * The layout's progress (llmio_job_opts.prepare_progress, include/llmio/job.h): a job that
 * creates and fills its file calls back from the calling thread, first with 0 bytes done,
 * then after every MiB with bytes that never go back, of the job's size, up to all of it; a
 * directory of files counts each file's bytes once; a job whose file is complete makes no
 * call; a result keeps no pointer to the callback or its argument; an older caller's shorter
 * options (opts_size without the new members) get none.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "llmio/llmio.h"

#define MIB      (1ull << 20)
#define MAXCALLS 256

struct calls {
	unsigned n;
	uint64_t done[MAXCALLS], total[MAXCALLS];
	pthread_t thread;
	bool other_thread;
};

static char dir[] = "/tmp/test_layout_progress.XXXXXX";

static void on_layout(void *arg, uint64_t done, uint64_t total)
{
	struct calls *c = arg;

	if (!pthread_equal(pthread_self(), c->thread))
		c->other_thread = true;
	if (c->n < MAXCALLS) {
		c->done[c->n] = done;
		c->total[c->n] = total;
	}
	c->n++;
}

/* A read job of size bytes over one file (or nrfiles in dir), told to c. */
static void job(struct llmio_job_opts *o, struct calls *c, const char *name, unsigned nrfiles,
                uint64_t size)
{
	llmio_job_opts_init(o);
	if (nrfiles)
		snprintf(o->directory, sizeof(o->directory), "%s", dir);
	else
		snprintf(o->filename, sizeof(o->filename), "%s/%s", dir, name);
	o->nrfiles = nrfiles ? nrfiles : 1;
	o->size = size;
	o->io_size = 64 * 1024;
	o->rw = LLMIO_RW_READ;
	o->direct = false;
	o->prepare_progress = on_layout;
	o->prepare_arg = c;
	memset(c, 0, sizeof(*c));
	c->thread = pthread_self();
}

static void run(const struct llmio_job_opts *o)
{
	struct llmio_error e = {0};
	struct llmio_result *r = NULL;

	assert_int_equal(llmio_job_run(o, &r, &e), 0);
	assert_non_null(r);
	assert_null(r->opts.prepare_progress);
	assert_null(r->opts.prepare_arg);
	llmio_result_destroy(r);
}

/* Calls of one layout of total bytes: 0 first, never back, every MiB, all of it at the end. */
static void check_calls(const struct calls *c, uint64_t total)
{
	assert_true(c->n >= 2 && c->n <= MAXCALLS);
	assert_false(c->other_thread);
	assert_int_equal(c->done[0], 0);
	for (unsigned i = 0; i < c->n; i++) {
		assert_int_equal(c->total[i], total);
		if (i)
			assert_true(c->done[i] >= c->done[i - 1]);
	}
	assert_int_equal(c->done[c->n - 1], total);
	/* one call before the first write and one per MiB (the last chunk may be shorter) */
	assert_true(c->n >= total / MIB + 1);
}

static void one_file(void **state)
{
	struct llmio_job_opts o;
	struct calls c;

	(void)state;
	job(&o, &c, "f", 0, 5 * MIB + 4096);
	run(&o);
	check_calls(&c, 5 * MIB + 4096);
	/* the file is complete now: nothing to lay out, no call */
	job(&o, &c, "f", 0, 5 * MIB + 4096);
	run(&o);
	assert_int_equal(c.n, 0);
}

static void directory(void **state)
{
	struct llmio_job_opts o;
	struct calls c;

	(void)state;
	job(&o, &c, NULL, 3, 6 * MIB);
	run(&o);
	check_calls(&c, 6 * MIB);
	/* each file starts where the one before ended: 0, 2 and 4 MiB before their first writes */
	for (uint64_t k = 0; k < 3; k++) {
		bool seen = false;

		for (unsigned i = 0; i < c.n; i++)
			seen |= c.done[i] == k * 2 * MIB;
		assert_true(seen);
	}
}

static void older_caller(void **state)
{
	struct llmio_job_opts o;
	struct calls c;

	(void)state;
	job(&o, &c, "old", 0, 2 * MIB);
	/* built against the struct before prepare_progress: the library must not read it */
	o.opts_size = offsetof(struct llmio_job_opts, log_offset);
	run(&o);
	assert_int_equal(c.n, 0);
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[256];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(one_file),
	        cmocka_unit_test(directory),
	        cmocka_unit_test(older_caller),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
