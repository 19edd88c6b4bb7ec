/* SPDX-License-Identifier: MIT */
/*
 * Recipes under MPI (dist.h): the hooks a struct wl calls (barrier, reduction) and, after the
 * run, every stream of every phase merged over the ranks on rank 0.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "mpi/ranks.h"
#include "stats/record.h"
#include "workload/workload.h"

static double allreduce(double v, enum wl_op op)
{
	return ranks_allreduce(v, op == WL_MIN ? RANKS_MIN : op == WL_MAX ? RANKS_MAX : RANKS_SUM);
}

const struct wl_dist *ranks_wl(void)
{
	static struct wl_dist d = {.barrier = ranks_barrier,
	                           .allreduce = allreduce,
	                           .fail = ranks_fail,
	                           .reduce = ranks_wl_reduce};

	if (!ranks_active())
		return NULL;
	d.rank = ranks_rank();
	d.size = ranks_size();
	d.reorder_shift = ranks_reorder_shift();
	return &d;
}

/* One stream over every rank: rank 0 swaps its own result for the merged one. */
static int stream(struct wl_phase *ph, unsigned s, cJSON *list, struct llmio_error *e)
{
	struct llmio_result *agg = NULL;
	cJSON *m = NULL;
	int ret;

	ret = ranks_gather_merge(ph->streams[s], &agg, &m, NULL, e);
	if (ret || !agg)
		return ret;
	cJSON_AddStringToObject(m, RK_PHASE, ph->name);
	cJSON_AddStringToObject(m, RK_STREAM, ph->stream_names[s]);
	cJSON_AddItemToArray(list, m);
	llmio_result_destroy(ph->streams[s]);
	ph->streams[s] = agg;
	return 0;
}

int ranks_wl_reduce(struct wl *w, cJSON **mpi, struct llmio_error *e)
{
	cJSON *list = NULL;
	unsigned np;
	int ret = 0;

	*mpi = NULL;
	if (!ranks_active())
		return 0;
	/* a run cut short (Ctrl-C reaches every rank) may end at different phases: the common ones
	 */
	np = (unsigned)ranks_allreduce(w->nphases, RANKS_MIN);
	if (ranks_rank() == 0) {
		*mpi = cJSON_CreateObject();
		if (!*mpi)
			return llmio_err(e, -ENOMEM, "out of memory");
		cJSON_AddNumberToObject(*mpi, RK_RANKS, ranks_size());
		list = cJSON_AddArrayToObject(*mpi, RK_STREAMS);
	}
	for (unsigned p = 0; p < np && !ret; p++) {
		struct wl_phase *ph = &w->phases[p];
		unsigned ns = (unsigned)ranks_allreduce(ph->nstreams, RANKS_MIN);

		/* the slowest rank's phase: the phases start at a barrier */
		ph->wall_s = ranks_allreduce(ph->wall_s, RANKS_MAX);
		for (unsigned s = 0; s < ns && !ret; s++)
			ret = stream(ph, s, list, e);
	}
	return ret;
}
