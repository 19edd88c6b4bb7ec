/* SPDX-License-Identifier: MIT */
/* llmio sweep: a job file's matrix of points, run one by one into a results journal. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "report/fmt.h"
#include "core/rand.h"
#include "sweep/journal.h"
#include "sweep/sweep.h"

/* Thread start-up, target open and cache drop per point, when the configuration says nothing
 * about it: an estimate for --dry-run only. */
#define SETUP_S_PER_POINT 0.3

static void help(FILE *f)
{
	fprintf(f,
	        "usage: llmio sweep FILE -o JOURNAL.jsonl [--resume] [--shuffle [--seed N]]\n"
	        "                   [--repeat N] [--dir DIR] [--keep-cache] [--quiet]\n"
	        "       llmio sweep FILE --dry-run\n\n"
	        "Runs every point of a job file: fio's INI form ([global] + named sections), "
	        "where\n"
	        "any key may hold a list (bs=4k,16k,1m) or a range (iodepth=1..32:x2,\n"
	        "numjobs=1..16:+1); a section's points are the cartesian product of its lists,\n"
	        "minus the exclude= expressions (exclude=ioengine==libaio && iodepth>16).  Each\n"
	        "point's record (configuration, hash, host, metrics) is appended to the journal\n"
	        "and fsynced before the next point starts.  The language: docs/sweeps.md.\n\n"
	        "options:\n"
	        "  -o, --output FILE  the results journal (JSON Lines); it must not exist unless\n"
	        "                     --resume is given; a regular file (or a symlink to one),\n"
	        "                     checked before the first point\n"
	        "  --resume           skip the points whose config_hash is already in the journal\n"
	        "  --dry-run          print `N points`, a sample of them and the estimated time\n"
	        "  --shuffle          run the points in a random order (seeded: --seed N, default "
	        "1)\n"
	        "  --repeat N         run every point N times (the repeat index is part of the "
	        "hash)\n"
	        "  --dir DIR          put every point's files in DIR (overrides directory=;\n"
	        "                     a relative filename= is taken inside DIR)\n"
	        "  --keep-cache       do not drop the page cache between points (done as root)\n"
	        "  -q, --quiet        no line per point on stdout\n\n"
	        "steady state (job file keys): ss=iops:5%% (or bw:5%%) ends a point once the last\n"
	        "ss_window=5s one-second samples lie within 5%% of their mean, after ss_min and "
	        "at\n"
	        "most ss_max (default: runtime).\n\n"
	        "exit status: 0 every point ran, 1 a point failed or the sweep was interrupted\n"
	        "(Ctrl-C; the journal stays valid, continue with --resume), 2 usage or job file\n"
	        "error.\n");
}

struct order {
	size_t idx;
	unsigned repeat;
};

struct sweep_cli {
	const char *path, *out, *dir;
	bool resume, dry_run, shuffle, keep_cache, quiet;
	uint64_t seed, repeat;

	struct sweep_file *file;
	struct sweep_plan plan;
	struct order *order;
	size_t norder;

	uint64_t *done; /* sorted hashes already in the journal */
	size_t ndone;

	/* progress */
	size_t k, ran;
	double started, spent;
	const char *label;
};

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void fmt_duration(char *buf, size_t len, double s)
{
	/* a huge or odd estimate must not overflow the conversion (undefined behaviour) */
	unsigned long t = s > 0 && s < 1e15 ? (unsigned long)(s + 0.5)
	                  : s >= 1e15       ? 999999999999999ul
	                                    : 0;

	if (t >= 3600)
		snprintf(buf, len, "%luh%02lum", t / 3600, t / 60 % 60);
	else if (t >= 60)
		snprintf(buf, len, "%lum%02lus", t / 60, t % 60);
	else
		snprintf(buf, len, "%lus", t);
}

