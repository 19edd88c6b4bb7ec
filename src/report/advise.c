/* SPDX-License-Identifier: MIT */
/*
 * The datapath advisor: for each phase class, the best datapath (engine + its options) with
 * its settings, by how much it beats the runner-up, the records behind it, and what to measure
 * next when the data cannot decide.  Rules and thresholds: docs/report.md, "The advisor".
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/engine.h"
#include "stats/result_json.h"
#include "sweep/adaptive.h"
#include "base/fmt.h"
#include "report/report.h"

/* Inference: a point is eligible when it reaches this share of the class's best IOPS. */
#define ADEQUATE_IOPS_FRAC 0.25
/* Differences below this (or below the repeats' own spread) are noise. */
#define NOISE_PCT   5.0
#define MIN_REPEATS 3
#define SMALL_BS    (64 * 1024)
#define LARGE_BS    (128 * 1024)
#define MAX_PATHS   64

struct class_info {
	const char *name;
	const char *title;
	bool latency; /* ranked by p99 (lower first) instead of GB/s */
	const char *study;
	/* The engines the study points to: with a capability of any, none of none. */
	unsigned any, none;
	const char *expect_text; /* the study's words for them */
	const char *next;        /* a sweep that fills the class */
};

static const struct class_info classes[PC_COUNT] = {
        [PC_INFER] = {"inference", "small random reads (<= 64 KiB), latency first", true,
                      "io_uring with SQPOLL or polled completions (or a polled path around the "
                      "block layer: NVMe passthrough, SPDK): lowest latency, competitive IOPS "
                      "for small random reads",
                      ENGINE_CAP_POLLED, ENGINE_CAP_NO_IO, "io_uring, uring_cmd or spdk",
                      "rw=randread bs=4k,16k,64k iodepth=1..32:x2 with io_uring (sqpoll=0,1), "
                      "libaio and psync, direct=1 (and uring_cmd iopoll=0,1 on an NVMe "
                      "namespace), --repeat 3"},
        [PC_TRAIN] = {"pre-training / fine-tuning",
                      "large sequential reads and writes (>= 128 KiB), throughput then CPU", false,
                      "GPUDirect Storage or large-block asynchronous I/O; CPU-mediated paths "
                      "differ mainly in GB/s per core",
                      ENGINE_CAP_GPU_DIRECT | ENGINE_CAP_ASYNC, ENGINE_CAP_NO_IO,
                      "GDS, io_uring or libaio",
                      "rw=read,write bs=128k,1m iodepth=4..32:x2 with io_uring, libaio (and gds "
                      "where it runs), direct=1, --repeat 3"},
        [PC_CKPT] = {"checkpointing", "bursty large writes with fsync, throughput then CPU", false,
                     "large-block asynchronous writes (GDS where available): throughput, then "
                     "CPU",
                     ENGINE_CAP_GPU_DIRECT | ENGINE_CAP_ASYNC, ENGINE_CAP_NO_IO,
                     "GDS, io_uring or libaio",
                     "rw=write bs=1m end_fsync=1 iodepth=8,32 numjobs=1,4 with io_uring and "
                     "libaio, --repeat 3 (or workload=ckpt)"},
        [PC_LOAD] = {"model loading", "large sequential reads, throughput then CPU", false,
                     "GDS or large parallel reads rather than mmap page faults (fastsafetensors)",
                     ENGINE_CAP_GPU_DIRECT | ENGINE_CAP_ASYNC, ENGINE_CAP_NO_IO,
                     "GDS, io_uring or libaio",
                     "rw=read bs=1m,16m iodepth=8,32 numjobs=1,4 with io_uring, libaio and "
                     "mmap, --repeat 3 (or workload=load)"},
        [PC_KV_OFFLOAD] = {"KV-cache offload",
                           "random reads and writes mixed (randrw, any mix), throughput then CPU",
                           false,
                           "asynchronous I/O at depth overlaps spills with restores (G10, "
                           "FlexGen); GDS where the cache lives in GPU memory",
                           ENGINE_CAP_GPU_DIRECT | ENGINE_CAP_ASYNC, ENGINE_CAP_NO_IO,
                           "GDS, io_uring or libaio",
                           "rw=randrw rwmixread=50,70 bs=16k,128k iodepth=4..32:x2 with "
                           "io_uring and libaio, direct=1, --repeat 3"},
        [PC_SPILL] = {"activation / KV spill", "random writes (randwrite), throughput then CPU",
                      false,
                      "asynchronous writes overlapped with compute (SSDTrain): throughput at "
                      "the least CPU",
                      ENGINE_CAP_GPU_DIRECT | ENGINE_CAP_ASYNC, ENGINE_CAP_NO_IO,
                      "GDS, io_uring or libaio",
                      "rw=randwrite bs=128k,1m iodepth=4..32:x2 with io_uring and libaio, "
                      "direct=1, --repeat 3"},
        [PC_SHUFFLE] = {"shuffled sample loading",
                        "random reads above 64 KiB (randread), throughput then CPU", false,
                        "many concurrent sample reads (DLIO, MLPerf Storage data loaders): "
                        "asynchronous I/O at depth",
                        ENGINE_CAP_GPU_DIRECT | ENGINE_CAP_ASYNC, ENGINE_CAP_NO_IO,
                        "GDS, io_uring or libaio",
                        "rw=randread bs=128k,1m iodepth=4..32:x2 with io_uring, libaio and "
                        "psync numjobs=4, direct=1, --repeat 3"},
        [PC_STREAM] = {"dataset streaming",
                       "sequential reads below 128 KiB (token records, trace replay), "
                       "throughput then CPU",
                       false,
                       "asynchronous I/O keeps the device busy between small requests; "
                       "synchronous reads leave it idle (NIO Bench)",
                       ENGINE_CAP_ASYNC, ENGINE_CAP_GPU_DIRECT | ENGINE_CAP_NO_IO,
                       "io_uring or libaio",
                       "rw=read bs=4k,16k,64k iodepth=1..32:x2 with io_uring, libaio and psync, "
                       "--repeat 3"},
        [PC_PREP] = {"dataset preparation",
                     "sequential writes below 128 KiB (tokenised shards, logs), throughput "
                     "then CPU",
                     false, "asynchronous or batched sequential writes: throughput, then CPU",
                     ENGINE_CAP_ASYNC, ENGINE_CAP_GPU_DIRECT | ENGINE_CAP_NO_IO,
                     "io_uring or libaio",
                     "rw=write bs=4k,16k,64k iodepth=1..32:x2 with io_uring, libaio and psync, "
                     "--repeat 3"},
};

