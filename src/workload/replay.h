/* SPDX-License-Identifier: MIT */
/*
 * The replay recipe's planner (src/workload/replay.c), callable on its own so that tests and
 * fuzzers can plan a trace without running it: it turns an open trace (trace_read.h) into
 * per-worker I/O lists and the list of files to re-create.  No global state.
 */
#ifndef LLMIO_WORKLOAD_REPLAY_H
#define LLMIO_WORKLOAD_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "base/error.h"

struct trace;
struct replay_plan;

/*
 * The most I/Os one plan may hold (32 bytes each: 2 GiB of plan).  Counted before anything is
 * allocated: a trace of 128 reads of 2 GiB each, split into 4 KiB pieces, already needs more.
 */
#define REPLAY_MAX_IOS (1ull << 26)

struct replay_plan_opts {
	uint64_t bs;      /* largest I/O: larger traced calls are split (4 KiB .. 64 MiB) */
	uint32_t align;   /* O_DIRECT alignment I/Os are widened to; 1: buffered */
	bool timeline;    /* keep each I/O's original time after the trace's start */
	uint64_t max_ios; /* 0: REPLAY_MAX_IOS */
};

/*
 * Plan tr (which the plan keeps using: close it after the plan).  \return 0 and *out;
 * -EINVAL with the reason in e (bs or align out of range, nothing to replay, more than
 * max_ios I/Os, more than 65535 files); -ENOMEM.
 */
int replay_plan_build(struct trace *tr, const struct replay_plan_opts *o, struct replay_plan **out,
                      struct llmio_error *e);
/* I/Os (reads, writes and fsyncs) in the plan, over all workers; files to re-create. */
uint64_t replay_plan_ios(const struct replay_plan *p);
unsigned replay_plan_files(const struct replay_plan *p);
/* The size of file i (the furthest byte touched, before alignment). */
uint64_t replay_plan_file_size(const struct replay_plan *p, unsigned i);
void replay_plan_destroy(struct replay_plan *p);

#endif
