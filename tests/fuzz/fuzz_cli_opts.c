/* SPDX-License-Identifier: MIT */
/*
 * Job options by name (src/job/options.c), as `llmio run --KEY=VALUE` and job files set
 * them, and engine options (engine_opts_parse, src/engine/registry.c) as --sqpoll=1 and
 * ioengine=io_uring:sqpoll=1 reach them.  The input is lines of KEY=VALUE; a line that starts
 * with '@' is an engine option list for the engine named in ioengine.  After each accepted
 * option its canonical form (what sweeps hash and journals record) must be printable and, for
 * every type but times (whose canonical form is in ns while a bare number means seconds), must
 * parse back to itself.
 */
#include "fuzz_common.h"

#include <stdbool.h>

#include "job/options.h"
#include "engine/engine.h"
#include "llmio/job.h"

static bool is_time(const char *name)
{
	struct llmio_option_info info;

	for (size_t i = 0; llmio_job_option(i, &info) == 0; i++)
		if (!strcmp(info.name, name))
			return !strcmp(info.type, "time");
	return false;
}

static void check_canonical(struct llmio_job_opts *o, const char *key)
{
	struct llmio_job_opts again;
	struct llmio_error err;
	char buf[LLMIO_PATH_MAX + 64], buf2[sizeof(buf)];
	const char *name;

	if (job_opt_canonical(o, key, &name, buf, sizeof(buf)))
		abort(); /* an accepted option always has a canonical form */
	if (is_time(name))
		return;
	memcpy(&again, o, sizeof(again));
	if (llmio_job_opts_set(&again, name, buf, &err))
		abort(); /* the canonical form must be a valid value of the option */
	if (job_opt_canonical(&again, name, NULL, buf2, sizeof(buf2)) || strcmp(buf, buf2))
		abort(); /* and a fixed point */
}

static void engine_opts(const struct llmio_job_opts *o, const char *text)
{
	const struct engine_ops *e = engine_find(o->engine);
	struct llmio_error err;
	void *eo;

	if (!e)
		e = engine_at(0);
	eo = calloc(1, e->opts_size ? e->opts_size : 1);
	if (!eo)
		abort();
	engine_opts_parse(e, text, eo, &err);
	free(eo);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct llmio_error err;
	char *text = fuzz_str(data, size), *save = NULL;
	struct llmio_job_opts o;

	llmio_job_opts_init(&o);
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *eq;

		if (line[0] == '@') {
			engine_opts(&o, line + 1);
			continue;
		}
		eq = strchr(line, '=');
		if (eq)
			*eq = '\0';
		if (llmio_job_opts_set(&o, line, eq ? eq + 1 : NULL, &err) == 0)
			check_canonical(&o, line);
	}
	free(text);
	return 0;
}
