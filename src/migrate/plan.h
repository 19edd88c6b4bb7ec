/* SPDX-License-Identifier: MIT */
/*
 * The migration planner (issue 18): a plan moves tensors of one step between the fast tier
 * (accelerator memory, `budget` bytes), a host tier and an SSD tier so that the fast tier never
 * holds more than its budget, and says when each transfer is issued and by when it must be done.
 * Policies (policy_*.c, one file each) build plans; plan_check() proves the invariants; and
 * plan_simulate() runs a plan through a bandwidth model, as G10's simulator does.
 *
 * Time is in kernels of the step (struct lt_step).  A transfer with issue_k = i is issued when
 * kernel i-1 has finished (before kernel i starts); deadline_k = d means it must be complete
 * before kernel d starts (d = nkernels: before the next step).  An eviction (PLAN_OUT) keeps
 * the tensor's fast memory until its deadline; a fetch (PLAN_IN) takes fast memory from its
 * issue.  A tensor that lives across steps may start the step offloaded (plan.start_tier) and
 * must end it where it started, so the plan repeats step after step.
 */
#ifndef LLMIO_STORE_PLAN_H
#define LLMIO_STORE_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "migrate/lifetime.h"

enum plan_tier { PLAN_FAST, PLAN_HOST, PLAN_SSD, PLAN_NTIERS };
enum plan_dir { PLAN_OUT, PLAN_IN };

struct plan_tier_spec {
	double gbps;           /* bandwidth each way, GB/s (decimal): what the planner books */
	double read_gbps;      /* as measured each way, for the simulation (0: gbps); a disk */
	double write_gbps;     /* writes and reads at different rates (the calibration) */
	uint64_t read_lat_ns;  /* per transfer, fetch */
	uint64_t write_lat_ns; /* per transfer, evict */
	uint64_t capacity;     /* host: bytes it can hold (0: no host tier); SSD: unlimited */
};

/* Unified memory's fault-handling rate from the host, GB/s (G10's Base UVM): the bytes the
 * kernels of G10's BERT-256 and ViT-1280 steps touch over the time G10's profiles add when every
 * touch faults (docs/migration.md; test_plan's fault_rate_derivation redoes it). */
#define PLAN_FAULT_GBPS 2.56

struct plan_cfg {
	uint64_t budget;                         /* fast tier */
	struct plan_tier_spec tier[PLAN_NTIERS]; /* [PLAN_HOST], [PLAN_SSD] */
	double margin;                           /* G10's delta: 2 x round trip x (1 + margin) */
	uint32_t lookahead;                      /* prefetch-lru: kernels ahead */
	/* How an execution runs, for its simulation (both off: G10's model).  ssd_one_queue: the
	 * SSD's reads and writes share one device, as the tensor store runs them through one I/O
	 * thread, and the fetches go ahead of the evictions queued as the store's gets do (also:
	 * the planner books one bandwidth for both); kernel_late_ns: added to every kernel, the
	 * emulated kernels' late wake-ups. */
	bool ssd_one_queue;
	uint64_t kernel_late_ns;
	/* Unified memory's fault handling (G10's Base UVM): a fetch a kernel faulted on
	 * (plan_xfer.fault) moves at this rate from the host, GB/s, and from the SSD at this rate x
	 * the host's latency / the SSD's (at most the SSD's bandwidth), G10's performance_model();
	 * 0: at the tier's bandwidth (an execution: the tensor store has no faults). */
	double fault_gbps;
};

/* G10's defaults (genconfigs.py): PCIe 15.754 GB/s, SSD 3.2 GB/s, latencies 12/16 us plus
 * 45 us of system latency, 128 GB of host memory, delta 0.5; lookahead 1 kernel; faults at
 * PLAN_FAULT_GBPS. */
void plan_cfg_init(struct plan_cfg *c, uint64_t budget);

struct plan_xfer {
	uint32_t tensor;
	uint8_t dir;   /* enum plan_dir */
	uint8_t tier;  /* PLAN_HOST or PLAN_SSD */
	uint8_t fault; /* a fetch the kernel faulted on (lru's on-demand misses): cfg.fault_gbps */
	uint64_t bytes;
	uint32_t issue_k, deadline_k;
	uint64_t issue_ns, deadline_ns; /* on the ideal timeline */
};

struct plan {
	char policy[24];
	char origin[64]; /* where a policy chose among plans of its own: which one ("" else) */
	uint64_t budget;
	struct plan_xfer *x;
	size_t n, cap;
	uint8_t *start_tier; /* per tensor: where a tensor that lives across steps starts */
	uint32_t ntensors;
};

