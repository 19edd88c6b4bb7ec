/* SPDX-License-Identifier: MIT */
/*
 * The one option table: job options, engine options, recipe parameters and steady-state keys
 * are all struct llmio_optdesc, read by one parser.  So the same bad value is refused the
 * same way (same code, same words) whatever the scope, every table's defaults parse, and a
 * value survives text -> field -> canonical text unchanged.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "base/optdesc.h"
#include "job/options.h"
#include "engine/engine.h"
#include "llmio/common.h"
#include "sweep/steady.h"
#include "sweep/sweep.h"
#include "workload/workload.h"

/* The same description in every scope refuses the same values with the same words (a recipe's
 * as a --flag, the others as key=value). */
static void same_refusal_every_scope(void **state)
{
	static const enum llmio_optdesc_scope scopes[] = {OPTD_SCOPE_RECIPE, OPTD_SCOPE_JOB,
	                                                  OPTD_SCOPE_ENGINE, OPTD_SCOPE_SWEEP};
	static const char *const bad[] = {"0", "65", "x", "-1", "4k"};
	static const int code[] = {-ERANGE, -ERANGE, -EINVAL, -EINVAL, -EINVAL};

	(void)state;
	for (size_t s = 0; s < sizeof(scopes) / sizeof(scopes[0]); s++) {
		const struct llmio_optdesc d = {.name = "threads",
		                                .type = OPTD_UINT,
		                                .def = "4",
		                                .min = 1,
		                                .max = 64,
		                                .scope = scopes[s]};
		const char *dash = scopes[s] == OPTD_SCOPE_RECIPE ? "--" : "";

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			struct llmio_error e = {0};
			struct llmio_optval v;
			char want[128];

			assert_int_equal(optdesc_parse(&d, bad[i], &v, &e), code[i]);
			assert_int_equal(e.code, code[i]);
			snprintf(want, sizeof(want), "%sthreads=%s is %s", dash, bad[i],
			         code[i] == -ERANGE ? "out of range: it takes 1..64" : "not");
			assert_non_null(strstr(e.msg, want));
		}
	}
}

/* The real tables: each kind of option, through its own entry point, words a range error the
 * one way. */
static void real_tables_refuse_alike(void **state)
{
	struct llmio_job_opts o;
	struct llmio_error e = {0};
	char *canon = NULL;
	int opts[64];

	(void)state;
	llmio_job_opts_init(&o);
	assert_int_equal(job_opt_set(&o, "iodepth", "0", &e), -ERANGE);
	assert_string_equal(e.msg, "iodepth=0 is out of range: it takes 1..4096");

	assert_int_equal(engine_opts_parse(engine_find("io_uring"), "submit_batch=70000", opts, &e),
	                 -EINVAL);
	assert_string_equal(
	        e.msg, "io_uring option submit_batch=70000 is out of range: it takes 0..65536");

	assert_int_equal(sweep_canon(SK_STEADY, "ss_window", "700s", &canon, &e), -EINVAL);
	assert_string_equal(e.msg, "ss_window=700s is out of range: it takes 100ms..600s");
	assert_int_equal(sweep_canon(SK_JOB, "iodepth", "0", &canon, &e), -EINVAL);
	assert_string_equal(e.msg, "iodepth=0 is out of range: it takes 1..4096");

	for (size_t i = 0; i < recipe_count(); i++) {
		const struct llmio_optdesc *p =
		        optdesc_find(recipe_at(i)->params, SIZE_MAX, "threads");
		struct llmio_optval v;

		if (!p)
			continue;
		assert_int_equal(optdesc_parse(p, "0", &v, &e), -ERANGE);
		assert_non_null(strstr(e.msg, "--threads=0 is out of range: it takes 1.."));
	}
}

