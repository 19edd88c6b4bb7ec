/* SPDX-License-Identifier: MIT */
/*
 * llmio sweep: a job file's matrix of points, run one by one into a results journal.  The
 * runner is the library's (src/sweep/runner.c); this file parses, calls it and prints.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/progress.h"
#include "mpi/ranks.h"
#include "base/fmt.h"
#include "report/report.h"
#include "sweep/adaptive.h"
#include "sweep/journal.h"
#include "sweep/runner.h"
#include "engine/engine.h"
#include "workload/leftover.h"
#include "workload/workload.h"

static void help(FILE *f)
{
	fprintf(f,
	        "usage: llmio sweep FILE -o JOURNAL.jsonl [--resume] [--shuffle [--seed N]]\n"
	        "                   [--repeat N] [--dir DIR] [--keep] [--keep-cache | --no-reuse]\n"
	        "                   [--quiet]"
	        " [--adaptive [--compare]]\n"
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
	        "  --keep             keep the files and objects the points made (removed after\n"
	        "                     the last point or on Ctrl-C, a recipe's objects after its\n"
	        "                     point; what was there before is never removed)\n"
	        "  --keep-cache       do not drop the page cache between points (done as root)\n"
	        "  --no-reuse         drop it before every point; by default it is dropped before\n"
	        "                     the first point and before each one that may read through\n"
	        "                     it (O_DIRECT points drop their own file's pages)\n"
	        "  --adaptive         run only the points that can change `llmio advise`'s answer\n"
	        "                     per phase (seeded per phase, refined around the best,\n"
	        "                     other datapaths at the best's settings: docs/sweeps.md);\n"
	        "                     prints the points run and the answers\n"
	        "  --compare          with --adaptive: then run the rest of the points too and "
	        "say\n"
	        "                     whether the adaptive answers equal the full sweep's\n"
	        "  -q, --quiet        no line per point on stdout, no progress line\n"
	        "  --progress         the progress line even when stderr is not a terminal\n"
	        "  --no-progress      no progress line\n\n"
	        "steady state (job file keys): ss=iops:5%% (or bw:5%%) ends a point once the\n"
	        "samples of the last ss_window=5s lie within 5%% of their mean; ss=iops_ci:2%%\n"
	        "once the 95%% confidence interval of the mean is within 2%%; one sample per\n"
	        "ss_interval (1s; 250ms samples finer); after ss_min, at most ss_max (runtime).\n\n"
	        "exit status: 0 every point ran, 1 a point failed or the sweep was interrupted\n"
	        "(Ctrl-C; the journal stays valid, continue with --resume), 2 usage or job file\n"
	        "error.\n");
}

struct sweep_cli {
	const char *path, *out, *dir;
	bool resume, dry_run, shuffle, keep, keep_cache, no_reuse, quiet, adaptive, compare;
	size_t evaluated;             /* --adaptive: points the search asked for */
	const char *from;             /* --from: records looked up there instead of run */
	struct journal_index from_ix; /* --from's records */
	uint64_t seed, repeat;

	struct sweep_runner r;
};

static void on_progress(void *arg, double elapsed_s, double eta, double iops, double bw)
{
	struct sweep_cli *c = arg;
	char e[32], n[32];

	(void)elapsed_s;
	if (!progress_enabled())
		return;
	fmt_hms(e, sizeof(e), sweep_runner_eta_s(&c->r, eta));
	fmt_count(n, sizeof(n), iops);
	/* at most 100 columns: 30 for the position, 45 for the label, 25 for the figures */
	if (c->adaptive)
		progress_draw(false, "[adaptive point %zu, of %zu] %.45s | %s IOPS, %.2f GB/s",
		              c->evaluated, c->r.plan.n, c->r.label, n, bw / 1e9);
	else
		progress_draw(false, "[point %zu/%zu, ETA %s] %.45s | %s IOPS, %.2f GB/s",
		              c->r.k + 1, c->r.norder, c->r.ran ? e : "?", c->r.label, n, bw / 1e9);
}

static void on_point_ended(void *arg)
{
	(void)arg;
	progress_clear();
}

