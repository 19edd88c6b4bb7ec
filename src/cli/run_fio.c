/* SPDX-License-Identifier: MIT */
/*
 * fio at home in `llmio run` (docs/fio.md): fio's output options, and fio job files run as fio
 * runs them.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "cli/progress.h"
#include "cli/run_fio.h"
#include "job/options.h"
#include "engine/engine.h"
#include "report/fio_json.h"
#include "report/fio_log.h"
#include "base/fmt.h"
#include "job/iolog.h"
#include "sweep/fio_jobs.h"
#include "sweep/sweep.h"

/* fio's --output-format: a comma list of what llmio can write; -EINVAL with a message. */
static int parse_format(const char *v, struct run_out *out)
{
	char buf[64];
	char *save = NULL;

	if (strlen(v) >= sizeof(buf)) {
		fprintf(stderr, "llmio: --output-format=%s: expected normal, json or json+\n", v);
		return -EINVAL;
	}
	snprintf(buf, sizeof(buf), "%s", v);
	out->normal = out->json = out->plus = false;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (!strcmp(t, "normal")) {
			out->normal = true;
		} else if (!strcmp(t, "json") || !strcmp(t, "json+")) {
			out->json = true;
			out->plus |= t[4] == '+';
		} else if (!strcmp(t, "terse")) {
			fprintf(stderr, "llmio: --output-format=terse: llmio does not write fio's "
			                "terse lines; use --csv FILE (one CSV line per job)\n");
			return -EINVAL;
		} else {
			fprintf(stderr,
			        "llmio: --output-format=%s: %s is not a format llmio writes: "
			        "normal, "
			        "json or json+\n",
			        v, t);
			return -EINVAL;
		}
	}
	if (!out->normal && !out->json) {
		fprintf(stderr, "llmio: --output-format needs normal, json or json+\n");
		return -EINVAL;
	}
	return 0;
}

/* What --output-format asked for, into one stream (fio's --output, or stdout). */
int run_out_write(FILE *f, void *arg)
{
	const struct run_out *x = arg;
	int ret = 0;

	for (size_t i = 0; x->normal && i < x->n; i++) {
		const struct llmio_result *r = x->r[i];
		const char *name = r->opts.name[0] ? r->opts.name : "job";

		if (!x->together && fio_per_clone(r)) {
			/* fio's clones: numjobs threads without group_reporting, one report each */
			for (uint32_t k = 0; k < r->nthreads && !ret; k++) {
				struct llmio_result *c = fio_clone_result(r, k);

				if (!c) {
					ret = -ENOMEM;
					break;
				}
				fprintf(f, "%s%s: (groupid=%u, thread %u of %u)\n",
				        i || k ? "\n" : "", name, x->group ? x->group[i] : 0, k + 1,
				        r->nthreads);
				table_print_result(f, c);
				llmio_result_destroy(c);
			}
			/* a command line's job: then its threads together, as fio's group status
			 * line sums its jobs (and as llmio's --json record keeps them) */
			if (!x->group && !ret) {
				fprintf(f, "\n%s: (groupid=0) all %u threads together\n", name,
				        r->nthreads);
				table_print_result(f, r);
			}
			continue;
		}
		/* a job file's jobs: which one, in which group (fio's "name: (groupid=N)") */
		if (x->group)
			fprintf(f, "%s%s: (groupid=%u)%s\n", i ? "\n" : "", name, x->group[i],
			        r->opts.group_reporting ? " all jobs of the group together" : "");
		table_print_result(f, r);
	}
	if (x->json && !ret)
		ret = fio_json_write(f, x->r, x->group, x->n, x->plus);
	return ret ? ret : ferror(f) ? -EIO : 0;
}

/*
 * fio's output options (--output-format, --output); *handled when a is one.  EXIT_USAGE on a
 * bad value.
 */
int run_out_arg(struct run_out *out, int argc, char **argv, int *i, bool *handled)
{
	const char *a = argv[*i], *v = NULL;
	bool fmt = !strncmp(a, "--output-format", 15), file = !strncmp(a, "--output", 8) && !fmt;
	size_t len = fmt ? 15 : 8;

	*handled = false;
	if ((!fmt && !file) || (a[len] && a[len] != '='))
		return 0;
	*handled = true;
	if (a[len] == '=')
		v = a + len + 1;
	else if (*i + 1 < argc)
		v = argv[++*i];
	if (!v || !v[0]) {
		fprintf(stderr, "llmio: %s needs a value\n", fmt ? "--output-format" : "--output");
		return EXIT_USAGE;
	}
	if (file) {
		out->path = v;
		return 0;
	}
	return parse_format(v, out) ? EXIT_USAGE : 0;
}