/* Whole numbers keep their exact 64-bit bounds, and a field's width bounds what it holds. */
static void exact_bounds(void **state)
{
	struct llmio_job_opts o;
	struct llmio_error e = {0};

	(void)state;
	llmio_job_opts_init(&o);
	assert_int_equal(job_opt_set(&o, "randseed", "18446744073709551615", &e), 0);
	assert_true(o.randseed == UINT64_MAX);
	assert_int_equal(job_opt_set(&o, "randseed", "18446744073709551616", &e), -ERANGE);
	assert_int_equal(job_opt_set(&o, "randseed", "9007199254740993", &e), 0);
	assert_true(o.randseed == 9007199254740993ull); /* 2^53 + 1: no double holds it */
	/* fsync is a uint32_t: 2^32 does not fit, and the message says what does */
	assert_int_equal(job_opt_set(&o, "fsync", "4294967296", &e), -ERANGE);
	assert_string_equal(e.msg, "fsync=4294967296 is out of range: it takes 0..4294967295");
	assert_int_equal(job_opt_set(&o, "fsync", "4294967295", &e), 0);
	assert_int_equal(o.fsync, UINT32_MAX);
}

/* A bare number counts the option's unit: thinktime's microseconds, an engine's milliseconds;
 * a value that is not a whole stored unit is refused, not cut. */
