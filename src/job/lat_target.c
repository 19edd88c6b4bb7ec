/* SPDX-License-Identifier: MIT */
/* fio's latency_target search (lat_target.h); the steps follow fio's io_u.c. */
#include "lat_target.h"

static void new_cycle(struct lat_target *lt, uint64_t t, uint64_t ios)
{
	lt->t_cycle = t;
	lt->ios_cycle = ios;
	lt->missed = 0;
}

void lat_target_init(struct lat_target *lt, uint64_t target_ns, uint64_t window_ns, double pct,
                     uint32_t iodepth, bool run, uint64_t t, uint64_t ios)
{
	*lt = (struct lat_target){.target_ns = target_ns,
	                          .window_ns = window_ns,
	                          .pct = pct,
	                          .iodepth = iodepth ? iodepth : 1,
	                          .run = run,
	                          .qd = 1,
	                          .low = 1,
	                          .high = iodepth ? iodepth : 1};
	new_cycle(lt, t, ios);
}

/* A window failed: halve towards the highest depth that passed.  \return true at depth 1. */
static bool step_down(struct lat_target *lt, uint64_t t, uint64_t ios)
{
	if (lt->qd == 1)
		return true; /* fio leaves the window open: the next check judges again */
	lt->high = lt->qd;
	if (lt->low == lt->qd)
		lt->low--;
	lt->qd = (lt->qd + lt->low) / 2;
	lt->stable = 0;
	new_cycle(lt, t, ios);
	return false;
}

static enum lat_target_step step_up(struct lat_target *lt, uint64_t t, uint64_t ios)
{
	const uint32_t was = lt->qd;
	enum lat_target_step r = LAT_TARGET_GO;

	lt->low = lt->qd;
	/*
	 * One below the lowest failing depth bisects to itself: three such passes in a row try
	 * one deeper, as fio's, since the failure may have been a passing spike.
	 */
	if (lt->qd + 1 == lt->high && ++lt->stable >= 3) {
		lt->high++;
		lt->stable = 0;
	}
	/* never failed yet: double; else bisect towards the lowest failing depth */
	lt->qd = lt->high == lt->iodepth ? lt->qd * 2 : (lt->qd + lt->high) / 2;
	if (lt->qd > lt->iodepth)
		lt->qd = lt->iodepth;
	if (!lt->run && lt->qd == was) {
		r = lt->end_run ? LAT_TARGET_DONE : LAT_TARGET_RESET;
		lt->end_run = true;
	}
	new_cycle(lt, t, ios);
	return r;
}

bool lat_target_miss(struct lat_target *lt, uint64_t t, uint64_t ios)
{
	if (lt->pct >= 100.0)
		return step_down(lt, t, ios);
	lt->missed++;
	return false;
}

enum lat_target_step lat_target_check(struct lat_target *lt, uint64_t t, uint64_t ios)
{
	const uint64_t n = ios - lt->ios_cycle;

	if (t - lt->t_cycle < lt->window_ns)
		return LAT_TARGET_GO;
	/* fio's share: an empty window is 0/0, which compares false, so it fails */
	if (n && (double)(n - lt->missed) * 100.0 / (double)n >= lt->pct)
		return step_up(lt, t, ios);
	step_down(lt, t, ios);
	return LAT_TARGET_GO;
}
