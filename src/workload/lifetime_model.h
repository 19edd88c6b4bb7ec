/* SPDX-License-Identifier: MIT */
/*
 * A catalog model's training step as tensor lifetimes (migrate/lifetime.h's struct lt_step):
 * the workload floor builds the step from the model, and the planner below only reads it.
 */
#ifndef LLMIO_WORKLOAD_LIFETIME_MODEL_H
#define LLMIO_WORKLOAD_LIFETIME_MODEL_H

#include "llmio/model.h"
#include "migrate/lifetime.h"

/* see lifetime_model.c for the kernels and tensors */
struct lt_model_opts {
	uint32_t micro_batch, seq, tp;
	enum llmio_dtype dtype; /* weights, gradients and activations */
	double tflops;          /* accelerator speed (dense, at dtype) */
	double hbm_gbps;        /* memory bandwidth for the optimizer's memory-bound kernels */
};
int lt_from_model(struct lt_step *s, const struct llmio_model *m, const struct lt_model_opts *o,
                  struct llmio_error *e);

#endif
