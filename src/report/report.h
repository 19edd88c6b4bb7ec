/* SPDX-License-Identifier: MIT */
/*
 * Reports and advice from a sweep journal.  The journal is read into samples (one per record
 * and phase), samples are grouped into points (one per configuration, repeats folded by their
 * median), and points into slices for the charts.  docs/report.md explains every rule.
 */
#ifndef LLMIO_REPORT_H
#define LLMIO_REPORT_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "llmio/hist.h"
#include "llmio/result.h"
#include "base/error.h"

/* One (index, count) pair of a raw histogram bucket, as the JSON stores it. */
struct hist_pair {
	uint32_t idx;
	uint64_t count;
};

/* One phase of one journal record ("run" for a plain job). */
struct sample {
	char hash[24];     /* config_hash */
	char workload[32]; /* "job" or a recipe name */
	char phase[32];
	char engine[128]; /* datapath label: ioengine plus its options, "io_uring sqpoll=1" */
	char ioengine[32];
	char rw[16];
	char op[8]; /* the op whose latency is shown: "read" or "write", whichever moved more */
	uint64_t bs;
	unsigned iodepth, numjobs, fsync;
	bool direct, end_fsync;
	long repeat;
	cJSON *config; /* the record's "config" (owned) */
	char *group;   /* identity of the point: workload, phase, config minus repeat / randseed */
	double wall_s, bw, iops, gbpc, cores;
	uint64_t p50, p99;       /* clat of op, this sample alone */
	struct hist_pair *pairs; /* clat buckets of op, all jobs of the phase */
	size_t npairs;
	uint64_t hmin, hmax;
	enum llmio_service service; /* the record's verdict, derived when it has none */
	char service_reason[192];
	bool shared_disk, busy_system; /* a job of the phase was flagged */
};

/* Metric of a point: median over its repeats, and their spread. */
struct metric {
	double med, min, max;
};

/* One configuration: the samples of its repeats folded together. */
struct point {
	const struct sample *s;   /* the first sample (settings, labels) */
	const struct sample *all; /* the dataset's samples: all[idx[i]] */
	size_t *idx;              /* its samples */
	size_t n;
	struct metric bw, iops, gbpc, wall, p99r; /* p99r: per-repeat p99, for the spread */
	uint64_t lat_count;                       /* I/Os in the merged histogram (point_hist) */
	uint64_t p50, p99;                        /* from the merged histogram */
	enum llmio_service service;               /* its repeats' verdicts together */
	bool shared_disk, busy_system;            /* any repeat flagged */
};

struct failure {
	char hash[24];
	char what[160];
	char message[256];
};

struct dataset {
	const char *path;
	struct sample *s;
	size_t n;
	struct point *p;
	size_t np;
	struct failure *fail;
	size_t nfail;
	unsigned long records, skipped_lines, ignored; /* ignored: not a "point" record */
	char **varying; /* config keys whose value differs between samples */
	size_t nvarying;
	char **engine_keys; /* the engine options the records name ("engine_options") */
	size_t nengine_keys;
	bool engine_keys_guessed; /* a record without "engine_options": ask today's engines */
	char host[256], kernel[128], cpu_model[128];
	unsigned online_cpus;
};

/* dataset.c */
int dataset_load(struct dataset *d, const char *path, struct llmio_error *e);
/*
 * dataset_load() calling progress(arg, line) every 256 lines read, for a progress line on a
 * large journal, and progress(arg, 0) before it prints a warning (a torn line) on stderr.
 */
int dataset_load_progress(struct dataset *d, const char *path,
                          void (*progress)(void *arg, unsigned line), void *arg,
                          struct llmio_error *e);
void dataset_release(struct dataset *d);
/* h = the clat histogram of all jobs of all repeats of p, merged exactly. */
void point_hist(const struct point *p, struct llmio_hist *h);
double metric_spread_pct(const struct metric *m);
int cmp_double(const void *a, const void *b); /* qsort: ascending doubles */
/* config minus repeat, randseed and the keys in drop (NULL-terminated); engine options too
 * when drop_engine.  Malloc'd "k=v k=v", or NULL when out of memory. */
char *config_key(const struct dataset *d, const cJSON *config, const char *const *drop,
                 bool drop_engine);
/*
 * Is key an engine option?  As the journal's records say (their "engine_options"), so an old
 * journal reads the same after engines change; for records older than that, as today's
 * engines say.
 */
bool dataset_engine_key(const struct dataset *d, const char *key);
/* The config keys (other than repeat and randseed) whose values differ between samples. */
bool config_key_varies(const struct dataset *d, const char *key);
/* Did key take two values or more among the records that have it (the overview's swept keys)? */
bool config_key_swept(const struct dataset *d, const char *key);
/* Two verdicts as one: equal stays, device with cache is mixed, unknown wins otherwise. */
enum llmio_service service_combine(enum llmio_service a, enum llmio_service b);
/* " (page cache)", " (mixed)" or "" for a label: a point not shown to be device-bound. */
const char *point_mark(const struct point *p);

/* advise.c */
enum phase_class {
	PC_INFER,
	PC_TRAIN,
	PC_CKPT,
	PC_LOAD,
	PC_KV_OFFLOAD, /* randrw at any mix */
	PC_SPILL,      /* randwrite */
	PC_SHUFFLE,    /* randread above 64 KiB */
	PC_STREAM,     /* sequential reads below 128 KiB */
	PC_PREP,       /* sequential writes below 128 KiB */
	PC_COUNT
};

/* Who served a point's bytes, for the advisor: it ranks only within one of these. */
enum svc_class { SC_DEVICE, SC_CACHE, SC_UNKNOWN, SC_COUNT };
#define ADVICE_MAX    (PC_COUNT * SC_COUNT)
#define ADVICE_RANKED 16

