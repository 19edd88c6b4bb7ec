/* SPDX-License-Identifier: MIT */
/* fio's flows, one per flow_id in the process (flow.h). */
#include <pthread.h>
#include <stdlib.h>

#include "job/flow.h"

#define FLOWS_MAX 64

static pthread_mutex_t flows_lock = PTHREAD_MUTEX_INITIALIZER;
static struct job_flow *flows[FLOWS_MAX];

struct job_flow *job_flow_get(uint32_t id, uint32_t weight)
{
	struct job_flow *f = NULL;
	size_t free_slot = FLOWS_MAX;

	pthread_mutex_lock(&flows_lock);
	for (size_t i = 0; i < FLOWS_MAX && !f; i++) {
		if (flows[i] && flows[i]->id == id)
			f = flows[i];
		else if (!flows[i] && free_slot == FLOWS_MAX)
			free_slot = i;
	}
	if (!f && free_slot < FLOWS_MAX && (f = calloc(1, sizeof(*f)))) {
		f->id = id;
		atomic_init(&f->counter, 1); /* fio's: a first ratio without a division by 0 */
		atomic_init(&f->weight, 0);
		flows[free_slot] = f;
	}
	if (f) {
		f->refs++;
		atomic_fetch_add(&f->weight, weight);
	}
	pthread_mutex_unlock(&flows_lock);
	return f;
}

void job_flow_put(struct job_flow *f, uint64_t count, uint32_t weight)
{
	if (!f)
		return;
	pthread_mutex_lock(&flows_lock);
	atomic_fetch_sub(&f->counter, count);
	atomic_fetch_sub(&f->weight, weight);
	if (!--f->refs) {
		for (size_t i = 0; i < FLOWS_MAX; i++)
			if (flows[i] == f)
				flows[i] = NULL;
		free(f);
	}
	pthread_mutex_unlock(&flows_lock);
}
