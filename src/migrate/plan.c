/* SPDX-License-Identifier: MIT */
/*
 * Plans: their transfers, the invariants (plan_check), the bandwidth-model simulation
 * (plan_simulate), the policy table and what the policies share (the fast-tier curve, the
 * bandwidth each tier has left per kernel, offloading one inactive interval).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/error.h"
#include "migrate/plan.h"

static const struct plan_policy *const policies[] = {
        &policy_lru,         &policy_prefetch_lru, &policy_ssdtrain,
        &policy_flashneuron, &policy_g10,          &policy_g10_lite,
};

size_t plan_policy_count(void)
{
	return sizeof(policies) / sizeof(policies[0]);
}

const struct plan_policy *plan_policy_at(size_t i)
{
	return i < plan_policy_count() ? policies[i] : NULL;
}

const struct plan_policy *plan_policy_find(const char *name)
{
	for (size_t i = 0; i < plan_policy_count(); i++)
		if (!strcasecmp(policies[i]->name, name))
			return policies[i];
	return NULL;
}

void plan_cfg_init(struct plan_cfg *c, uint64_t budget)
{
	memset(c, 0, sizeof(*c));
	c->budget = budget;
	c->tier[PLAN_HOST] = (struct plan_tier_spec){.gbps = 15.754,
	                                             .read_lat_ns = 45000,
	                                             .write_lat_ns = 45000,
	                                             .capacity = 128ull << 30};
	c->tier[PLAN_SSD] = (struct plan_tier_spec){
	        .gbps = 3.2, .read_lat_ns = 57000, .write_lat_ns = 61000, .capacity = 0};
	c->margin = 0.5;
	c->lookahead = 1;
	c->fault_gbps = PLAN_FAULT_GBPS;
}

int plan_init(struct plan *p, const char *policy, const struct lt_step *s, uint64_t budget,
              struct llmio_error *e)
{
	memset(p, 0, sizeof(*p));
	snprintf(p->policy, sizeof(p->policy), "%s", policy);
	p->budget = budget;
	p->ntensors = s->ntensors;
	p->start_tier = calloc(s->ntensors ? s->ntensors : 1, 1);
	if (!p->start_tier)
		return llmio_err(e, -ENOMEM, "out of memory for a plan");
	return 0;
}

void plan_release(struct plan *p)
{
	free(p->x);
	free(p->start_tier);
	memset(p, 0, sizeof(*p));
}

int plan_add(struct plan *p, const struct lt_step *s, uint32_t tensor, enum plan_dir dir,
             enum plan_tier tier, uint32_t issue_k, uint32_t deadline_k, struct llmio_error *e)
{
	struct plan_xfer *x;

	if (p->n == p->cap) {
		size_t c = p->cap ? p->cap * 2 : 256;

		x = realloc(p->x, c * sizeof(*x));
		if (!x)
			return llmio_err(e, -ENOMEM, "out of memory for %zu transfers", c);
		p->x = x;
		p->cap = c;
	}
	p->x[p->n++] = (struct plan_xfer){
	        .tensor = tensor,
	        .dir = (uint8_t)dir,
	        .tier = (uint8_t)tier,
	        .bytes = s->tensors[tensor].bytes,
	        .issue_k = issue_k,
	        .deadline_k = deadline_k,
	        .issue_ns = s->start_ns[issue_k],
	        .deadline_ns = s->start_ns[deadline_k],
	};
	return 0;
}

static int cmp_xfer(const void *a, const void *b)
{
	const struct plan_xfer *x = a, *y = b;

	if (x->issue_k != y->issue_k)
		return x->issue_k < y->issue_k ? -1 : 1;
	if (x->deadline_k != y->deadline_k)
		return x->deadline_k < y->deadline_k ? -1 : 1;
	if (x->tensor != y->tensor)
		return x->tensor < y->tensor ? -1 : 1;
	return (int)x->dir - (int)y->dir;
}

void plan_sort(struct plan *p)
{
	if (p->n)
		qsort(p->x, p->n, sizeof(*p->x), cmp_xfer);
}

static const char *const tier_names[PLAN_NTIERS] = {"fast", "host", "ssd"};

int plan_write(const struct plan *p, const struct lt_step *s, FILE *f)
{
	fprintf(f, "policy %s budget %llu\n", p->policy, (unsigned long long)p->budget);
	for (uint32_t i = 0; i < p->ntensors; i++)
		if (p->start_tier[i] != PLAN_FAST)
			fprintf(f, "start %s %s\n", s->tensors[i].name,
			        tier_names[p->start_tier[i]]);
	for (size_t i = 0; i < p->n; i++) {
		const struct plan_xfer *x = &p->x[i];

		fprintf(f, "xfer %s %s %s %llu %u %u %.3f %.3f%s\n", s->tensors[x->tensor].name,
		        x->dir == PLAN_OUT ? "out" : "in", tier_names[x->tier],
		        (unsigned long long)x->bytes, x->issue_k, x->deadline_k,
		        (double)x->issue_ns / 1e3, (double)x->deadline_ns / 1e3,
		        x->fault ? " fault" : "");
	}
	return ferror(f) ? -EIO : 0;
}

/* ---- buckets: items grouped by a kernel index 0..nk ---- */

