/* SPDX-License-Identifier: MIT */
/*
 * llmio run --workload NAME --model M: a phase-aware recipe instead of one job.  Job options
 * (engine, direct, directory, iodepth ...) apply to every stream; the recipe's own parameters
 * are given the same way (--steps 20).  --engine all runs the recipe once per engine that can
 * run here and prints them side by side.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/fmt.h"
#include "report/migrate_chart.h"
#include "report/wl_table.h"
#include "stats/record.h"
#include "stats/result_json.h"
#include "cli/cli.h"
#include "cli/progress.h"
#include "mpi/ranks.h"
#include "engine/engine.h"
#include "workload/leftover.h"
#include "workload/objects.h"
#include "workload/workload.h"

static void print_params(FILE *f, const struct llmio_optdesc *p)
{
	char range[80];

	for (; p && p->name; p++) {
		optdesc_range(p, range, sizeof(range));
		char prefix[40], text[1024];

		snprintf(prefix, sizeof(prefix), "  --%-20s ", p->name);
		snprintf(text, sizeof(text), "%s [%s%s%s, default %s]", p->help,
		         optdesc_type_name(p), range[0] ? " " : "", range,
		         p->def[0] ? p->def : "none");
		fmt_wrapped(f, prefix, 25, text); /* 100 columns */
	}
}

static void help(FILE *f, const struct recipe *r)
{
	char text[512];

	if (!r) {
		fprintf(f, "usage: llmio run --workload NAME --model MODEL --directory DIR "
		           "[--engine E|all]\n"
		           "                 [job options] [recipe parameters] [--json FILE] "
		           "[--keep]\n\n"
		           "workloads:\n");
		for (size_t i = 0; i < recipe_count(); i++) {
			snprintf(text, sizeof(text), "  %-10s ", recipe_at(i)->name);
			fmt_wrapped(f, text, 13, recipe_at(i)->summary);
		}
		fprintf(f, "\n`llmio run --workload NAME --help` lists a workload's parameters.\n"
		           "Models: `llmio model list`, or a Hugging Face config.json.\n");
		return;
	}
	fprintf(f,
	        "usage: llmio run --workload %s --model MODEL --directory DIR [--engine E|all]\n"
	        "                 [options]\n\n",
	        r->name);
	snprintf(text, sizeof(text), "%s.", r->summary);
	fmt_wrapped(f, "", 0, text);
	fprintf(f, "\n"
	           "Every job option of `llmio run` applies to each stream (--engine, --direct, "
	           "--iodepth ...).\nO_DIRECT is the default where the engine and filesystem allow "
	           "it (--direct=0 to measure\nthrough the page cache); every phase reports the "
	           "bytes that reached the device.\n"
	           "--directory s3://bucket/prefix runs it on objects (--engine s3, s3-agent, "
	           "cuda-bounce --host=s3:\nbytes on the wire and the client CPU split per phase; "
	           "docs/object-storage.md).\n\nparameters:\n");
	print_params(f, r->params);
	print_params(f, r->shared);
	fmt_wrapped(f, "  --scale                ", 25,
	            "fraction of the bytes (request sizes and patterns unchanged) [double, "
	            "default 1]");
	fmt_wrapped(f, "  --staging              ", 25,
	            "with an s3:// --directory: the local directory file engines run against "
	            "(--engine all); default $TMPDIR, else /var/tmp");
	fmt_wrapped(f, "  --reorder              ", 25,
	            "under mpirun: restores read the shards another process wrote (IOR -C; "
	            "docs/mpi.md)");
	fprintf(f, "\noutput:\n  --json FILE            phases, metrics and every stream's result "
	           "(- = stdout)\n  --quiet                no table, no progress line\n"
	           "  --progress             the progress line even when stderr is not a terminal\n"
	           "  --no-progress          no progress line\n"
	           "  --keep                 keep the files the run made (removed by default);\n"
	           "                         files that were there before are never removed\n");
	if (!strcmp(r->name, "migrate"))
		fprintf(f,
		        "  --chart DIR            the policies side by side: DIR/migrate.png, .svg,"
		        " .gp, .dat\n                         (DIR must be new; "
		        "docs/migration.md)\n");
	fprintf(f, "\n"
	           "The recipes and their metrics are described in docs/workloads.md.\n");
}