static const char *const svc_names[SC_COUNT] = {"device", "page cache", "service unknown"};
static const char *const svc_keys[SC_COUNT] = {"device", "page-cache", "unknown"};

const char *svc_class_name(enum svc_class sc)
{
	return svc_names[sc];
}

/* Device-bound points compete with each other only; mixed ones count as page cache. */
enum svc_class point_svc_class(const struct point *p)
{
	switch (p->service) {
	case LLMIO_SERVICE_DEVICE:
		return SC_DEVICE;
	case LLMIO_SERVICE_PAGE_CACHE:
	case LLMIO_SERVICE_MIXED:
		return SC_CACHE;
	default:
		return SC_UNKNOWN;
	}
}

const char *phase_class_name(enum phase_class pc)
{
	return classes[pc].name;
}

/* Recipe phases by name (first match wins), then by the recipe's own name. */
static const struct {
	const char *word;
	enum phase_class pc;
} phase_words[] = {
        {"checkpoint", PC_CKPT}, {"ckpt", PC_CKPT},      {"save", PC_CKPT},     {"serve", PC_INFER},
        {"infer", PC_INFER},     {"decode", PC_INFER},   {"prefill", PC_INFER}, {"kv", PC_INFER},
        {"restore", PC_LOAD},    {"resume", PC_LOAD},    {"load", PC_LOAD},     {"train", PC_TRAIN},
        {"epoch", PC_TRAIN},     {"finetune", PC_TRAIN},
};

static int word_class(const char *name)
{
	for (size_t i = 0; i < sizeof(phase_words) / sizeof(phase_words[0]); i++)
		if (strstr(name, phase_words[i].word))
			return (int)phase_words[i].pc;
	return -1;
}

static bool is_recipe(const struct sample *s)
{
	return strcmp(s->workload, "job") != 0;
}

