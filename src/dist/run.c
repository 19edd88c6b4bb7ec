/* SPDX-License-Identifier: MIT */
/*
 * One job over every rank (dist.h): this rank's share, a barrier, the job, then every rank's
 * result gathered whole to rank 0 and merged there.  A rank that fails ends the MPI job.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/target.h"
#include "dist/dist.h"
#include "llmio/job.h"

/* Rank 0: the n gathered results with their hosts; all other ranks: nothing. */
static int merge_all(struct llmio_result *all, const char *hosts, unsigned n,
                     struct llmio_result **agg, struct dist_summary *s, cJSON **mpi,
                     const char *layout, struct llmio_error *e)
{
	struct dist_rank *ranks = calloc(n, sizeof(*ranks));
	int ret;

	*agg = calloc(1, sizeof(**agg));
	if (!ranks || !*agg) {
		free(ranks);
		free(*agg);
		*agg = NULL;
		return llmio_err(e, -ENOMEM, "out of memory");
	}
	for (unsigned i = 0; i < n; i++)
		ranks[i] = (struct dist_rank){
		        .r = &all[i], .host = hosts + (size_t)i * DIST_HOST_MAX, .rank = i};
	ret = dist_merge(ranks, n, *agg, s);
	if (!ret && mpi && !(*mpi = dist_json(ranks, n, s, layout)))
		ret = llmio_err(e, -ENOMEM, "out of memory");
	free(ranks);
	return ret;
}

int dist_gather_merge(const struct llmio_result *mine, struct llmio_result **agg, cJSON **mpi,
                      const char *layout, struct llmio_error *e)
{
	unsigned n = dist_size();
	struct llmio_result *all = NULL;
	char *hosts = malloc((size_t)n * DIST_HOST_MAX);
	struct dist_summary s;
	int ret;

	*agg = NULL;
	if (mpi)
		*mpi = NULL;
	if (!hosts)
		return llmio_err(e, -ENOMEM, "out of memory");
	if (dist_rank() == 0 && !(all = calloc(n, sizeof(*all)))) {
		free(hosts);
		return llmio_err(e, -ENOMEM, "out of memory");
	}
	ret = dist_hosts(hosts, e);
	if (!ret)
		ret = dist_gather(mine, sizeof(*mine), all, e);
	if (!ret && dist_rank() == 0)
		ret = merge_all(all, hosts, n, agg, &s, mpi, layout, e);
	free(all);
	free(hosts);
	return ret;
}

unsigned dist_reorder_shift(void)
{
	/* IOR -C: a rank of the next host (the next rank when all share one host) */
	if (dist_size() < 2)
		return 0;
	return dist_host_ranks() < dist_size() ? dist_host_ranks() : 1;
}

int dist_job_run(struct llmio_job_opts *o, enum dist_layout layout, bool reorder,
                 struct llmio_result **agg, cJSON **mpi, struct llmio_error *e)
{
	struct llmio_result *r = NULL;
	struct dist_share sh;
	struct llmio_error je = {0}; /* the job's own reason, kept apart from a result's */
	unsigned shift = 0;
	int ret;

	*agg = NULL;
	if (reorder)
		shift = dist_reorder_shift();
	ret = dist_job_share(o, dist_rank(), dist_size(), layout, shift, &sh, e);
	if (ret)
		return dist_fail(ret == -EINVAL ? 2 : 1, e);
	/*
	 * One shared file, laid out once: rank 0 creates and fills it (as its job would) while the
	 * others wait at the barrier, so that no two ranks race to create or fill the same name.
	 * Every rank's job then finds the file complete and reuses it untouched.
	 */
	if (layout == DIST_SHARED_FILE && dist_rank() == 0 && (ret = target_prepare_job(o, e))) {
		dist_share_release(&sh);
		return dist_fail(ret == -EINVAL ? 2 : 1, e);
	}
	dist_barrier();
	ret = llmio_job_run(o, &r, &je);
	dist_share_release(&sh);
	if (r && !r->opts.filename[0]) /* a region: the record names the file as a plain run does */
		snprintf(r->opts.filename, sizeof(r->opts.filename), "%s", sh.path);
	if (ret || (r && r->error)) {
		llmio_err(e, ret ? ret : r->error, "%s",
		          je.msg[0] ? je.msg
		          : r       ? r->error_msg
		                    : "failed");
		llmio_result_destroy(r);
		return dist_fail(ret == -EINVAL ? 2 : 1, e);
	}
	ret = dist_gather_merge(r, agg, mpi, dist_layout_name(layout), e);
	llmio_result_destroy(r);
	if (ret)
		return dist_fail(1, e);
	return 0;
}
