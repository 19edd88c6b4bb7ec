/* SPDX-License-Identifier: MIT */
/* llmio: the whole public API. */
#ifndef LLMIO_LLMIO_H
#define LLMIO_LLMIO_H

#include "llmio/common.h"
#include "llmio/hist.h"
#include "llmio/engine.h"
#include "llmio/job.h"
#include "llmio/result.h"
#include "llmio/model.h"
#include "llmio/store.h"

#endif