static unsigned class_mask(const struct sample *s)
{
	unsigned m = 0;
	int pc;

	if (is_recipe(s)) {
		pc = word_class(s->phase);
		if (pc < 0)
			pc = word_class(s->workload);
		return pc < 0 ? 0 : 1u << pc;
	}
	if (!strcmp(s->rw, "randread"))
		m |= 1u << (s->bs <= SMALL_BS ? PC_INFER : PC_SHUFFLE);
	if (s->bs >= LARGE_BS && (!strcmp(s->rw, "read") || !strcmp(s->rw, "write")))
		m |= 1u << PC_TRAIN;
	if (s->bs >= LARGE_BS && !strcmp(s->rw, "read"))
		m |= 1u << PC_LOAD;
	if (s->bs >= LARGE_BS && !strcmp(s->rw, "write") && (s->fsync || s->end_fsync))
		m |= 1u << PC_CKPT;
	if (s->bs < LARGE_BS && !strcmp(s->rw, "read"))
		m |= 1u << PC_STREAM;
	if (s->bs < LARGE_BS && !strcmp(s->rw, "write"))
		m |= 1u << PC_PREP;
	if (!strcmp(s->rw, "randrw"))
		m |= 1u << PC_KV_OFFLOAD;
	if (!strcmp(s->rw, "randwrite"))
		m |= 1u << PC_SPILL;
	return m;
}

static double rank_value(const struct class_info *c, const struct point *p)
{
	return c->latency ? (double)p->p99 : p->bw.med;
}

static double spread_of(const struct class_info *c, const struct point *p)
{
	return metric_spread_pct(c->latency ? &p->p99r : &p->bw);
}

/* a better than b on the class's metric? */
static bool better(const struct class_info *c, double a, double b)
{
	return c->latency ? a < b : a > b;
}

static void add_note(char *buf, size_t len, const char *fmt, const char *a, const char *b)
{
	size_t used = strlen(buf);

	if (used + 3 >= len)
		return;
	if (used) {
		snprintf(buf + used, len - used, "; ");
		used += 2;
	}
	snprintf(buf + used, len - used, fmt, a, b);
}

static void judge(const struct class_info *c, struct advice *a)
{
	const struct point *b = a->best.p, *r = a->runner.p;
	double noise, diff;
	char x[64], y[64];

	if (!b) {
		a->thin = true;
		snprintf(a->why, sizeof(a->why), "no measurements for this phase");
		snprintf(a->next, sizeof(a->next), "sweep %s", c->next);
		return;
	}
	if (a->npaths < 2) {
		a->thin = true;
		add_note(a->why, sizeof(a->why), "only one datapath measured (%s)%s", b->s->engine,
		         "");
		add_note(a->next, sizeof(a->next), "measure other datapaths: %s%s", c->next, "");
	}
	if (b->n < MIN_REPEATS || (r && r->n < MIN_REPEATS)) {
		a->thin = true;
		snprintf(x, sizeof(x), "%zu", b->n);
		snprintf(y, sizeof(y), ", runner-up %zu", r ? r->n : 0);
		add_note(a->why, sizeof(a->why), "fewer than 3 repeats (best %s%s)", x, r ? y : "");
		add_note(a->next, sizeof(a->next), "rerun the sweep with --repeat 3%s%s", "", "");
	}
	if (!r)
		return;
	noise = fmax(NOISE_PCT, fmax(a->best.spread_pct, a->runner.spread_pct));
	diff = (a->ratio - 1) * 100;
	if (diff < noise && !a->by_cpu) {
		a->thin = true;
		snprintf(x, sizeof(x), "%.1f%%", diff);
		snprintf(y, sizeof(y), "%.1f%%", noise);
		add_note(a->why, sizeof(a->why),
		         "the difference to the runner-up (%s) is inside the noise (%s)", x, y);
		add_note(a->next, sizeof(a->next),
		         "more repeats or a longer runtime (steady state) to shrink the spread%s%s",
		         "", "");
	}
}

/* The capabilities of the engine a record names (an alias too); 0 for one llmio lacks now. */
static unsigned engine_caps(const char *name)
{
	const struct engine_ops *e = engine_find(name);

	return e ? e->caps : 0;
}