int run_logs_write(const struct llmio_result *r)
{
	struct llmio_error e = {0};
	bool truncated;

	if (fio_log_write(r, &truncated, &e)) {
		fprintf(stderr, "llmio: %s\n", e.msg);
		return EXIT_RUNTIME;
	}
	if (truncated)
		fprintf(stderr,
		        "llmio: warning: the run outlasted its logs' buffer (%u intervals of "
		        "log_avg_msec): the logs end early; raise log_avg_msec or give a runtime\n",
		        IOLOG_DEFAULT_CAP);
	return 0;
}

bool run_is_jobfile(int argc, char **argv, int i)
{
	const char *a = argv[i];
	size_t len = strlen(a);
	bool fio = len > 4 && !strcmp(a + len - 4, ".fio");
	struct stat st;

	if (i >= argc || a[0] == '-')
		return false;
	/* the value of an option before it (--filename data.fio) is not a job file */
	if (i > 1 && argv[i - 1][0] == '-' && !strchr(argv[i - 1], '='))
		return false;
	/* a missing FILE.fio is the job file that cannot be read; another word is not a file */
	return fio || (i == 1 && !stat(a, &st) && S_ISREG(st.st_mode));
}

/* Output options only: a job file carries the jobs. */
static int jobfile_args(int argc, char **argv, int file_arg, struct run_out *out, const char **json,
                        const char **csv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		bool handled;
		int ret;

		if (i == file_arg)
			continue;
		ret = run_out_arg(out, argc, argv, &i, &handled);
		if (ret)
			return ret;
		if (handled)
			continue;
		if ((!strcmp(a, "--json") || !strcmp(a, "--csv")) && i + 1 < argc)
			*(a[2] == 'j' ? json : csv) = argv[++i];
		else if (!strncmp(a, "--json=", 7))
			*json = a + 7;
		else if (!strncmp(a, "--csv=", 6))
			*csv = a + 6;
		else if (!strcmp(a, "--quiet") || !strcmp(a, "-q"))
			out->normal = false;
		else {
			fprintf(stderr,
			        "llmio run: %s with a job file: job options go into the file "
			        "([global] for all jobs); only --output-format, --output, --json, "
			        "--csv and --quiet are given beside it\n",
			        a);
			return EXIT_USAGE;
		}
	}
	return 0;
}

static int write_results_json(FILE *f, void *arg)
{
	const struct run_out *x = arg;

	return llmio_results_write_json(f, x->r, x->n);
}

static int write_results_csv(FILE *f, void *arg)
{
	const struct run_out *x = arg;

	return llmio_results_write_csv(f, x->r, x->n);
}

/* Each job's logs, and its error or interruption as the exit status. */
static void report_jobs(const struct fio_job *jobs, size_t njobs, int *code)
{
	for (size_t i = 0; i < njobs; i++) {
		if (jobs[i].r && run_logs_write(jobs[i].r))
			*code = EXIT_RUNTIME;
		if (jobs[i].ret) {
			fprintf(stderr, "llmio: [%s]: %s\n", jobs[i].o.name, jobs[i].e.msg);
			*code = cli_exit_code(jobs[i].ret);
		}
		if (jobs[i].r && jobs[i].r->interrupted && !*code)
			*code = EXIT_RUNTIME;
	}
}

/*
 * What the output options ask of the run (fio's --output with its format, --json, --csv):
 * where each goes, checked before any job runs.  0 or the exit status.
 */
static int outputs_check(struct run_out *out, const char *json, const char *csv)
{
	if (out->path && !strcmp(out->path, "-"))
		out->path = NULL;
	if ((json && !strcmp(json, "-")) || (csv && !strcmp(csv, "-"))) {
		if (out->json && !out->path) {
			fprintf(stderr,
			        "llmio run: --output-format=json and --json - or --csv - all "
			        "write to stdout: give --output FILE\n");
			return EXIT_USAGE;
		}
		out->normal = false;
	}
	if (out->json && !out->path)
		out->normal = false;
	for (int k = 0; k < 3; k++) {
		const char *path = k == 2 ? out->path : k ? csv : json;
		int ret;

		if (path && strcmp(path, "-") &&
		    (ret = cli_output_usable("run", path, CLI_OUT_FILE)))
			return ret;
	}
	return 0;
}