/* Is dim i an option of another engine than the point's (so not part of the point)? */
static bool ioengine_lacks(const struct sweep_cli *c, const struct sweep_plan_point *pp, size_t i)
{
	struct sweep_config *cfg = malloc(sizeof(*cfg));
	char err[256];
	bool lacks;

	if (!cfg)
		return false;
	lacks = sweep_config_build(c->file, pp->sec, pp->choice, cfg, err, sizeof(err)) == 0 &&
	        !sweep_config_get(cfg, c->file->sec[pp->sec].dims[i].key);
	free(cfg);
	return lacks;
}

/* "bs=4k iodepth=8": the keys that vary within the point's section. */
static void point_label(const struct sweep_cli *c, size_t idx, char *buf, size_t len)
{
	const struct sweep_plan_point *pp = &c->plan.p[idx];
	const struct sweep_section *s = &c->file->sec[pp->sec];
	size_t used = (size_t)snprintf(buf, len, "[%s]", s->name);

	for (size_t i = 0; i < s->ndims && used < len; i++)
		if (s->dims[i].n > 1 && (s->dims[i].kind != SK_ENGINE || !ioengine_lacks(c, pp, i)))
			used += (size_t)snprintf(buf + used, len - used, " %s=%s", s->dims[i].key,
			                         s->dims[i].v[pp->choice[i]].raw);
}

static double eta_s(const struct sweep_cli *c, double current_left)
{
	size_t left = c->norder - c->k;

	return c->ran ? c->spent / (double)c->ran * (double)(left ? left - 1 : 0) + current_left
	              : 0;
}

static void on_progress(void *arg, double elapsed_s, double eta, double iops, double bw)
{
	struct sweep_cli *c = arg;
	char e[32], n[32];

	(void)elapsed_s;
	if (!isatty(STDERR_FILENO))
		return;
	fmt_duration(e, sizeof(e), eta_s(c, eta));
	fmt_count(n, sizeof(n), iops);
	fprintf(stderr, "\r\033[K[point %zu/%zu, ETA %s] %.60s | %s IOPS, %.3f GB/s", c->k + 1,
	        c->norder, c->ran ? e : "?", c->label, n, bw / 1e9);
}

