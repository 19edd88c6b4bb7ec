/* SPDX-License-Identifier: MIT */
/*
 * llmio run --workload NAME --model M: a phase-aware recipe instead of one job.  Job options
 * (engine, direct, directory, iodepth ...) apply to every stream; the recipe's own parameters
 * are given the same way (--steps 20).  --engine all runs the recipe once per engine that can
 * run here and prints them side by side.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "report/migrate_chart.h"
#include "stats/record.h"
#include "stats/result_json.h"
#include "cli/cli.h"
#include "dist/dist.h"
#include "engine/engine.h"
#include "workload/objects.h"
#include "workload/workload.h"

static void print_params(FILE *f, const struct llmio_optdesc *p)
{
	char range[80];

	for (; p && p->name; p++) {
		optdesc_range(p, range, sizeof(range));
		fprintf(f, "  --%-20s %s [%s%s%s, default %s]\n", p->name, p->help,
		        optdesc_type_name(p), range[0] ? " " : "", range,
		        p->def[0] ? p->def : "none");
	}
}

static void help(FILE *f, const struct recipe *r)
{
	if (!r) {
		fprintf(f, "usage: llmio run --workload NAME --model MODEL --directory DIR "
		           "[--engine E|all] [job options] [recipe parameters] [--json FILE]\n\n"
		           "workloads:\n");
		for (size_t i = 0; i < recipe_count(); i++)
			fprintf(f, "  %-10s %s\n", recipe_at(i)->name, recipe_at(i)->summary);
		fprintf(f, "\n`llmio run --workload NAME --help` lists a workload's parameters.\n"
		           "Models: `llmio model list`, or a Hugging Face config.json.\n");
		return;
	}
	fprintf(f,
	        "usage: llmio run --workload %s --model MODEL --directory DIR [--engine E|all] "
	        "[options]\n\n%s.\n\n"
	        "Every job option of `llmio run` applies to each stream (--engine, --direct, "
	        "--iodepth ...).\nO_DIRECT is the default where the engine and filesystem allow "
	        "it (--direct=0 to measure\nthrough the page cache); every phase reports the "
	        "bytes that reached the device.\n"
	        "--directory s3://bucket/prefix runs it on objects (--engine s3, s3-agent, "
	        "cuda-bounce --host=s3:\nbytes on the wire and the client CPU split per phase; "
	        "docs/object-storage.md).\n\nparameters:\n",
	        r->name, r->summary);
	print_params(f, r->params);
	print_params(f, r->shared);
	fprintf(f, "  --%-20s %s\n", "scale",
	        "fraction of the bytes (request sizes and patterns unchanged) [double, default 1]");
	fprintf(f, "  --%-20s %s\n", "keep",
	        "with an s3:// --directory: leave the objects the run created [0 or 1, default 0]");
	fprintf(f, "  --%-20s %s\n", "staging",
	        "with an s3:// --directory: the local directory file engines run against\n"
	        "                         (--engine all); default $TMPDIR, else /var/tmp");
	fprintf(f, "  --%-20s %s\n", "reorder",
	        "under mpirun: restores read the shards another process wrote (IOR -C; "
	        "docs/mpi.md)");
	fprintf(f, "\noutput:\n  --json FILE            phases, metrics and every stream's result "
	           "(- = stdout)\n  --quiet                no table\n");
	if (!strcmp(r->name, "migrate"))
		fprintf(f,
		        "  --chart DIR            the policies side by side: DIR/migrate.png, .svg,"
		        " .gp, .dat\n                         (DIR must be new; "
		        "docs/migration.md)\n");
	fprintf(f, "\n"
	           "The recipes and their metrics are described in docs/workloads.md.\n");
}

static void phase_table(FILE *f, const struct wl *w)
{
	fprintf(f, "%s  model=%s  engine=%s  direct=%d  scale=%g\n", w->recipe->name, w->model.name,
	        w->base.engine, w->base.direct, w->scale);
	fprintf(f, "  %-24s %9s %10s %12s %12s %8s\n", "phase", "time s", "GB/s", "moved", "device",
	        "cores");
	for (unsigned p = 0; p < w->nphases; p++) {
		const struct wl_phase *ph = &w->phases[p];
		uint64_t moved = 0, dev = 0;
		double cores = 0;
		char mb[32], db[32];

		for (unsigned s = 0; s < ph->nstreams; s++) {
			const struct llmio_result *r = ph->streams[s];

			moved += r->read.bytes + r->write.bytes;
			dev += r->device.read_bytes + r->device.write_bytes;
			cores += r->cpu.cores_busy;
		}
		llmio_format_bytes(moved, mb, sizeof(mb));
		llmio_format_bytes(dev, db, sizeof(db));
		fprintf(f, "  %-24s %9.3f %10.3f %12s %12s %8.2f\n", ph->name, ph->wall_s,
		        ph->wall_s > 0 ? (double)moved / ph->wall_s / 1e9 : 0, mb, db, cores);
		for (unsigned m = 0; m < ph->nmetrics; m++)
			fprintf(f, "      %-32s %.4g %s\n", ph->metrics[m].name,
			        ph->metrics[m].value, ph->metrics[m].unit);
		if (ph->note[0])
			fprintf(f, "      note: %s\n", ph->note);
	}
}

/* Bytes moved by a phase's streams over its wall time, GB/s. */
static double phase_gbps(const struct wl_phase *ph)
{
	uint64_t moved = 0;

	for (unsigned s = 0; s < ph->nstreams; s++)
		moved += ph->streams[s]->read.bytes + ph->streams[s]->write.bytes;
	return ph->wall_s > 0 ? (double)moved / ph->wall_s / 1e9 : 0;
}

