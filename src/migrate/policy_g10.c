/* SPDX-License-Identifier: MIT */
/*
 * Policy `g10`: G10's smart tensor migration (arXiv 2310.09443, section 4; the artifact's
 * src/analysis.cc), planned before the step:
 *
 * 1. Tensor vitality: the inactive intervals of every tensor over the step's kernels
 *    (lt_intervals(), the loop-around of tensors that live across steps included).
 * 2. Selection, one eviction at a time: every candidate interval is scored by the over-budget
 *    area it would remove from the fast tier's timeline, the bytes it frees x the duration of
 *    each kernel of its window where the curve is over the budget, its window being where the
 *    tensor is really away (the eviction booked forward from the interval's start, the fetch
 *    backward from its next use, on the bandwidth each link has left).  The largest goes (ties:
 *    bytes x idle time), the curve and the bandwidth are updated, and the others are scored
 *    again: an eviction that fixes a region lowers the score of every other candidate there.
 *    Where the planner is told the SSD is one device for both directions (the tensor store's:
 *    plan_cfg.ssd_one_queue), its evictions and fetches book one timeline, and the selection
 *    plans through it only while the largest candidate's transfers still fit the link's
 *    bandwidth left where they would run on an idle link (its window, and so its area, not
 *    narrowed by the others'): once they do not, every byte more through that link lengthens
 *    the step, and what is left over the budget is the run-time guide's (step 5), which moves
 *    each tensor over the kernels over the budget only.
 * 3. The tier, as G10's scheduling_prefetch() chooses it: an interval longer than the SSD's
 *    round trip x (1 + margin) goes to the SSD unless the SSD's link is crowded over the write's
 *    ideal window (gpu2ssd_BWcheck) and the host has room, then to the host; with the host full
 *    or absent, to the SSD all the same.  A shorter one goes to host memory when its round trip
 *    fits and the host has room; else it is not planned.
 * 4. Prefetch: each fetch is booked as late as the link's bandwidth left allows to land before
 *    the next use (step 2's window); once the selection is done, G10's second pass moves each
 *    fetch of an interval that does not wrap earlier, in the order of the fetches, while the
 *    fast tier has room for it (prefetch_early()).
 * 5. The run-time guide: what the plan did not foresee (kernels still over the budget once no
 *    candidate is left) is evicted as G10's eviction guide does at run time: at each such
 *    kernel, the tensor idle there whose next use is farthest goes first.  A "hot" one (next
 *    use beyond G10's hot line, two thirds of the median interval, and beyond the SSD's round
 *    trip) goes to the SSD when its link can carry it in time for that kernel; the others go to
 *    host memory while it has room (the paper's guide, give_eviction_guide(): Medium and Cold
 *    pages to the host.  The artifact's own runs configure LRU eviction instead).
 *    It is away while the curve is over the budget (the write due before the first such
 *    kernel) and comes back after the last as late as the bandwidth left allows, else right
 *    after it (what is late stalls).
 *
 * Scores fall as the curve and the bandwidth fall, so step 2 keeps the candidates in a heap and
 * re-scores only the one on top (lazy re-scoring): when its fresh score still beats the next
 * one's older score, it is the largest.  (A score can rise only where the SSD's link fills and
 * the host's larger window takes over; there the choice may differ from scoring all.)
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "migrate/plan.h"

struct cand {
	double area, tie; /* larger first */
	size_t iv;
};

static bool before(const struct plan_ctx *x, const struct cand *a, const struct cand *b)
{
	if (a->area != b->area)
		return a->area > b->area;
	if (a->tie != b->tie)
		return a->tie > b->tie;
	if (x->iv[a->iv].tensor != x->iv[b->iv].tensor)
		return x->iv[a->iv].tensor < x->iv[b->iv].tensor;
	return x->iv[a->iv].after < x->iv[b->iv].after;
}

struct heap {
	struct cand *c;
	size_t n;
};

static void heap_swap(struct heap *h, size_t i, size_t j)
{
	struct cand t = h->c[i];

	h->c[i] = h->c[j];
	h->c[j] = t;
}