/* Main figures of a record's first job, for the line printed per point. */
static void record_figures(const cJSON *rec, double *iops, double *bw)
{
	const cJSON *job = cJSON_GetArrayItem(
	        cJSON_GetObjectItemCaseSensitive(
	                cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(rec, "phases"), 0),
	                "jobs"),
	        0);

	*iops = *bw = 0;
	for (int op = 0; op < 2; op++) {
		const cJSON *o = cJSON_GetObjectItemCaseSensitive(job, op ? "write" : "read");
		const cJSON *i = cJSON_GetObjectItemCaseSensitive(o, "iops");
		const cJSON *b = cJSON_GetObjectItemCaseSensitive(o, "bw_bytes");

		*iops += cJSON_IsNumber(i) ? i->valuedouble : 0;
		*bw += cJSON_IsNumber(b) ? b->valuedouble : 0;
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int collect_hash(void *arg, unsigned line, const cJSON *rec, const char *skipped)
{
	struct sweep_cli *c = arg;
	uint64_t *d;

	(void)line;
	if (!rec) {
		fprintf(stderr, "llmio: %s: %s\n", c->out, skipped);
		return 0;
	}
	if (cJSON_GetObjectItemCaseSensitive(rec, "error"))
		return 0; /* a failed point is tried again */
	d = realloc(c->done, (c->ndone + 1) * sizeof(*d));
	if (!d)
		return -ENOMEM;
	c->done = d;
	journal_record_hash(rec, &c->done[c->ndone++]);
	return 0;
}

static bool is_done(const struct sweep_cli *c, uint64_t h)
{
	return c->ndone && bsearch(&h, c->done, c->ndone, sizeof(h), cmp_u64);
}

static int make_order(struct sweep_cli *c)
{
	struct rng r;

	c->norder = c->plan.n * c->repeat;
	c->order = calloc(c->norder ? c->norder : 1, sizeof(*c->order));
	if (!c->order)
		return -ENOMEM;
	/* whole rounds: every point once, then every point again, ... */
	for (size_t i = 0; i < c->norder; i++)
		c->order[i] = (struct order){i % c->plan.n, (unsigned)(i / c->plan.n)};
	if (!c->shuffle)
		return 0;
	rng_seed(&r, c->seed);
	for (size_t i = c->norder; i > 1; i--) {
		size_t j = rng_below(&r, i);
		struct order t = c->order[i - 1];

		c->order[i - 1] = c->order[j];
		c->order[j] = t;
	}
	return 0;
}

static int dry_run(struct sweep_cli *c)
{
	size_t nsample = c->norder < 8 ? c->norder : 8, unknown = 0, already = 0;
	struct sweep_point *p = malloc(sizeof(*p));
	double total = 0, least = 0, min_s;
	char err[512], label[512], t[32], t_min[32];
	int ret = 0;

	if (!p)
		return EXIT_RUNTIME;
	printf("%zu points\n", c->norder);
	printf("from %zu combinations: %zu excluded, %zu duplicates; %zu distinct x %llu "
	       "repeat%s\n",
	       c->plan.combinations, c->plan.excluded, c->plan.duplicates, c->plan.n,
	       (unsigned long long)c->repeat, c->repeat == 1 ? "" : "s");
	for (size_t i = 0; i < c->norder && !ret; i++) {
		bool known;

		ret = sweep_point_make(c->file, &c->plan, c->order[i].idx, c->order[i].repeat, p,
		                       err, sizeof(err));
		if (ret)
			break;
		if (is_done(c, p->hash)) {
			already++;
			continue;
		}
		total += sweep_point_estimate_s(p, &min_s, &known) + SETUP_S_PER_POINT;
		least += min_s + SETUP_S_PER_POINT;
		unknown += !known;
	}
	if (ret) {
		fprintf(stderr, "llmio: %s\n", err);
		free(p);
		return EXIT_RUNTIME;
	}
	if (c->resume)
		printf("%zu of them already in %s\n", already, c->out);
	printf("sample:\n");
	for (size_t i = 0; i < nsample; i++) {
		size_t k = i * c->norder / nsample;

		point_label(c, c->order[k].idx, label, sizeof(label));
		printf("  #%zu %s%s\n", c->order[k].idx, label,
		       c->repeat > 1 ? (c->order[k].repeat ? " (repeat)" : "") : "");
	}
	fmt_duration(t, sizeof(t), total);
	fmt_duration(t_min, sizeof(t_min), least);
	if (least < total)
		printf("estimated time: %s to %s (steady state reached at once .. never: ss_window "
		       "or ss_min, up to ss_max, + ramp_time, + %.1f s setup per point)\n",
		       t_min, t, SETUP_S_PER_POINT);
	else
		printf("estimated time: %s (runtime + ramp_time per point, + %.1f s setup each)\n",
		       t, SETUP_S_PER_POINT);
	if (unknown)
		printf("  %zu points end by size or run a workload recipe: their time is not "
		       "known in advance (counted as setup only)\n",
		       unknown);
	free(p);
	return 0;
}

static int parse_args(struct sweep_cli *c, int argc, char **argv)
{
	static const struct option longopts[] = {
	        {"output", required_argument, NULL, 'o'},
	        {"resume", no_argument, NULL, 'r'},
	        {"dry-run", no_argument, NULL, 'n'},
	        {"shuffle", no_argument, NULL, 's'},
	        {"seed", required_argument, NULL, 'S'},
	        {"repeat", required_argument, NULL, 'R'},
	        {"dir", required_argument, NULL, 'd'},
	        {"keep-cache", no_argument, NULL, 'k'},
	        {"quiet", no_argument, NULL, 'q'},
	        {"help", no_argument, NULL, 'h'},
	        {NULL, 0, NULL, 0},
	};
	struct cli_getopt g = {.cmd = "sweep",
	                       .argc = argc,
	                       .argv = argv,
	                       .shortopts = ":o:qh",
	                       .longopts = longopts};
	int opt, ret;

	c->repeat = 1;
	c->seed = 1;
	while ((opt = cli_getopt_next(&g)) != -1) {
		switch (opt) {
		case 'o':
			c->out = optarg;
			break;
		case 'r':
			c->resume = true;
			break;
		case 'n':
			c->dry_run = true;
			break;
		case 's':
			c->shuffle = true;
			break;
		case 'S':
		case 'R':
			if (llmio_parse_uint(optarg, opt == 'R', opt == 'R' ? 100000 : UINT64_MAX,
			                     opt == 'R' ? &c->repeat : &c->seed)) {
				fprintf(stderr, "llmio sweep: --%s %s: expected a whole number%s\n",
				        opt == 'R' ? "repeat" : "seed", optarg,
				        opt == 'R' ? " from 1 to 100000" : "");
				return EXIT_USAGE;
			}
			break;
		case 'd':
			c->dir = optarg;
			break;
		case 'k':
			c->keep_cache = true;
			break;
		case 'q':
			c->quiet = true;
			break;
		case 'h':
			help(stdout);
			return -1;
		default: /* CLI_OPT_BAD: the message is printed */
			return EXIT_USAGE;
		}
	}
	if (g.next != argc - 1) {
		fprintf(stderr, "llmio sweep: give one job file (see `llmio sweep --help`)\n");
		return EXIT_USAGE;
	}
	c->path = argv[g.next];
	if (!c->dry_run && !c->out) {
		fprintf(stderr, "llmio sweep: -o JOURNAL.jsonl is needed (or --dry-run)\n");
		return EXIT_USAGE;
	}
	/* before any point runs: a journal that cannot be written would lose every one */
	if (c->out && !c->dry_run && (ret = cli_output_usable("sweep", c->out, CLI_OUT_JOURNAL)))
		return ret;
	if (c->out && !c->resume && !c->dry_run && access(c->out, F_OK) == 0) {
		fprintf(stderr,
		        "llmio sweep: %s exists: add --resume to continue it, or choose another "
		        "file\n",
		        c->out);
		return EXIT_USAGE;
	}
	return 0;
}

/* One point: run it, print its line, append its record. */
static int run_one(struct sweep_cli *c, struct journal *j, struct sweep_point *p,
                   struct sweep_run_ctx *ctx, bool *failed)
{
	struct sweep_outcome o = {0};
	char err[1024], label[512], line[160] = "";
	struct timeval tv;
	double t0 = mono_s(), iops, bw;
	cJSON *rec;
	int ret;

	point_label(c, p->index, label, sizeof(label));
	c->label = label;
	o.cache_dropped = !c->keep_cache && sweep_drop_caches();
	gettimeofday(&tv, NULL);
	o.start_epoch_ms = (uint64_t)tv.tv_sec * 1000 + (uint64_t)tv.tv_usec / 1000;
	*ctx->stop = 0;
	p->ctx = ctx;
	ret = sweep_run_point(p, &o.phases, err, sizeof(err));
	o.wall_s = mono_s() - t0;
	if (isatty(STDERR_FILENO))
		fprintf(stderr, "\r\033[K");
	if (ctx->interrupted) {
		cJSON_Delete(o.phases); /* cut short: not recorded, a resumed sweep runs it */
		return 0;
	}
	o.error = ret;
	o.message = ret ? err : NULL;
	rec = sweep_point_record(p, &o);
	if (!rec) {
		cJSON_Delete(o.phases);
		fprintf(stderr, "llmio: out of memory\n");
		return -ENOMEM;
	}
	record_figures(rec, &iops, &bw);
	ret = journal_append(j, rec);
	cJSON_Delete(rec);
	if (ret) {
		fprintf(stderr, "llmio: cannot append to %s: %s\n", c->out, strerror(-ret));
		return ret;
	}
	c->ran++;
	c->spent += o.wall_s;
	*failed = o.error != 0;
	if (o.error)
		snprintf(line, sizeof(line), "FAILED: %.140s", err);
	else
		fmt_count(line, sizeof(line), iops);
	if (o.error)
		fprintf(stderr, "llmio: point %zu/%zu %s: %s\n", c->k + 1, c->norder, label, err);
	else if (!c->quiet)
		printf("point %zu/%zu %s: %s IOPS, %.3f GB/s%s\n", c->k + 1, c->norder, label, line,
		       bw / 1e9, ctx->ss.reached ? ", steady" : "");
	fflush(stdout);
	return 0;
}

static int run_all(struct sweep_cli *c)
{
	static volatile int point_stop;
	struct sweep_run_ctx ctx = {.stop = &point_stop, .abort = &cli_stop};
	struct sweep_point *p = malloc(sizeof(*p));
	struct journal j;
	size_t skipped = 0, failed = 0;
	char err[512];
	int ret;

	if (!p)
		return EXIT_RUNTIME;
	ret = journal_open(&j, c->out, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "llmio: %s\n", err);
		free(p);
		return EXIT_RUNTIME;
	}
	ctx.progress = on_progress;
	ctx.progress_arg = c;
	cli_install_signals();
	cli_stop_also = &point_stop;
	c->started = mono_s();
	for (c->k = 0; c->k < c->norder && !cli_stop && !ret; c->k++) {
		bool bad = false;

		ret = sweep_point_make(c->file, &c->plan, c->order[c->k].idx, c->order[c->k].repeat,
		                       p, err, sizeof(err));
		if (ret) {
			fprintf(stderr, "llmio: %s\n", err);
			break;
		}
		if (is_done(c, p->hash)) {
			skipped++;
			continue;
		}
		ret = run_one(c, &j, p, &ctx, &bad);
		failed += bad;
	}
	cli_stop_also = NULL;
	journal_close(&j);
	free(p);
	if (!c->quiet)
		printf("%zu points run (%zu failed), %zu already in the journal; journal: %s\n",
		       c->ran, failed, skipped, c->out);
	if (cli_stop)
		fprintf(stderr,
		        "llmio: interrupted after %zu of %zu points; the journal is valid: "
		        "continue "
		        "with --resume\n",
		        c->ran + skipped, c->norder);
	return ret || cli_stop || failed ? EXIT_RUNTIME : 0;
}

