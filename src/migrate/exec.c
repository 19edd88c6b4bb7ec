/* SPDX-License-Identifier: MIT */
/*
 * Executing a migration plan (exec.h).  One thread drives the step: before kernel k it issues
 * the transfers the plan issues there and waits for those due there (the wait is that kernel's
 * stall), then "computes" by sleeping the kernel's duration while the store's I/O thread moves
 * the bytes; completions come as store events, read when the store's eventfd wakes us, so a
 * transfer's end is seen when it happens, not at the next kernel boundary.
 */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <sys/prctl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/error.h"
#include "migrate/exec.h"

#define EXEC_ALIGN 4096

struct run {
	const struct plan *p;
	const struct lt_step *s;
	struct llmio_store *st;
	int efd;
	void **fast, **host; /* per tensor: its fast-tier buffer, its host-tier copy */
	uint64_t *handle;    /* per tensor: its copy in the store, 0 when none */
	uint64_t *xh;        /* per transfer: the store handle it moves */
	uint8_t *done;       /* per transfer */
	size_t *infl, ninfl; /* transfers in the store now */
	bool computing;      /* a kernel is being emulated: transfers now overlap it */
	uint64_t last_ns;    /* when overlap was last accounted */
	double overlap_s;
	volatile int *stop; /* may be NULL */
};

static bool stopped(const struct run *x)
{
	return x->stop && *x->stop;
}

/* How long a wait may block before it looks at the stop flag again: a signal that lands just
 * before ppoll() would otherwise wait for the next event. */
#define STOP_POLL_NS 50000000u

static void *alloc_buf(uint64_t bytes)
{
	size_t n = (size_t)((bytes + EXEC_ALIGN - 1) / EXEC_ALIGN * EXEC_ALIGN);
	void *b = aligned_alloc(EXEC_ALIGN, n);

	if (b)
		memset(b, 0x5a, n); /* touched now: no page faults inside the timed step */
	return b;
}

static void account(struct run *x, uint64_t now)
{
	if (x->computing && x->ninfl)
		x->overlap_s += (double)(now - x->last_ns) / 1e9;
	x->last_ns = now;
}

/* Block until the store has an event or `until` (UINT64_MAX: no limit) passes. */
static void sleep_events(int efd, uint64_t until)
{
	struct pollfd pfd = {.fd = efd, .events = POLLIN};
	struct timespec ts, *tp = NULL;

	if (until != UINT64_MAX) {
		uint64_t now = now_ns(), left = until > now ? until - now : 0;

		ts.tv_sec = (time_t)(left / 1000000000u);
		ts.tv_nsec = (long)(left % 1000000000u);
		tp = &ts;
	}
	(void)ppoll(&pfd, 1, tp, NULL); /* EINTR: the caller looks again */
}

/* Read the store's events: mark the transfers they end; a fetched tensor's store copy is
 * released (its next eviction writes it again). */
static int drain(struct run *x, struct llmio_error *e)
{
	struct llmio_store_event ev[64];
	int n, ret = 0;

	account(x, now_ns());
	while ((n = llmio_store_poll(x->st, ev, 64)) > 0) {
		for (int i = 0; i < n; i++) {
			size_t j = 0;

			for (; j < x->ninfl; j++) {
				const struct plan_xfer *t = &x->p->x[x->infl[j]];

				if (x->xh[x->infl[j]] == ev[i].handle &&
				    (ev[i].type == LLMIO_STORE_EV_ERROR ||
				     (t->dir == PLAN_OUT) == (ev[i].type == LLMIO_STORE_EV_PUT)))
					break;
			}
			if (j == x->ninfl)
				continue; /* not a transfer of this step's */
			size_t k = x->infl[j];
			const struct plan_xfer *t = &x->p->x[k];
			const char *name = x->s->tensors[t->tensor].name;

			x->done[k] = 1; /* also a failure: it is no longer in flight */
			x->infl[j] = x->infl[--x->ninfl];
			if (ev[i].type == LLMIO_STORE_EV_ERROR || ev[i].res) {
				int res = ev[i].res ? ev[i].res : -EIO;

				if (!ret) /* the first failure is the step's; the rest still land */
					ret = llmio_err(e, res,
					                "the store failed to %s tensor '%s' (%llu "
					                "bytes): %s",
					                t->dir == PLAN_OUT ? "evict" : "fetch",
					                name, (unsigned long long)t->bytes,
					                strerror(-res));
			} else if (t->dir == PLAN_IN) {
				int rr = llmio_store_release(x->st, x->handle[t->tensor],
				                             ret ? NULL : e);

				x->handle[t->tensor] = 0;
				ret = ret ? ret : rr;
			}
		}
	}
	if (n < 0 && !ret)
		ret = llmio_err(e, n, "cannot read the store's events: %s", strerror(-n));
	return ret;
}