static void agreement(const struct class_info *c, const struct dataset *d, struct advice *a)
{
	const struct sample *s;
	bool gds_seen = false;
	unsigned caps;

	if (!a->best.p) {
		a->agrees = -1;
		snprintf(a->agree_text, sizeof(a->agree_text), "no data");
		return;
	}
	if (a->sc != SC_DEVICE) {
		/* the guideline is about the device's datapaths: memory copies do not test it */
		a->agrees = -1;
		snprintf(a->agree_text, sizeof(a->agree_text),
		         "not comparable: %s points (the guideline is about device-bound I/O)",
		         svc_names[a->sc]);
		return;
	}
	s = a->best.p->s;
	for (size_t i = 0; i < d->n; i++)
		if (engine_caps(d->s[i].ioengine) & ENGINE_CAP_GPU_DIRECT)
			gds_seen = true;
	caps = engine_caps(s->ioengine);
	a->agrees = (caps & c->any) && !(caps & c->none);
	if (a->agrees)
		snprintf(a->agree_text, sizeof(a->agree_text), "agrees: %s is best here%s",
		         s->engine,
		         !c->latency && !gds_seen ? " (GDS was not measured: no GPU datapath)"
		                                  : "");
	else
		snprintf(a->agree_text, sizeof(a->agree_text),
		         "differs: %s beats the study's choice (%s) here", s->engine,
		         c->expect_text);
	if (a->thin)
		snprintf(a->agree_text + strlen(a->agree_text),
		         sizeof(a->agree_text) - strlen(a->agree_text), " (tentative: too thin)");
}

static int cmp_choice(const void *x, const void *y, const struct class_info *c)
{
	const struct choice *a = x, *b = y;

	if (better(c, a->value, b->value))
		return -1;
	if (better(c, b->value, a->value))
		return 1;
	/* an exact tie: by name, so the answer does not depend on the journal's order */
	return strcmp(a->p->s->engine, b->p->s->engine);
}

static const struct class_info *sort_class;
static int cmp_choice_q(const void *x, const void *y)
{
	return cmp_choice(x, y, sort_class);
}

/* A candidate of phase class pc and service class sc. */
static bool in_class(const struct point *p, enum phase_class pc, enum svc_class sc)
{
	return (class_mask(p->s) & (1u << pc)) && point_svc_class(p) == sc;
}

/* Distinct datapaths among the class's recipe points (recipe) or plain-job points. */
static size_t count_paths(const struct dataset *d, enum phase_class pc, enum svc_class sc,
                          bool recipe)
{
	const char *seen[MAX_PATHS];
	size_t n = 0;

	for (size_t i = 0; i < d->np; i++) {
		const struct sample *s = d->p[i].s;
		size_t k;

		if (!in_class(&d->p[i], pc, sc) || is_recipe(s) != recipe)
			continue;
		for (k = 0; k < n && strcmp(seen[k], s->engine); k++)
			;
		if (k == n && n < MAX_PATHS)
			seen[n++] = s->engine;
	}
	return n;
}

static void advise_one(const struct dataset *d, enum phase_class pc, enum svc_class sc,
                       struct advice *a)
{
	const struct class_info *c = &classes[pc];
	struct choice paths[MAX_PATHS];
	double max_iops = 0;
	bool recipes;
	size_t np = 0;