int cmd_sweep(int argc, char **argv)
{
	struct sweep_cli c = {0};
	char err[1024];
	int ret, code;

	code = parse_args(&c, argc, argv);
	if (code)
		return code < 0 ? 0 : code;
	ret = sweep_file_load(c.path, c.dir, &c.file, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "llmio: %s\n", err);
		/* a bad or missing job file is bad input */
		return ret == -EINVAL || ret == -ENOENT ? EXIT_USAGE : EXIT_RUNTIME;
	}
	ret = sweep_plan_build(c.file, &c.plan, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "llmio: %s\n", err);
		code = ret == -EINVAL ? EXIT_USAGE : EXIT_RUNTIME;
		goto out;
	}
	if (make_order(&c)) {
		code = EXIT_RUNTIME;
		goto out;
	}
	if (c.resume && c.out && access(c.out, F_OK) == 0) {
		ret = journal_read(c.out, collect_hash, &c, err, sizeof(err));
		if (ret) {
			fprintf(stderr, "llmio: %s\n", ret == -ENOMEM ? "out of memory" : err);
			code = EXIT_RUNTIME;
			goto out;
		}
		if (c.ndone) /* qsort's base must not be NULL, even for no elements */
			qsort(c.done, c.ndone, sizeof(*c.done), cmp_u64);
	}
	code = c.dry_run ? dry_run(&c) : run_all(&c);
out:
	free(c.done);
	free(c.order);
	sweep_plan_release(&c.plan);
	sweep_file_free(c.file);
	return code;
}
