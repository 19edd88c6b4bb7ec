/* SPDX-License-Identifier: MIT */
/*
 * Steady-state detection on a series of samples (one per ss_interval, default one second).
 * Two tests:
 *  - range (ss=iops:PCT, bw:PCT; fio's): the last `window` samples all lie within
 *    tolerance_pct of their mean;
 *  - ci (ss=iops_ci:PCT, bw_ci:PCT): the 95 % confidence interval of the mean of every sample
 *    so far (Student's t, n - 1 degrees of freedom) is within +-tolerance_pct of that mean,
 *    after at least `window` samples (and never fewer than STEADY_CI_MIN_SAMPLES).  The mean of the
 * samples is the figure the point reports (I/Os over the measured time), so this stops as soon as
 * that figure is known to the tolerance. Never before min_s of measurement; max_s bounds it (the
 * job's runtime).
 */
#ifndef LLMIO_SWEEP_STEADY_H
#define LLMIO_SWEEP_STEADY_H

#include <stdbool.h>
#include <stddef.h>

#include "base/optdesc.h"

#define STEADY_MAX_WINDOW 600
/* ci: never on fewer samples, whatever the window: two or three samples that agree by chance
 * give a narrow interval that means nothing */
#define STEADY_CI_MIN_SAMPLES 4

enum steady_metric { STEADY_IOPS, STEADY_BW };

enum steady_test { STEADY_RANGE, STEADY_CI };

struct steady_cfg {
	bool enabled;
	enum steady_metric metric;
	enum steady_test test;
	unsigned window;   /* samples that must agree (range) or at least (ci); default 5 */
	double interval_s; /* one sample per interval_s; 0 = 1 s */
	/* ss_window and ss_interval as the option table stores them (ms); window and
	 * interval_s are derived from them (sweep_point_make) */
	unsigned window_ms, interval_ms;
	double tolerance_pct; /* each within this percent of their mean */
	double min_s;         /* not before this much measured time; default = window */
	double max_s;         /* the measurement's limit (the job's runtime); 0 = none */
};

struct steady {
	struct steady_cfg cfg;
	double sample[STEADY_MAX_WINDOW]; /* ring of the last cfg.window samples */
	unsigned n;                       /* samples seen */
	double m2, mean;                  /* every sample so far (ci): Welford */
	double ci_pct;                    /* ci: the last half-width, percent of the mean */
	bool reached;
	double reached_s; /* elapsed time when it was reached */
};

/*
 * The steady-state keys of a job file (ss, ss_window, ss_min, ss_max) as option descriptions
 * (scope OPTD_SCOPE_SWEEP): entry i (NULL past the end), or the one called key (or NULL).
 */
const struct llmio_optdesc *steady_optdesc(size_t i);
const struct llmio_optdesc *steady_opt_find(const char *key);

/*
 * Parse an ss= value: "iops:5%", "bw:2%", "iops_ci:2%", "bw_ci:2%" ("%" optional), or "off" /
 * "none" / "0".
 * \return 0, or -EINVAL with a message in e.
 */
int steady_parse(const char *text, struct steady_cfg *cfg, struct llmio_error *e);

/* Canonical text of the ss= value ("iops:5", "off") into buf. */
void steady_format(const struct steady_cfg *cfg, char *buf, size_t len);

void steady_init(struct steady *s, const struct steady_cfg *cfg);

/* Samples in a window of window_s at one sample per interval_s (at least 2). */
unsigned steady_window_samples(double window_s, double interval_s);

/* Two-sided 95 % quantile of Student's t with df degrees of freedom (df >= 1). */
double steady_t95(unsigned df);

/* Add the sample of the window that ended at elapsed_s; \return true once steady. */
bool steady_add(struct steady *s, double elapsed_s, double value);

#endif