/* The title and the engines' names over columns of `width`. */
static void compare_head(FILE *f, const char *title, const struct wl *runs, unsigned n, int width)
{
	fprintf(f, "\n%s\n  %-24s", title, "phase");
	for (unsigned e = 0; e < n; e++)
		fprintf(f, " %*s", width, runs[e].base.engine);
	fprintf(f, "\n");
}

/* Engines side by side: each phase's time and GB/s per engine. */
static void compare_table(FILE *f, struct wl *runs, unsigned n)
{
	if (n < 2)
		return;
	compare_head(f, "phase time (s) and GB/s by engine", runs, n, 18);
	for (unsigned p = 0; p < runs[0].nphases; p++) {
		fprintf(f, "  %-24s", runs[0].phases[p].name);
		for (unsigned e = 0; e < n; e++)
			if (p < runs[e].nphases)
				fprintf(f, " %9.3f s %5.2f", runs[e].phases[p].wall_s,
				        phase_gbps(&runs[e].phases[p]));
			else
				fprintf(f, " %18s", "-");
		fprintf(f, "\n");
	}
}

/* A phase's metric, or -1 when it has none. */
static double phase_metric(const struct wl_phase *ph, const char *name)
{
	for (unsigned m = 0; m < ph->nmetrics; m++)
		if (!strcmp(ph->metrics[m].name, name))
			return ph->metrics[m].value;
	return -1;
}

/* With an s3:// --directory: each phase's client CPU per GB by engine, objects beside files. */
static void compare_cpu(FILE *f, struct wl *runs, unsigned n)
{
	if (n < 2 || !runs[0].nphases ||
	    phase_metric(&runs[0].phases[0], "client_cpu_s_per_GB") < 0)
		return;
	compare_head(f, "client CPU-s per GB by engine", runs, n, 10);
	for (unsigned p = 0; p < runs[0].nphases; p++) {
		fprintf(f, "  %-24s", runs[0].phases[p].name);
		for (unsigned e = 0; e < n; e++) {
			double v = p < runs[e].nphases
			                   ? phase_metric(&runs[e].phases[p], "client_cpu_s_per_GB")
			                   : -1;

			if (v < 0)
				fprintf(f, " %10s", "-");
			else
				fprintf(f, " %10.3f", v);
		}
		fprintf(f, "\n");
	}
}

/* Phases that only computed (no streams) with the same metrics, as columns side by side: the
 * policies of `migrate --policy all`.  A phase without metrics shows its note instead. */
static void metric_columns(FILE *f, const struct wl *w)
{
	const struct wl_phase *ref = NULL;

	for (unsigned p = 0; p < w->nphases; p++) {
		if (w->phases[p].nstreams)
			return;
		if (w->phases[p].nmetrics > 1 && (!ref || w->phases[p].nmetrics > ref->nmetrics))
			ref = &w->phases[p];
	}
	if (w->nphases < 2 || !ref)
		return;
	fprintf(f, "\n  %-18s", "");
	for (unsigned p = 0; p < w->nphases; p++)
		fprintf(f, " %16.16s", w->phases[p].name);
	fprintf(f, "\n");
	for (unsigned m = 0; m < ref->nmetrics; m++) {
		fprintf(f, "  %-18s", ref->metrics[m].name);
		for (unsigned p = 0; p < w->nphases; p++) {
			const struct wl_phase *ph = &w->phases[p];

			if (m < ph->nmetrics && !strcmp(ph->metrics[m].name, ref->metrics[m].name))
				fprintf(f, " %16.6g", ph->metrics[m].value);
			else
				fprintf(f, " %16s", "-");
		}
		fprintf(f, "\n");
	}
}

struct out {
	struct wl *runs;
	cJSON **mpi; /* per run, under mpirun on rank 0: the ranks' records (dist_wl_reduce()) */
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
                 bool *quiet)
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
			continue;
		}
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