int plan_init(struct plan *p, const char *policy, const struct lt_step *s, uint64_t budget,
              struct llmio_error *e);
void plan_release(struct plan *p);
int plan_add(struct plan *p, const struct lt_step *s, uint32_t tensor, enum plan_dir dir,
             enum plan_tier tier, uint32_t issue_k, uint32_t deadline_k, struct llmio_error *e);
/* Order the transfers (issue, deadline, tensor, direction): plans compare byte for byte. */
void plan_sort(struct plan *p);

/* Write the plan as text (docs/migration.md, "Plan files"): its policy and budget, the tensors
 * that start the step offloaded, then one line per transfer.  -EIO when the stream fails. */
int plan_write(const struct plan *p, const struct lt_step *s, FILE *f);

/*
 * The invariants: at every kernel the fast tier holds at most the budget and the host tier at
 * most its capacity; every tensor is in the fast tier when a kernel uses it; a fetch finds
 * its tensor offloaded, an eviction finds it resident; tensors that live across steps end the
 * step where they started.  -ENOSPC naming the tensor and the kernel (and its ideal time) that
 * break it; 0 when the plan holds.
 */
int plan_check(const struct plan *p, const struct lt_step *s, const struct plan_cfg *c,
               struct llmio_error *e);

struct plan_sim {
	double step_s, compute_s, stall_s, overlap_s;
	double ratio;                   /* ideal step / step: 1 = as fast as unlimited memory */
	uint64_t bytes[PLAN_NTIERS][2]; /* [tier][PLAN_OUT / PLAN_IN] */
	uint64_t transfers;
	uint64_t peak_fast; /* highest fast-tier occupancy at any kernel */
};

/*
 * Run the plan through a bandwidth model: each tier has one channel per direction (the SSD one
 * for both with c->ssd_one_queue, where a fetch goes ahead of the evictions queued unless its
 * own tensor's is one of them); a transfer
 * takes latency + bytes / bandwidth and starts when it is issued and its channel is free; a
 * kernel starts when the previous one ended and the transfers due before it are complete (the
 * wait is stall).  Overlap is the time transfers run while a kernel computes.
 */
int plan_simulate(const struct plan *p, const struct lt_step *s, const struct plan_cfg *c,
                  struct plan_sim *out, struct llmio_error *e);

/* ---- what the policies share ---- */

struct plan_ctx {
	const struct lt_step *s;
	const struct plan_cfg *c;
	struct plan *p;
	uint64_t *mem;                   /* fast-tier bytes at each kernel (nkernels + 1) */
	uint64_t *host;                  /* host-tier bytes at each kernel */
	double *bw_left[PLAN_NTIERS][2]; /* bytes each channel can still move during kernel k */
	struct lt_interval *iv;
	size_t niv;
	struct plan_window *win; /* per interval: what plan_try_interval() did, to undo it */
};

struct plan_window {
	bool done;
	uint8_t tier;
	long f, p;  /* fast memory freed over virtual kernels [f, p) */
	size_t out; /* index of its eviction in the plan (the fetch follows) */
};

int plan_ctx_init(struct plan_ctx *x, const struct lt_step *s, const struct plan_cfg *c,
                  struct plan *p, struct llmio_error *e);
void plan_ctx_release(struct plan_ctx *x);
/* Highest fast-tier occupancy, and the first kernel that reaches it. */
uint64_t plan_ctx_peak(const struct plan_ctx *x, uint32_t *at);

/* How to offload an interval. */
enum {
	PLAN_TRY_RULE = 1,      /* only when idle > 2 x round trip x (1 + margin) (G10) */
	PLAN_TRY_BANDWIDTH = 2, /* book the tier's remaining bandwidth; refuse when it lacks */
	PLAN_TRY_AT_USE = 4,    /* without PLAN_TRY_BANDWIDTH: fetch at the use (widest window) */
	PLAN_TRY_DEFICIT = 8,   /* without PLAN_TRY_BANDWIDTH: only over the kernels over budget */
};
/* Without PLAN_TRY_BANDWIDTH the eviction is due before the kernel after the interval's start
 * (it may stall) and the fetch is booked to land in time where the bandwidth left allows, else
 * issued at the use (which waits for it). */
/* Evict tensor iv->tensor after iv->after and fetch it back before iv->before, through tier t:
 * book the transfers, lower the fast-tier curve over the window between them, add them to the
 * plan.  1 when the interval cannot be offloaded so (nothing changed), 0 done, -errno. */