/* Issue transfer i: SSD through the store (its end comes as an event), host by copying. */
static int issue(struct run *x, size_t i, struct llmio_error *e)
{
	const struct plan_xfer *t = &x->p->x[i];
	void *fast = x->fast[t->tensor];
	int ret;

	if (t->tier == PLAN_HOST) {
		if (t->dir == PLAN_OUT)
			memcpy(x->host[t->tensor], fast, (size_t)t->bytes);
		else
			memcpy(fast, x->host[t->tensor], (size_t)t->bytes);
		x->done[i] = 1;
		return 0;
	}
	if (t->dir == PLAN_OUT) {
		/* the fast buffer is not written while it is borrowed: nothing computes on it */
		ret = llmio_store_put(x->st, fast, t->bytes, LLMIO_STORE_BORROW,
		                      &x->handle[t->tensor], e);
	} else if (!x->handle[t->tensor]) {
		return llmio_err(e, -EINVAL, "tensor '%s' is fetched from the SSD but is not there",
		                 x->s->tensors[t->tensor].name);
	} else {
		ret = llmio_store_get(x->st, x->handle[t->tensor], fast, t->bytes, false, e);
	}
	if (ret)
		return llmio_err_prefix(e, "tensor '%s'", x->s->tensors[t->tensor].name);
	x->xh[i] = x->handle[t->tensor];
	x->infl[x->ninfl++] = i;
	return 0;
}

static int cmp_deadline(const void *a, const void *b, void *arg)
{
	const struct plan *p = arg;
	uint32_t x = p->x[*(const size_t *)a].deadline_k, y = p->x[*(const size_t *)b].deadline_k;

	return x < y ? -1 : x > y;
}

/* The tensors that start the step offloaded are put there before the step (untimed). */
static int place(struct run *x, struct llmio_error *e)
{
	size_t pending = 0;
	int ret = 0;

	for (uint32_t i = 0; i < x->p->ntensors && !ret; i++) {
		if (x->p->start_tier[i] == PLAN_HOST)
			memcpy(x->host[i], x->fast[i], (size_t)x->s->tensors[i].bytes);
		else if (x->p->start_tier[i] == PLAN_SSD &&
		         !(ret = llmio_store_put(x->st, x->fast[i], x->s->tensors[i].bytes,
		                                 LLMIO_STORE_BORROW, &x->handle[i], e)))
			pending++;
	}
	if (!ret && pending)
		ret = llmio_store_flush(x->st, e);
	while (!ret && pending) { /* consume their events: the step's are its own */
		struct llmio_store_event ev[64];
		int n = llmio_store_poll(x->st, ev, 64);

		if (n < 0)
			return llmio_err(e, n, "cannot read the store's events: %s", strerror(-n));
		if (!n)
			sleep_events(x->efd, UINT64_MAX);
		pending -= (size_t)n < pending ? (size_t)n : pending;
	}
	return ret;
}

/* Every buffer is touched before the step: refuse a step whose buffers would take more than
 * half of this machine's memory (the OOM killer would answer, not malloc). */
static int check_memory(const struct plan *p, const struct lt_step *s, struct llmio_error *e)
{
	uint8_t *seen = calloc(s->ntensors ? s->ntensors : 1, 1);
	uint64_t need = 0,
	         phys = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);

	if (!seen)
		return llmio_err(e, -ENOMEM, "out of memory for a plan's execution");
	for (size_t i = 0; i < p->n; i++) {
		const struct plan_xfer *t = &p->x[i];
		uint8_t bit = t->tier == PLAN_HOST ? 2 : 1;

		if (!(seen[t->tensor] & 1))
			need += t->bytes;
		if (bit == 2 && !(seen[t->tensor] & 2))
			need += t->bytes;
		seen[t->tensor] |= (uint8_t)(1 | bit);
	}
	for (uint32_t i = 0; i < p->ntensors; i++)
		if (p->start_tier[i] != PLAN_FAST && !(seen[i] & 1))
			need += s->tensors[i].bytes;
	free(seen);
	if (phys && need > phys / 2)
		return llmio_err(e, -ENOMEM,
		                 "the %s plan moves tensors needing %.2f GB of buffers, more than "
		                 "half of this machine's %.2f GB: use a smaller --scale",
		                 p->policy, (double)need / 1e9, (double)phys / 1e9);
	return 0;
}

