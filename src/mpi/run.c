/* SPDX-License-Identifier: MIT */
/*
 * One job over every rank (dist.h): this rank's share, a barrier, the job, then every rank's
 * result gathered whole to rank 0 and merged there.  A rank that fails ends the MPI job.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "job/target.h"
#include "mpi/ranks.h"
#include "llmio/job.h"

/* Rank 0: the n gathered results with their hosts; all other ranks: nothing. */
static int merge_all(struct llmio_result *all, const char *hosts, unsigned n,
                     struct llmio_result **agg, struct ranks_summary *s, cJSON **mpi,
                     const char *layout, struct llmio_error *e)
{
	struct ranks_rank *ranks = calloc(n, sizeof(*ranks));
	int ret;

	*agg = calloc(1, sizeof(**agg));
	if (!ranks || !*agg) {
		free(ranks);
		free(*agg);
		*agg = NULL;
		return llmio_err(e, -ENOMEM, "out of memory");
	}
	for (unsigned i = 0; i < n; i++)
		ranks[i] = (struct ranks_rank){
		        .r = &all[i], .host = hosts + (size_t)i * RANKS_HOST_MAX, .rank = i};
	ret = ranks_merge(ranks, n, *agg, s);
	if (!ret && mpi && !(*mpi = ranks_json(ranks, n, s, layout)))
		ret = llmio_err(e, -ENOMEM, "out of memory");
	free(ranks);
	return ret;
}

int ranks_gather_merge(const struct llmio_result *mine, struct llmio_result **agg, cJSON **mpi,
                       const char *layout, struct llmio_error *e)
{
	unsigned n = ranks_size();
	struct llmio_result *all = NULL;
	char *hosts = malloc((size_t)n * RANKS_HOST_MAX);
	struct ranks_summary s;
	int ret;

	*agg = NULL;
	if (mpi)
		*mpi = NULL;
	if (!hosts)
		return llmio_err(e, -ENOMEM, "out of memory");
	if (ranks_rank() == 0 && !(all = calloc(n, sizeof(*all)))) {
		free(hosts);
		return llmio_err(e, -ENOMEM, "out of memory");
	}
	ret = ranks_hosts(hosts, e);
	if (!ret)
		ret = ranks_gather(mine, sizeof(*mine), all, e);
	if (!ret && ranks_rank() == 0)
		ret = merge_all(all, hosts, n, agg, &s, mpi, layout, e);
	free(all);
	free(hosts);
	return ret;
}

unsigned ranks_reorder_shift(void)
{
	/* IOR -C: a rank of the next host (the next rank when all share one host) */
	if (ranks_size() < 2)
		return 0;
	return ranks_host_ranks() < ranks_size() ? ranks_host_ranks() : 1;
}

int ranks_job_run(struct llmio_job_opts *o, enum ranks_layout layout, bool reorder,
                  struct llmio_result **agg, cJSON **mpi, struct llmio_error *e)
{
	struct llmio_result *r = NULL;
	struct ranks_share sh;
	struct llmio_error je = {0}; /* the job's own reason, kept apart from a result's */
	unsigned shift = 0;
	int ret;

	*agg = NULL;
	if (reorder)
		shift = ranks_reorder_shift();
	ret = ranks_job_share(o, ranks_rank(), ranks_size(), layout, shift, &sh, e);
	if (ret)
		return ranks_fail(ret == -EINVAL ? 2 : 1, e);
	/*
	 * One shared file, laid out once: rank 0 creates and fills it (as its job would) while the
	 * others wait at the barrier, so that no two ranks race to create or fill the same name.
	 * Every rank's job then finds the file complete and reuses it untouched.
	 */
	if (layout == RANKS_SHARED_FILE && ranks_rank() == 0 && (ret = target_prepare_job(o, e))) {
		ranks_share_release(&sh);
		return ranks_fail(ret == -EINVAL ? 2 : 1, e);
	}
	ranks_barrier();
	ret = llmio_job_run(o, &r, &je);
	ranks_share_release(&sh);
	if (r && !r->opts.filename[0]) /* a region: the record names the file as a plain run does */
		snprintf(r->opts.filename, sizeof(r->opts.filename), "%s", sh.path);
	if (ret || (r && r->error)) {
		llmio_err(e, ret ? ret : r->error, "%s",
		          je.msg[0] ? je.msg
		          : r       ? r->error_msg
		                    : "failed");
		llmio_result_destroy(r);
		return ranks_fail(ret == -EINVAL ? 2 : 1, e);
	}
	ret = ranks_gather_merge(r, agg, mpi, ranks_layout_name(layout), e);
	llmio_result_destroy(r);
	if (ret)
		return ranks_fail(1, e);
	return 0;
}