int plan_try_interval(struct plan_ctx *x, const struct lt_interval *iv, enum plan_tier t,
                      unsigned flags, struct llmio_error *e);
/* G10's rule for tier t: is the interval longer than the round trip (latencies + 2 x bytes /
 * bandwidth) x (1 + margin)? */
bool plan_rule_holds(const struct plan_ctx *x, const struct lt_interval *iv, enum plan_tier t);
/* What plan_try_interval(x, iv, t, PLAN_TRY_RULE | PLAN_TRY_BANDWIDTH) would do, nothing
 * changed: 0 with the window of fast memory it would free (virtual kernels [*f, *pv)), 1 when
 * it would refuse. */
int plan_probe_interval(struct plan_ctx *x, const struct lt_interval *iv, enum plan_tier t, long *f,
                        long *pv);
/* The same without the rule: what plan_try_interval(x, iv, t, PLAN_TRY_BANDWIDTH) would do. */
int plan_probe_bandwidth(struct plan_ctx *x, const struct lt_interval *iv, enum plan_tier t,
                         long *f, long *pv);
/* Take back what plan_try_interval() did for iv (not the bandwidth it booked: a later
 * booking sees less than there is, never more).  The plan's two transfers are marked dead
 * (tensor UINT32_MAX) and dropped by plan_build(). */
void plan_undo_interval(struct plan_ctx *x, const struct lt_interval *iv);
/* Can tier t hold the tensor over the interval (the host: within its capacity)? */
bool plan_tier_room(const struct plan_ctx *x, const struct lt_interval *iv, enum plan_tier t);
/* Offload the interval through tier t with the window already chosen: fast memory freed over
 * virtual kernels [f, pv), the eviction issued after iv->after and due before f, the fetch
 * issued at pv and due before iv->before; what plan_try_interval() does once it has chosen
 * (no bandwidth booked).  0 or -errno. */
int plan_place_interval(struct plan_ctx *x, const struct lt_interval *iv, enum plan_tier t, long f,
                        long pv, struct llmio_error *e);
/* The tensor's longest inactive interval (an activation's: forward to backward), or NULL. */
const struct lt_interval *plan_longest_interval(const struct plan_ctx *x, uint32_t tensor);
/* Is a kernel of the interval over the budget (one outside the window it already has)? */
bool plan_interval_helps(const struct plan_ctx *x, const struct lt_interval *iv);

/* The policies. */
struct plan_policy {
	const char *name;
	const char *summary;
	int (*build)(struct plan *p, const struct lt_step *s, const struct plan_cfg *c,
	             struct llmio_error *e);
};
extern const struct plan_policy policy_lru, policy_prefetch_lru, policy_ssdtrain,
        policy_flashneuron, policy_g10, policy_g10_lite;
size_t plan_policy_count(void);
const struct plan_policy *plan_policy_at(size_t i);
const struct plan_policy *plan_policy_find(const char *name);

/* Build with policy pol, then check: what every caller wants. */
int plan_build(struct plan *p, const struct plan_policy *pol, const struct lt_step *s,
               const struct plan_cfg *c, struct llmio_error *e);

/* Drop the transfers a policy took back, sort the rest and prove the invariants (what
 * plan_build() does after the policy): for a policy that builds plans of its own to compare. */
int plan_finish(struct plan *p, const struct lt_step *s, const struct plan_cfg *c,
                struct llmio_error *e);

/* LRU eviction on demand, fetching `lookahead` kernels ahead (0: on demand); policy_lru.c. */
int plan_lru(struct plan *p, const struct lt_step *s, const struct plan_cfg *c, uint32_t lookahead,
             struct llmio_error *e);

/* One of g10-lite's own plans (policy_g10_lite.c), into p as plan_lru() does: variant 0 sorts
 * once by bytes x idle time (forced evictions of whole intervals); PLAN_G10_BELADY orders kernel
 * by kernel, farthest next use first; PLAN_G10_DEFICIT sizes forced evictions to the deficit.
 * Policy g10-lite simulates them all and keeps the one that stalls least. */
enum { PLAN_G10_DEFICIT = 1, PLAN_G10_BELADY = 2, PLAN_G10_VARIANTS = 4 };
int plan_g10_lite(struct plan *p, const struct lt_step *s, const struct plan_cfg *c,
                  unsigned variant, struct llmio_error *e);

/* G10's algorithm (policy_g10.c) into p: the over-budget area re-scored after each eviction,
 * SSD for the long intervals and host memory for the shorter ones, then the run-time guide. */
int plan_g10(struct plan *p, const struct lt_step *s, const struct plan_cfg *c,
             struct llmio_error *e);

#endif