static int alloc_run(struct run *x, const struct plan *p, const struct lt_step *s,
                     struct llmio_error *e)
{
	const size_t T = s->ntensors ? s->ntensors : 1, X = p->n ? p->n : 1;
	int ret;

	x->fast = calloc(T, sizeof(*x->fast));
	x->host = calloc(T, sizeof(*x->host));
	x->handle = calloc(T, sizeof(*x->handle));
	x->xh = calloc(X, sizeof(*x->xh));
	x->done = calloc(X, 1);
	x->infl = calloc(X, sizeof(*x->infl));
	if (!x->fast || !x->host || !x->handle || !x->xh || !x->done || !x->infl)
		return llmio_err(e, -ENOMEM, "out of memory for a plan's execution");
	ret = check_memory(p, s, e);
	if (ret)
		return ret;
	/* buffers for what moves: the fast tier's copy, and a host copy where the host holds it */
	for (size_t i = 0; i < p->n; i++) {
		const struct plan_xfer *t = &p->x[i];

		if (!x->fast[t->tensor] && !(x->fast[t->tensor] = alloc_buf(t->bytes)))
			goto nomem;
		if (t->tier == PLAN_HOST && !x->host[t->tensor] &&
		    !(x->host[t->tensor] = alloc_buf(t->bytes)))
			goto nomem;
	}
	for (uint32_t i = 0; i < p->ntensors; i++)
		if (p->start_tier[i] != PLAN_FAST && !x->fast[i] &&
		    !(x->fast[i] = alloc_buf(s->tensors[i].bytes)))
			goto nomem;
	return 0;
nomem:
	return llmio_err(e, -ENOMEM,
	                 "out of memory for the tensors' buffers: use a smaller --scale");
}

static void free_run(struct run *x, uint32_t ntensors)
{
	for (uint32_t i = 0; x->fast && i < ntensors; i++) {
		free(x->fast[i]);
		free(x->host[i]);
	}
	free(x->fast);
	free(x->host);
	free(x->handle);
	free(x->xh);
	free(x->done);
	free(x->infl);
}

/* Wait for every transfer due before kernel k; the wait is its stall. */
static int meet_deadlines(struct run *x, const size_t *byd, size_t *d, uint32_t k,
                          struct plan_exec *r, struct llmio_error *e)
{
	const size_t first = *d;
	int ret = 0;

	while (*d < x->p->n && x->p->x[byd[*d]].deadline_k == k)
		++*d;
	for (size_t j = first; j < *d && !ret; j++) {
		size_t i = byd[j];

		while (!x->done[i] && !(ret = drain(x, e)) && !x->done[i]) {
			r->stall_tensor[k] = x->p->x[i].tensor;
			if (stopped(x))
				return -EINTR;
			sleep_events(x->efd, x->stop ? now_ns() + STOP_POLL_NS : UINT64_MAX);
		}
	}
	return ret;
}

int plan_execute(const struct plan *p, const struct lt_step *s, struct llmio_store *st,
                 struct plan_exec *r, struct llmio_error *e)
{
	return plan_execute_stop(p, s, st, NULL, r, e);
}