struct out {
	struct wl *runs;
	cJSON **mpi; /* per run, under mpirun on rank 0: the ranks' records (ranks_wl_reduce()) */
	unsigned n;
};

static int write_json(FILE *f, void *arg)
{
	const struct out *o = arg;
	cJSON *root = cJSON_CreateObject(), *runs = cJSON_AddArrayToObject(root, "runs");

	cJSON_AddStringToObject(root, "llmio", llmio_version());
	for (unsigned i = 0; i < o->n; i++) {
		cJSON *run = wl_json(&o->runs[i]);

		if (run && o->mpi[i])
			cJSON_AddItemReferenceToObject(run, RK_MPI, o->mpi[i]);
		cJSON_AddItemToArray(runs, run);
	}
	return json_write_doc(f, root);
}

/* Argument value of --key (either --key=v or --key v); NULL when absent. */
static const char *arg_value(int argc, char **argv, const char *key)
{
	size_t n = strlen(key);

	for (int i = 1; i < argc; i++) {
		if (!strncmp(argv[i], key, n) && argv[i][n] == '=')
			return argv[i] + n + 1;
		if (!strcmp(argv[i], key) && i + 1 < argc)
			return argv[i + 1];
	}
	return NULL;
}

static bool has_arg(int argc, char **argv, const char *key)
{
	size_t n = strlen(key);

	for (int i = 1; i < argc; i++)
		if (!strncmp(argv[i], key, n) && (argv[i][n] == '=' || !argv[i][n]))
			return true;
	return false;
}

/* A recipe switch (bool, or a 0/1 number) may be given alone: --simulate means --simulate=1. */
static bool is_switch(const struct recipe *r, const char *key)
{
	for (const struct llmio_optdesc *p = r->params; p && p->name; p++)
		if (!strcmp(p->name, key))
			return p->type == OPTD_BOOL || (p->type == OPTD_UINT && p->max == 1);
	return false;
}

/* Parse everything into w (base options and recipe parameters). */
static int parse(struct wl *w, int argc, char **argv, const char **json, const char **chart,
                 bool *quiet, bool *keep)
{
	struct llmio_error e = {0};

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		bool handled;
		char key[64];
		const char *val;
		int ret;

		if (!strncmp(a, "--workload", 10) || !strncmp(a, "--model", 7) ||
		    !strncmp(a, "--json", 6) || !strncmp(a, "--chart", 7)) {
			if (!strchr(a, '=') && ++i == argc) {
				fprintf(stderr, "llmio: %s needs a value\n", a);
				return EXIT_USAGE;
			}
			if (!strncmp(a, "--json", 6))
				*json = strchr(a, '=') ? strchr(a, '=') + 1 : argv[i];
			if (!strncmp(a, "--chart", 7))
				*chart = strchr(a, '=') ? strchr(a, '=') + 1 : argv[i];
			continue;
		}
		if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
			*quiet = true;
			progress_set_mode(PROGRESS_OFF);
			continue;
		}
		if (!strcmp(a, "--keep")) {
			*keep = true;
			continue;
		}
		if (progress_option(a))
			continue;
		if (!strcmp(a, "--reorder")) /* under mpirun (cmd_run_workload) */
			continue;
		if (!strncmp(a, "--", 2)) {
			snprintf(key, sizeof(key), "%.*s", (int)strcspn(a + 2, "="), a + 2);
			if (recipe_has_param(w->recipe, key)) {
				if (strchr(a, '='))
					val = strchr(a, '=') + 1;
				else if (is_switch(w->recipe, key) &&
				         (i + 1 == argc || !strncmp(argv[i + 1], "--", 2)))
					val = "1";
				else
					val = i + 1 < argc ? argv[++i] : NULL;
				if (!val) {
					fprintf(stderr, "llmio: --%s needs a value\n", key);
					return EXIT_USAGE;
				}
				ret = wl_set(w, key, val, &e);
				if (ret) {
					fprintf(stderr, "llmio: %s\n", e.msg);
					return EXIT_USAGE;
				}
				continue;
			}
		}
		ret = cli_parse_job_arg(&w->base, argc, argv, &i, &handled);
		if (ret)
			return ret;
		if (!handled) {
			/* neither a job option nor a parameter: wl_set names the parameters */
			snprintf(key, sizeof(key), "%.*s", (int)strcspn(a + 2, "="), a + 2);
			wl_set(w, key, "", &e);
			fprintf(stderr, "llmio: %s\n", e.msg);
			return EXIT_USAGE;
		}
	}
	return 0;
}