	memset(a, 0, sizeof(*a));
	a->pc = pc;
	a->sc = sc;
	snprintf(a->study, sizeof(a->study), "%s", c->study);
	/* recipe phases model the phase itself: they decide when they compare datapaths */
	recipes = count_paths(d, pc, sc, true) >= 2 || !count_paths(d, pc, sc, false);
	a->from_recipes = recipes;
	for (size_t i = 0; i < d->np; i++) {
		const struct point *p = &d->p[i];

		if (!in_class(p, pc, sc) || is_recipe(p->s) != recipes)
			continue;
		a->ncand++;
		if (p->iops.med > max_iops) {
			max_iops = p->iops.med;
			a->lead = p;
		}
	}
	for (size_t i = 0; i < d->np; i++) {
		const struct point *p = &d->p[i];
		size_t k;

		if (!in_class(p, pc, sc) || is_recipe(p->s) != recipes)
			continue;
		for (k = 0; k < np; k++)
			if (!strcmp(paths[k].p->s->engine, p->s->engine))
				break;
		if (k == np) {
			if (np == MAX_PATHS)
				continue;
			paths[np].p = NULL;
			np++;
		}
		if (!paths[k].p)
			a->npaths++;
		/* inference: only points that keep up with the load compete on latency */
		if (c->latency && p->iops.med < ADEQUATE_IOPS_FRAC * max_iops) {
			if (!paths[k].p) {
				paths[k].p = p; /* placeholder: marks the datapath as seen */
				paths[k].value = NAN;
			}
			continue;
		}
		/* an exact tie within a datapath: the first configuration by name, whatever
		 * the journal's order */
		if (!paths[k].p || isnan(paths[k].value) ||
		    better(c, rank_value(c, p), paths[k].value) ||
		    (rank_value(c, p) == paths[k].value &&
		     strcmp(p->s->group, paths[k].p->s->group) < 0)) {
			paths[k].p = p;
			paths[k].value = rank_value(c, p);
			paths[k].spread_pct = spread_of(c, p);
		}
	}
	/* datapaths without an eligible point drop out of the ranking */
	for (size_t k = 0; k < np;)
		if (isnan(paths[k].value))
			paths[k] = paths[--np];
		else
			k++;
	sort_class = c;
	qsort(paths, np, sizeof(paths[0]), cmp_choice_q);
	for (size_t k = 0; k < np && k < ADVICE_RANKED; k++)
		a->ranked[a->nranked++] = paths[k];
	if (np)
		a->best = paths[0];
	if (np > 1) {
		a->runner = paths[1];
		a->ratio = c->latency ? a->runner.value / fmax(a->best.value, 1)
		                      : a->best.value / fmax(a->runner.value, 1e-9);
		/* throughput inside noise: the cheaper datapath in CPU wins */
		if (!c->latency &&
		    (a->ratio - 1) * 100 <
		            fmax(NOISE_PCT, fmax(a->best.spread_pct, a->runner.spread_pct)) &&
		    a->runner.p->gbpc.med > a->best.p->gbpc.med * (1 + NOISE_PCT / 100)) {
			struct choice t = a->best;

			a->best = a->runner;
			a->runner = t;
			a->ratio = a->best.value / fmax(a->runner.value, 1e-9);
			a->by_cpu = true;
		}
	}
	judge(c, a);
	agreement(c, d, a);
}

/* Whether any point of phase class pc is in service class sc. */
static bool class_has(const struct dataset *d, enum phase_class pc, enum svc_class sc)
{
	for (size_t i = 0; i < d->np; i++)
		if (in_class(&d->p[i], pc, sc))
			return true;
	return false;
}

void advise_all(const struct dataset *d, struct advice_set *out)
{
	out->n = 0;
	/* the device's answers first, for every phase; then the other classes where measured */
	for (int sc = 0; sc < SC_COUNT; sc++)
		for (int pc = 0; pc < PC_COUNT; pc++)
			if (sc == SC_DEVICE ||
			    class_has(d, (enum phase_class)pc, (enum svc_class)sc))
				advise_one(d, (enum phase_class)pc, (enum svc_class)sc,
				           &out->a[out->n++]);
}

void advice_settings(const struct point *p, char *buf, size_t len)
{
	const struct sample *s = p->s;
	char bs[32];
	int n = 0;

	fmt_size(bs, sizeof(bs), s->bs);
	if (is_recipe(s))
		n = snprintf(buf, len, "workload=%s phase=%s ", s->workload, s->phase);
	snprintf(buf + n, len - (size_t)n, "rw=%s bs=%s iodepth=%u numjobs=%u direct=%d", s->rw, bs,
	         s->iodepth, s->numjobs, s->direct);
}

void advice_metric(const struct advice *a, const struct point *p, char *buf, size_t len)
{
	char v[32], w[32];

	if (!p) {
		snprintf(buf, len, "-");
	} else if (classes[a->pc].latency) {
		fmt_ns(v, sizeof(v), p->p99);
		fmt_count(w, sizeof(w), p->iops.med);
		snprintf(buf, len, "p99 %s at %s IOPS", v, w);
	} else {
		snprintf(buf, len, "%.3f GB/s, %.2f GB/s per core", p->bw.med / 1e9, p->gbpc.med);
	}
}

