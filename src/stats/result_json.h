/* SPDX-License-Identifier: MIT */
/* Result records as cJSON objects, for the writers that embed them (workloads, sweeps). */
#ifndef LLMIO_RESULT_JSON_H
#define LLMIO_RESULT_JSON_H

#include <cjson/cJSON.h>

#include "llmio/result.h"

/* The per-job object `llmio run --json` writes under "jobs" (fio's layout + llmio's). */
cJSON *result_job_json(const struct llmio_result *r);

#endif
