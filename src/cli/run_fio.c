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

/* ---- fio's files ------------------------------------------------------------------------ */

void run_fio_files_free(struct fio_files *ff)
{
	free(ff->list);
	free(ff->names);
	*ff = (struct fio_files){0};
}

/* The next name of fio's ':' list at *p into out ("\:" is a colon); false when too long. */
static bool next_name(const char **p, char *out, size_t len)
{
	size_t used = 0;

	for (; **p && **p != ':'; (*p)++) {
		if (**p == '\\' && (*p)[1] == ':')
			(*p)++;
		if (used + 1 >= len)
			return false;
		out[used++] = **p;
	}
	out[used] = '\0';
	if (**p)
		(*p)++;
	return true;
}

/*
 * One name of fio's filename_format: $jobname, $jobnum (the clone, fio's name for a thread of
 * numjobs) and $filenum; anything else as written.  false when too long.
 */
static bool format_name(const char *fmt, const char *job, unsigned clone, unsigned filenum,
                        char *out, size_t len)
{
	size_t used = 0;

	out[0] = '\0';
	while (*fmt) {
		char num[16] = "";
		const char *put = num;
		size_t n;

		if (!strncmp(fmt, "$jobname", 8)) {
			put = job;
			fmt += 8;
		} else if (!strncmp(fmt, "$jobnum", 7)) {
			snprintf(num, sizeof(num), "%u", clone);
			fmt += 7;
		} else if (!strncmp(fmt, "$filenum", 8)) {
			snprintf(num, sizeof(num), "%u", filenum);
			fmt += 8;
		} else {
			num[0] = *fmt++;
		}
		n = strlen(put);
		if (used + n >= len)
			return false;
		memcpy(out + used, put, n + 1);
		used += n;
	}
	return true;
}

/* How many names fio's list holds: its unescaped colons, plus one. */
static unsigned count_names(const char *list)
{
	unsigned n = 1;

	for (const char *p = list; *p; p++)
		if (*p == '\\' && p[1] == ':')
			p++;
		else if (*p == ':')
			n++;
	return n;
}