void advice_vs(const struct advice *a, char *buf, size_t len)
{
	const struct point *r = a->runner.p;

	if (!a->best.p || !r) {
		snprintf(buf, len, "no runner-up");
	} else if (a->by_cpu) {
		snprintf(buf, len,
		         "GB/s inside noise (%.2fx); %.2fx GB/s per core over %s (spread "
		         "%.0f%%/%.0f%%)",
		         a->runner.value / fmax(a->best.value, 1e-9),
		         a->best.p->gbpc.med / fmax(r->gbpc.med, 1e-9), r->s->engine,
		         a->best.spread_pct, a->runner.spread_pct);
	} else {
		snprintf(buf, len, "%.2fx %s %s (spread %.0f%%/%.0f%%)", a->ratio,
		         classes[a->pc].latency ? "lower p99 than" : "GB/s over", r->s->engine,
		         a->best.spread_pct, a->runner.spread_pct);
	}
}

void advice_evidence(const struct point *p, size_t max, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	if (!p) {
		snprintf(buf, len, "-");
		return;
	}
	for (size_t i = 0; i < p->n && used + 1 < len; i++) {
		if (i == max) {
			snprintf(buf + used, len - used, " +%zu more", p->n - max);
			return;
		}
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? " " : "",
		                         p->all[p->idx[i]].hash);
	}
}

int advise_write_text(FILE *f, const struct dataset *d, const struct advice_set *set)
{
	static const char *const head[5] = {"phase", "served by", "best datapath", "metric",
	                                    "vs runner-up"};
	char(*cells)[256] = calloc((ADVICE_MAX + 1) * 5, sizeof(*cells));
	const char **ptr = calloc((ADVICE_MAX + 1) * 5, sizeof(*ptr));
	/* the phase and who served it repeat in every further table the columns go into */
	struct fmt_table t = {.cells = ptr, .ncols = 5, .nkey = 2, .sep = " | "};
	const struct advice *a = set->a;
	bool others = false;
	char path[72], text[1024];

	if (!cells || !ptr) {
		free(cells);
		free(ptr);
		return -ENOMEM;
	}
	for (size_t i = 0; i < (ADVICE_MAX + 1) * 5; i++)
		ptr[i] = cells[i];
	fmt_path(path, sizeof(path), d->path, 48);
	snprintf(text, sizeof(text), "Datapath advice from %s (%lu records, %zu points%s%s)", path,
	         d->records, d->np, d->host[0] ? ", host " : "", d->host);
	fmt_wrapped(f, "", 2, text);
	fputc('\n', f);
	for (int c = 0; c < 5; c++)
		snprintf(cells[c], sizeof(cells[c]), "%s", head[c]);
	for (size_t i = 0; i < set->n; i++) {
		const struct advice *x = &a[i];
		char(*row)[256] = &cells[(i + 1) * 5];

		others |= x->sc != SC_DEVICE;
		snprintf(row[0], sizeof(row[0]), "%s%s", classes[x->pc].name, x->thin ? " *" : "");
		snprintf(row[1], sizeof(row[1]), "%s", svc_names[x->sc]);
		snprintf(row[2], sizeof(row[2]), "%s", x->best.p ? x->best.p->s->engine : "-");
		advice_metric(x, x->best.p, row[3], sizeof(row[3]));
		advice_vs(x, row[4], sizeof(row[4]));
	}
	t.rows = set->n + 1;
	fmt_table_print(f, &t);
	free(cells);
	free(ptr);
	fprintf(f, "\n* too thin to decide: see below\n");
	if (others)
		fprintf(f,
		        "Points served by the page cache (or where that cannot be told) are ranked "
		        "only among\nthemselves, never against device-bound ones: their rows "
		        "answer for memory, not the device.\n");
	/* the two widest columns, one answer at a time: a table of them would not fit */
	fprintf(f, "\nThe settings and evidence (config hashes in the journal) of each answer:\n");
	for (size_t i = 0; i < set->n; i++) {
		const struct advice *x = &a[i];
		char prefix[64];

		if (!x->best.p)
			continue;
		advice_settings(x->best.p, text, sizeof(text));
		snprintf(prefix, sizeof(prefix), "  %s, %s: ", classes[x->pc].name,
		         svc_names[x->sc]);
		fmt_wrapped(f, prefix, 6, text);
		advice_evidence(x->best.p, 3, text, sizeof(text));
		fmt_wrapped(f, "      evidence ", 15, text);
	}
	fprintf(f, "\nThe study's guideline on this machine:\n");
	for (size_t i = 0; i < set->n; i++)
		if (a[i].sc == SC_DEVICE) {
			char prefix[64];

			snprintf(prefix, sizeof(prefix), "  %-26s study: ", classes[a[i].pc].name);
			fmt_wrapped(f, prefix, strlen(prefix), classes[a[i].pc].study);
			snprintf(prefix, sizeof(prefix), "  %-26s here:  ", "");
			fmt_wrapped(f, prefix, strlen(prefix), a[i].agree_text);
		}
	fprintf(f, "\nWhat to try next:\n");
	for (size_t i = 0; i < set->n; i++) {
		char name[128];

		snprintf(name, sizeof(name), "%s%s%s", classes[a[i].pc].name,
		         a[i].sc == SC_DEVICE ? "" : ", ",
		         a[i].sc == SC_DEVICE ? "" : svc_names[a[i].sc]);
		if (a[i].thin) {
			snprintf(text, sizeof(text), "%s: too thin: %s.", name, a[i].why);
			fmt_wrapped(f, "  ", 4, text);
			fmt_wrapped(f, "    try: ", 9, a[i].next);
		} else
			fprintf(f, "  %s: decided (%zu points, %zu datapaths%s)\n", name,
			        a[i].ncand, a[i].npaths,
			        a[i].from_recipes ? ", from recipe phases" : "");
	}
	return ferror(f) ? -EIO : 0;
}

