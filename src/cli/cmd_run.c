/* SPDX-License-Identifier: MIT */
/* llmio run: one job from fio-style options, measured and printed. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/progress.h"
#include "cli/run_fio.h"
#include "job/options.h"
#include "mpi/ranks.h"
#include "engine/engine.h"
#include "base/fmt.h"
#include "stats/record.h"
#include "stats/result_json.h"
#include "workload/workload.h"

/* One option of --help: its names in a column of 37, the text wrapped to the terminal table
 * width beside it (a name too long for the column gets the text on the next line). */
static void help_line(FILE *f, const char *name, const char *text)
{
	char prefix[128];

	if (strlen(name) > 36) {
		fprintf(f, "%s\n", name);
		name = "";
	}
	snprintf(prefix, sizeof(prefix), "%-36s ", name);
	fmt_wrapped(f, prefix, 37, text);
}

static void help(FILE *f)
{
	struct llmio_option_info o;
	struct llmio_engine_info e;
	struct llmio_engine_option_info eo;

	fprintf(f,
	        "usage: llmio run [--OPTION=VALUE | --OPTION VALUE]... [--json FILE] [--csv "
	        "FILE]\n"
	        "       llmio run JOBFILE.fio [--output-format=F] [--output FILE] [--json FILE]\n\n"
	        "Runs one job and prints its throughput, IOPS, latency percentiles, CPU cost\n"
	        "(including io_uring kernel threads) and the bytes that reached the device.\n"
	        "Option names are fio's.  Sizes: 4096, 4k, 4KiB, 1m, 1.5GiB.  Times: 10, 10s, "
	        "500ms.\n\n"
	        "job options:\n");
	for (size_t i = 0; llmio_job_option(i, &o) == 0; i++) {
		char name[80], text[512];

		snprintf(name, sizeof(name), "  --%s%s%s", o.name, o.alias ? ", --" : "",
		         o.alias ? o.alias : "");
		snprintf(text, sizeof(text), "%s [%s, default %s]", o.help, o.type,
		         o.def[0] ? o.def : "none");
		help_line(f, name, text);
	}
	fprintf(f, "\nengine options (given like job options, for the chosen --ioengine):\n");
	for (size_t i = 0; llmio_engine_info(i, &e) == 0; i++)
		for (size_t k = 0; llmio_engine_option(i, k, &eo) == 0; k++) {
			char name[80], text[512];

			snprintf(name, sizeof(name), "  %s: --%s", e.name, eo.name);
			snprintf(text, sizeof(text), "%s [%s, default %s]%s%s%s", eo.help, eo.type,
			         eo.def, eo.alias ? " (fio: " : "", eo.alias ? eo.alias : "",
			         eo.alias ? ")" : "");
			help_line(f, name, text);
		}
	fprintf(f, "\noutput:\n"
	           "  --output-format=normal|json|json+  fio's: the table, fio's JSON, with\n"
	           "                   clat_ns bins (json+); a comma list for several\n"
	           "  --output FILE    where --output-format's output goes (default stdout)\n"
	           "  --json FILE      results as JSON in fio's layout plus llmio's fields (- = "
	           "stdout)\n"
	           "  --csv FILE       results as one CSV line with a header (- = stdout)\n"
	           "  --quiet          no table on stdout\n"
	           "  --progress       the progress line (laying out files: bytes, rate, ETA;\n"
	           "                   then the run's IOPS and rate) even when stderr is not a\n"
	           "                   terminal; --no-progress: never\n"
	           "  --emit-fio       print the equivalent fio job file and exit without running\n"
	           "                   (fio's option names and units; '; differs:' comments name\n"
	           "                   what fio cannot express the same way)\n\n"
	           "  FILE is replaced whole (a temporary file renamed over it); a symlink is\n"
	           "  followed, a device or FIFO is written into, a directory or a path that\n"
	           "  cannot be written is refused before the run (docs/output.md)\n\n"
	           "exit status: 0 success, 1 runtime failure (target, engine, I/O error) or\n"
	           "interrupted, 2 usage error (including an output path that cannot be written).\n"
	           "Ctrl-C stops the run early; what was measured is still printed and written,\n"
	           "marked interrupted, and llmio exits 1.\n"
	           "Metrics are defined in docs/metrics.md; fio's options, job files and JSON\n"
	           "in docs/fio.md (a fio option llmio does not do is refused by name).\n");
	fprintf(f,
	        "\nunder mpirun (docs/mpi.md): every rank runs its share of --size of --filename\n"
	        "  --mpi_layout L   shared-file (IOR's default: one file, a region per rank) or\n"
	        "                   file-per-process (IOR -F: FILE.00000003 for rank 3)\n"
	        "  --reorder        reads: each rank reads what the next host's rank (the next\n"
	        "                   rank on one host) wrote, past its own page cache (IOR -C)\n"
	        "  rank 0 prints and writes the merged job, with `mpi`: every rank's record\n");
}