int run_fio_files(struct llmio_job_opts *o, struct fio_files *ff, struct llmio_error *e)
{
	const struct engine_ops *eng = engine_find(o->engine);
	const bool named = o->filename[0];
	const char *list = o->filename;
	char dir[LLMIO_PATH_MAX], name[LLMIO_PATH_MAX], fmt[sizeof(o->filename_format)];
	uint64_t per;
	unsigned n, per_clone, clones;

	*ff = (struct fio_files){0};
	snprintf(fmt, sizeof(fmt), "%s", o->filename_format);
	o->filename_format[0] = '\0'; /* used here, never by the library */
	/* what fio's names do not apply to: no files, an engine's own names, a file list */
	if (o->files || !eng || (eng->caps & (ENGINE_CAP_NO_IO | ENGINE_CAP_OWN_TARGET)) ||
	    strstr(o->filename, "://") || strstr(o->directory, "://"))
		return 0;
	/*
	 * directory alone: llmio's own work directory (docs/fio.md says why), unless a
	 * filename_format asks for fio's names in it; no name either: no target
	 */
	if (!named && !fmt[0] && (o->directory[0] || !o->name[0]))
		return 0;
	if (!fmt[0])
		snprintf(fmt, sizeof(fmt), "$jobname.$jobnum.$filenum"); /* fio's default */
	/*
	 * fio's clones (numjobs) each have files of their own when fio names them: nrfiles each,
	 * of size together.  llmio's threads then walk one clone's files each (a sequential
	 * thread's slice of the job's files), as fio's clones do.
	 */
	per_clone = named ? count_names(list) : o->nrfiles ? o->nrfiles : 1;
	clones = named ? 1 : o->numjobs ? o->numjobs : 1;
	n = per_clone * clones;
	snprintf(dir, sizeof(dir), "%s", o->directory);
	if (n > 1) {
		ff->list = calloc(n, sizeof(*ff->list));
		ff->names = calloc(n, LLMIO_PATH_MAX);
		if (!ff->list || !ff->names) {
			run_fio_files_free(ff);
			return llmio_err(e, -ENOMEM, "out of memory for %u files", n);
		}
	}
	/* fio's filesize is each file's; its size all files' together */
	per = o->filesize ? o->filesize : o->size / per_clone;
	per -= o->bs ? per % o->bs : 0;
	for (unsigned i = 0; i < n; i++) {
		char *path = ff->names ? ff->names + (size_t)i * LLMIO_PATH_MAX : name;
		char one[LLMIO_PATH_MAX];
		int len;

		if (named ? !next_name(&list, one, sizeof(one))
		          : !format_name(fmt, o->name, i / per_clone, i % per_clone, one,
		                         sizeof(one)))
			goto too_long;
		if (!one[0]) {
			run_fio_files_free(ff);
			return named ? llmio_err(e, -EINVAL,
			                         "filename=%s: an empty name in the ':' list; give "
			                         "each file a name (\\: is a colon in one)",
			                         o->filename)
			             : llmio_err(e, -EINVAL,
			                         "filename_format=%s names no file (no job name?); "
			                         "give --name or --filename",
			                         fmt);
		}
		/* fio puts every name inside directory, an absolute one too */
		len = snprintf(path, LLMIO_PATH_MAX, "%s%s%s", dir, dir[0] ? "/" : "", one);
		if (len < 0 || len >= LLMIO_PATH_MAX)
			goto too_long;
		if (ff->list)
			ff->list[i] = (struct llmio_file){.path = path, .size = per};
	}
	o->directory[0] = '\0';
	if (!ff->list) {
		snprintf(o->filename, sizeof(o->filename), "%s", name);
		return 0;
	}
	o->filename[0] = '\0';
	o->files = ff->list;
	o->nfiles_list = n;
	o->size = per * n;
	o->filesize = 0;
	return 0;
too_long:
	run_fio_files_free(ff);
	return llmio_err(e, -ENAMETOOLONG, "filename=%s in directory=%s: a path is too long",
	                 o->filename, o->directory);
}

/* ---- fio job files ---------------------------------------------------------------------- */

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

struct fio_job {
	struct llmio_job_opts o;
	struct fio_files files; /* o's file list, when fio names several */
	unsigned group;         /* fio's groupid: a new one at stonewall or new_group */
	unsigned wave;          /* jobs run together: a new wave at stonewall */
	struct llmio_result *r;
	struct llmio_error e;
	int ret;
	pthread_t thread;
};

/* One value per key: fio's jobs are single points (lists and ranges are llmio sweep's). */
static int dim_value(const struct sweep_section *s, const struct sweep_dim *d, char *buf,
                     size_t len, struct llmio_error *e)
{
	const struct llmio_optdesc *od = d->kind == SK_JOB ? job_opt_find(d->key) : NULL;
	size_t used = 0;

	if (d->n == 1 || (od && od->type == OPTD_STRING)) {
		/* a text keeps its commas ("description=read, then write") */
		buf[0] = '\0';
		for (size_t i = 0; i < d->n && used < len; i++)
			used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? "," : "",
			                         d->v[i].raw);
		return used < len ? 0
		                  : llmio_err(e, -EINVAL, "%s:%u: %s: value too long", d->file,
		                              d->line, d->key);
	}
	return llmio_err(e, -EINVAL,
	                 "%s:%u: [%s] %s: %zu values; a fio job runs one (fio's read,write pair "
	                 "is not done): give one, or sweep them with `llmio sweep`",
	                 d->file, d->line, s->name, d->key, d->n);
}

