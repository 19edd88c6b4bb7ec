/* SPDX-License-Identifier: MIT */
/* llmio results export: a sweep's journal as CSV, one row per job, for spreadsheets. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "sweep/journal.h"

static void help(FILE *f)
{
	fprintf(f,
	        "usage: llmio results export JOURNAL.jsonl --csv [-o FILE.csv]\n\n"
	        "Writes one CSV row per job of every point in a sweep's journal (a plain job\n"
	        "point has one; a workload point one per stream of each phase): the point's\n"
	        "identity (config_hash, section, point, repeat, workload, phase), every\n"
	        "configuration key found in the journal (canonical values: sizes in bytes,\n"
	        "times in ns), then the main metrics (IOPS, bandwidth, latency percentiles,\n"
	        "CPU cost, device bytes).  Torn lines are reported and skipped.\n\n"
	        "options:\n"
	        "  --csv            CSV (the only format for now)\n"
	        "  -o, --output F   write to F (written whole or not at all); default stdout.\n"
	        "                   A symlink is followed, a device or FIFO written into; a\n"
	        "                   directory or an unwritable path is refused at once (exit 2)\n");
}

/* Columns of the point; config keys with these names are not repeated. */
static const char *const point_cols[] = {
        "config_hash", "section",       "point",        "repeat",
        "workload",    "phase",         "job",          "start_epoch_ms",
        "wall_s",      "cache_dropped", "steady_state", "steady_reached",
        "measured_s",  "error",
};

/* Metrics: column name, then the path in the job object ("read.iops"). */
static const char *const metric_cols[][2] = {
        {"read_iops", "read.iops"},
        {"read_bw_bytes", "read.bw_bytes"},
        {"read_clat_mean_ns", "read.clat_ns.mean"},
        {"read_clat_p50_ns", "read.clat_ns.percentile.50.000000"},
        {"read_clat_p99_ns", "read.clat_ns.percentile.99.000000"},
        {"read_clat_p999_ns", "read.clat_ns.percentile.99.900000"},
        {"read_clat_max_ns", "read.clat_ns.max"},
        {"write_iops", "write.iops"},
        {"write_bw_bytes", "write.bw_bytes"},
        {"write_clat_mean_ns", "write.clat_ns.mean"},
        {"write_clat_p50_ns", "write.clat_ns.percentile.50.000000"},
        {"write_clat_p99_ns", "write.clat_ns.percentile.99.000000"},
        {"write_clat_p999_ns", "write.clat_ns.percentile.99.900000"},
        {"write_clat_max_ns", "write.clat_ns.max"},
        {"runtime_ms", "job_runtime"},
        {"usr_s", "cpu.usr_s"},
        {"sys_s", "cpu.sys_s"},
        {"cores_busy", "cpu.cores_busy"},
        {"gb_per_s_per_core", "gb_per_s_per_core"},
        {"device", "device.name"},
        {"dev_read_bytes", "device.read_bytes"},
        {"dev_write_bytes", "device.write_bytes"},
        {"interrupted", "interrupted"},
        {"engine_notes", "engine_notes"},
};

#define NPOINT  (sizeof(point_cols) / sizeof(point_cols[0]))
#define NMETRIC (sizeof(metric_cols) / sizeof(metric_cols[0]))

struct export
{
	const char *in;
	cJSON *records; /* array */
	char **keys;    /* union of the config keys, sorted */
	size_t nkeys;
};

/* Follow "a.b.c" where the last parts may hold dots themselves ("percentile.99.000000"). */
static const cJSON *get_path(const cJSON *o, const char *path)
{
	while (o && *path) {
		const cJSON *c = cJSON_GetObjectItemCaseSensitive(o, path);
		const char *dot = strchr(path, '.');
		char part[64];

		if (c || !dot)
			return c;
		snprintf(part, sizeof(part), "%.*s", (int)(dot - path), path);
		o = cJSON_GetObjectItemCaseSensitive(o, part);
		path = dot + 1;
	}
	return NULL;
}

