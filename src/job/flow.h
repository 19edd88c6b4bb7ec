/* SPDX-License-Identifier: MIT */
/*
 * fio's flow control (flow, flow_id, flow_sleep; docs/fio.md): the threads of the jobs that share
 * a flow_id keep their I/O counts in the ratio of their weights.  As fio's flow.c: one counter
 * per flow_id, shared by the threads of the process (starting at 1), and each thread's own count;
 * a thread whose count is a larger share of the counter than its weight is of the flow's total
 * weight is ahead, and waits.  A thread that ends takes its count and weight out again, so the
 * others go on at their own ratio.  Per I/O: two relaxed atomic loads and one add, no lock.
 */
#ifndef LLMIO_JOB_FLOW_H
#define LLMIO_JOB_FLOW_H
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct job_flow {
	uint32_t id;
	unsigned refs;
	_Atomic uint64_t counter;
	_Atomic uint64_t weight;
};

/* The flow of id, with weight added (at a thread's start); NULL without memory. */
struct job_flow *job_flow_get(uint32_t id, uint32_t weight);
/* A thread's end: its count and weight taken out; the last one frees the flow. */
void job_flow_put(struct job_flow *f, uint64_t count, uint32_t weight);

/* Is a thread of this weight that did count I/Os ahead of its share?  Else count this I/O. */
static inline bool job_flow_ahead(struct job_flow *f, uint64_t *count, uint32_t weight)
{
	const uint64_t all = atomic_load_explicit(&f->counter, memory_order_relaxed);
	const uint64_t total = atomic_load_explicit(&f->weight, memory_order_relaxed);

	if ((double)*count / (double)all > (double)weight / (double)total)
		return true;
	atomic_fetch_add_explicit(&f->counter, 1, memory_order_relaxed);
	++*count;
	return false;
}
#endif