int plan_execute_stop(const struct plan *p, const struct lt_step *s, struct llmio_store *st,
                      volatile int *stop, struct plan_exec *r, struct llmio_error *e)
{
	const uint32_t N = s->nkernels;
	struct run x = {.p = p, .s = s, .st = st, .efd = llmio_store_eventfd(st), .stop = stop};
	size_t *byd = NULL, d = 0, i = 0;
	uint64_t t0, t;
	int ret, slack;

	memset(r, 0, sizeof(*r));
	if (x.efd < 0)
		return llmio_err(e, x.efd, "the store has no event descriptor");
	r->stall_s = calloc((size_t)N + 1, sizeof(*r->stall_s));
	r->stall_tensor = malloc(((size_t)N + 1) * sizeof(*r->stall_tensor));
	byd = malloc((p->n ? p->n : 1) * sizeof(*byd));
	if (!r->stall_s || !r->stall_tensor || !byd) {
		ret = llmio_err(e, -ENOMEM, "out of memory for a plan's execution");
		goto out;
	}
	for (uint32_t k = 0; k <= N; k++)
		r->stall_tensor[k] = UINT32_MAX;
	for (size_t j = 0; j < p->n; j++)
		byd[j] = j;
	qsort_r(byd, p->n, sizeof(*byd), cmp_deadline, (void *)p);
	ret = alloc_run(&x, p, s, e);
	if (!ret)
		ret = place(&x, e);
	/* the default 50 us of timer slack would lengthen every emulated kernel */
	slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
	(void)prctl(PR_SET_TIMERSLACK, 1, 0, 0, 0);
	t0 = t = x.last_ns = now_ns();
	for (uint32_t k = 0; k <= N && !ret; k++) {
		uint64_t end;

		/* the plan is sorted by issue: the transfers issued before kernel k are next */
		for (; i < p->n && p->x[i].issue_k == k && !ret; i++) {
			ret = issue(&x, i, e);
			r->m.bytes[p->x[i].tier][p->x[i].dir] += p->x[i].bytes;
			r->m.transfers++;
		}
		if (!ret)
			ret = meet_deadlines(&x, byd, &d, k, r, e);
		if (ret)
			break;
		end = now_ns();
		r->stall_s[k] = (double)(end - t) / 1e9;
		r->m.stall_s += r->stall_s[k];
		if (r->stall_s[k] > 0 && r->stall_tensor[k] != UINT32_MAX)
			r->stalled_kernels++;
		if (k == N) {
			t = end;
			break;
		}
		/* compute: the kernel's duration, reading completions as they come; what was in
		 * flight before it started (the stall above) overlapped nothing */
		account(&x, end);
		x.computing = true;
		end += s->kernels[k].dur_ns;
		while (!ret && (t = now_ns()) < end) {
			sleep_events(x.efd,
			             stop && end - t > STOP_POLL_NS ? t + STOP_POLL_NS : end);
			ret = stopped(&x) ? -EINTR : drain(&x, e);
		}
		/* a wake-up late past `end` is the emulated kernel running long, not stall */
		account(&x, t);
		x.computing = false;
	}
	if (slack > 0)
		(void)prctl(PR_SET_TIMERSLACK, (unsigned long)slack, 0, 0, 0);
	if (!ret) {
		r->m.step_s = (double)(t - t0) / 1e9;
		r->late_s = r->m.step_s - r->m.stall_s - (double)s->start_ns[N] / 1e9;
		r->m.compute_s = (double)s->start_ns[N] / 1e9;
		r->m.ratio = r->m.step_s > 0 ? r->m.compute_s / r->m.step_s : 1;
		r->m.overlap_s = x.overlap_s;
	}
	/* after a failure, what is still in flight lands before its buffers go: every store
	 * operation ends with an event, failed or not */
	while (x.ninfl) {
		(void)drain(&x, NULL);
		if (x.ninfl)
			sleep_events(x.efd, now_ns() + 1000000);
	}
out:
	for (uint32_t k = 0; x.handle && k < p->ntensors; k++)
		if (x.handle[k])
			llmio_store_release(st, x.handle[k], NULL);
	free_run(&x, p->ntensors);
	free(byd);
	return ret;
}

void plan_exec_release(struct plan_exec *r)
{
	free(r->stall_s);
	free(r->stall_tensor);
	memset(r, 0, sizeof(*r));
}

/* ---- calibration ---- */

static int wait_put(struct llmio_store *st, uint64_t h, struct llmio_error *e)
{
	int efd = llmio_store_eventfd(st);

	for (;;) {
		struct llmio_store_event ev[16];
		int n = llmio_store_poll(st, ev, 16);

		if (n < 0)
			return llmio_err(e, n, "cannot read the store's events: %s", strerror(-n));
		for (int i = 0; i < n; i++)
			if (ev[i].handle == h)
				return ev[i].type == LLMIO_STORE_EV_PUT && !ev[i].res
				               ? 0
				               : llmio_err(e, ev[i].res ? ev[i].res : -EIO,
				                           "calibrating the SSD tier: a write "
				                           "failed: %s",
				                           strerror(ev[i].res ? -ev[i].res : EIO));
		if (!n)
			sleep_events(efd, UINT64_MAX);
	}
}