static cJSON *choice_json(const struct advice *a, const struct choice *c)
{
	cJSON *o = cJSON_CreateObject(), *ev;
	char buf[256];

	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "datapath", c->p->s->engine);
	cJSON_AddStringToObject(o, "ioengine", c->p->s->ioengine);
	advice_settings(c->p, buf, sizeof(buf));
	cJSON_AddStringToObject(o, "settings", buf);
	cJSON_AddStringToObject(o, "workload", c->p->s->workload);
	cJSON_AddStringToObject(o, "phase", c->p->s->phase);
	cJSON_AddStringToObject(o, "rw", c->p->s->rw);
	cJSON_AddNumberToObject(o, "bs", (double)c->p->s->bs);
	cJSON_AddNumberToObject(o, "iodepth", c->p->s->iodepth);
	cJSON_AddNumberToObject(o, "numjobs", c->p->s->numjobs);
	cJSON_AddBoolToObject(o, "direct", c->p->s->direct);
	cJSON_AddStringToObject(o, "service", llmio_service_name(c->p->service));
	cJSON_AddStringToObject(o, "service_reason", c->p->s->service_reason);
	cJSON_AddStringToObject(o, "metric", classes[a->pc].latency ? "p99_ns" : "bw_bytes");
	cJSON_AddNumberToObject(o, "value", c->value);
	cJSON_AddNumberToObject(o, "spread_pct", c->spread_pct);
	cJSON_AddNumberToObject(o, "iops", c->p->iops.med);
	cJSON_AddNumberToObject(o, "bw_bytes", c->p->bw.med);
	cJSON_AddNumberToObject(o, "p99_ns", (double)c->p->p99);
	cJSON_AddNumberToObject(o, "gb_per_s_per_core", c->p->gbpc.med);
	cJSON_AddNumberToObject(o, "repeats", (double)c->p->n);
	ev = cJSON_AddArrayToObject(o, "evidence");
	for (size_t i = 0; ev && i < c->p->n; i++)
		cJSON_AddItemToArray(ev, cJSON_CreateString(c->p->all[c->p->idx[i]].hash));
	return o;
}

