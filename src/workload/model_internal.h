/* SPDX-License-Identifier: MIT */
/* Model internals shared by the catalog, the config.json loader and the arithmetic. */
#ifndef LLMIO_MODEL_INTERNAL_H
#define LLMIO_MODEL_INTERNAL_H

#include "llmio/model.h"
#include "base/error.h"

/* Set the fields that follow from the architecture alone (MLP kind, norms, biases, ...). */
void model_arch_defaults(struct llmio_model *m, enum llmio_arch arch);

/* Copy a string into dst[size], cut to fit. */
void model_copy(char *dst, size_t size, const char *src);

#endif
