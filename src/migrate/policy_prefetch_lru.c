/* SPDX-License-Identifier: MIT */
/*
 * Policy `prefetch-lru`: lru (policy_lru.c) that also fetches what the next `lookahead` kernels
 * read, as unified memory with prefetch hints does (G10's DeepUM-like baseline), so that a fetch
 * overlaps the kernel before its use instead of stalling it.  A prefetch that would have to evict
 * a tensor the current kernel needs is skipped; that tensor is fetched on demand.
 */
#include "migrate/plan.h"

static int build(struct plan *p, const struct lt_step *s, const struct plan_cfg *c,
                 struct llmio_error *e)
{
	return plan_lru(p, s, c, c->lookahead ? c->lookahead : 1, e);
}

const struct plan_policy policy_prefetch_lru = {
        .name = "prefetch-lru",
        .summary = "lru that also fetches what the next kernels read (lookahead)",
        .build = build,
};
