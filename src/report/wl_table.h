/* SPDX-License-Identifier: MIT */
/*
 * The terminal tables of a recipe's run (`llmio run --workload`): its phases, the metrics of
 * phases that only computed, and several engines' runs side by side (docs/output.md).
 */
#ifndef LLMIO_REPORT_WL_TABLE_H
#define LLMIO_REPORT_WL_TABLE_H

#include <stdio.h>

#include "workload/workload.h"

/* One row per phase (time, rate, bytes, device), with the recipe's own metrics under it. */
void wl_table_phases(FILE *f, const struct wl *w);
/* Phases that only computed, with the same metrics, as columns side by side (the policies of
 * `migrate --policy all`); nothing when there are none. */
void wl_table_metrics(FILE *f, const struct wl *w);
/* n runs of one recipe on different engines: each phase's time and rate by engine; with an
 * s3:// directory also the client CPU per GB. */
void wl_table_compare(FILE *f, const struct wl *runs, unsigned n);

#endif