static void heap_push(const struct plan_ctx *x, struct heap *h, struct cand c)
{
	size_t i = h->n++;

	h->c[i] = c;
	while (i && before(x, &h->c[i], &h->c[(i - 1) / 2])) {
		heap_swap(h, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

static struct cand heap_pop(const struct plan_ctx *x, struct heap *h)
{
	struct cand top = h->c[0];
	size_t i = 0;

	h->c[0] = h->c[--h->n];
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < h->n && before(x, &h->c[l], &h->c[m]))
			m = l;
		if (r < h->n && before(x, &h->c[r], &h->c[m]))
			m = r;
		if (m == i)
			break;
		heap_swap(h, i, m);
		i = m;
	}
	return top;
}

/* The ideal start of virtual kernel v (v >= nkernels: of the next step). */
static uint64_t vtime(const struct lt_step *s, uint32_t v)
{
	return v <= s->nkernels ? s->start_ns[v]
	                        : s->start_ns[s->nkernels] + s->start_ns[v - s->nkernels];
}

/* The over-budget area that `bytes` away over virtual kernels [f, pv) would remove. */
static double over_area(const struct plan_ctx *x, double bytes, long f, long pv)
{
	const uint32_t N = x->s->nkernels;
	double area = 0;

	for (long v = f; v < pv; v++)
		if (x->mem[v % N] > x->c->budget)
			area += bytes * (double)x->s->kernels[v % N].dur_ns;
	return area;
}

/* Is tier t's link one device for both directions, as the planner was told (the tensor
 * store's SSD: one queue)? */
static bool one_link(const struct plan_ctx *x, enum plan_tier t)
{
	return t == PLAN_SSD && x->c->ssd_one_queue;
}

/* The over-budget area interval iv would remove through tier t on an idle link: its write
 * booked forward from its start and its fetch back from its next use at the link's full
 * bandwidth, as bandwidth_window() books them on the bandwidth left. */
static double over_area_idle(const struct plan_ctx *x, const struct lt_interval *iv,
                             enum plan_tier t, double bytes)
{
	const struct plan_tier_spec *ts = &x->c->tier[t];
	const uint32_t N = x->s->nkernels;
	long vb = (long)iv->before + (iv->wraps ? N : 0), f = (long)iv->after + 1, pv = vb;
	double need = bytes + (double)ts->write_lat_ns * ts->gbps; /* ns x GB/s = B */

	while (need > 0 && f < vb)
		need -= (double)x->s->kernels[f++ % N].dur_ns * ts->gbps;
	need = bytes + (double)ts->read_lat_ns * ts->gbps;
	while (need > 0 && pv > f)
		need -= (double)x->s->kernels[--pv % N].dur_ns * ts->gbps;
	return over_area(x, bytes, f, pv);
}

/* Where interval j would go and the over-budget area it would remove there (kernel-ns x
 * bytes); < 0 when neither tier takes it.  G10's choice of tier (scheduling_prefetch()): an
 * interval longer than the SSD's round trip x (1 + margin) goes to the SSD unless the SSD's
 * link is crowded, that is every kernel from the interval's start to the one the write's ideal
 * end falls in has no write bandwidth left (gpu2ssd_BWcheck), and the host has room; then to the
 * host.  With the host full or absent it goes to the SSD all the same, its window where the
 * link's bandwidth left puts it.  An interval too short for the SSD but longer than the host's
 * round trip goes to the host while it has room.  The tier chosen is the only one tried. */
static double score(struct plan_ctx *x, size_t j, enum plan_tier *tier, bool *hidden)
{
	const struct lt_interval *iv = &x->iv[j];
	const uint32_t N = x->s->nkernels;
	double bytes = (double)x->s->tensors[iv->tensor].bytes, area = 0;
	long f, pv;

	if (plan_rule_holds(x, iv, PLAN_SSD)) {
		const struct plan_tier_spec *ts = &x->c->tier[PLAN_SSD];
		uint32_t v0 = iv->after + 1, u = v0;
		double end = (double)vtime(x->s, v0) + (double)ts->write_lat_ns + bytes / ts->gbps;
		bool crowded = true;

		while (u + 1 < 2 * N && (double)vtime(x->s, u + 1) < end)
			u++;
		for (uint32_t v = v0; v <= u && crowded; v++)
			crowded = x->bw_left[PLAN_SSD][PLAN_OUT][v % N] <= 0;
		*tier = crowded && plan_tier_room(x, iv, PLAN_HOST) ? PLAN_HOST : PLAN_SSD;
	} else if (plan_rule_holds(x, iv, PLAN_HOST) && plan_tier_room(x, iv, PLAN_HOST)) {
		*tier = PLAN_HOST;
	} else {
		return -1;
	}
	if (plan_probe_bandwidth(x, iv, *tier, &f, &pv))
		return -1;
	area = over_area(x, bytes, f, pv);
	if (hidden)
		*hidden = !one_link(x, *tier) || area >= over_area_idle(x, iv, *tier, bytes);
	return area;
}

static int select_evictions(struct plan_ctx *x, struct llmio_error *e)
{
	struct heap h = {calloc(x->niv ? x->niv : 1, sizeof(*h.c)), 0};
	bool link_full = false;
	uint32_t at;
	int ret = 0;

	if (!h.c)
		return llmio_err(e, -ENOMEM, "out of memory");
	for (size_t j = 0; j < x->niv; j++) {
		enum plan_tier t;
		double a = score(x, j, &t, NULL);

		if (a > 0)
			heap_push(x, &h,
			          (struct cand){a,
			                        (double)x->s->tensors[x->iv[j].tensor].bytes *
			                                (double)x->iv[j].idle_ns,
			                        j});
	}
	while (h.n && !ret && plan_ctx_peak(x, &at) > x->c->budget) {
		struct cand c = heap_pop(x, &h);
		enum plan_tier t;
		bool hidden;

		c.area = score(x, c.iv, &t, &hidden);
		if (c.area <= 0 || (link_full && one_link(x, t)))
			continue;
		if (h.n && before(x, &h.c[0], &c)) {
			heap_push(x, &h, c); /* another may be larger now: score it first */
			continue;
		}
		if (!hidden) {
			/* the one link can no longer hide the largest: what is left over the
			 * budget is the run-time guide's (through the host while it has room) */
			link_full = true;
			continue;
		}
		ret = plan_try_interval(x, &x->iv[c.iv], t, PLAN_TRY_RULE | PLAN_TRY_BANDWIDTH, e);
		if (ret > 0) /* the probe said it fits: cannot happen, but never loop on it */
			ret = 0;
	}
	free(h.c);
	return ret;
}

/* For the earlier prefetch pass: the selected intervals by their fetch's kernel. */
struct early {
	long p;
	size_t iv;
};

static int by_fetch(const void *a, const void *b)
{
	const struct early *x = a, *y = b;

	if (x->p != y->p)
		return x->p < y->p ? -1 : 1;
	return x->iv < y->iv ? -1 : x->iv > y->iv;
}

/* G10's second pass over the selection ("local prefetch", scheduling_prefetch() after the
 * selection loop): in the order of their fetches, each offloaded interval that does not wrap
 * fetches earlier, kernel by kernel back towards its eviction's end, while the fast tier has
 * room for it there.  The link then starts the fetches in the idle time before their booked
 * slots instead of leaving them all to the last moment behind one another.  G10 looks only
 * at whether the kernel is under its line; here the tensor must fit under the budget too. */
static int prefetch_early(struct plan_ctx *x, struct llmio_error *e)
{
	const uint32_t N = x->s->nkernels;
	struct early *l = calloc(x->niv ? x->niv : 1, sizeof(*l));
	size_t n = 0;

	if (!l)
		return llmio_err(e, -ENOMEM, "out of memory");
	for (size_t j = 0; j < x->niv; j++)
		if (x->win[j].done && !x->iv[j].wraps)
			l[n++] = (struct early){x->win[j].p, j};
	qsort(l, n, sizeof(*l), by_fetch);
	for (size_t i = 0; i < n; i++) {
		struct plan_window *w = &x->win[l[i].iv];
		const uint64_t b = x->s->tensors[x->iv[l[i].iv].tensor].bytes;
		struct plan_xfer *in = &x->p->x[w->out + 1];
		long pv = w->p;

		while (pv - 1 > w->f && x->mem[(pv - 1) % N] + b <= x->c->budget)
			x->mem[--pv % N] += b;
		w->p = pv;
		in->issue_k = (uint32_t)(pv % N);
		in->issue_ns = x->s->start_ns[in->issue_k];
	}
	free(l);
	return 0;
}

/* Is kernel k inside the interval (*v: k, or k of the next step for one that wraps)? */
static bool holds(const struct plan_ctx *x, const struct lt_interval *iv, uint32_t k, uint32_t *v)
{
	const uint32_t N = x->s->nkernels;
	uint32_t v0 = iv->after + 1, vb = iv->before + (iv->wraps ? N : 0);

	*v = k >= v0 ? k : k + N;
	return *v >= v0 && *v < vb;
}

static int by_idle(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The run-time guide: at each kernel still over the budget, farthest next use first.  G10's hot
 * line: two thirds of the median inactive interval. */
static int run_time_guide(struct plan_ctx *x, struct llmio_error *e)
{
	const struct lt_step *s = x->s;
	const uint32_t N = s->nkernels;
	uint8_t *tried = calloc(x->niv ? x->niv : 1, 1);
	uint64_t *idle = calloc(x->niv ? x->niv : 1, sizeof(*idle)), hot_ns = 0;
	int ret = 0;

	if (!tried || !idle) {
		free(tried);
		free(idle);
		return llmio_err(e, -ENOMEM, "out of memory");
	}
	for (size_t j = 0; j < x->niv; j++)
		idle[j] = x->iv[j].idle_ns;
	qsort(idle, x->niv, sizeof(*idle), by_idle);
	if (x->niv)
		hot_ns = idle[(x->niv - 1) / 2] / 3 * 2;
	free(idle);
	for (uint32_t k = 0; k <= N && !ret; k++)
		while (x->mem[k] > x->c->budget && !ret) {
			size_t best = SIZE_MAX;
			uint32_t far = 0, v;

			for (size_t j = 0; j < x->niv; j++) {
				const struct lt_interval *iv = &x->iv[j];
				uint32_t d;

				if (tried[j] || !holds(x, iv, k, &v) ||
				    (x->win[j].done && (long)v >= x->win[j].f &&
				     (long)v < x->win[j].p))
					continue;
				d = iv->before + (iv->wraps ? N : 0) - v;
				if (best == SIZE_MAX || d > far) {
					best = j;
					far = d;
				}
			}
			if (best == SIZE_MAX)
				break; /* nothing to evict: plan_check() names the kernel */
			const struct lt_interval *iv = &x->iv[best];
			/* G10's guide: a "hot" tensor (next use beyond the hot line and the SSD's
			 * round trip) to the SSD, the others to host memory while it has room */
			struct lt_interval rest = *iv;

			rest.idle_ns = vtime(s, iv->before + (iv->wraps ? N : 0)) - vtime(s, v + 1);
			enum plan_tier t =
			        (rest.idle_ns > hot_ns && plan_rule_holds(x, &rest, PLAN_SSD)) ||
			                        !plan_tier_room(x, iv, PLAN_HOST)
			                ? PLAN_SSD
			                : PLAN_HOST;

			struct plan_window was = x->win[best];

			tried[best] = 1;
			/* planned, but away too late or back too early for kernel k: now at once */
			plan_undo_interval(x, iv);
			ret = 1;
			if (t == PLAN_SSD && plan_tier_room(x, iv, PLAN_HOST)) {
				/* hot: the SSD when its link can carry it in time for kernel k */
				long f, pv;

				ret = plan_probe_bandwidth(x, iv, PLAN_SSD, &f, &pv);
				if (!ret && (long)v >= f && (long)v < pv)
					ret = plan_try_interval(x, iv, PLAN_SSD, PLAN_TRY_BANDWIDTH,
					                        e);
				else
					ret = 1;
				t = PLAN_HOST;
			}
			if (ret > 0)
				ret = plan_try_interval(x, iv, t, PLAN_TRY_DEFICIT, e);
			if (ret > 0 && was.done) /* no window at all: as it was, and the next one */
				ret = plan_place_interval(x, iv, was.tier, was.f, was.p, e);
			ret = ret > 0 ? 0 : ret;
		}
	free(tried);
	return ret;
}

int plan_g10(struct plan *p, const struct lt_step *s, const struct plan_cfg *c,
             struct llmio_error *e)
{
	struct plan_ctx x;
	int ret = plan_ctx_init(&x, s, c, p, e);

	if (ret)
		return ret;
	ret = select_evictions(&x, e);
	if (!ret)
		ret = prefetch_early(&x, e);
	if (!ret)
		ret = run_time_guide(&x, e);
	plan_ctx_release(&x);
	return ret;
}

static int build(struct plan *p, const struct lt_step *s, const struct plan_cfg *c,
                 struct llmio_error *e)
{
	return plan_g10(p, s, c, e);
}

const struct plan_policy policy_g10 = {
        .name = "g10",
        .summary = "G10: evict what most reduces the over-budget area, long idle to SSD",
        .build = build,
};