static bool engine_supports_direct(const char *name)
{
	struct llmio_engine_info e;

	for (size_t i = 0; llmio_engine_info(i, &e) == 0; i++)
		if (!strcmp(e.name, name))
			return e.supports_direct;
	return false;
}

/* --chart DIR: a new directory (an existing one is never written into), for one run of migrate. */
static int chart_usable(const struct recipe *r, const char *dir, bool all)
{
	struct stat st;

	if (strcmp(r->name, "migrate")) {
		fprintf(stderr,
		        "llmio: --chart draws the policies of --workload migrate; the charts "
		        "of other runs come from `llmio report`\n");
		return EXIT_USAGE;
	}
	if (all) {
		fprintf(stderr, "llmio: --chart draws one run's policies: give one --engine\n");
		return EXIT_USAGE;
	}
	if (!lstat(dir, &st)) {
		fprintf(stderr,
		        "llmio run: --chart %s exists; the chart is written into a new "
		        "directory and never replaces one: choose a new path\n",
		        dir);
		return EXIT_USAGE;
	}
	return cli_output_usable("run", dir, CLI_OUT_DIR);
}

/* Draw the chart into the new directory dir.  \return 0 or an exit code. */
static int draw_chart(const struct wl *w, const char *dir)
{
	struct llmio_error e = {0};
	int ret;

	if (mkdir(dir, 0777)) {
		fprintf(stderr, "llmio: cannot create --chart %s: %s\n", dir, strerror(errno));
		return EXIT_RUNTIME;
	}
	ret = migrate_chart_of(dir, w, &e);
	if (ret == -ENOENT) { /* the figures are there; only the drawing waits for gnuplot */
		fprintf(stderr, "llmio: note: %s\n", e.msg);
		return 0;
	}
	if (ret) {
		fprintf(stderr, "llmio: %s\n", e.msg);
		return EXIT_RUNTIME;
	}
	return 0;
}

/*
 * Engines --engine all means: every engine that can run here on files, except the no-I/O one
 * and those whose target is an NVMe namespace (uring_cmd, spdk);
 * with an s3:// --directory the object engines first, then the file engines on the staging
 * directory (docs/object-storage.md, "Recipes").
 */
static unsigned all_engines(char names[][32], unsigned cap, bool objects)
{
	struct llmio_engine_info e;
	unsigned n = 0;
	char why[256];

	for (int own = objects; own >= 0; own--)
		for (size_t i = 0; llmio_engine_info(i, &e) == 0 && n < cap; i++)
			if (!(engine_find(e.name)->caps &
			      (ENGINE_CAP_NO_IO | ENGINE_CAP_NAMESPACE | ENGINE_CAP_FILE_OPS)) &&
			    !!(engine_find(e.name)->caps & ENGINE_CAP_OWN_TARGET) == !!own &&
			    !llmio_engine_probe(e.name, why, sizeof(why)))
				snprintf(names[n++], 32, "%s", e.name);
	return n;
}

