/* SPDX-License-Identifier: MIT */
/*
 * Tensor lifetimes of one training step (issue 18, G10's "tensor vitality analysis") and their
 * readers: the llmio-lifetimes line format (docs/migration.md), a model of the catalog and
 * G10's own operator graphs (the frontend/Nets graphs of platformxlab/G10).
 *
 * A step is an ordered list of kernels, each with a duration, and a list of tensors.  A tensor
 * either lives across steps (weights, optimizer state: `created` is LT_PERSISTENT, it is resident
 * when the step starts unless the plan says otherwise) or is created by one kernel and dies after
 * its last use.  Kernel k starts at start_ns[k] on the ideal timeline (no memory limit):
 * the sum of the durations before it; start_ns[nkernels] is the ideal step time.
 *
 * Everything is plain data owned by struct lt_step; nothing is global.  Sizes are bounded
 * (LT_MAX_*) so that a hostile file cannot make the reader allocate without limit.
 */
#ifndef LLMIO_STORE_LIFETIME_H
#define LLMIO_STORE_LIFETIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "llmio/common.h"
#include "llmio/model.h"

#define LT_NAME_MAX    64
#define LT_MAX_KERNELS (1u << 20)
#define LT_MAX_TENSORS (1u << 20)
#define LT_MAX_USES    (1u << 24) /* all tensors together */
#define LT_PERSISTENT  UINT32_MAX
/* A kernel lasts at most 1000 s and a tensor holds at most 1 TiB: sums over a step's bounded
 * counts then fit in 64 bits. */
#define LT_MAX_KERNEL_S     1000.0
#define LT_MAX_TENSOR_BYTES (1ull << 40)

enum lt_kind { LT_WEIGHT, LT_ACTIVATION, LT_GRADIENT, LT_OPTIMIZER, LT_WORKSPACE, LT_NKINDS };

struct lt_kernel {
	char name[LT_NAME_MAX];
	uint64_t dur_ns;
};

struct lt_tensor {
	char name[LT_NAME_MAX];
	uint64_t bytes;
	enum lt_kind kind;
	uint32_t created; /* kernel that produces it, or LT_PERSISTENT */
	uint32_t nuses;   /* kernels that read it, ascending, distinct: uses[use_off ..] */
	uint64_t use_off;
	uint32_t line; /* where a file defined it (0: built in code), for error messages */
};

struct lt_step {
	struct lt_kernel *kernels;
	uint32_t nkernels, kcap;
	struct lt_tensor *tensors;
	uint32_t ntensors, tcap;
	uint32_t *uses;
	uint64_t nuses, ucap;
	uint64_t *start_ns; /* nkernels + 1 entries after lt_finish() */
	char origin[256];   /* where the step comes from (file, model and parameters) */
};

/* An inactive interval of a tensor: not used by kernels after+1 .. before-1.  A persistent
 * tensor's last interval wraps around to its first use of the next step (wraps, before <=
 * after).  idle_ns is the ideal time between the end of kernel `after` and the start of
 * `before`. */
struct lt_interval {
	uint32_t tensor;
	uint32_t after, before;
	bool wraps;
	uint64_t idle_ns;
};

const char *lt_kind_name(enum lt_kind k);
int lt_kind_parse(const char *s, enum lt_kind *out);

void lt_init(struct lt_step *s);
void lt_release(struct lt_step *s);
/* Append a kernel (0 .. LT_MAX_KERNEL_S seconds) / a tensor (1 .. LT_MAX_TENSOR_BYTES bytes;
 * uses ascending kernel indices, checked by lt_finish).  -ENOMEM, -E2BIG past the LT_MAX_*
 * bounds, -EINVAL for an empty name. */
int lt_add_kernel(struct lt_step *s, const char *name, double seconds, struct llmio_error *e);
int lt_add_tensor(struct lt_step *s, const char *name, uint64_t bytes, enum lt_kind kind,
                  uint32_t created, const uint32_t *uses, uint32_t nuses, struct llmio_error *e);
/* Check every reference (uses in range, ascending, after creation) and compute start_ns.
 * -EINVAL naming the tensor (and its line) at fault. */
int lt_finish(struct lt_step *s, struct llmio_error *e);

static inline const uint32_t *lt_uses(const struct lt_step *s, const struct lt_tensor *t)
{
	/* a step of no uses at all has no array: NULL + 0 is undefined behaviour in C */
	return s->uses ? s->uses + t->use_off : NULL;
}

/* Last kernel that touches a non-persistent tensor (its creation or its last use). */
uint32_t lt_last_event(const struct lt_step *s, const struct lt_tensor *t);
/* Is t alive (allocated somewhere) while kernel k runs? */
bool lt_alive(const struct lt_step *s, const struct lt_tensor *t, uint32_t k);

/*
 * Read a lifetimes file: the llmio-lifetimes line format, or a G10 operator graph (detected by
 * its first line).  batch: G10's batch size (its graphs write 99 for it); total_s > 0
 * scales G10 kernel times so that their sum is that many seconds of compute (G10's measured
 * kernel times), else kernels take FLOPs / (tflops * 1e12).
 * -EINVAL with "FILE:LINE: what is wrong"; -errno when the file cannot be read.
 */
struct lt_g10_opts {
	uint32_t batch;
	double tflops;       /* accelerator speed for FLOP-estimated kernel times */
	double total_s;      /* > 0: scale kernel times to sum to this */
	uint32_t elem_bytes; /* bytes per element (G10 simulates fp32) */
};
int lt_read_file(struct lt_step *s, const char *path, const struct lt_g10_opts *g,
                 struct llmio_error *e);
int lt_read_lines(struct lt_step *s, FILE *f, const char *path, struct llmio_error *e);
int lt_read_g10(struct lt_step *s, FILE *f, const char *path, const struct lt_g10_opts *g,
                struct llmio_error *e);
/* Write s in the llmio-lifetimes line format (what lt_read_lines reads back). */
int lt_write(const struct lt_step *s, FILE *f);

/* Inactive intervals of every tensor with at least one idle kernel between two touches,
 * ordered by tensor then time.  *out is allocated (free()).  -ENOMEM. */
int lt_intervals(const struct lt_step *s, struct lt_interval **out, size_t *n,
                 struct llmio_error *e);

#endif