static int append_engine_opt(struct llmio_job_opts *o, const char *key, const char *value,
                             struct llmio_error *e)
{
	size_t used = strlen(o->engine_opts);
	int n = snprintf(o->engine_opts + used, sizeof(o->engine_opts) - used, "%s%s=%s",
	                 used ? "," : "", key, value);

	return n < 0 || (size_t)n >= sizeof(o->engine_opts) - used
	               ? llmio_err(e, -EINVAL, "too many engine options")
	               : 0;
}

/* A section's options: fio's defaults where they differ from llmio's, then its keys. */
static int section_opts(const struct sweep_section *s, struct llmio_job_opts *o,
                        struct llmio_error *e)
{
	char value[LLMIO_PATH_MAX];
	int ret = 0;

	llmio_job_opts_init(o);
	o->time_based = false; /* fio's default: a job ends with its bytes even within runtime */
	snprintf(o->name, sizeof(o->name), "%s", s->name);
	for (size_t i = 0; i < s->ndims && !ret; i++) {
		const struct sweep_dim *d = &s->dims[i];

		ret = dim_value(s, d, value, sizeof(value), e);
		if (ret)
			break;
		switch (d->kind) {
		case SK_JOB:
			ret = llmio_job_opts_set(o, d->key, value, e);
			break;
		case SK_ENGINE:
			ret = append_engine_opt(o, d->key, value, e);
			break;
		default:
			ret = llmio_err(
			        e, -EINVAL,
			        "%s:%u: [%s] %s: a key of llmio sweep (steady state, "
			        "recipes), not of a fio job: run the file with `llmio sweep`",
			        d->file, d->line, s->name, d->key);
			break;
		}
		if (ret && (d->kind == SK_JOB || d->kind == SK_ENGINE))
			llmio_err_prefix(e, "%s:%u: [%s]", d->file, d->line, s->name);
	}
	return ret;
}

static void *job_thread(void *arg)
{
	struct fio_job *j = arg;

	j->ret = llmio_job_run(&j->o, &j->r, &j->e);
	return NULL;
}

/* A group's jobs as one result (group_reporting): concurrent jobs add up. */
static struct llmio_result *group_merge(struct fio_job *jobs, size_t first, size_t n)
{
	struct llmio_result *m = NULL;

	for (size_t i = first; i < first + n; i++) {
		const struct llmio_result *r = jobs[i].r;

		if (!r)
			continue;
		if (!m) {
			m = malloc(sizeof(*m));
			if (!m)
				return NULL;
			memcpy(m, r, sizeof(*m));
			m->threads = NULL; /* each job's own: one report for the group */
			m->thread_wire = NULL;
			m->nthreads = 0;
			continue;
		}
		for (int op = 0; op < 2; op++) {
			struct llmio_op_result *d = op ? &m->write : &m->read;
			const struct llmio_op_result *s = op ? &r->write : &r->read;

			d->ios += s->ios;
			d->bytes += s->bytes;
			d->iops += s->iops;
			d->bw_bytes += s->bw_bytes;
			llmio_hist_merge(&d->clat, &s->clat);
			llmio_hist_merge(&d->slat, &s->slat);
			llmio_hist_merge(&d->lat, &s->lat);
		}
		m->fsyncs += r->fsyncs;
		llmio_hist_merge(&m->sync_lat, &r->sync_lat);
		m->interrupted |= r->interrupted;
		if (!m->error && r->error) {
			m->error = r->error;
			memcpy(m->error_msg, r->error_msg, sizeof(m->error_msg));
		}
		/* per-second samples are each job's: a sum of them is not measured */
		memset(m->iops_samples, 0, sizeof(m->iops_samples));
		memset(m->bw_samples, 0, sizeof(m->bw_samples));
		/* CPU and device counters are the process's and the disk's over each window: the
		 * longest window holds the others */
		if (r->runtime_s > m->runtime_s) {
			m->runtime_s = r->runtime_s;
			m->cpu = r->cpu;
			m->device = r->device;
		}
	}
	return m;
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

static void jobs_free(struct fio_job *jobs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		llmio_result_destroy(jobs[i].r);
		run_fio_files_free(&jobs[i].files);
	}
	free(jobs);
}

