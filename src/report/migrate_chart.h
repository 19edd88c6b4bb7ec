/* SPDX-License-Identifier: MIT */
/*
 * The chart of `llmio run --workload migrate --policy all --chart DIR`: per policy, the step
 * time as stacked bars (compute without transfers, compute overlapping transfers, stall), the
 * simulated plan and the measured one side by side, and the ratio to the ideal step.
 */
#ifndef LLMIO_REPORT_MIGRATE_CHART_H
#define LLMIO_REPORT_MIGRATE_CHART_H

#include <stdbool.h>
#include <stddef.h>

#include "llmio/common.h"

enum { MIGRATE_SIM, MIGRATE_RUN, MIGRATE_MODES };

/* One policy; NaN where a figure is missing (a plan that cannot fit, a mode not run). */
struct migrate_chart_row {
	char policy[32];
	double compute_s[MIGRATE_MODES], stall_s[MIGRATE_MODES], overlap_s[MIGRATE_MODES],
	        ratio[MIGRATE_MODES];
};

#define MIGRATE_CHART_SCRIPT "migrate.gp"
#define MIGRATE_CHART_DATA   "migrate.dat"

/*
 * Write dir/migrate.dat (one row per policy) and dir/migrate.gp into the existing directory dir,
 * then draw dir/migrate.png and dir/migrate.svg with gnuplot.  \return 0; -ENOENT when gnuplot
 * is missing (script and data are written; e says how to draw them); another -errno with e
 * naming the problem.
 */
int migrate_chart_write(const char *dir, const struct migrate_chart_row *rows, size_t n,
                        struct llmio_error *e);

struct wl;
/* The chart of a migrate run: its phases simulate-POLICY and run-POLICY as one row per policy,
 * written and drawn as migrate_chart_write() does. */
int migrate_chart_of(const char *dir, const struct wl *w, struct llmio_error *e);

#endif