/* One put (to its event) and one get of len bytes: their times in ns. */
static int round_trip(struct llmio_store *st, void *buf, uint64_t len, uint64_t *w, uint64_t *r,
                      struct llmio_error *e)
{
	uint64_t h, t = now_ns();
	int ret = llmio_store_put(st, buf, len, LLMIO_STORE_BORROW, &h, e);

	if (!ret)
		ret = wait_put(st, h, e);
	*w = now_ns() - t;
	t = now_ns();
	if (!ret)
		ret = llmio_store_get(st, h, buf, len, true, e);
	*r = now_ns() - t;
	if (!ret)
		ret = llmio_store_release(st, h, e);
	return ret ? llmio_err_prefix(e, "calibrating the SSD tier") : 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Wait for n events of type `type` (puts or gets of the calibration); the first failure. */
static int wait_events(struct llmio_store *st, uint32_t n, int type, struct llmio_error *e)
{
	int efd = llmio_store_eventfd(st), ret = 0;

	while (n) {
		struct llmio_store_event ev[64];
		int got = llmio_store_poll(st, ev, 64);

		if (got < 0)
			return llmio_err(e, got, "cannot read the store's events: %s",
			                 strerror(-got));
		for (int i = 0; i < got; i++, n -= n ? 1 : 0)
			if (!ret && (ev[i].type != type || ev[i].res))
				ret = llmio_err(e, ev[i].res ? ev[i].res : -EIO,
				                "calibrating the SSD tier: a %s failed: %s",
				                type == LLMIO_STORE_EV_PUT ? "write" : "read",
				                strerror(ev[i].res ? -ev[i].res : EIO));
		if (!got && n)
			sleep_events(efd, UINT64_MAX);
	}
	return ret;
}

/* The size that carries the step's bytes: half of them are in tensors at least this large
 * (the byte-weighted median).  What a plan moves is mostly those; the many tiny tensors (biases,
 * norms) would make a burst of latencies. */
static uint64_t carrying_size(const struct lt_step *s)
{
	uint64_t *b = malloc((s->ntensors ? s->ntensors : 1) * sizeof(*b)), all = 0, acc = 0, m = 0;

	if (!b)
		return 0; /* every size then */
	for (uint32_t i = 0; i < s->ntensors; i++)
		all += b[i] = s->tensors[i].bytes;
	qsort(b, s->ntensors, sizeof(*b), cmp_u64);
	for (uint32_t i = s->ntensors; i-- > 0 && acc * 2 < all;) {
		acc += b[i];
		m = b[i];
	}
	free(b);
	return m;
}

/* The step's tensor sizes in its order (cycling), those that carry its bytes
 * (carrying_size()), as many as fit in `bytes` (at least one):
 * put back to back, each its own put as the step's evictions are, then got back the same way.
 * *total and *n: what moved; *tw, *tr: the two bursts' times in ns. */
static int burst(struct llmio_store *st, const struct lt_step *s, uint64_t bytes, uint64_t *total,
                 uint32_t *n, uint64_t *tw, uint64_t *tr, struct llmio_error *e)
{
	enum { MAXN = 1024 };
	uint64_t *h = calloc(MAXN, sizeof(*h)), *len = calloc(MAXN, sizeof(*len)), big = 0, t, min;
	void *buf = NULL;
	uint32_t i = 0;
	int ret = 0;

	*total = 0;
	*n = 0;
	if (!h || !len)
		goto nomem;
	min = carrying_size(s);
	for (uint32_t seen = 0; *n < MAXN && s->ntensors; seen++) {
		uint64_t b = s->tensors[i].bytes;

		if (b < min && seen < 2 * s->ntensors) { /* a step of tiny tensors only: all */
			i = (i + 1) % s->ntensors;
			continue;
		}
		if (*n && *total + b > bytes)
			break;
		len[(*n)++] = b;
		*total += b;
		big = b > big ? b : big;
		i = (i + 1) % s->ntensors;
	}
	if (!*n || !(buf = alloc_buf(big)))
		goto nomem;
	/* one buffer for all: the bytes do not matter, their sizes and their number do */
	t = now_ns();
	for (uint32_t j = 0; j < *n && !ret; j++)
		ret = llmio_store_put(st, buf, len[j], LLMIO_STORE_BORROW, &h[j], e);
	if (!ret) /* their events, not a flush: the step does not sync either */
		ret = wait_events(st, *n, LLMIO_STORE_EV_PUT, e);
	*tw = now_ns() - t;
	t = now_ns();
	for (uint32_t j = 0; j < *n && !ret; j++)
		ret = llmio_store_get(st, h[j], buf, len[j], false, e);
	if (!ret)
		ret = wait_events(st, *n, LLMIO_STORE_EV_GOT, e);
	*tr = now_ns() - t;
	for (uint32_t j = 0; j < *n; j++)
		if (h[j])
			llmio_store_release(st, h[j], NULL);
	free(buf);
	free(h);
	free(len);
	return ret ? llmio_err_prefix(e, "calibrating the SSD tier") : 0;
nomem:
	free(h);
	free(len);
	return llmio_err(e, -ENOMEM, "out of memory for a calibration of %llu bytes",
	                 (unsigned long long)bytes);
}

/* Bandwidth from a burst of n transfers in time t: the model charges each its latency, but
 * the device overlaps some of them; count them at most for half the burst. */
static double burst_gbps(uint64_t total, uint32_t n, uint64_t t, uint64_t lat)
{
	uint64_t lats = (uint64_t)n * lat, d = lats < t / 2 ? t - lats : t - t / 2;

	return (double)total / (double)(d ? d : 1);
}

int plan_calibrate(struct llmio_store *st, const struct lt_step *s, uint64_t bytes,
                   struct plan_tier_spec *ssd, struct llmio_error *e)
{
	enum { ROUNDS = 9 };
	uint64_t w[ROUNDS], r[ROUNDS], bw, br, total;
	void *buf = alloc_buf(bytes > EXEC_ALIGN && !s ? bytes : EXEC_ALIGN);
	uint32_t n;
	int ret = 0;