/* Run the jobs [first, first + n) together: a thread each (one job: on this thread, with the
 * progress line); each job's outcome in its ret, e and r. */
static void run_wave(struct fio_job *jobs, size_t first, size_t n)
{
	for (size_t i = first; i < first + n; i++) {
		jobs[i].o.stop = &cli_stop;
		if (n == 1) {
			jobs[i].o.progress = cli_progress;
			/* one job at a time: its file layout drawn too (jobs running together would
			 * draw over each other) */
			jobs[i].o.prepare_progress = progress_layout_cb;
			job_thread(&jobs[i]);
			cli_progress_clear();
		} else if (pthread_create(&jobs[i].thread, NULL, job_thread, &jobs[i])) {
			jobs[i].ret = llmio_err(&jobs[i].e, -EAGAIN, "cannot start a thread");
			jobs[i].thread = 0;
		}
	}
	for (size_t i = first; n > 1 && i < first + n; i++)
		if (jobs[i].thread)
			pthread_join(jobs[i].thread, NULL);
}

/* Group the jobs (stonewall, new_group) and run them wave after wave. */
static void run_all(struct fio_job *jobs, size_t njobs, int *code)
{
	size_t start = 0;

	for (size_t i = 1; i < njobs; i++) {
		jobs[i].wave = jobs[i - 1].wave + jobs[i].o.stonewall;
		jobs[i].group = jobs[i - 1].group + (jobs[i].o.stonewall || jobs[i].o.new_group);
	}
	cli_install_signals();
	for (size_t i = 1; i <= njobs; i++) {
		if (i < njobs && jobs[i].wave == jobs[start].wave)
			continue;
		if (!cli_stop)
			run_wave(jobs, start, i - start);
		start = i;
	}
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

/* The results to report: each job's, or each group's with group_reporting. */
static int collect(struct fio_job *jobs, size_t njobs, struct llmio_result **res, unsigned *group,
                   size_t *n, bool *merged)
{
	*n = 0;
	for (size_t i = 0; i < njobs;) {
		size_t k = i;
		bool together = false;

		while (k < njobs && jobs[k].group == jobs[i].group)
			together |= jobs[k++].o.group_reporting;
		if (together) {
			res[*n] = group_merge(jobs, i, k - i);
			if (!res[*n])
				return -ENOMEM;
			merged[*n] = true;
			group[(*n)++] = jobs[i].group;
		}
		for (; !together && i < k; i++)
			if (jobs[i].r) {
				merged[*n] = false;
				group[*n] = jobs[i].group;
				res[(*n)++] = jobs[i].r;
			}
		i = k;
	}
	return 0;
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
	size_t n = 0;
	int ret, code = 0;

	if (!res || !group || !merged) {
		code = EXIT_RUNTIME;
		goto out_free;
	}
	run_all(jobs, njobs, &code);
	if (collect(jobs, njobs, res, group, &n, merged)) {
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
	jobs_free(jobs, njobs);
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
	ret = sweep_file_load(argv[file_arg], NULL, &f, &e);
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
		if (section_opts(&f->sec[i], &jobs[i].o, &e) ||
		    run_fio_files(&jobs[i].o, &jobs[i].files, &e)) {
			fprintf(stderr, "llmio: %s\n", e.msg);
			jobs_free(jobs, f->nsec);
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
		if (run_fio_files(&jobs[i].o, &jobs[i].files, &e)) {
			fprintf(stderr, "llmio: [%s]: %s\n", jobs[i].o.name, e.msg);
			ret = EXIT_USAGE;
		}
	if (ret) {
		jobs_free(jobs, n);
		return ret;
	}
	return run_jobs(jobs, n, &out, json, csv);
}