struct choice {
	const struct point *p; /* NULL when the datapath has no eligible point */
	double value;          /* the ranking metric */
	double spread_pct;
};

struct advice {
	enum phase_class pc;
	enum svc_class sc;
	size_t ncand;  /* points in the class */
	size_t npaths; /* datapaths measured */
	struct choice best, runner;
	double ratio;    /* best over runner-up on the ranking metric (>= 1) */
	bool by_cpu;     /* throughput inside noise: chosen by GB/s per core */
	bool thin;       /* too thin to decide (reasons in why) */
	char why[512];   /* why too thin */
	char next[512];  /* what to try next */
	char study[256]; /* the study's guideline */
	int agrees;      /* 1 agrees, 0 differs, -1 no answer */
	char agree_text[256];
	bool from_recipes; /* the candidates were recipe phases */
	/* every datapath's best point, best first (before the CPU tie-break), for the adaptive
	 * sweep; and the point of the most IOPS, which sets the latency classes' bar */
	struct choice ranked[ADVICE_RANKED];
	size_t nranked;
	const struct point *lead;
};

/* The answers: every phase class for device-bound points first, then the page-cache and
 * unknown classes of the phases that have such points. */
struct advice_set {
	struct advice a[ADVICE_MAX];
	size_t n;
};

const char *phase_class_name(enum phase_class pc);
/* "device", "page cache", "service unknown": the class an answer is for */
const char *svc_class_name(enum svc_class sc);
enum svc_class point_svc_class(const struct point *p);
void advise_all(const struct dataset *d, struct advice_set *out);
void advice_settings(const struct point *p, char *buf, size_t len);
void advice_metric(const struct advice *a, const struct point *p, char *buf, size_t len);
void advice_vs(const struct advice *a, char *buf, size_t len);
void advice_evidence(const struct point *p, size_t max, char *buf, size_t len);
int advise_write_text(FILE *f, const struct dataset *d, const struct advice_set *a);
int advise_write_json(FILE *f, const struct dataset *d, const struct advice_set *a);

/*
 * The advisor as the adaptive sweep's scorer (src/sweep/adaptive.h): the phase classes of a
 * point's configuration (a plain job's; 0 for a recipe), with those ranked by latency in
 * *latency; and the per-phase answers of a journal (none when it does not exist yet).
 */
struct sweep_config;
struct adapt_answers;
unsigned advise_config_classes(const struct sweep_config *c, unsigned *latency);
int advise_journal_answers(const char *journal, struct adapt_answers *out, struct llmio_error *e);

/* doc.c: a document model written as Markdown and as HTML, so both hold the same numbers */
struct doc;
struct doc *doc_create(const char *title);
void doc_destroy(struct doc *d);
void doc_heading(struct doc *d, int level, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
void doc_para(struct doc *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void doc_chart(struct doc *d, const char *base, const char *alt);
/* Start a table with ncols columns; the header cells follow as strings. */
void doc_table(struct doc *d, size_t ncols, ...);
/* Start a table whose ncols header cells follow as doc_cell calls. */
void doc_table_n(struct doc *d, size_t ncols);
void doc_row(struct doc *d, ...); /* exactly ncols strings */
void doc_cell(struct doc *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int doc_error(const struct doc *d); /* 0, or -ENOMEM if any addition failed */
int doc_write_md(FILE *f, const struct doc *d);
int doc_write_html(FILE *f, const struct doc *d);

/* plot.c: gnuplot charts (PNG + SVG) through one script file */
struct plot;
enum plot_kind { PLOT_LINES, PLOT_CLUSTER, PLOT_STACKED };
struct plot_series {
	const char *name;
	size_t n;
	const double *x, *y; /* a non-finite y is a point not measured: the line breaks there */
	const char *color;   /* "#rrggbb" (plot_engine_color), or NULL: gnuplot's own */
	int dash;            /* gnuplot dash type, 0 = solid */
};
/*
 * The colour of a datapath's engine ("io_uring sqpoll=1": io_uring's), the same in every chart
 * of every report: the engine's place in llmio's registry picks it from a fixed palette (an
 * engine llmio does not know: a hash of its name).
 */
const char *plot_engine_color(const char *datapath);
/* y axis of plot_lines: linear from 0, log10, or the "nines" of a CDF (y = 1 / (1 - p)) */
enum plot_yaxis { PLOT_Y_LINEAR, PLOT_Y_LOG, PLOT_Y_NINES };
struct plot *plot_create(const char *dir);
void plot_destroy(struct plot *p);
/* Line chart; logx: 0 linear, else the log base of x.  Returns 0 or -errno. */
int plot_lines(struct plot *p, const char *base, const char *title, const char *xlabel,
               const char *ylabel, int logx, enum plot_yaxis y, const struct plot_series *s,
               size_t ns);
/* Bars: v[c * ns + k] for category c, series k; NaN = no bar.  colors: one per series, or
 * NULL (gnuplot's own). */
int plot_bars(struct plot *p, const char *base, enum plot_kind kind, const char *title,
              const char *xlabel, const char *ylabel, const char *const *cats, size_t nc,
              const char *const *series, const char *const *colors, size_t ns, const double *v);
/* Run gnuplot over the script; e says why it failed.  \return 0, -ENOENT when gnuplot is
 * missing, -EIO when it failed. */
int plot_render(struct plot *p, struct llmio_error *e);
size_t plot_count(const struct plot *p);

/* report.c */
int report_build(const struct dataset *d, struct doc *doc, struct plot *plot);

#endif