static void put_str(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\n\r")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static void put_value(FILE *f, const cJSON *v)
{
	if (cJSON_IsNumber(v)) {
		double d = v->valuedouble;

		if (d == floor(d) && fabs(d) < 1e15)
			fprintf(f, "%.0f", d);
		else
			fprintf(f, "%.9g", d);
	} else if (cJSON_IsBool(v)) {
		fputs(cJSON_IsTrue(v) ? "1" : "0", f);
	} else if (cJSON_IsString(v)) {
		put_str(f, v->valuestring);
	}
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool is_point_col(const char *key)
{
	for (size_t i = 0; i < NPOINT; i++)
		if (!strcmp(point_cols[i], key))
			return true;
	return false;
}

static int add_key(struct export *x, const char *key)
{
	char **k;

	if (is_point_col(key))
		return 0;
	for (size_t i = 0; i < x->nkeys; i++)
		if (!strcmp(x->keys[i], key))
			return 0;
	k = realloc(x->keys, (x->nkeys + 1) * sizeof(*k));
	if (!k)
		return -ENOMEM;
	x->keys = k;
	x->keys[x->nkeys] = strdup(key);
	return x->keys[x->nkeys++] ? 0 : -ENOMEM;
}

static int collect(void *arg, unsigned line, const cJSON *rec, const char *skipped)
{
	struct export *x = arg;
	const cJSON *kv;
	cJSON *copy;

	(void)line;
	if (!rec) {
		fprintf(stderr, "llmio: %s: %s\n", x->in, skipped);
		return 0;
	}
	cJSON_ArrayForEach(kv, cJSON_GetObjectItemCaseSensitive(rec, "config"))
	{
		if (add_key(x, kv->string))
			return -ENOMEM;
	}
	copy = cJSON_Duplicate(rec, true);
	if (!copy)
		return -ENOMEM;
	cJSON_AddItemToArray(x->records, copy);
	return 0;
}

static void put_row(FILE *f, const struct export *x, const cJSON *rec, const cJSON *phase,
                    const cJSON *job, int jobno)
{
	const cJSON *sw = cJSON_GetObjectItemCaseSensitive(rec, "sweep");
	const cJSON *ss = cJSON_GetObjectItemCaseSensitive(rec, "steady_state");
	const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(rec, "config");
	const cJSON *pointv[NPOINT] = {
	        get_path(rec, "config_hash"),
	        get_path(sw, "section"),
	        get_path(sw, "point"),
	        get_path(sw, "repeat"),
	        get_path(rec, "workload"),
	        get_path(phase, "name"),
	        NULL,
	        get_path(rec, "start_epoch_ms"),
	        get_path(rec, "wall_s"),
	        get_path(rec, "cache_dropped"),
	        get_path(ss, "enabled"),
	        get_path(ss, "reached"),
	        get_path(ss, "measured_s"),
	        get_path(rec, "error.message"),
	};

	for (size_t i = 0; i < NPOINT; i++) {
		if (i)
			fputc(',', f);
		if (i == 6 && job)
			fprintf(f, "%d", jobno);
		else
			put_value(f, pointv[i]);
	}
	for (size_t i = 0; i < x->nkeys; i++) {
		fputc(',', f);
		put_value(f, cJSON_GetObjectItemCaseSensitive(cfg, x->keys[i]));
	}
	for (size_t i = 0; i < NMETRIC; i++) {
		fputc(',', f);
		put_value(f, job ? get_path(job, metric_cols[i][1]) : NULL);
	}
	fputc('\n', f);
}

static int write_csv(FILE *f, void *arg)
{
	const struct export *x = arg;
	const cJSON *rec, *phase, *job;

	for (size_t i = 0; i < NPOINT; i++)
		fprintf(f, "%s%s", i ? "," : "", point_cols[i]);
	for (size_t i = 0; i < x->nkeys; i++)
		fprintf(f, ",%s", x->keys[i]);
	for (size_t i = 0; i < NMETRIC; i++)
		fprintf(f, ",%s", metric_cols[i][0]);
	fputc('\n', f);
	cJSON_ArrayForEach(rec, x->records)
	{
		int rows = 0;

		cJSON_ArrayForEach(phase, cJSON_GetObjectItemCaseSensitive(rec, "phases"))
		{
			int jobno = 0;

			cJSON_ArrayForEach(job, cJSON_GetObjectItemCaseSensitive(phase, "jobs"))
			{
				put_row(f, x, rec, phase, job, jobno++);
				rows++;
			}
		}
		if (!rows)
			put_row(f, x, rec, NULL, NULL,
			        0); /* a point that failed before measuring */
	}
	return ferror(f) ? -EIO : 0;
}

static int export(int argc, char **argv)
{
	static const struct option longopts[] = {
	        {"csv", no_argument, NULL, 'c'},
	        {"output", required_argument, NULL, 'o'},
	        {"help", no_argument, NULL, 'h'},
	        {NULL, 0, NULL, 0},
	};
	struct cli_getopt g = {.cmd = "results",
	                       .argc = argc,
	                       .argv = argv,
	                       .shortopts = ":o:h",
	                       .longopts = longopts};
	struct export x = {0};
	const char *out = "-";
	bool csv = false;
	struct llmio_error e = {0};
	int opt, ret, code = 0;

	while ((opt = cli_getopt_next(&g)) != -1) {
		switch (opt) {
		case 'c':
			csv = true;
			break;
		case 'o':
			out = optarg;
			break;
		case 'h':
			help(stdout);
			return 0;
		default: /* CLI_OPT_BAD: the message is printed */
			return EXIT_USAGE;
		}
	}
	if (g.next != argc - 1 || !csv) {
		fprintf(stderr, "llmio results: %s (see `llmio results --help`)\n",
		        g.next != argc - 1 ? "give one journal file" : "choose a format: --csv");
		return EXIT_USAGE;
	}
	x.in = argv[g.next];
	if ((ret = cli_output_usable("results", out, CLI_OUT_FILE)))
		return ret;
	x.records = cJSON_CreateArray();
	if (!x.records)
		return EXIT_RUNTIME;
	ret = journal_read(x.in, collect, &x, &e);
	if (ret) {
		fprintf(stderr, "llmio: %s\n", ret == -ENOMEM ? "out of memory" : e.msg);
		code = EXIT_RUNTIME;
		goto out;
	}
	if (x.nkeys) /* qsort's base must not be NULL, even for no elements */
		qsort(x.keys, x.nkeys, sizeof(*x.keys), cmp_str);
	ret = cli_write_file(out, write_csv, &x);
	if (ret) {
		fprintf(stderr, "llmio: cannot write %s: %s\n", out, strerror(-ret));
		code = EXIT_RUNTIME;
	}
out:
	for (size_t i = 0; i < x.nkeys; i++)
		free(x.keys[i]);
	free(x.keys);
	cJSON_Delete(x.records);
	return code;
}

static const struct cmd subcommands[] = {
        {"export", export, "a results journal as CSV"},
};

int cmd_results(int argc, char **argv)
{
	int code;

	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		help(stdout);
		return 0;
	}
	if (cli_dispatch(subcommands, sizeof(subcommands) / sizeof(subcommands[0]), argc, argv,
	                 &code))
		return code;
	fprintf(stderr, "llmio results: expected `llmio results export JOURNAL.jsonl --csv` "
	                "(see `llmio results --help`)\n");
	return EXIT_USAGE;
}
