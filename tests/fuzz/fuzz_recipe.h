/* SPDX-License-Identifier: MIT */
/*
 * A recipe's run() for the harnesses of recipe inputs (fuzz_replay_plan.c,
 * fuzz_offload_trace.c): called as wl_run() calls it once it has made llmio's directory in
 * --directory, with a --directory that does not exist, so that the recipe stops at its first
 * file and nothing is written anywhere (wl_run() itself would stop at making the directory).
 */
#ifndef LLMIO_FUZZ_RECIPE_H
#define LLMIO_FUZZ_RECIPE_H

#include "fuzz_common.h"

#include "workload/workload.h"

#define FUZZ_NO_DIR "/nonexistent/llmio-fuzz"

/* Run recipe `name` with the parameters kv[i][0] = kv[i][1]. */
static inline void fuzz_recipe_run(const char *name, const char *const kv[][2], size_t n)
{
	const struct recipe *r = recipe_find(name);
	struct llmio_job_opts base;
	struct llmio_error err = {0};
	struct wl *w = malloc(sizeof(*w)); /* large: off the stack */

	if (!r || !w)
		abort();
	llmio_job_opts_init(&base);
	snprintf(base.directory, sizeof(base.directory), "%s", FUZZ_NO_DIR);
	wl_init(w, r, &base);
	for (size_t i = 0; i < n; i++)
		if (wl_set(w, kv[i][0], kv[i][1], &err))
			abort();
	r->run(w, &err);
	wl_release(w);
	free(w);
}

#endif