/* The progress line of a recipe: the phase, the stream, its bytes so far, rate and ETA. */
struct step {
	const struct wl *w;
	char stream[40];
	double bytes, last_elapsed; /* the stream's bytes so far (the sum of rate x interval) */
	double before;              /* bytes of the phase's streams that have finished */
	double total;               /* the bytes the phase promised to move (0: not known) */
};

static void on_step(void *arg, const struct wl *w, const char *stream,
                    const struct llmio_job_opts *o)
{
	struct step *st = arg;

	const struct wl_phase *ph = w->nphases ? &w->phases[w->nphases - 1] : NULL;

	(void)o;
	progress_lock(); /* pretrain's readers and its checkpoints step from two threads */
	snprintf(st->stream, sizeof(st->stream), "%s", stream ? stream : "");
	st->bytes = st->last_elapsed = st->before = 0;
	if (!ph) {
		progress_unlock();
		return;
	}
	/* the recipe says what the phase moves before its streams run (0 when time decides) */
	st->total = (double)ph->promised_bytes;
	for (unsigned k = 0; k < ph->nstreams; k++)
		st->before += (double)(ph->streams[k]->read.bytes + ph->streams[k]->write.bytes);
	if (stream)
		progress_draw(true, "[phase %u: %s] %s: preparing its files", w->nphases,
		              w->phases[w->nphases - 1].name, stream);
	else
		progress_draw(true, "[phase %u: %s] starting", w->nphases,
		              w->phases[w->nphases - 1].name);
	progress_unlock();
}

static void job_progress(struct step *st, double elapsed_s, double eta_s, double bw)
{
	const struct wl *w = st->w;
	char done[32], rate[32], eta[48];

	if (elapsed_s < st->last_elapsed) /* a stream the recipe started without wl_job() */
		st->bytes = st->last_elapsed = 0;
	st->bytes += bw * (elapsed_s - st->last_elapsed);
	st->last_elapsed = elapsed_s;
	if (!w->nphases)
		return;
	fmt_bytes(done, sizeof(done), st->before + st->bytes);
	fmt_rate(rate, sizeof(rate), bw);
	/* the job knows no end (its I/Os come from the recipe): the phase's bytes do */
	if (!(eta_s > 0) && st->total > st->before + st->bytes && bw > 0)
		eta_s = (st->total - st->before - st->bytes) / bw;
	progress_eta(eta, sizeof(eta), eta_s);
	if (st->total >= st->before + st->bytes && st->total > 0) {
		char total[32];

		fmt_bytes(total, sizeof(total), st->total);
		progress_draw(false, "[phase %u: %s] %s%s%s of %s, %s%s", w->nphases,
		              w->phases[w->nphases - 1].name, st->stream, st->stream[0] ? ": " : "",
		              done, total, rate, eta);
		return;
	}
	progress_draw(false, "[phase %u: %s] %s%s%s done, %s%s", w->nphases,
	              w->phases[w->nphases - 1].name, st->stream, st->stream[0] ? ": " : "", done,
	              rate, eta);
}

static void on_job_progress(void *arg, double elapsed_s, double eta_s, double iops, double bw)
{
	(void)iops;
	progress_lock(); /* the step's state is shared by the streams that run together */
	job_progress(arg, elapsed_s, eta_s, bw);
	progress_unlock();
}

/* A stream's job laying out its files: the phase and the stream, then bytes, rate and ETA. */
static void on_layout(void *arg, uint64_t done, uint64_t total)
{
	const struct step *st = arg;
	const struct wl *w = st->w;
	char prefix[256]; /* cut to the line's 99 columns when drawn */

	progress_lock();
	if (!w->nphases)
		progress_layout_cb(NULL, done, total);
	else {
		snprintf(prefix, sizeof(prefix), "[phase %u: %s]%s%s", w->nphases,
		         w->phases[w->nphases - 1].name, st->stream[0] ? " " : "", st->stream);
		progress_layout(prefix, done, total);
	}
	progress_unlock();
}

