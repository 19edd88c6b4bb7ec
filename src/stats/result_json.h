/* SPDX-License-Identifier: MIT */
/* Internal: the per-job JSON object of `llmio run --json`, for records that embed it. */
#ifndef LLMIO_STATS_RESULT_JSON_H
#define LLMIO_STATS_RESULT_JSON_H

#include <cjson/cJSON.h>
#include <stdio.h>

#include "llmio/result.h"

/*
 * The object `llmio run --json` writes for r under "jobs" (fio's layout plus llmio's
 * fields; docs/output.md), walked from the job table of stats/record.h.  \return a new
 * object the caller owns, or NULL without memory.
 */
cJSON *result_job_json(const struct llmio_result *r);

/* The whole document of llmio_results_write_json() (NULL when out of memory). */
cJSON *results_json_doc(struct llmio_result *const *r, size_t n);

/*
 * The job record's nested values that code builds (the record table names each as one field):
 * "job options", "read", "write", "sync"."lat_ns", "warnings", "histogram".  Each returns a
 * new item the caller owns, or NULL without memory.
 */
cJSON *result_opts_json(const struct llmio_result *r);
cJSON *result_read_json(const struct llmio_result *r);
cJSON *result_write_json(const struct llmio_result *r);
cJSON *result_trim_json(const struct llmio_result *r);
cJSON *result_sync_lat_json(const struct llmio_result *r);
cJSON *result_warnings_json(const struct llmio_result *r);
cJSON *result_histogram_json(const struct llmio_result *r);

/*
 * Print root as indented JSON and a newline to f, then free root (also on failure).
 * \return 0, -ENOMEM, or -EIO when the stream failed.
 */
int json_write_doc(FILE *f, cJSON *root);

#endif
