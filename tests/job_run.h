/* SPDX-License-Identifier: MIT */
/*
 * What the job API's tests share: options for an engine and a file in the test's scratch
 * directory, and a run that must succeed.  The including file defines `static char dir[4096]`
 * (its scratch directory) and includes cmocka.h and llmio/llmio.h first.
 */
#ifndef LLMIO_TESTS_JOB_RUN_H
#define LLMIO_TESTS_JOB_RUN_H

static void base(struct llmio_job_opts *o, const char *engine, const char *file)
{
	llmio_job_opts_init(o);
	snprintf(o->engine, sizeof(o->engine), "%s", engine);
	if (file)
		snprintf(o->filename, sizeof(o->filename), "%.4000s/%s", dir, file);
}

static struct llmio_result *run_ok(const struct llmio_job_opts *o)
{
	struct llmio_result *r = NULL;
	struct llmio_error err = {0};
	int ret = llmio_job_run(o, &r, &err);

	if (ret)
		print_message("llmio_job_run: %s\n", err.msg);
	assert_int_equal(ret, 0);
	assert_non_null(r);
	return r;
}

#endif