/* The migrate record's phases simulate-POLICY and run-POLICY as one chart row per policy. */
static size_t chart_rows(const struct wl *w, struct migrate_chart_row *rows, size_t cap)
{
	static const char *const prefix[MIGRATE_MODES] = {"simulate-", "run-"};
	size_t n = 0;

	for (unsigned p = 0; p < w->nphases; p++) {
		const struct wl_phase *ph = &w->phases[p];
		struct migrate_chart_row *row = NULL;
		const char *pol = NULL;
		int m;

		for (m = 0; m < MIGRATE_MODES && !pol; m++)
			if (!strncmp(ph->name, prefix[m], strlen(prefix[m])))
				pol = ph->name + strlen(prefix[m]);
		if (!pol)
			continue;
		m--;
		for (size_t i = 0; i < n && !row; i++)
			if (!strcmp(rows[i].policy, pol))
				row = &rows[i];
		if (!row) {
			if (n == cap)
				continue;
			row = &rows[n++];
			snprintf(row->policy, sizeof(row->policy), "%s", pol);
			for (int k = 0; k < MIGRATE_MODES; k++)
				row->compute_s[k] = row->stall_s[k] = row->overlap_s[k] =
				        row->ratio[k] = NAN;
		}
		for (unsigned k = 0; k < ph->nmetrics; k++) {
			const struct wl_metric *mt = &ph->metrics[k];

			if (!strcmp(mt->name, "compute_s"))
				row->compute_s[m] = mt->value;
			else if (!strcmp(mt->name, "stall_s"))
				row->stall_s[m] = mt->value;
			else if (!strcmp(mt->name, "overlap_s"))
				row->overlap_s[m] = mt->value;
			else if (!strcmp(mt->name, "ratio_to_ideal"))
				row->ratio[m] = mt->value;
		}
	}
	return n;
}

/* Draw the chart into the new directory dir.  \return 0 or an exit code. */
static int draw_chart(const struct wl *w, const char *dir)
{
	struct migrate_chart_row rows[WL_MAX_PHASES];
	struct llmio_error e = {0};
	int ret;

	if (mkdir(dir, 0777)) {
		fprintf(stderr, "llmio: cannot create --chart %s: %s\n", dir, strerror(errno));
		return EXIT_RUNTIME;
	}
	ret = migrate_chart_write(dir, rows, chart_rows(w, rows, WL_MAX_PHASES), &e);
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
 * Engines --engine all means: every engine that can run here on files, except the no-I/O one;
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
			if (!(engine_find(e.name)->caps & ENGINE_CAP_NO_IO) &&
			    !!(engine_find(e.name)->caps & ENGINE_CAP_OWN_TARGET) == !!own &&
			    !llmio_engine_probe(e.name, why, sizeof(why)))
				snprintf(names[n++], 32, "%s", e.name);
	return n;
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
	bool quiet = false, all;
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
	if (dist_rank() != 0)
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
		ret = parse(w, argc, argv, &json, &chart, &quiet);
		if (ret) {
			code = ret;
			break;
		}
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
		llmio_error_init(&e); /* one carrier per engine: no stale reason from the last */
		ret = wl_run(w, &e);
		cli_progress_clear();
		if (ret && w->dist) /* the failing rank ends every rank, with its message */
			return w->dist->fail(cli_exit_code(ret), &e);
		if (w->dist && w->dist->reduce(w, &out.mpi[i], &e))
			return w->dist->fail(EXIT_RUNTIME, &e);
		if (ret) {
			/* the reason once: the message often ends with strerror() already; a recipe
			 * that does no I/O (migrate --simulate) has no engine to name */
			if (r->no_directory && e.msg[0])
				fprintf(stderr, "llmio: %s\n", e.msg);
			else if (e.msg[0] && strstr(e.msg, strerror(-ret)))
				fprintf(stderr, "llmio: %s: %s\n", w->base.engine, e.msg);
			else
				fprintf(stderr, "llmio: %s: %s (%s)\n", w->base.engine,
				        e.msg[0] ? e.msg : "failed", strerror(-ret));
			code = cli_exit_code(ret);
			if (!all || code == EXIT_USAGE)
				break;
		}
		if (!quiet && !(json && !strcmp(json, "-"))) {
			phase_table(stdout, w);
			metric_columns(stdout, w);
		}
	}
	if (!quiet && !(json && !strcmp(json, "-")))
		compare_table(stdout, out.runs, out.n);
	if (!quiet && !(json && !strcmp(json, "-")))
		compare_cpu(stdout, out.runs, out.n);
	if (json && code != EXIT_USAGE && dist_rank() == 0 &&
	    (ret = cli_write_file(json, write_json, &out))) {
		fprintf(stderr, "llmio: cannot write %s: %s\n", json, strerror(-ret));
		code = EXIT_RUNTIME;
	}
	if (chart && !code && !cli_stop && dist_rank() == 0)
		code = draw_chart(&out.runs[0], chart);
	/* interrupted: the phases measured so far are written, but the run was cut short */
	if (cli_stop && !code)
		code = EXIT_RUNTIME;
	for (unsigned i = 0; i < out.n; i++) {
		wl_release(&out.runs[i]);
		cJSON_Delete(out.mpi[i]);
	}
	free(out.runs);
	free(out.mpi);
	return code;
}