int cmd_run_workload(int argc, char **argv)
{
	const char *name = arg_value(argc, argv, "--workload"),
	           *model = arg_value(argc, argv, "--model");
	const char *engine = arg_value(argc, argv, "--engine"), *json = NULL, *chart = NULL;
	const struct recipe *r = name ? recipe_find(name) : NULL;
	struct llmio_error e = {0};
	char engines[16][32];
	struct llmio_model m;
	struct llmio_job_opts base;
	struct out out = {0};
	struct wl_dist dist;
	struct wl_leftover left = {0}, stage = {0};
	struct step prog = {0};
	bool quiet = false, keep = false, all;
	unsigned n;
	int ret, code = 0;

	if (!engine)
		engine = arg_value(argc, argv, "--ioengine");
	if (!r && name && strcmp(name, "help")) {
		char list[1024] = "";
		size_t used = 0;

		for (size_t i = 0; i < recipe_count() && used < sizeof(list); i++)
			used += (size_t)snprintf(list + used, sizeof(list) - used, " %s",
			                         recipe_at(i)->name);
		fprintf(stderr, "llmio: unknown workload '%s'; the workloads are:%s\n", name, list);
		return EXIT_USAGE;
	}
	if (has_arg(argc, argv, "--help") || has_arg(argc, argv, "-h") || !r) {
		help(stdout, r);
		return 0;
	}
	if (model && (ret = llmio_model_resolve(model, &m, &e))) {
		fprintf(stderr, "llmio: %s\n", e.msg);
		return EXIT_USAGE;
	}
	all = engine && !strcmp(engine, "all");
	n = all ? all_engines(engines, 16,
	                      wl_object_url(arg_value(argc, argv, "--directory")
	                                            ? arg_value(argc, argv, "--directory")
	                                            : ""))
	        : 1;
	out.runs = calloc(n, sizeof(*out.runs));
	out.mpi = calloc(n, sizeof(*out.mpi));
	if (!out.runs || !out.mpi) {
		free(out.runs);
		free(out.mpi);
		return EXIT_RUNTIME;
	}
	/* under mpirun rank 0 alone prints and writes (the merged phases) */
	if (ranks_rank() != 0)
		quiet = true;
	cli_install_signals();
	for (unsigned i = 0; i < n && !cli_stop; i++) {
		struct wl *w = &out.runs[i];

		llmio_job_opts_init(&base);
		/* the engine first: it decides which engine options exist */
		if (all)
			snprintf(base.engine, sizeof(base.engine), "%.31s", engines[i]);
		else if (engine)
			snprintf(base.engine, sizeof(base.engine), "%.31s", engine);
		wl_init(w, r, &base);
		out.n = i + 1;
		ret = parse(w, argc, argv, &json, &chart, &quiet, &keep);
		if (ret) {
			code = ret;
			break;
		}
		w->keep = keep;
		if (ranks_rank() != 0) /* one progress line under mpirun: rank 0's */
			progress_set_mode(PROGRESS_OFF);
		if (all)
			snprintf(w->base.engine, sizeof(w->base.engine), "%.31s", engines[i]);
		if (i == 0 && json && (ret = cli_output_usable("run", json, CLI_OUT_FILE))) {
			code = ret;
			break;
		}
		if (i == 0 && chart && (ret = chart_usable(r, chart, all))) {
			code = ret;
			break;
		}
		if (model) {
			w->model = m;
			w->has_model = true;
		}
		/* O_DIRECT by default where the engine can: results must not come from RAM */
		if (!has_arg(argc, argv, "--direct")) {
			w->base.direct = engine_supports_direct(w->base.engine);
			w->direct_auto = true;
		}
		w->base.stop = &cli_stop;
		if (w->dist) { /* IOR -C for the restores: docs/mpi.md */
			dist = *w->dist;
			dist.reorder = has_arg(argc, argv, "--reorder");
			w->dist = &dist;
		}
		/* what is in the work directory before the first run: files that were there are
		 * never removed */
		if (i == 0 && (ret = wl_leftover_begin(&left, w->base.directory, &e))) {
			fprintf(stderr, "llmio: %s\n", e.msg);
			code = EXIT_RUNTIME;
			break;
		}
		/* an s3:// run's file engines work in the staging directory: the same rule there */
		if (!stage.active && wl_objects_staging(w) &&
		    (ret = wl_leftover_begin(&stage, wl_objects_staging(w), &e))) {
			fprintf(stderr, "llmio: %s\n", e.msg);
			code = EXIT_RUNTIME;
			break;
		}
		prog.w = w;
		w->on_step = on_step;
		w->on_step_arg = &prog;
		w->base.progress = on_job_progress;
		w->base.progress_arg = &prog;
		w->base.prepare_progress = on_layout;
		w->base.prepare_arg = &prog;
		llmio_error_init(&e); /* one carrier per engine: no stale reason from the last */
		ret = wl_run(w, &e);
		progress_clear();
		if (ret && w->dist) /* the failing rank ends every rank, with its message */
			return w->dist->fail(cli_exit_code(ret), &e);
		if (w->dist && w->dist->reduce(w, &out.mpi[i], &e))
			return w->dist->fail(EXIT_RUNTIME, &e);
		if (ret) {
			/* the reason once: a message names the problem and its fix (an errno after
			 * it would be noise); a recipe that does no I/O (migrate --simulate) has no
			 * engine to name */
			if (r->no_directory && e.msg[0])
				fprintf(stderr, "llmio: %s\n", e.msg);
			else if (e.msg[0])
				fprintf(stderr, "llmio: %s: %s\n", w->base.engine, e.msg);
			else
				fprintf(stderr, "llmio: %s: failed (%s)\n", w->base.engine,
				        strerror(-ret));
			code = cli_exit_code(ret);
			if (!all || code == EXIT_USAGE)
				break;
		}
		if (!quiet && !(json && !strcmp(json, "-"))) {
			wl_table_phases(stdout, w);
			wl_table_metrics(stdout, w);
		}
	}
	if (!quiet && !(json && !strcmp(json, "-")))
		wl_table_compare(stdout, out.runs, out.n);
	/* every rank has finished its I/O (the reduce above is collective): the files may go */
	if (wl_leftover_end(&left, keep, &e)) {
		fprintf(stderr, "llmio: %s\n", e.msg);
		code = code ? code : EXIT_RUNTIME;
	}
	if (wl_leftover_end(&stage, keep, &e)) {
		fprintf(stderr, "llmio: %s\n", e.msg);
		code = code ? code : EXIT_RUNTIME;
	}
	/* a usage error ran nothing: no word about files it never made */
	if (!quiet && !(json && !strcmp(json, "-")) && code != EXIT_USAGE) {
		cli_say_leftover(stdout, &left, keep);
		cli_say_leftover(stdout, &stage, keep);
	}
	wl_leftover_release(&left);
	wl_leftover_release(&stage);
	if (json && code != EXIT_USAGE && ranks_rank() == 0 &&
	    (ret = cli_write_file(json, write_json, &out))) {
		fprintf(stderr, "llmio: cannot write %s: %s\n", json, strerror(-ret));
		code = EXIT_RUNTIME;
	}
	if (chart && !code && !cli_stop && ranks_rank() == 0)
		code = draw_chart(&out.runs[0], chart);
	/* interrupted: the phases measured so far are written, but the run was cut short */
	if (cli_stop && !code) {
		fprintf(stderr,
		        "llmio: interrupted: the phases that ended before the signal are "
		        "reported%s\n",
		        json ? " and written" : "");
		code = EXIT_RUNTIME;
	}
	for (unsigned i = 0; i < out.n; i++) {
		wl_release(&out.runs[i]);
		cJSON_Delete(out.mpi[i]);
	}
	free(out.runs);
	free(out.mpi);
	return code;
}