int advise_write_json(FILE *f, const struct dataset *d, const struct advice_set *set)
{
	const struct advice *a = set->a;
	cJSON *root = cJSON_CreateObject(), *arr;

	if (!root)
		return -ENOMEM;
	cJSON_AddStringToObject(root, "journal", d->path);
	cJSON_AddNumberToObject(root, "records", (double)d->records);
	cJSON_AddNumberToObject(root, "points", (double)d->np);
	arr = cJSON_AddArrayToObject(root, "phases");
	for (size_t i = 0; arr && i < set->n; i++) {
		const struct advice *x = &a[i];
		cJSON *o = cJSON_CreateObject();

		if (!o)
			break;
		cJSON_AddItemToArray(arr, o);
		cJSON_AddStringToObject(o, "phase", classes[x->pc].name);
		cJSON_AddStringToObject(o, "class", classes[x->pc].title);
		cJSON_AddStringToObject(o, "service_class", svc_keys[x->sc]);
		cJSON_AddStringToObject(o, "verdict",
		                        !x->best.p ? "no data"
		                        : x->thin  ? "too thin"
		                                   : "decided");
		cJSON_AddNumberToObject(o, "candidates", (double)x->ncand);
		cJSON_AddNumberToObject(o, "datapaths", (double)x->npaths);
		cJSON_AddBoolToObject(o, "from_recipes", x->from_recipes);
		if (x->best.p)
			cJSON_AddItemToObject(o, "best", choice_json(x, &x->best));
		if (x->runner.p) {
			cJSON_AddItemToObject(o, "runner_up", choice_json(x, &x->runner));
			cJSON_AddNumberToObject(o, "ratio", x->ratio);
			cJSON_AddBoolToObject(o, "chosen_by_cpu", x->by_cpu);
		}
		if (x->thin) {
			cJSON_AddStringToObject(o, "why_thin", x->why);
			cJSON_AddStringToObject(o, "try_next", x->next);
		}
		cJSON_AddStringToObject(o, "study", x->study);
		if (x->agrees >= 0)
			cJSON_AddBoolToObject(o, "agrees_with_study", x->agrees);
		cJSON_AddStringToObject(o, "agreement", x->agree_text);
	}
	return json_write_doc(f, root);
}

unsigned advise_config_classes(const struct sweep_config *c, unsigned *latency)
{
	const char *rw = sweep_config_get(c, "rw"), *bs = sweep_config_get(c, "bs");
	const char *fs = sweep_config_get(c, "fsync"), *efs = sweep_config_get(c, "end_fsync");
	struct sample s = {.workload = "job"};
	unsigned m;

	*latency = 0;
	if (sweep_config_get(c, "workload") || !rw || !bs)
		return 0; /* recipes: their phases are classed by name, after they ran */
	snprintf(s.rw, sizeof(s.rw), "%s", rw);
	s.bs = strtoull(bs, NULL, 10);
	s.fsync = fs ? (unsigned)strtoul(fs, NULL, 10) : 0;
	s.end_fsync = efs && strcmp(efs, "0");
	m = class_mask(&s);
	for (int pc = 0; pc < PC_COUNT; pc++)
		if ((m >> pc & 1) && classes[pc].latency)
			*latency |= 1u << pc;
	return m;
}

static uint64_t hash_of(const struct point *p)
{
	return p ? strtoull(p->s->hash, NULL, 16) : 0;
}

int advise_journal_answers(const char *journal, struct adapt_answers *out, struct llmio_error *e)
{
	struct advice_set *set;
	struct dataset d;
	int ret;

	out->n = 0;
	if (access(journal, F_OK))
		return 0;
	set = malloc(sizeof(*set));
	if (!set)
		return llmio_err(e, -ENOMEM, "out of memory");
	memset(&d, 0, sizeof(d));
	ret = dataset_load(&d, journal, e);
	if (!ret)
		advise_all(&d, set);
	for (size_t i = 0; !ret && i < set->n && out->n < ADAPT_MAX_ANSWERS; i++) {
		const struct advice *a = &set->a[i];
		struct adapt_answer *x = &out->a[out->n++];

		memset(x, 0, sizeof(*x));
		x->cls = a->pc;
		x->svc = a->sc;
		x->latency = classes[a->pc].latency;
		x->best = hash_of(a->best.p);
		x->lead = x->latency ? hash_of(a->lead) : 0;
		for (size_t k = 0; k < a->nranked && k < ADAPT_MAX_PATHS; k++)
			x->path[x->npaths++] =
			        (struct adapt_path){hash_of(a->ranked[k].p), a->ranked[k].value};
		snprintf(x->phase, sizeof(x->phase), "%s, %s", classes[a->pc].name,
		         svc_names[a->sc]);
		snprintf(x->datapath, sizeof(x->datapath), "%s",
		         a->best.p ? a->best.p->s->engine : "-");
		if (a->best.p)
			advice_settings(a->best.p, x->settings, sizeof(x->settings));
	}
	dataset_release(&d);
	free(set);
	return ret;
}