/* The command line as the job file's comment quotes it, without --emit-fio. */
static void join_args(char *buf, size_t len, int argc, char **argv)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 1; i < argc && used < len; i++) {
		const char *q = strpbrk(argv[i], " \t'\"$") ? "'" : "";

		if (!strcmp(argv[i], "--emit-fio"))
			continue;
		used += (size_t)snprintf(buf + used, len - used, " %s%s%s", q, argv[i], q);
	}
}

static int emit_fio(const struct llmio_job_opts *o, int argc, char **argv)
{
	struct llmio_error err = {0};
	char cmdline[2048];
	int ret;

	join_args(cmdline, sizeof(cmdline), argc, argv);
	ret = emit_fio_job(stdout, o, cmdline, &err);
	if (ret) {
		fprintf(stderr, "llmio: --emit-fio: %s\n", err.msg[0] ? err.msg : strerror(-ret));
		return ret == -EINVAL ? EXIT_USAGE : EXIT_RUNTIME;
	}
	return fflush(stdout) ? EXIT_RUNTIME : 0;
}

struct out {
	struct llmio_result *r;
	cJSON *mpi; /* under mpirun: the ranks' records (ranks_json()) */
	enum ranks_layout layout;
	struct run_out *fio; /* --output-format and --output */
};

/*
 * What --output-format asks for (the table, fio's JSON); under mpirun the merged job's origin
 * (docs/mpi.md) right below the table.
 */
static int write_out(FILE *f, void *arg)
{
	const struct out *o = arg;
	struct run_out part = *o->fio;
	int ret;

	part.json = false;
	part.together = o->mpi != NULL; /* the ranks' threads are merged: no clone to show */
	ret = run_out_write(f, &part);
	if (!ret && part.normal && o->mpi)
		fprintf(f,
		        "  mpi    %.0f ranks on %.0f hosts (%s): time from the earliest start to "
		        "the "
		        "latest end, start skew %.3f ms\n",
		        cJSON_GetNumberValue(cJSON_GetObjectItem(o->mpi, RK_RANKS)),
		        cJSON_GetNumberValue(cJSON_GetObjectItem(o->mpi, RK_HOSTS)),
		        ranks_layout_name(o->layout),
		        cJSON_GetNumberValue(cJSON_GetObjectItem(o->mpi, RK_START_SKEW_S)) * 1e3);
	part = *o->fio;
	part.normal = false;
	if (!ret)
		ret = run_out_write(f, &part);
	return ret ? ret : ferror(f) ? -EIO : 0;
}

static int write_json(FILE *f, void *arg)
{
	const struct out *o = arg;
	cJSON *root;

	if (!o->mpi)
		return llmio_results_write_json(f, &o->r, 1);
	root = results_json_doc(&o->r, 1);
	if (!root || !cJSON_AddItemReferenceToObject(root, RK_MPI, o->mpi)) {
		cJSON_Delete(root);
		return -ENOMEM;
	}
	return json_write_doc(f, root);
}