/*
 * Run jobs[0, njobs) as fio runs a job file's jobs, report them as out asks and write --json
 * and --csv; frees the jobs.  Returns the exit status.
 */
static int run_jobs(struct fio_job *jobs, size_t njobs, struct run_out *out, const char *json,
                    const char *csv)
{
	struct llmio_result **res = calloc(njobs, sizeof(*res));
	unsigned *group = calloc(njobs, sizeof(*group));
	bool *merged = calloc(njobs, sizeof(*merged));
	const struct fio_run_hooks hooks = {.stop = &cli_stop,
	                                    .progress = cli_progress,
	                                    .prepare_progress = progress_layout_cb,
	                                    .one_done = cli_progress_clear};
	size_t n = 0;
	int ret, code = 0;

	if (!res || !group || !merged) {
		code = EXIT_RUNTIME;
		goto out_free;
	}
	fio_jobs_run(jobs, njobs, &hooks);
	report_jobs(jobs, njobs, &code);
	if (fio_jobs_collect(jobs, njobs, res, group, &n, merged)) {
		code = EXIT_RUNTIME;
		goto out_free;
	}
	out->r = res;
	out->group = group;
	out->n = n;
	ret = out->path ? cli_write_file(out->path, run_out_write, out)
	                : run_out_write(stdout, out);
	if (!ret && json)
		ret = cli_write_file(json, write_results_json, out);
	if (!ret && csv)
		ret = cli_write_file(csv, write_results_csv, out);
	if (ret) {
		fprintf(stderr, "llmio: cannot write the results: %s\n", strerror(-ret));
		code = EXIT_RUNTIME;
	}
out_free:
	for (size_t i = 0; i < n; i++)
		if (merged[i])
			llmio_result_destroy(res[i]);
	fio_jobs_free(jobs, njobs);
	free(merged);
	free(group);
	free(res);
	return code;
}

int run_jobfile(int argc, char **argv, int file_arg)
{
	struct run_out out = {.normal = true};
	const char *json = NULL, *csv = NULL;
	struct llmio_error e = {0};
	struct sweep_file *f = NULL;
	struct fio_job *jobs;
	int ret;

	ret = jobfile_args(argc, argv, file_arg, &out, &json, &csv);
	if (!ret)
		ret = outputs_check(&out, json, csv);
	if (ret)
		return ret;
	ret = fio_file_load(argv[file_arg], &f, &e);
	if (ret) {
		fprintf(stderr, "llmio: %s\n", e.msg[0] ? e.msg : strerror(-ret));
		return ret == -ENOMEM ? EXIT_RUNTIME : EXIT_USAGE;
	}
	jobs = calloc(f->nsec, sizeof(*jobs));
	if (!jobs) {
		sweep_file_free(f);
		return EXIT_RUNTIME;
	}
	for (size_t i = 0; i < f->nsec; i++) {
		if (fio_job_section(&f->sec[i], &jobs[i].o, &e) ||
		    fio_files_make(&jobs[i].o, &jobs[i].files, &e)) {
			fprintf(stderr, "llmio: %s\n", e.msg);
			fio_jobs_free(jobs, f->nsec);
			sweep_file_free(f);
			return EXIT_USAGE;
		}
	}
	ret = run_jobs(jobs, f->nsec, &out, json, csv);
	sweep_file_free(f);
	return ret;
}

/* ---- fio's command line: one job per --name ----------------------------------------------- */

int run_find_engine(struct llmio_job_opts *o, int argc, char **argv, int from, int to)
{
	struct llmio_error err = {0};

	for (int i = from; i < to; i++) {
		const char *a = argv[i], *v = NULL;

		if (!strncmp(a, "--ioengine=", 11) || !strncmp(a, "--engine=", 9))
			v = strchr(a, '=') + 1;
		else if ((!strcmp(a, "--ioengine") || !strcmp(a, "--engine")) && i + 1 < argc)
			v = argv[i + 1];
		if (v && llmio_job_opts_set(o, "ioengine", v, &err)) {
			fprintf(stderr, "llmio: %s\n", err.msg);
			return EXIT_USAGE;
		}
	}
	return 0;
}