struct buckets {
	uint32_t *off; /* nk + 2 */
	uint32_t *idx;
};

static int buckets_make(struct buckets *b, uint32_t nk, size_t n,
                        uint32_t (*key)(const void *, size_t), const void *arg)
{
	uint32_t *fill;

	b->off = calloc((size_t)nk + 2, sizeof(*b->off));
	b->idx = calloc(n ? n : 1, sizeof(*b->idx));
	fill = calloc((size_t)nk + 2, sizeof(*fill));
	if (!b->off || !b->idx || !fill) {
		free(fill);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		b->off[key(arg, i) + 1]++;
	for (uint32_t k = 0; k <= nk; k++)
		b->off[k + 1] += b->off[k];
	for (size_t i = 0; i < n; i++) {
		uint32_t k = key(arg, i);

		b->idx[b->off[k] + fill[k]++] = (uint32_t)i;
	}
	free(fill);
	return 0;
}

static void buckets_free(struct buckets *b)
{
	free(b->off);
	free(b->idx);
}

static uint32_t key_issue(const void *arg, size_t i)
{
	return ((const struct plan *)arg)->x[i].issue_k;
}

static uint32_t key_deadline(const void *arg, size_t i)
{
	return ((const struct plan *)arg)->x[i].deadline_k;
}

/* ---- the invariants ---- */

enum { GONE, HERE, COMING, AWAY };

static void over_budget(const struct lt_step *s, const uint8_t *st, uint32_t k, uint64_t mem,
                        uint64_t budget, struct llmio_error *e)
{
	uint32_t big = UINT32_MAX;
	bool used_here = false;

	for (uint32_t i = 0; i < s->ntensors; i++)
		if ((st[i] == HERE || st[i] == COMING) &&
		    (big == UINT32_MAX || s->tensors[i].bytes > s->tensors[big].bytes))
			big = i;
	if (big != UINT32_MAX && k < s->nkernels) {
		const struct lt_tensor *t = &s->tensors[big];

		for (uint32_t j = 0; j < t->nuses; j++)
			used_here |= lt_uses(s, t)[j] == k;
	}
	llmio_err(e, -ENOSPC,
	          "the fast tier holds %llu bytes at kernel %u (%s, t=%.3f ms), over the budget of "
	          "%llu: tensor '%s' (%llu bytes%s) cannot be moved out of the way then",
	          (unsigned long long)mem, k, k < s->nkernels ? s->kernels[k].name : "step end",
	          (double)s->start_ns[k] / 1e6, (unsigned long long)budget,
	          big != UINT32_MAX ? s->tensors[big].name : "?",
	          big != UINT32_MAX ? (unsigned long long)s->tensors[big].bytes : 0ull,
	          used_here ? ", used by that kernel" : "");
}

/* A tensor touched at a kernel: its uses, its creation, its last touch. */
struct tk {
	uint32_t t, k;
};

static uint32_t key_tk(const void *arg, size_t i)
{
	return ((const struct tk *)arg)[i].k;
}

/* Every use, every creation and every last touch of a tensor that dies within the step. */
static int touches(const struct lt_step *s, struct tk **tu, size_t *nu, struct tk **tc, size_t *nc,
                   struct tk **tl, size_t *nl)
{
	*nu = *nc = *nl = 0;
	*tu = calloc(s->nuses ? s->nuses : 1, sizeof(**tu));
	*tc = calloc(s->ntensors ? s->ntensors : 1, sizeof(**tc));
	*tl = calloc(s->ntensors ? s->ntensors : 1, sizeof(**tl));
	if (!*tu || !*tc || !*tl)
		return -ENOMEM;
	for (uint32_t i = 0; i < s->ntensors; i++) {
		const struct lt_tensor *t = &s->tensors[i];

		for (uint32_t j = 0; j < t->nuses; j++)
			(*tu)[(*nu)++] = (struct tk){i, lt_uses(s, t)[j]};
		if (t->created == LT_PERSISTENT)
			continue;
		(*tc)[(*nc)++] = (struct tk){i, t->created};
		(*tl)[(*nl)++] = (struct tk){i, lt_last_event(s, t)};
	}
	return 0;
}

/* The transfers in direction d issued and due at the boundary before kernel k. */
static int boundary(const struct plan *p, const struct lt_step *s, const struct buckets *bi,
                    const struct buckets *bd, uint32_t k, int d, uint8_t *st, uint8_t *tier,
                    uint64_t *mem, uint64_t *host, struct llmio_error *e)
{
	for (uint32_t j = bi->off[k]; j < bi->off[k + 1]; j++) {
		const struct plan_xfer *x = &p->x[bi->idx[j]];
		const struct lt_tensor *t = &s->tensors[x->tensor];

		if (x->dir != d)
			continue;
		if (d == PLAN_OUT && st[x->tensor] != HERE)
			return llmio_err(
			        e, -ENOSPC,
			        "eviction of tensor '%s' at kernel %u finds it not resident",
			        t->name, k);
		if (d == PLAN_IN) {
			if (st[x->tensor] != AWAY || tier[x->tensor] != x->tier)
				return llmio_err(
				        e, -ENOSPC,
				        "fetch of tensor '%s' at kernel %u finds it not in the "
				        "tier it reads from",
				        t->name, k);
			st[x->tensor] = COMING;
			*mem += t->bytes;
		}
	}
	for (uint32_t j = bd->off[k]; j < bd->off[k + 1]; j++) {
		const struct plan_xfer *x = &p->x[bd->idx[j]];
		const struct lt_tensor *t = &s->tensors[x->tensor];

		if (x->dir != d)
			continue;
		if (d == PLAN_OUT) {
			st[x->tensor] = AWAY;
			tier[x->tensor] = x->tier;
			*mem -= t->bytes;
			*host += x->tier == PLAN_HOST ? t->bytes : 0;
		} else {
			st[x->tensor] = HERE;
			*host -= x->tier == PLAN_HOST ? t->bytes : 0;
		}
	}
	return 0;
}

/* Replay the plan kernel by kernel; *peak = highest fast-tier occupancy. */
static int replay(const struct plan *p, const struct lt_step *s, const struct plan_cfg *c,
                  uint64_t *peak, struct llmio_error *e)
{
	const uint32_t N = s->nkernels;
	struct buckets bi = {0}, bd = {0}, bu = {0}, bc = {0}, bl = {0};
	struct tk *tu = NULL, *tc = NULL, *tl = NULL;
	size_t nu, nc, nl;
	uint64_t mem = 0, host = 0;
	uint8_t *st = calloc(s->ntensors ? s->ntensors : 1, 1);
	uint8_t *tier = calloc(s->ntensors ? s->ntensors : 1, 1);
	int ret = 0;

	*peak = 0;
	if (!st || !tier || touches(s, &tu, &nu, &tc, &nc, &tl, &nl) ||
	    buckets_make(&bi, N, p->n, key_issue, p) ||
	    buckets_make(&bd, N, p->n, key_deadline, p) || buckets_make(&bu, N, nu, key_tk, tu) ||
	    buckets_make(&bc, N, nc, key_tk, tc) || buckets_make(&bl, N, nl, key_tk, tl)) {
		ret = llmio_err(e, -ENOMEM, "out of memory checking a plan");
		goto out;
	}
	for (size_t i = 0; i < p->n; i++) {
		const struct plan_xfer *x = &p->x[i];

		if (x->tensor >= s->ntensors || x->issue_k > N || x->deadline_k > N ||
		    x->deadline_k < x->issue_k || (x->tier != PLAN_HOST && x->tier != PLAN_SSD)) {
			ret = llmio_err(e, -EINVAL, "transfer %zu of the plan is malformed", i);
			goto out;
		}
	}
	for (uint32_t i = 0; i < s->ntensors; i++)
		if (s->tensors[i].created == LT_PERSISTENT) {
			tier[i] = p->start_tier[i];
			st[i] = tier[i] == PLAN_FAST ? HERE : AWAY;
			if (st[i] == HERE)
				mem += s->tensors[i].bytes;
			else if (tier[i] == PLAN_HOST)
				host += s->tensors[i].bytes;
		}
	for (uint32_t k = 0; k <= N; k++) {
		/* evictions first (issued, then due), then fetches (issued, then landed): a
		 * tensor evicted and fetched at one kernel boundary went out before it came back */
		for (int d = PLAN_OUT; d <= PLAN_IN && !ret; d++)
			ret = boundary(p, s, &bi, &bd, k, d, st, tier, &mem, &host, e);
		if (ret)
			goto out;
		for (uint32_t j = k < N ? bc.off[k] : 0; k < N && j < bc.off[k + 1]; j++) {
			uint32_t i = tc[bc.idx[j]].t;

			st[i] = HERE;
			mem += s->tensors[i].bytes;
		}
		if (mem > *peak)
			*peak = mem;
		if (mem > p->budget) {
			over_budget(s, st, k, mem, p->budget, e);
			ret = -ENOSPC;
			goto out;
		}
		if (host > c->tier[PLAN_HOST].capacity) {
			ret = llmio_err(
			        e, -ENOSPC,
			        "the host tier holds %llu bytes at kernel %u, over its %llu",
			        (unsigned long long)host, k,
			        (unsigned long long)c->tier[PLAN_HOST].capacity);
			goto out;
		}
		if (k == N)
			break;
		for (uint32_t j = bu.off[k]; j < bu.off[k + 1]; j++) {
			const struct lt_tensor *t = &s->tensors[tu[bu.idx[j]].t];

			if (st[tu[bu.idx[j]].t] != HERE) {
				ret = llmio_err(e, -ENOSPC,
				                "tensor '%s' is not resident when kernel %u (%s, "
				                "t=%.3f ms) uses it",
				                t->name, k, s->kernels[k].name,
				                (double)s->start_ns[k] / 1e6);
				goto out;
			}
		}
		/* what this kernel touched for the last time dies */
		for (uint32_t j = bl.off[k]; j < bl.off[k + 1]; j++) {
			uint32_t i = tl[bl.idx[j]].t;

			if (st[i] == HERE) {
				st[i] = GONE;
				mem -= s->tensors[i].bytes;
			}
		}
	}
	for (uint32_t i = 0; i < s->ntensors; i++)
		if (s->tensors[i].created == LT_PERSISTENT &&
		    (st[i] == HERE) != (p->start_tier[i] == PLAN_FAST)) {
			ret = llmio_err(
			        e, -ENOSPC,
			        "tensor '%s' ends the step %s but started it %s: the plan does "
			        "not repeat",
			        s->tensors[i].name, st[i] == HERE ? "resident" : "offloaded",
			        p->start_tier[i] == PLAN_FAST ? "resident" : "offloaded");
			goto out;
		}
out:
	buckets_free(&bu);
	buckets_free(&bc);
	buckets_free(&bl);
	free(tu);
	free(tc);
	free(tl);
	buckets_free(&bi);
	buckets_free(&bd);
	free(st);
	free(tier);
	return ret;
}

int plan_check(const struct plan *p, const struct lt_step *s, const struct plan_cfg *c,
               struct llmio_error *e)
{
	uint64_t peak;
	int ret = replay(p, s, c, &peak, e);

	return ret ? llmio_err_prefix(e, "policy %s cannot run in %llu bytes", p->policy,
	                              (unsigned long long)p->budget)
	           : 0;
}

int plan_build(struct plan *p, const struct plan_policy *pol, const struct lt_step *s,
               const struct plan_cfg *c, struct llmio_error *e)
{
	int ret = plan_init(p, pol->name, s, c->budget, e);

	if (!ret)
		ret = pol->build(p, s, c, e);
	if (!ret)
		ret = plan_finish(p, s, c, e);
	return ret ? llmio_err_prefix(e, "policy %s cannot run in %llu bytes", pol->name,
	                              (unsigned long long)c->budget)
	           : 0;
}

int plan_finish(struct plan *p, const struct lt_step *s, const struct plan_cfg *c,
                struct llmio_error *e)
{
	uint64_t peak;
	size_t n = 0;

	for (size_t i = 0; i < p->n; i++) /* drop what a policy took back */
		if (p->x[i].tensor != UINT32_MAX)
			p->x[n++] = p->x[i];
	p->n = n;
	plan_sort(p);
	return replay(p, s, c, &peak, e);
}

/* ---- the bandwidth model ---- */

struct span {
	double a, b;
};

static int cmp_span(const void *x, const void *y)
{
	const struct span *p = x, *q = y;

	return p->a < q->a ? -1 : p->a > q->a;
}

static double xfer_seconds(const struct plan_cfg *c, const struct plan_xfer *x)
{
	const struct plan_tier_spec *t = &c->tier[x->tier];
	uint64_t lat = x->dir == PLAN_OUT ? t->write_lat_ns : t->read_lat_ns;

	if (x->fault && c->fault_gbps > 0) {
		/* G10's fault model: the rate already holds the fault handling's latency; a
		 * fault served from the SSD waits for the SSD's latency on top of the system's */
		const struct plan_tier_spec *h = &c->tier[PLAN_HOST];
		double gbps = c->fault_gbps;

		if (x->tier == PLAN_SSD && t->read_lat_ns > h->read_lat_ns)
			gbps *= (double)h->read_lat_ns / (double)t->read_lat_ns;
		if (gbps > t->gbps)
			gbps = t->gbps;
		return (double)x->bytes / (gbps * 1e9);
	}
	double gbps = x->dir == PLAN_OUT ? t->write_gbps : t->read_gbps;

	return (double)lat / 1e9 + (double)x->bytes / ((gbps > 0 ? gbps : t->gbps) * 1e9);
}

/*
 * The tensor store's SSD queue (c->ssd_one_queue): one device, and the store starts its reads
 * ahead of the writes queued (docs/store.md, "Operation order").  Whenever the device is free it
 * takes the oldest fetch, unless that fetch's tensor is still being evicted (the store's get
 * waits for its put, and the fetches behind it wait too), else the oldest eviction; and serves
 * it whole (what is in flight is not taken back).
 */
struct ssdq {
	double t; /* the device is busy until then */
	size_t *rd, *wr;
	size_t rh, rn, wh, wn;
	size_t *dep;  /* per transfer: the eviction a fetch waits for, or SIZE_MAX */
	uint8_t *fin; /* per transfer: started (its end is known) */
	size_t *last; /* per tensor: its latest SSD eviction queued, or SIZE_MAX */
	double *arr;  /* per transfer: when it was issued */
};

/* Start what the device can start before T (want == SIZE_MAX), or until transfer want has
 * started (nothing else arrives meanwhile): each one's end in end[], its span in xs. */
static void ssdq_run(struct ssdq *q, const struct plan_cfg *c, const struct plan *p, double T,
                     size_t want, double *end, struct span *xs, size_t *nx)
{
	while (want == SIZE_MAX || !q->fin[want]) {
		bool rd = q->rh < q->rn &&
		          (q->dep[q->rd[q->rh]] == SIZE_MAX || q->fin[q->dep[q->rd[q->rh]]]);
		size_t j;
		double start;

		if (!rd && q->wh == q->wn)
			return; /* idle (a blocked fetch's eviction is always queued or started) */
		j = rd ? q->rd[q->rh] : q->wr[q->wh];
		start = q->t > q->arr[j] ? q->t : q->arr[j];
		if (want == SIZE_MAX && start >= T)
			return; /* what arrives at T may come first */
		if (rd)
			q->rh++;
		else
			q->wh++;
		q->fin[j] = 1;
		end[j] = q->t = start + xfer_seconds(c, &p->x[j]);
		xs[(*nx)++] = (struct span){start, end[j]};
	}
}

int plan_simulate(const struct plan *p, const struct lt_step *s, const struct plan_cfg *c,
                  struct plan_sim *out, struct llmio_error *e)
{
	const uint32_t N = s->nkernels;
	struct buckets bi = {0}, bd = {0};
	struct span *xs = NULL, *ks = NULL;
	double *end = NULL, chan[PLAN_NTIERS][2] = {{0}}, t = 0;
	struct ssdq q = {0};
	size_t nx = 0, np = p->n ? p->n : 1;
	int ret;

	memset(out, 0, sizeof(*out));
	ret = replay(p, s, c, &out->peak_fast, e);
	if (ret)
		return llmio_err_prefix(e, "policy %s cannot run in %llu bytes", p->policy,
		                        (unsigned long long)p->budget);
	end = calloc(np, sizeof(*end));
	xs = calloc(np, sizeof(*xs));
	ks = calloc(N, sizeof(*ks));
	if (c->ssd_one_queue) {
		q.rd = calloc(np, sizeof(*q.rd));
		q.wr = calloc(np, sizeof(*q.wr));
		q.dep = calloc(np, sizeof(*q.dep));
		q.fin = calloc(np, 1);
		q.arr = calloc(np, sizeof(*q.arr));
		q.last = malloc((s->ntensors ? s->ntensors : 1) * sizeof(*q.last));
		if (q.last)
			for (uint32_t i = 0; i < s->ntensors; i++)
				q.last[i] = SIZE_MAX;
	}
	if (!end || !xs || !ks || buckets_make(&bi, N, p->n, key_issue, p) ||
	    buckets_make(&bd, N, p->n, key_deadline, p) ||
	    (c->ssd_one_queue && (!q.rd || !q.wr || !q.dep || !q.fin || !q.arr || !q.last))) {
		ret = llmio_err(e, -ENOMEM, "out of memory simulating a plan");
		goto out;
	}
	for (uint32_t k = 0; k <= N; k++) {
		double ready = t;

		if (c->ssd_one_queue)
			ssdq_run(&q, c, p, t, SIZE_MAX, end, xs, &nx);
		for (uint32_t j = bi.off[k]; j < bi.off[k + 1]; j++) {
			const size_t i = bi.idx[j];
			const struct plan_xfer *x = &p->x[i];
			double *ch = &chan[x->tier][x->dir], start = *ch > t ? *ch : t;

			out->bytes[x->tier][x->dir] += x->bytes;
			out->transfers++;
			if (x->tier == PLAN_SSD && c->ssd_one_queue) {
				q.arr[i] = t;
				if (x->dir == PLAN_OUT) {
					q.wr[q.wn++] = i;
					q.last[x->tensor] = i;
				} else {
					q.dep[i] = q.last[x->tensor];
					q.rd[q.rn++] = i;
				}
				continue;
			}
			end[i] = *ch = start + xfer_seconds(c, x);
			xs[nx++] = (struct span){start, *ch};
		}
		for (uint32_t j = bd.off[k]; j < bd.off[k + 1]; j++) {
			if (c->ssd_one_queue && p->x[bd.idx[j]].tier == PLAN_SSD)
				ssdq_run(&q, c, p, INFINITY, bd.idx[j], end, xs, &nx);
			if (end[bd.idx[j]] > ready)
				ready = end[bd.idx[j]];
		}
		out->stall_s += ready - t;
		if (k == N) {
			t = ready;
			break;
		}
		ks[k] = (struct span){
		        ready, ready + (double)(s->kernels[k].dur_ns + c->kernel_late_ns) / 1e9};
		t = ks[k].b;
	}
	out->step_s = t;
	out->compute_s = (double)s->start_ns[N] / 1e9;
	out->ratio = out->step_s > 0 ? out->compute_s / out->step_s : 1;
	/* overlap: the union of transfer spans that falls inside kernels */
	qsort(xs, nx, sizeof(*xs), cmp_span);
	for (size_t i = 0, k = 0; i < nx;) {
		struct span u = xs[i++];

		while (i < nx && xs[i].a <= u.b) {
			if (xs[i].b > u.b)
				u.b = xs[i].b;
			i++;
		}
		while (k < N && ks[k].b <= u.a)
			k++;
		for (size_t j = k; j < N && ks[j].a < u.b; j++) {
			double a = fmax(u.a, ks[j].a), b = fmin(u.b, ks[j].b);

			if (b > a)
				out->overlap_s += b - a;
		}
	}
out:
	buckets_free(&bi);
	buckets_free(&bd);
	free(end);
	free(xs);
	free(ks);
	free(q.rd);
	free(q.wr);
	free(q.dep);
	free(q.fin);
	free(q.arr);
	free(q.last);
	return ret;
}

/* ---- what the policies share ---- */

int plan_ctx_init(struct plan_ctx *x, const struct lt_step *s, const struct plan_cfg *c,
                  struct plan *p, struct llmio_error *e)
{
	const uint32_t N = s->nkernels;
	int ret;

	memset(x, 0, sizeof(*x));
	x->s = s;
	x->c = c;
	x->p = p;
	x->mem = calloc((size_t)N + 1, sizeof(*x->mem));
	x->host = calloc((size_t)N + 1, sizeof(*x->host));
	if (!x->mem || !x->host)
		goto nomem;
	for (int t = PLAN_HOST; t < PLAN_NTIERS; t++)
		for (int d = 0; d < 2; d++) {
			if (t == PLAN_SSD && d == PLAN_IN && c->ssd_one_queue) {
				/* one queue: what a fetch books an eviction no longer has */
				x->bw_left[t][d] = x->bw_left[t][PLAN_OUT];
				continue;
			}
			x->bw_left[t][d] = calloc(N, sizeof(double));
			if (!x->bw_left[t][d])
				goto nomem;
			for (uint32_t k = 0; k < N; k++)
				x->bw_left[t][d][k] = (double)s->kernels[k].dur_ns *
				                      c->tier[t].gbps; /* ns x GB/s = B */
		}
	/* the curve as differences: +bytes where a tensor appears, -bytes after its last touch */
	for (uint32_t i = 0; i < s->ntensors; i++) {
		const struct lt_tensor *t = &s->tensors[i];

		if (t->created == LT_PERSISTENT) {
			x->mem[0] += t->bytes;
			continue;
		}
		x->mem[t->created] += t->bytes;
		x->mem[lt_last_event(s, t) + 1] -= t->bytes; /* unsigned: wraps, then adds back */
	}
	for (uint32_t k = 1; k <= N; k++)
		x->mem[k] += x->mem[k - 1];
	ret = lt_intervals(s, &x->iv, &x->niv, e);
	if (ret) {
		plan_ctx_release(x);
		return ret;
	}
	x->win = calloc(x->niv ? x->niv : 1, sizeof(*x->win));
	if (!x->win)
		goto nomem;
	return 0;
nomem:
	plan_ctx_release(x);
	return llmio_err(e, -ENOMEM, "out of memory planning %u kernels", N);
}

void plan_ctx_release(struct plan_ctx *x)
{
	free(x->mem);
	free(x->host);
	for (int t = 0; t < PLAN_NTIERS; t++)
		for (int d = 0; d < 2; d++)
			if (d == PLAN_OUT || x->bw_left[t][d] != x->bw_left[t][PLAN_OUT])
				free(x->bw_left[t][d]);
	free(x->iv);
	free(x->win);
	memset(x, 0, sizeof(*x));
}

uint64_t plan_ctx_peak(const struct plan_ctx *x, uint32_t *at)
{
	uint64_t peak = 0;

	*at = 0;
	for (uint32_t k = 0; k <= x->s->nkernels; k++)
		if (x->mem[k] > peak) {
			peak = x->mem[k];
			*at = k;
		}
	return peak;
}

/* The interval as virtual kernels [v0, vb): a wrapping one continues into the next step. */
static void vrange(const struct plan_ctx *x, const struct lt_interval *iv, uint32_t *v0,
                   uint32_t *vb)
{
	*v0 = iv->after + 1;
	*vb = iv->before + (iv->wraps ? x->s->nkernels : 0);
}

bool plan_interval_helps(const struct plan_ctx *x, const struct lt_interval *iv)
{
	const uint32_t N = x->s->nkernels;
	uint32_t v0, vb;

	const struct plan_window *w = &x->win[iv - x->iv];

	vrange(x, iv, &v0, &vb);
	for (uint32_t v = v0; v < vb; v++)
		if (x->mem[v % N] > x->c->budget && !(w->done && (long)v >= w->f && (long)v < w->p))
			return true;
	return false;
}

/* Book `need` bytes on channel (t, d) walking from v by step (+1/-1) while inside [lo, hi);
 * returns the first virtual kernel not touched (forward) or the last one touched (backward),
 * or -1 when the bandwidth there is not enough.  commit: take it. */
static long book(struct plan_ctx *x, int t, int d, long v, int step, long lo, long hi, double need,
                 bool commit)
{
	const long N = x->s->nkernels;

	for (; need > 0 && v >= lo && v < hi; v += step) {
		double *left = &x->bw_left[t][d][v % N], take = *left < need ? *left : need;

		need -= take;
		if (commit)
			*left -= take;
	}
	if (need > 0)
		return -1;
	return step > 0 ? v : v + 1;
}

/* The window the bandwidth left gives interval iv through tier t (the eviction booked forward
 * from its start, the fetch backward from its use), nothing booked: 1 when it has none. */
static int bandwidth_window(struct plan_ctx *x, const struct lt_interval *iv, enum plan_tier t,
                            long *f, long *pv)
{
	const struct lt_tensor *tt = &x->s->tensors[iv->tensor];
	const struct plan_tier_spec *ts = &x->c->tier[t];
	const long N = x->s->nkernels;
	double bw = ts->gbps * 1e9;
	uint32_t v0, vb;

	vrange(x, iv, &v0, &vb);
	*f = book(x, t, PLAN_OUT, v0, 1, v0, vb,
	          (double)tt->bytes + (double)ts->write_lat_ns / 1e9 * bw, false);
	if (*f < 0)
		return 1;
	*pv = book(x, t, PLAN_IN, (long)vb - 1, -1, *f, vb,
	           (double)tt->bytes + (double)ts->read_lat_ns / 1e9 * bw, false);
	if (*pv < 0 || *f >= *pv || (iv->wraps && (*f > N || *pv < N)))
		return 1;
	return plan_tier_room(x, iv, t) ? 0 : 1;
}

bool plan_rule_holds(const struct plan_ctx *x, const struct lt_interval *iv, enum plan_tier t)
{
	const struct plan_tier_spec *ts = &x->c->tier[t];
	double bw = ts->gbps * 1e9, trip;

	trip = ((double)(ts->write_lat_ns + ts->read_lat_ns) / 1e9 * bw +
	        2.0 * (double)x->s->tensors[iv->tensor].bytes) /
	       bw;
	return (double)iv->idle_ns / 1e9 > trip * (1 + x->c->margin);
}

int plan_probe_interval(struct plan_ctx *x, const struct lt_interval *iv, enum plan_tier t, long *f,
                        long *pv)
{
	if (!plan_rule_holds(x, iv, t))
		return 1;
	return bandwidth_window(x, iv, t, f, pv);
}

int plan_probe_bandwidth(struct plan_ctx *x, const struct lt_interval *iv, enum plan_tier t,
                         long *f, long *pv)
{
	return bandwidth_window(x, iv, t, f, pv);
}

int plan_try_interval(struct plan_ctx *x, const struct lt_interval *iv, enum plan_tier t,
                      unsigned flags, struct llmio_error *e)
{
	const struct lt_tensor *tt = &x->s->tensors[iv->tensor];
	const struct plan_tier_spec *ts = &x->c->tier[t];
	const long N = x->s->nkernels;
	double bw = ts->gbps * 1e9, out_need, in_need;
	uint32_t v0, vb;
	long f, pv;

	vrange(x, iv, &v0, &vb);
	out_need = (double)tt->bytes + (double)ts->write_lat_ns / 1e9 * bw;
	in_need = (double)tt->bytes + (double)ts->read_lat_ns / 1e9 * bw;
	if ((flags & PLAN_TRY_RULE) && !plan_rule_holds(x, iv, t))
		return 1;
	if (flags & PLAN_TRY_BANDWIDTH) {
		if (bandwidth_window(x, iv, t, &f, &pv))
			return 1;
	} else if (flags & PLAN_TRY_DEFICIT) {
		/* sized to the deficit: away over the kernels of the interval that are over the
		 * budget only, the write due before the first of them (it has until then), the
		 * fetch as late as the bandwidth left allows after the last, else right after it
		 * (it may stall, but less than at the use) */
		long first = -1, last = -1;

		for (long v = v0; v < (long)vb; v++)
			if (x->mem[v % N] > x->c->budget) {
				first = first < 0 ? v : first;
				last = v;
			}
		if (first < 0)
			return 1;
		if (iv->wraps) { /* the window must hold the step boundary (start_tier) */
			first = first < N ? first : N;
			last = last >= N ? last : N - 1;
		}
		f = first;
		pv = book(x, t, PLAN_IN, (long)vb - 1, -1, last + 1, vb, in_need, false);
		if (pv < 0)
			pv = last + 1;
		else
			book(x, t, PLAN_IN, (long)vb - 1, -1, last + 1, vb, in_need, true);
	} else {
		/* evicted before the next kernel (it may stall); fetched early enough where the
		 * bandwidth left allows, else at its use (which then waits) */
		f = v0;
		pv = flags & PLAN_TRY_AT_USE
		             ? -1
		             : book(x, t, PLAN_IN, (long)vb - 1, -1, f + 1, vb, in_need, false);
		if (pv < 0)
			pv = vb;
		else
			book(x, t, PLAN_IN, (long)vb - 1, -1, f + 1, vb, in_need, true);
	}
	if (f >= pv || (iv->wraps && (f > N || pv < N)))
		return 1;
	if (!plan_tier_room(x, iv, t))
		return 1;
	if (flags & PLAN_TRY_BANDWIDTH) {
		book(x, t, PLAN_OUT, v0, 1, v0, vb, out_need, true);
		book(x, t, PLAN_IN, (long)vb - 1, -1, f, vb, in_need, true);
	}
	return plan_place_interval(x, iv, t, f, pv, e);
}

bool plan_tier_room(const struct plan_ctx *x, const struct lt_interval *iv, enum plan_tier t)
{
	const struct plan_tier_spec *ts = &x->c->tier[t];
	const long N = x->s->nkernels;
	uint32_t v0, vb;

	if (t != PLAN_HOST)
		return true;
	if (!ts->capacity)
		return false; /* no host tier */
	vrange(x, iv, &v0, &vb);
	for (long v = v0; v < (long)vb; v++)
		if (x->host[v % N] + x->s->tensors[iv->tensor].bytes > ts->capacity)
			return false;
	return true;
}

int plan_place_interval(struct plan_ctx *x, const struct lt_interval *iv, enum plan_tier t, long f,
                        long pv, struct llmio_error *e)
{
	const struct lt_tensor *tt = &x->s->tensors[iv->tensor];
	const long N = x->s->nkernels;
	uint32_t v0, vb;
	int ret;

	vrange(x, iv, &v0, &vb);
	if (t == PLAN_HOST)
		for (long v = v0; v < (long)vb; v++)
			x->host[v % N] += tt->bytes;
	for (long v = f; v < pv; v++)
		x->mem[v % N] -= tt->bytes;
	if (iv->wraps) {
		/* the window spans the step boundary: the step starts with the tensor away */
		x->mem[N] -= tt->bytes;
		x->p->start_tier[iv->tensor] = (uint8_t)t;
	}
	x->win[iv - x->iv] = (struct plan_window){
	        .done = true, .tier = (uint8_t)t, .f = f, .p = pv, .out = x->p->n};
	ret = plan_add(x->p, x->s, iv->tensor, PLAN_OUT, t, v0, (uint32_t)f, e);
	if (!ret)
		ret = plan_add(x->p, x->s, iv->tensor, PLAN_IN, t, (uint32_t)(pv % N), iv->before,
		               e);
	return ret;
}

void plan_undo_interval(struct plan_ctx *x, const struct lt_interval *iv)
{
	struct plan_window *w = &x->win[iv - x->iv];
	const uint64_t b = x->s->tensors[iv->tensor].bytes;
	const long N = x->s->nkernels;
	uint32_t v0, vb;

	if (!w->done)
		return;
	vrange(x, iv, &v0, &vb);
	if (w->tier == PLAN_HOST)
		for (long v = v0; v < (long)vb; v++)
			x->host[v % N] -= b;
	for (long v = w->f; v < w->p; v++)
		x->mem[v % N] += b;
	if (iv->wraps) {
		x->mem[N] += b;
		x->p->start_tier[iv->tensor] = PLAN_FAST;
	}
	x->p->x[w->out].tensor = UINT32_MAX;
	x->p->x[w->out + 1].tensor = UINT32_MAX;
	w->done = false;
}

const struct lt_interval *plan_longest_interval(const struct plan_ctx *x, uint32_t tensor)
{
	const struct lt_interval *best = NULL;

	for (size_t j = 0; j < x->niv; j++)
		if (x->iv[j].tensor == tensor && (!best || x->iv[j].idle_ns > best->idle_ns))
			best = &x->iv[j];
	return best;
}
