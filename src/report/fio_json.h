/* SPDX-License-Identifier: MIT */
/*
 * Results as fio's JSON (`llmio run --output-format=json|json+`): fio's layout and key names
 * for everything fio reports and llmio measures, llmio's own figures beside them.  docs/fio.md
 * maps every key.
 */
#ifndef LLMIO_REPORT_FIO_JSON_H
#define LLMIO_REPORT_FIO_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "llmio/result.h"

/* Is r reported per clone (numjobs > 1 without group_reporting), as fio does? */
bool fio_per_clone(const struct llmio_result *r);

/*
 * Thread i of r as a result of its own (its counts, histograms and window; no one-second
 * samples), for a per-clone report.  NULL without memory; free with llmio_result_destroy().
 */
struct llmio_result *fio_clone_result(const struct llmio_result *r, uint32_t i);

/*
 * Write r[0..n-1] as one fio JSON document to f, a result reported per clone as one entry
 * of jobs[] per thread.  group[i] is job i's fio groupid (NULL: all
 * 0).  plus: fio's json+, each clat_ns with "bins" (latency in ns -> count).  Percentiles are
 * each job's percentile_list (fio's default list when empty).  0, -ENOMEM, or -EIO.
 */
int fio_json_write(FILE *f, struct llmio_result *const *r, const unsigned *group, size_t n,
                   bool plus);

#endif