int run_unknown_arg(const char *a, const char *engine)
{
	char key[64] = "";
	const struct engine_ops *owner = NULL;

	/* a + 2 only when a starts with "--": `llmio run x` has nothing there */
	if (!strncmp(a, "--", 2)) {
		snprintf(key, sizeof(key), "%.*s", (int)strcspn(a + 2, "="), a + 2);
		owner = engine_owning_option(key);
	}
	if (key[0] && job_fio_refused(key))
		fprintf(stderr, "llmio: --%s is a fio option llmio does not do; instead: %s\n", key,
		        job_fio_refused(key));
	else if (owner)
		fprintf(stderr,
		        "llmio: --%s is an option of the %s engine, not of %s; add --ioengine %s\n",
		        key, owner->name, engine, owner->name);
	else
		fprintf(stderr, "llmio: unknown option '%s' (see `llmio run --help`)\n", a);
	return EXIT_USAGE;
}

static bool is_name(const char *a)
{
	return !strcmp(a, "--name") || !strncmp(a, "--name=", 7);
}

int run_names(int argc, char **argv)
{
	int n = 0;

	for (int i = 1; i < argc; i++)
		n += is_name(argv[i]);
	return n;
}

/* Where the job that starts at argv[i] ends: the next --name, or the end. */
static int job_end(int argc, char **argv, int i)
{
	while (++i < argc && !is_name(argv[i]))
		;
	return i;
}

/* One argument of a command line of jobs that is not a job option: output options. */
static int cmdline_arg(struct run_out *out, int argc, char **argv, int *i, const char **json,
                       const char **csv, const char *engine)
{
	const char *a = argv[*i];
	bool handled;
	int ret = run_out_arg(out, argc, argv, i, &handled);

	if (ret || handled)
		return ret;
	if ((!strcmp(a, "--json") || !strcmp(a, "--csv")) && *i + 1 < argc)
		*(a[2] == 'j' ? json : csv) = argv[++*i];
	else if (!strncmp(a, "--json=", 7))
		*json = a + 7;
	else if (!strncmp(a, "--csv=", 6))
		*csv = a + 6;
	else if (!strcmp(a, "--quiet") || !strcmp(a, "-q"))
		out->normal = false;
	else if (progress_option(a)) /* --progress, --no-progress: its mode is set */
		;
	else if (!strcmp(a, "--emit-fio")) {
		fprintf(stderr, "llmio run: --emit-fio writes one job: give one --name (several "
		                "are fio's job file with a section each)\n");
		return EXIT_USAGE;
	} else {
		return run_unknown_arg(a, engine);
	}
	return 0;
}

int run_cmdline_jobs(int argc, char **argv)
{
	struct run_out out = {.normal = true};
	const char *json = NULL, *csv = NULL;
	struct llmio_error e = {0};
	struct llmio_job_opts global;
	size_t n = (size_t)run_names(argc, argv), njobs = 0;
	struct fio_job *jobs = calloc(n, sizeof(*jobs));
	int ret;

	if (!jobs)
		return EXIT_RUNTIME;
	llmio_job_opts_init(&global);
	global.time_based = false; /* fio's default, as in a job file */
	ret = run_find_engine(&global, argc, argv, 1, job_end(argc, argv, 0));
	for (int i = 1; i < argc && !ret; i++) {
		struct llmio_job_opts *o = njobs ? &jobs[njobs - 1].o : &global;
		bool handled;

		if (is_name(argv[i])) {
			/* a new job: the global options, then its own */
			o = &jobs[njobs++].o;
			*o = global;
			ret = run_find_engine(o, argc, argv, i, job_end(argc, argv, i));
			if (ret)
				break;
		}
		ret = cli_parse_job_arg(o, argc, argv, &i, &handled);
		if (!ret && !handled)
			ret = cmdline_arg(&out, argc, argv, &i, &json, &csv, o->engine);
	}
	if (!ret)
		ret = outputs_check(&out, json, csv);
	for (size_t i = 0; i < n && !ret; i++)
		if (fio_files_make(&jobs[i].o, &jobs[i].files, &e)) {
			fprintf(stderr, "llmio: [%s]: %s\n", jobs[i].o.name, e.msg);
			ret = EXIT_USAGE;
		}
	if (ret) {
		fio_jobs_free(jobs, n);
		return ret;
	}
	return run_jobs(jobs, n, &out, json, csv);
}