static void duration_units(void **state)
{
	const struct engine_ops *u = engine_find("io_uring");
	const struct llmio_optdesc *idle = engine_opt_find(u, "sq_thread_idle");
	struct llmio_job_opts o;
	struct llmio_optval v;
	struct llmio_error e = {0};
	char buf[64];

	(void)state;
	llmio_job_opts_init(&o);
	assert_int_equal(job_opt_set(&o, "thinktime", "250", &e), 0);
	assert_int_equal(o.thinktime_ns, 250000);
	assert_non_null(idle);
	assert_int_equal(optdesc_parse(idle, "20", &v, &e), 0);
	assert_int_equal(v.u, 20000000);
	assert_int_equal(optdesc_parse(idle, "2s", &v, &e), 0);
	assert_int_equal(v.u, 2000000000);
	assert_int_equal(optdesc_format(idle, &v, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "2000000000"); /* canonical times are ns */
	assert_int_equal(optdesc_parse(idle, "1500us", &v, &e), -EINVAL);
	/* the steady-state window is a whole number of ms (250 ms samples make sub-second ones) */
	assert_int_equal(sweep_canon(SK_STEADY, "ss_window", "1500us", &(char *){NULL}, &e),
	                 -EINVAL);
}

/* Every entry of every table: its default parses, and text -> field -> text is the identity
 * on the canonical form; each table says its scope.  A number with no default ("", shown as
 * "none": a recipe parameter the user must give, like migrate's --budget) refuses its absence. */
static void check_table(const struct llmio_optdesc *t, size_t n, enum llmio_optdesc_scope scope,
                        void *base)
{
	for (size_t i = 0; t && i < n && t[i].name; i++) {
		struct llmio_optval v, back;
		struct llmio_error e = {0};
		char a[256], b[256];

		assert_int_equal(t[i].scope, scope);
		if (t[i].mirror)
			continue; /* another option's field under fio's name: no default of its own
			           */
		if ((!t[i].def || !t[i].def[0]) && t[i].type != OPTD_STRING &&
		    t[i].type != OPTD_BOOL) {
			assert_int_equal(optdesc_parse(&t[i], NULL, &v, &e), -EINVAL);
			continue;
		}
		assert_int_equal(optdesc_parse(&t[i], NULL, &v, &e), 0);
		assert_int_equal(optdesc_format(&t[i], &v, a, sizeof(a)), 0);
		if (!base || (!t[i].size && !t[i].codec))
			continue;
		assert_int_equal(optdesc_store(&t[i], &v, base, &e), 0);
		optdesc_load(&t[i], base, &back);
		assert_int_equal(optdesc_format(&t[i], &back, b, sizeof(b)), 0);
		assert_string_equal(a, b);
	}
}

static void every_table(void **state)
{
	struct llmio_job_opts o;
	struct steady_cfg ss = {0};

	(void)state;
	llmio_job_opts_init(&o);
	check_table(job_optdesc(0), llmio_job_option_count(), OPTD_SCOPE_JOB, &o);
	check_table(steady_optdesc(0), 5, OPTD_SCOPE_SWEEP, &ss);
	for (size_t i = 0; i < engine_count(); i++) {
		const struct engine_ops *en = engine_at(i);
		void *opts = calloc(1, en->opts_size ? en->opts_size : 1);

		assert_non_null(opts);
		check_table(en->opts, SIZE_MAX, OPTD_SCOPE_ENGINE, opts);
		free(opts);
	}
	for (size_t i = 0; i < recipe_count(); i++) {
		check_table(recipe_at(i)->params, SIZE_MAX, OPTD_SCOPE_RECIPE, NULL);
		check_table(recipe_at(i)->shared, SIZE_MAX, OPTD_SCOPE_RECIPE, NULL);
	}
	/* and the job table's fields hold the same as llmio_job_opts_init() set */
	assert_int_equal(o.bs, 4096);
	assert_true(o.invalidate);
	assert_int_equal(o.random_distribution, LLMIO_DIST_UNIFORM);
	assert_int_equal(ss.window_ms, 5000);
	assert_int_equal(ss.interval_ms, 1000);
}

static void collect(void *arg, const char *key, const struct llmio_optdesc *d,
                    const struct llmio_optval *v)
{
	char *keys = arg;
	size_t used = strlen(keys);

	(void)d;
	(void)v;
	snprintf(keys + used, 1024 - used, "%s%s", used ? " " : "", key);
}

/* The configuration a result echoes is the table's: its JSON names, and the options that
 * apply (directory's nrfiles, randrw's rwmixread, a CPU list's policy), never consent flags. */
static void echo_from_table(void **state)
{
	struct llmio_job_opts o;
	char keys[1024] = "";

	(void)state;
	llmio_job_opts_init(&o);
	job_opts_echo(&o, collect, keys);
	assert_string_equal(keys, "ioengine rw bs iodepth numjobs size io_size runtime_s "
	                          "ramp_time_s direct random_distribution randseed invalidate "
	                          "fadvise_hint noatime fsync end_fsync rate thinktime_us "
	                          "thinktime_blocks");
	assert_int_equal(job_opt_set(&o, "directory", "/d", NULL), 0);
	assert_int_equal(job_opt_set(&o, "rw", "randrw", NULL), 0);
	assert_int_equal(job_opt_set(&o, "cpus_allowed", "0", NULL), 0);
	assert_int_equal(job_opt_set(&o, "allow_destructive", "1", NULL), 0);
	keys[0] = '\0';
	job_opts_echo(&o, collect, keys);
	assert_string_equal(keys, "ioengine directory nrfiles rw rwmixread bs iodepth numjobs size "
	                          "io_size runtime_s ramp_time_s direct random_distribution "
	                          "randseed invalidate fadvise_hint noatime fsync end_fsync rate "
	                          "thinktime_us thinktime_blocks cpus_allowed cpus_allowed_policy");
}

/* fadvise_hint resolves as fio's: 1 by rw, 0 none, the named advice whatever rw is */
static void fadvise_hint_as_fio(void **state)
{
	static const struct llmio_io_source src = {0};
	static const struct {
		const char *hint, *rw;
		int advice;
	} cases[] = {
	        {"1", "randread", POSIX_FADV_RANDOM},
	        {"1", "randrw", POSIX_FADV_RANDOM},
	        {"1", "read", POSIX_FADV_SEQUENTIAL},
	        {"1", "rw", POSIX_FADV_SEQUENTIAL},
	        {"0", "randread", -1},
	        {"random", "read", POSIX_FADV_RANDOM},
	        {"sequential", "randwrite", POSIX_FADV_SEQUENTIAL},
	        {"normal", "read", POSIX_FADV_NORMAL},
	};
	struct llmio_job_opts o;

	(void)state;
	llmio_job_opts_init(&o);
	assert_int_equal(o.fadvise_hint, LLMIO_FADV_TYPE);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(job_opt_set(&o, "fadvise_hint", cases[i].hint, NULL), 0);
		assert_int_equal(job_opt_set(&o, "rw", cases[i].rw, NULL), 0);
		assert_int_equal(job_fadvise_advice(&o), cases[i].advice);
	}
	/* a job whose I/Os come from a source has no rw pattern to advise */
	assert_int_equal(job_opt_set(&o, "fadvise_hint", "1", NULL), 0);
	o.io_source = &src;
	assert_int_equal(job_fadvise_advice(&o), -1);
	assert_int_equal(job_opt_set(&o, "fadvise_hint", "willneed", NULL), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(same_refusal_every_scope),
	        cmocka_unit_test(real_tables_refuse_alike),
	        cmocka_unit_test(exact_bounds),
	        cmocka_unit_test(duration_units),
	        cmocka_unit_test(every_table),
	        cmocka_unit_test(echo_from_table),
	        cmocka_unit_test(fadvise_hint_as_fio),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
