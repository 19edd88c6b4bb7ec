/* SPDX-License-Identifier: MIT */
/*
 * Job files (src/sweep/jobfile.c, read with libinih) and what `llmio sweep --dry-run` does
 * with a file that loads: expand the lists and ranges (src/sweep/matrix.c), apply exclude=,
 * drop duplicates, and build each point's configuration, hash and journal "config".  An odd-
 * sized input is loaded with a --dir override as well.
 *
 * Plans of up to SWEEP_MAX_COMBINATIONS (10^6) points are valid and take seconds to expand;
 * the harness expands only files of at most PLAN_MAX combinations, so that a timeout always
 * means a parser that does not end, not a large but legal sweep.
 */
#include "fuzz_common.h"

#include <cjson/cJSON.h>

#include "sweep/sweep.h"

#define PLAN_MAX 20000

static size_t combinations(const struct sweep_file *f)
{
	size_t all = 0;

	for (size_t s = 0; s < f->nsec; s++) {
		size_t total = 1;

		for (size_t i = 0; i < f->sec[s].ndims; i++) {
			total *= f->sec[s].dims[i].n ? f->sec[s].dims[i].n : 1;
			if (total > PLAN_MAX)
				return PLAN_MAX + 1;
		}
		all += total;
	}
	return all;
}

static void plan(const struct sweep_file *f)
{
	struct sweep_config *c = malloc(sizeof(*c));
	struct sweep_plan p;
	struct llmio_error err = {0};

	if (!c)
		abort();
	if (sweep_plan_build(f, &p, &err) == 0) {
		for (size_t i = 0; i < p.n && i < 16; i++) {
			cJSON *j;

			if (sweep_config_build(f, p.p[i].sec, p.p[i].choice, c, &err))
				continue;
			sweep_config_hash(c, (unsigned)i);
			j = sweep_config_json(c, (unsigned)i);
			cJSON_Delete(j);
		}
		sweep_plan_release(&p);
	}
	free(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sweep_file *f = NULL;
	struct llmio_error err = {0};
	char path[64];
	int fd = fuzz_file(data, size, path, sizeof(path));

	if (sweep_file_load(path, size % 2 ? "/nonexistent/llmio-fuzz" : NULL, &f, &err) == 0) {
		if (combinations(f) <= PLAN_MAX)
			plan(f);
		sweep_file_free(f);
	}
	fuzz_file_close(fd);
	return 0;
}
