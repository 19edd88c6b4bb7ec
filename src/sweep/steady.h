/* SPDX-License-Identifier: MIT */
/*
 * Steady-state detection on a series of one-second windows, like fio's ss=: a point's
 * measurement ends early once the last `window` samples of IOPS (or bandwidth) all lie within
 * tolerance_pct of their mean, but never before min_s of measurement; max_s bounds it (the
 * job's runtime).
 */
#ifndef LLMIO_SWEEP_STEADY_H
#define LLMIO_SWEEP_STEADY_H

#include <stdbool.h>
#include <stddef.h>

#include "core/optdesc.h"

#define STEADY_MAX_WINDOW 600

enum steady_metric { STEADY_IOPS, STEADY_BW };

struct steady_cfg {
	bool enabled;
	enum steady_metric metric;
	unsigned window;      /* samples (one per second) that must agree; default 5 */
	double tolerance_pct; /* each within this percent of their mean */
	double min_s;         /* not before this much measured time; default = window */
	double max_s;         /* the measurement's limit (the job's runtime); 0 = none */
};

struct steady {
	struct steady_cfg cfg;
	double sample[STEADY_MAX_WINDOW]; /* ring of the last cfg.window samples */
	unsigned n;                       /* samples seen */
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
 * Parse an ss= value: "iops:5%", "bw:2%" ("%" optional), or "off" / "none" / "0".
 * \return 0, or -EINVAL with a message in e.
 */
int steady_parse(const char *text, struct steady_cfg *cfg, struct llmio_error *e);

/* Canonical text of the ss= value ("iops:5", "off") into buf. */
void steady_format(const struct steady_cfg *cfg, char *buf, size_t len);

void steady_init(struct steady *s, const struct steady_cfg *cfg);

/* Add the sample of the window that ended at elapsed_s; \return true once steady. */
bool steady_add(struct steady *s, double elapsed_s, double value);

#endif