/* The line of a point: on stdout, or on stderr when it failed. */
static void on_point_done(void *arg, const struct sweep_point_done *d)
{
	struct sweep_cli *c = arg;
	char n[32];

	progress_clear();
	if (d->error) {
		fprintf(stderr, "llmio: point %zu/%zu %s: %s\n", d->k + 1, c->r.norder, d->label,
		        d->message);
	} else if (!c->quiet) {
		fmt_count(n, sizeof(n), d->iops);
		if (c->adaptive)
			printf("adaptive point %zu %.60s: %s IOPS, %.3f GB/s%s\n", c->evaluated,
			       d->label, n, d->bw / 1e9, d->steady ? ", steady" : "");
		else
			printf("point %zu/%zu %.60s: %s IOPS, %.3f GB/s%s\n", d->k + 1, c->r.norder,
			       d->label, n, d->bw / 1e9, d->steady ? ", steady" : "");
	}
	fflush(stdout);
}

static void on_skipped_line(void *arg, const char *message)
{
	struct sweep_cli *c = arg;

	fprintf(stderr, "llmio: %s: %s\n", c->out, message);
}

static int dry_run(struct sweep_cli *c)
{
	const struct sweep_runner *r = &c->r;
	size_t nsample = r->norder < 8 ? r->norder : 8;
	struct sweep_estimate est;
	struct llmio_error e = {0};
	char label[512], t[32], t_min[32];

	printf("%zu points\n", r->norder);
	printf("from %zu combinations: %zu excluded, %zu duplicates; %zu distinct x %llu "
	       "repeat%s\n",
	       r->plan.combinations, r->plan.excluded, r->plan.duplicates, r->plan.n,
	       (unsigned long long)r->o.repeat, r->o.repeat == 1 ? "" : "s");
	if (sweep_runner_estimate(r, &est, &e)) {
		fprintf(stderr, "llmio: %s\n", e.msg);
		return EXIT_RUNTIME;
	}
	if (c->resume)
		printf("%zu of them already in %s\n", est.already, c->out);
	printf("sample:\n");
	for (size_t i = 0; i < nsample; i++) {
		size_t k = i * r->norder / nsample;

		sweep_runner_label(r, r->order[k].idx, label, sizeof(label));
		printf("  #%zu %s%s\n", r->order[k].idx, label,
		       r->o.repeat > 1 ? (r->order[k].repeat ? " (repeat)" : "") : "");
	}
	fmt_hms(t, sizeof(t), est.total_s);
	fmt_hms(t_min, sizeof(t_min), est.least_s);
	if (est.least_s < est.total_s)
		printf("estimated time: %s to %s (steady state reached at once .. never: ss_window "
		       "or ss_min, up to ss_max, + ramp_time, + %.1f s setup per point)\n",
		       t_min, t, est.setup_s);
	else
		printf("estimated time: %s (runtime + ramp_time per point, + %.1f s setup each)\n",
		       t, est.setup_s);
	if (est.unknown)
		printf("  %zu points end by size or run a workload recipe: their time is not "
		       "known in advance (counted as setup only)\n",
		       est.unknown);
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
	        {"keep", no_argument, NULL, 'K'},
	        {"keep-cache", no_argument, NULL, 'k'},
	        {"no-reuse", no_argument, NULL, 'U'},
	        {"adaptive", no_argument, NULL, 'A'},
	        {"compare", no_argument, NULL, 'C'},
	        {"from", required_argument, NULL, 'F'},
	        {"quiet", no_argument, NULL, 'q'},
	        {"help", no_argument, NULL, 'h'},
	        PROGRESS_LONGOPTS,
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
		if (progress_getopt(opt))
			continue;
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
		case 'K':
			c->keep = true;
			break;
		case 'k':
			c->keep_cache = true;
			break;
		case 'U':
			c->no_reuse = true;
			break;
		case 'A':
			c->adaptive = true;
			break;
		case 'C':
			c->compare = true;
			break;
		case 'F':
			c->from = optarg;
			break;
		case 'q':
			c->quiet = true;
			progress_set_mode(PROGRESS_OFF);
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
	if ((c->compare || c->from) && !c->adaptive) {
		fprintf(stderr, "llmio sweep: --%s goes with --adaptive\n",
		        c->compare ? "compare" : "from");
		return EXIT_USAGE;
	}
	if (c->adaptive && ranks_active()) {
		/* every rank would choose its next points from a journal rank 0 alone writes */
		fprintf(stderr, "llmio sweep: --adaptive does not run under mpirun (the ranks "
		                "would choose from a journal rank 0 alone writes): run it without "
		                "mpirun, or the whole sweep under it\n");
		return EXIT_USAGE;
	}
	if (c->adaptive && c->shuffle) {
		fprintf(stderr,
		        "llmio sweep: --adaptive chooses the order itself: drop --shuffle\n");
		return EXIT_USAGE;
	}
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

static int run_all(struct sweep_cli *c, const struct sweep_events *ev)
{
	static volatile int point_stop;
	struct sweep_runner *r = &c->r;
	struct llmio_error e = {0};
	int ret;

	cli_install_signals();
	cli_stop_also = &point_stop;
	ret = sweep_runner_run(r, ev, &cli_stop, &point_stop, &e);
	cli_stop_also = NULL;
	if (ret)
		fprintf(stderr, "llmio: %s\n", e.msg);
	if (!r->started)
		return EXIT_RUNTIME;
	if (!c->quiet) {
		char path[96];

		fmt_path(path, sizeof(path), c->out, 88);
		printf("%zu points run (%zu failed), %zu already in the journal\njournal: %s\n",
		       r->ran, r->failed, r->skipped, path);
	}
	if (cli_stop)
		fprintf(stderr,
		        "llmio: interrupted after %zu of %zu points; the journal is valid: "
		        "continue "
		        "with --resume\n",
		        r->ran + r->skipped, r->norder);
	return ret || cli_stop || r->failed ? EXIT_RUNTIME : 0;
}

/* --from: the record of point p, looked up in that journal and appended as if run. */
static int replay_point(void *arg, struct sweep_runner *r, const struct sweep_point *p,
                        struct llmio_error *e)
{
	struct sweep_cli *c = arg;
	const cJSON *hit = journal_index_find(&c->from_ix, p->hash);
	char hex[20];
	int ret;

	snprintf(hex, sizeof(hex), "%016llx", (unsigned long long)p->hash);
	if (!hit)
		return llmio_err(
		        e, -ENOENT,
		        "%s has no record of point #%zu (config_hash %s): give the journal of "
		        "a full sweep of the same job file and --dir",
		        c->from, p->index, hex);
	ret = journal_append(&r->j, hit);
	if (ret)
		return llmio_err(e, ret, "cannot append to %s: %s", c->out, strerror(-ret));
	r->ran++;
	return 0;
}

/* The adaptive search's evaluator: every repeat of plan point idx, through the runner (which
 * looks it up in --from's journal when given). */
static int adapt_eval(void *arg, size_t idx, struct llmio_error *e)
{
	struct sweep_cli *c = arg;
	int ret = 0;

	c->evaluated++;
	for (unsigned rep = 0; rep < c->r.o.repeat && !ret; rep++) {
		if (cli_stop)
			return llmio_err(e, -EINTR, "interrupted");
		ret = sweep_runner_point(&c->r, idx, rep, e);
	}
	return ret;
}

static int adapt_answers(void *arg, struct adapt_answers *out, struct llmio_error *e)
{
	struct sweep_cli *c = arg;

	return advise_journal_answers(c->out, out, e);
}

static unsigned adapt_classes(void *arg, const struct sweep_config *cfg, unsigned *latency)
{
	(void)arg;
	return advise_config_classes(cfg, latency);
}

static void print_answers(const char *title, const struct adapt_answers *a)
{
	printf("%s\n", title);
	/* two lines per phase, so that a long datapath label stays within 100 columns */
	for (size_t i = 0; i < a->n; i++)
		if (a->a[i].best)
			printf("  %.40s: %.55s\n      %.92s\n", a->a[i].phase, a->a[i].datapath,
			       a->a[i].settings);
}

/* --adaptive [--compare]: the search, its answers; then the rest of the points and the
 * comparison. */
static int run_adaptive(struct sweep_cli *c, const struct sweep_events *ev)
{
	static volatile int point_stop;
	struct adapt_ops ops = {adapt_eval, adapt_answers, adapt_classes, c};
	struct adapt_opts ao = {.repeats = (unsigned)c->r.o.repeat, .tie_pct = 5};
	struct adapt_answers *ad = malloc(sizeof(*ad)), *full = malloc(sizeof(*full));
	struct sweep_runner *r = &c->r;
	struct adapt_stats st = {0};
	struct llmio_error e = {0};
	bool paths = false, settings = false;
	int ret;

	if (!ad || !full) {
		free(ad);
		free(full);
		fprintf(stderr, "llmio: out of memory\n");
		return EXIT_RUNTIME;
	}
	cli_install_signals();
	cli_stop_also = &point_stop;
	ret = c->from ? journal_index_read(&c->from_ix, c->from, &e) : 0;
	if (c->from) {
		r->record = replay_point;
		r->record_arg = c;
	}
	if (!ret)
		ret = sweep_runner_open(r, ev, &cli_stop, &point_stop, &e);
	if (!ret)
		ret = sweep_adaptive(r->file, &r->plan, &ao, &ops, ad, &st, &e);
	if (!ret && !cli_stop) {
		printf("adaptive: %zu of %zu points (%.1f %%) in %zu rounds; %zu run now, %zu "
		       "already in the journal\n",
		       st.evaluated, st.points,
		       st.points ? 100.0 * (double)st.evaluated / (double)st.points : 0, st.rounds,
		       r->ran, r->skipped);
		print_answers("adaptive answers (llmio advise per phase):", ad);
	}
	if (!ret && !cli_stop && c->compare) {
		/* the rest of the points: what the adaptive run measured is reused, not rerun */
		c->adaptive = false;
		ret = sweep_runner_reload(r, &e);
		for (r->k = 0; !ret && r->k < r->norder && !cli_stop; r->k++)
			ret = sweep_runner_point(r, r->order[r->k].idx, r->order[r->k].repeat, &e);
		if (!ret && !cli_stop)
			ret = advise_journal_answers(c->out, full, &e);
		if (!ret && !cli_stop) {
			size_t n = adapt_compare(ad, full, &paths, &settings);

			print_answers("full sweep answers:", full);
			printf("answer equals the full sweep's: %s (%zu phases: datapaths %s, "
			       "settings "
			       "%s); %zu of %zu points (%.1f %%)\n",
			       paths && settings ? "yes" : "no", n, paths ? "equal" : "differ",
			       settings ? "equal" : "differ", st.evaluated, st.points,
			       st.points ? 100.0 * (double)st.evaluated / (double)st.points : 0);
		}
	}
	sweep_runner_close(r);
	cli_stop_also = NULL;
	journal_index_release(&c->from_ix);
	free(ad);
	free(full);
	if (ret && !cli_stop)
		fprintf(stderr, "llmio: %s\n", e.msg);
	if (cli_stop)
		fprintf(stderr,
		        "llmio: interrupted; the journal is valid: continue with --resume\n");
	if (!r->started)
		return EXIT_RUNTIME;
	return ret || cli_stop || r->failed ? EXIT_RUNTIME : 0;
}

/*
 * sweep_runner_note_targets(), and first, when resuming a sweep that was killed before it cleaned
 * up, what that run had noted (its manifest): the files its points made are then this sweep's own,
 * not files that were there before it.  The manifest is saved again, and stays until the sweep has
 * cleaned up.
 */
static int note_before(const struct sweep_cli *c, struct wl_leftovers *left, const char *made,
                       struct llmio_error *e)
{
	char bytes[32], text[LLMIO_PATH_MAX + 256];
	int loaded = c->resume ? wl_leftovers_load(left, made, e) : 0, ret;
	uint64_t size;
	unsigned n;

	if (loaded < 0)
		return loaded;
	ret = sweep_runner_note_targets(&c->r, left, e);
	if (!ret && ranks_rank() == 0)
		ret = wl_leftovers_save(left, made, e);
	if (ret || !loaded || c->quiet || wl_leftovers_count(left, &n, &size) || !n)
		return ret;
	fmt_bytes(bytes, sizeof(bytes), (double)size);
	snprintf(text, sizeof(text),
	         "the sweep this one resumes was killed before it removed what its points made: "
	         "%u file%s, %s (noted in %s) are this sweep's own; its points reuse them%s",
	         n, n == 1 ? "" : "s", bytes, made,
	         c->keep ? ", and --keep leaves them"
	                 : ", and they are removed at the end "
	                   "(--keep leaves them)");
	fmt_wrapped(stdout, "", 2, text);
	return 0;
}

/* A plain point under mpirun: every rank its region of one shared file, as `llmio run`. */
static int dist_point(struct llmio_job_opts *o, struct llmio_result **r, cJSON **mpi,
                      struct llmio_error *e)
{
	return ranks_job_run(o, RANKS_SHARED_FILE, false, r, mpi, e);
}

static int sweep_main(int argc, char **argv)
{
	struct sweep_cli c = {0};
	struct sweep_dist dist = {.run_job = dist_point, .writer = ranks_rank() == 0};
	struct sweep_events ev = {.progress = on_progress,
	                          .point_ended = on_point_ended,
	                          .point_done = on_point_done,
	                          .skipped_line = on_skipped_line,
	                          .arg = &c};
	struct sweep_run_opts o;
	struct wl_leftovers left = {0};
	struct llmio_error e = {0};
	char made[LLMIO_PATH_MAX + 16] = "";
	int ret, code;

	code = parse_args(&c, argc, argv);
	if (code)
		return code < 0 ? 0 : code;
	/* every rank has checked the journal before rank 0 creates it */
	ranks_barrier();
	if (ranks_rank() != 0) { /* rank 0 alone prints and journals */
		c.quiet = true;
		ev = (struct sweep_events){.arg = &c};
	}
	o = (struct sweep_run_opts){.path = c.path,
	                            .dir = c.dir,
	                            .journal = c.out,
	                            .resume = c.resume,
	                            .shuffle = c.shuffle,
	                            .keep_cache = c.keep_cache,
	                            .keep = c.keep,
	                            .no_reuse = c.no_reuse,
	                            .seed = c.seed,
	                            .repeat = c.repeat,
	                            .dist = ranks_active() ? &dist : NULL};
	ret = sweep_runner_prepare(&c.r, &o, &ev, &e);
	if (!ret && !c.dry_run) {
		ret = sweep_manifest_path(c.out, made, sizeof(made), &e);
		if (!ret)
			ret = note_before(&c, &left, made, &e);
		if (ret)
			made[0] = '\0'; /* not this run's to remove */
		/* every rank has noted what was there before any rank's point makes files */
		ranks_barrier();
	}
	if (ret) {
		fprintf(stderr, "llmio: %s\n", e.msg);
		code = c.r.bad_input ? EXIT_USAGE : EXIT_RUNTIME;
	} else {
		code = c.dry_run    ? dry_run(&c)
		       : c.adaptive ? run_adaptive(&c, &ev)
		                    : run_all(&c, &ev);
	}
	/* after the last point, or the one Ctrl-C cut short: what the sweep made goes */
	if (wl_leftovers_end(&left, c.keep, &e)) {
		fprintf(stderr, "llmio: %s\n", e.msg);
		code = code ? code : EXIT_RUNTIME;
	} else if (made[0] && ranks_rank() == 0) {
		unlink(made); /* cleaned up: a resumed sweep has nothing of this one's to find */
	}
	if (!c.quiet)
		cli_say_leftovers(stdout, &left, c.keep);
	wl_leftovers_release(&left);
	sweep_runner_release(&c.r);
	return code;
}

int cmd_sweep(int argc, char **argv)
{
	struct llmio_error e = {0};
	int code;

	if (ranks_init(&argc, &argv, &e)) {
		fprintf(stderr, "llmio: %s\n", e.msg);
		return EXIT_RUNTIME;
	}
	wl_dist_default(ranks_wl()); /* workload points under mpirun */
	code = sweep_main(argc, argv);
	return ranks_end(code, cli_stop); /* (cli_stop read after the run) */
}
