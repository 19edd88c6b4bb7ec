/* SPDX-License-Identifier: MIT */
/*
 * Recipes under MPI (dist.h): the hooks a struct wl calls (barrier, reduction) and, after the
 * run, every stream of every phase merged over the ranks on rank 0.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "dist/dist.h"
#include "stats/record.h"
#include "workload/workload.h"

static double allreduce(double v, enum wl_op op)
{
	return dist_allreduce(v, op == WL_MIN ? DIST_MIN : op == WL_MAX ? DIST_MAX : DIST_SUM);
}

const struct wl_dist *dist_wl(void)
{
	static struct wl_dist d = {.barrier = dist_barrier,
	                           .allreduce = allreduce,
	                           .fail = dist_fail,
	                           .reduce = dist_wl_reduce};

	if (!dist_active())
		return NULL;
	d.rank = dist_rank();
	d.size = dist_size();
	d.reorder_shift = dist_reorder_shift();
	return &d;
}

/* One stream over every rank: rank 0 swaps its own result for the merged one. */
static int stream(struct wl_phase *ph, unsigned s, cJSON *list, struct llmio_error *e)
{
	struct llmio_result *agg = NULL;
	cJSON *m = NULL;
	int ret;

	ret = dist_gather_merge(ph->streams[s], &agg, &m, NULL, e);
	if (ret || !agg)
		return ret;
	cJSON_AddStringToObject(m, RK_PHASE, ph->name);
	cJSON_AddStringToObject(m, RK_STREAM, ph->stream_names[s]);
	cJSON_AddItemToArray(list, m);
	llmio_result_destroy(ph->streams[s]);
	ph->streams[s] = agg;
	return 0;
}

int dist_wl_reduce(struct wl *w, cJSON **mpi, struct llmio_error *e)
{
	cJSON *list = NULL;
	unsigned np;
	int ret = 0;

	*mpi = NULL;
	if (!dist_active())
		return 0;
	/* a run cut short (Ctrl-C reaches every rank) may end at different phases: the common ones
	 */
	np = (unsigned)dist_allreduce(w->nphases, DIST_MIN);
	if (dist_rank() == 0) {
		*mpi = cJSON_CreateObject();
		if (!*mpi)
			return llmio_err(e, -ENOMEM, "out of memory");
		cJSON_AddNumberToObject(*mpi, RK_RANKS, dist_size());
		list = cJSON_AddArrayToObject(*mpi, RK_STREAMS);
	}
	for (unsigned p = 0; p < np && !ret; p++) {
		struct wl_phase *ph = &w->phases[p];
		unsigned ns = (unsigned)dist_allreduce(ph->nstreams, DIST_MIN);

		/* the slowest rank's phase: the phases start at a barrier */
		ph->wall_s = dist_allreduce(ph->wall_s, DIST_MAX);
		for (unsigned s = 0; s < ns && !ret; s++)
			ret = stream(ph, s, list, e);
	}
	return ret;
}