static int write_csv(FILE *f, void *arg)
{
	return llmio_results_write_csv(f, &((const struct out *)arg)->r, 1);
}

static int run_job(int argc, char **argv)
{
	const char *json = NULL, *csv = NULL;
	struct run_out out = {.normal = true, .n = 1};
	enum ranks_layout layout = RANKS_SHARED_FILE;
	struct llmio_error e = {0};
	bool reorder = false;
	struct out jout = {.fio = &out};
	struct llmio_result *r = NULL;
	struct llmio_job_opts o;
	struct fio_files files;
	bool quiet = false, handled, emit = false;
	int ret, code = 0;

	for (int i = 1; i < argc; i++) {
		if (!strncmp(argv[i], "--workload", 10) && (!argv[i][10] || argv[i][10] == '='))
			return cmd_run_workload(argc, argv);
		if (run_is_jobfile(argc, argv, i))
			return run_jobfile(argc, argv, i);
	}
	llmio_job_opts_init(&o);
	if (run_names(argc, argv) > 1) {
		if (ranks_active()) {
			fprintf(stderr,
			        "llmio run: several --name under mpirun: each rank runs one "
			        "job; give one --name (or run a job file's jobs one by one)\n");
			return EXIT_USAGE;
		}
		return run_cmdline_jobs(argc, argv);
	}
	o.time_based = false; /* fio's default: a job ends with its bytes even within runtime */
	ret = run_find_engine(&o, argc, argv, 1, argc);
	if (ret)
		return ret;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			help(stdout);
			return 0;
		}
		ret = cli_parse_job_arg(&o, argc, argv, &i, &handled);
		if (!ret && !handled)
			ret = run_out_arg(&out, argc, argv, &i, &handled);
		if (ret)
			return ret;
		if (handled)
			continue;
		if (!strcmp(a, "--json") || !strcmp(a, "--csv")) {
			if (i + 1 >= argc) {
				fprintf(stderr,
				        "llmio: %s needs a value (a file, or - for stdout)\n", a);
				return EXIT_USAGE;
			}
			*(a[2] == 'j' ? &json : &csv) = argv[++i];
		} else if (!strncmp(a, "--json=", 7)) {
			json = a + 7;
		} else if (!strncmp(a, "--csv=", 6)) {
			csv = a + 6;
		} else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
			quiet = true;
		} else if (!strcmp(a, "--emit-fio")) {
			emit = true;
		} else if (progress_option(a)) { /* --progress, --no-progress: its mode is set */
		} else if (!strcmp(a, "--mpi_layout") || !strncmp(a, "--mpi_layout=", 13)) {
			if (!a[12] && i + 1 >= argc) {
				fprintf(stderr, "llmio: --mpi_layout needs a value (shared-file or "
				                "file-per-process)\n");
				return EXIT_USAGE;
			}
			if (ranks_layout_parse(a[12] ? a + 13 : argv[++i], &layout, &e)) {
				fprintf(stderr, "llmio: %s\n", e.msg);
				return EXIT_USAGE;
			}
		} else if (!strcmp(a, "--reorder")) {
			reorder = true;
		} else {
			return run_unknown_arg(a, o.engine);
		}
	}
	if (emit && job_opts_resolve(&o, &e)) { /* fio's options as llmio will run them */
		fprintf(stderr, "llmio: %s\n", e.msg);
		return EXIT_USAGE;
	}
	if (emit)
		return emit_fio(&o, argc, argv);
	if (json && csv && !strcmp(json, "-") && !strcmp(csv, "-")) {
		fprintf(stderr,
		        "llmio run: --json - and --csv - both write to stdout: choose one\n");
		return EXIT_USAGE;
	}
	if ((json && !strcmp(json, "-")) || (csv && !strcmp(csv, "-")) ||
	    (out.json && !out.path && (json || csv))) {
		if (out.json && !out.path &&
		    ((json && !strcmp(json, "-")) || (csv && !strcmp(csv, "-")))) {
			fprintf(stderr,
			        "llmio run: --output-format=json and --json - or --csv - all "
			        "write to stdout: give --output FILE\n");
			return EXIT_USAGE;
		}
		quiet = true;
	}
	if (out.path && !strcmp(out.path, "-"))
		out.path = NULL;
	if (quiet)
		out.normal = false;

	/* before the run: a path that cannot be written must not cost the run's results */
	for (int k = 0; k < 3; k++) {
		const char *path = k == 2 ? out.path : k ? csv : json;

		if (path && (ret = cli_output_usable("run", path, CLI_OUT_FILE)))
			return ret;
	}
	/* fio's names of the job's files: filename in directory, a ':' list, JOBNAME.0.0 */
	ret = fio_files_make(&o, &files, &e);
	if (ret) {
		fprintf(stderr, "llmio: %s\n", e.msg);
		return ret == -ENOMEM ? EXIT_RUNTIME : EXIT_USAGE;
	}
	if (o.files && ranks_active()) {
		fio_files_free(&files);
		fprintf(stderr, "llmio: under mpirun the ranks share one --filename (docs/mpi.md); "
		                "this job names several files (a ':' list, nrfiles or numjobs "
		                "without --filename): give one --filename\n");
		return EXIT_USAGE;
	}
	cli_install_signals();
	o.stop = &cli_stop;
	o.progress = cli_progress;
	o.prepare_progress = progress_layout_cb;
	if (ranks_active()) {
		/* the merged job on rank 0; a rank that fails ends the MPI job itself */
		o.progress = NULL;
		o.prepare_progress = NULL;
		ret = ranks_job_run(&o, layout, reorder, &r, &jout.mpi, &e);
	} else {
		ret = llmio_job_run(&o, &r, &e);
	}
	cli_progress_clear();
	if (ret) {
		fprintf(stderr, "llmio: %s\n", e.msg);
		code = cli_exit_code(ret);
	}
	if (!r)
		goto out_files;
	out.r = &r;
	jout.r = r;
	jout.layout = layout;
	if (out.path)
		ret = cli_write_file(out.path, write_out, &jout);
	else
		ret = write_out(stdout, &jout);
	if (ret) {
		fprintf(stderr, "llmio: cannot write %s: %s\n", out.path ? out.path : "stdout",
		        strerror(-ret));
		code = EXIT_RUNTIME;
	}
	if (r->interrupted)
		fprintf(stderr, "llmio: interrupted: the figures cover %.2f s\n", r->runtime_s);
	if (json && (ret = cli_write_file(json, write_json, &jout))) {
		fprintf(stderr, "llmio: cannot write %s: %s\n", json, strerror(-ret));
		code = EXIT_RUNTIME;
	}
	if (csv && (ret = cli_write_file(csv, write_csv, &jout))) {
		fprintf(stderr, "llmio: cannot write %s: %s\n", csv, strerror(-ret));
		code = EXIT_RUNTIME;
	}
	if (run_logs_write(r))
		code = EXIT_RUNTIME;
	/* cut short: what was measured is written, but the job did not run as asked */
	if (r->interrupted && !code)
		code = EXIT_RUNTIME;
	llmio_result_destroy(r);
	cJSON_Delete(jout.mpi);
out_files:
	fio_files_free(&files);
	return code;
}

int cmd_run(int argc, char **argv)
{
	struct llmio_error e = {0};
	int code;

	if (ranks_init(&argc, &argv, &e)) {
		fprintf(stderr, "llmio: %s\n", e.msg);
		return EXIT_RUNTIME;
	}
	wl_dist_default(ranks_wl()); /* recipes under mpirun */
	code = run_job(argc, argv);
	return ranks_end(code, cli_stop); /* (cli_stop read after the run) */
}