	if (!buf)
		return llmio_err(e, -ENOMEM, "out of memory for a calibration buffer of %llu bytes",
		                 (unsigned long long)bytes);
	for (int i = 0; i < ROUNDS && !ret; i++)
		ret = round_trip(st, buf, EXEC_ALIGN, &w[i], &r[i], e);
	if (!ret && !s)
		ret = round_trip(st, buf, bytes, &bw, &br, e);
	free(buf);
	if (ret)
		return ret;
	qsort(w, ROUNDS, sizeof(*w), cmp_u64);
	qsort(r, ROUNDS, sizeof(*r), cmp_u64);
	ssd->write_lat_ns = w[ROUNDS / 2];
	ssd->read_lat_ns = r[ROUNDS / 2];
	if (s) {
		ret = burst(st, s, bytes, &total, &n, &bw, &br, e);
		if (ret)
			return ret;
		/* the planner books one bandwidth each way: the slower one, so that both fit;
		 * the simulation moves each way at its own */
		ssd->write_gbps = burst_gbps(total, n, bw, ssd->write_lat_ns);
		ssd->read_gbps = burst_gbps(total, n, br, ssd->read_lat_ns);
		ssd->gbps = fmin(ssd->write_gbps, ssd->read_gbps);
		return 0;
	}
	/* the plan has one bandwidth each way: the slower one, so that both directions fit */
	bw = bw > ssd->write_lat_ns ? bw - ssd->write_lat_ns : 1;
	br = br > ssd->read_lat_ns ? br - ssd->read_lat_ns : 1;
	ssd->write_gbps = (double)bytes / (double)bw;
	ssd->read_gbps = (double)bytes / (double)br;
	ssd->gbps = fmin(ssd->write_gbps, ssd->read_gbps);
	return 0;
}

uint64_t plan_timer_late_ns(uint64_t sleep_ns)
{
	enum { ROUNDS = 15 };
	uint64_t late[ROUNDS];
	int slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);

	(void)prctl(PR_SET_TIMERSLACK, 1, 0, 0, 0); /* as plan_execute() runs */
	for (int i = 0; i < ROUNDS; i++) {
		uint64_t until = now_ns() + sleep_ns, t;

		while ((t = now_ns()) < until) {
			struct timespec ts = {.tv_sec = (time_t)((until - t) / 1000000000u),
			                      .tv_nsec = (long)((until - t) % 1000000000u)};

			(void)ppoll(NULL, 0, &ts, NULL); /* the executor's timer, without its fd */
		}
		late[i] = t - until;
	}
	if (slack > 0)
		(void)prctl(PR_SET_TIMERSLACK, (unsigned long)slack, 0, 0, 0);
	qsort(late, ROUNDS, sizeof(*late), cmp_u64);
	return late[ROUNDS / 2];
}
