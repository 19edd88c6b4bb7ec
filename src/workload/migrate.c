/* SPDX-License-Identifier: MIT */
/*
 * Recipe `migrate` (issue 18): plan the migration of a training step's tensors between the
 * fast tier (--budget bytes of accelerator memory), host memory and the SSD with one policy or
 * all of them (src/migrate/plan.h), and with --simulate run each plan through the bandwidth model:
 * step time, compute, stall, overlap, bytes per tier and the ratio to the ideal step (no memory
 * limit), one phase per policy.  The step comes from --lifetimes FILE (the llmio-lifetimes line
 * format or a G10 operator graph) or from --model (the catalog).  Without --simulate each plan
 * also runs for real (src/migrate/exec.c): compute emulated by waiting each kernel's duration,
 * SSD transfers through the tensor store on the run's engine in --directory, host transfers
 * into memory this recipe holds; the SSD tier's bandwidth and latencies are first measured on
 * that store unless given.  Both records come side by side: simulate-POLICY and run-POLICY.
 */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "workload/lifetime_model.h"
#include "base/error.h"
#include "migrate/exec.h"
#include "migrate/plan.h"
#include "workload/workload.h"

/* A phase note, cut quietly at the note's size: the parts (engine, kernel and tensor names, the
 * tier line) are bounded, but the optimiser cannot prove the sum fits. */
__attribute__((format(printf, 3, 4))) static void note_set(char *note, size_t len, const char *fmt,
                                                           ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(note, len, fmt, ap);
	va_end(ap);
}

static const struct llmio_optdesc params[] = {
        WL_ENUM("policy", "lru|prefetch-lru|ssdtrain|flashneuron|g10|g10-lite|all", "all",
                "migration policy, or all side by side"),
        WL_PARAM("budget", OPTD_SIZE, 1, 0, "", "fast-tier (accelerator memory) bytes"),
        WL_PARAM("simulate", OPTD_UINT, 0, 1, "0",
                 "1: only the bandwidth model (no I/O); 0: also execute on the store in "
                 "--directory"),
        WL_PARAM("time_scale", OPTD_DOUBLE, 0, 0, "1",
                 "kernel durations x this (a small one makes deadlines hard to meet)"),
        WL_PARAM("calib_bytes", OPTD_SIZE, 4096, 0, "32m",
                 "execution: bytes of the SSD tier's bandwidth calibration"),
        WL_PARAM("stall_file", OPTD_STRING, 0, 0, "",
                 "execution: write each stalled kernel and its tensor to this new file"),
        WL_PARAM("lifetimes", OPTD_STRING, 0, 0, "",
                 "lifetimes file (llmio-lifetimes or a G10 graph); default: --model's step"),
        WL_PARAM("micro_batch", OPTD_UINT, 1, 1u << 20, "1", "model step: sequences per step"),
        WL_PARAM("seq", OPTD_UINT, 1, 1u << 24, "2048", "model step: tokens per sequence"),
        WL_PARAM("tp", OPTD_UINT, 1, 4096, "1", "model step: tensor-parallel degree"),
        WL_PARAM("dtype", OPTD_STRING, 0, 0, "",
                 "model step: weights, gradients and activations; default the model's"),
        WL_PARAM("tflops", OPTD_DOUBLE, 0, 0, "312",
                 "accelerator speed for kernel times (A100 bf16 dense: 312; FP32: 19.5)"),
        WL_PARAM("hbm_gbps", OPTD_DOUBLE, 0, 0, "1555",
                 "accelerator memory bandwidth for the optimizer kernels (A100-40GB: 1555)"),
        WL_PARAM("batch", OPTD_UINT, 1, 1u << 20, "256", "G10 graph: batch size (its 99s)"),
        WL_PARAM("compute_s", OPTD_DOUBLE, 0, 0, "0",
                 "G10 graph: scale kernel times to this much compute per step (0: FLOPs)"),
        WL_PARAM("host_bytes", OPTD_SIZE, 0, 0, "128g", "host tier capacity (0: no host tier)"),
        WL_PARAM("host_gbps", OPTD_DOUBLE, 0, 0, "15.754", "host tier bandwidth (PCIe), GB/s"),
        WL_PARAM("host_lat", OPTD_DURATION, 0, 0, "45us", "host tier latency per transfer"),
        WL_PARAM("ssd_gbps", OPTD_DOUBLE, 0, 0, "3.2", "SSD tier bandwidth, GB/s"),
        WL_PARAM("ssd_read_lat", OPTD_DURATION, 0, 0, "57us", "SSD latency per fetch"),
        WL_PARAM("ssd_write_lat", OPTD_DURATION, 0, 0, "61us", "SSD latency per eviction"),
        WL_PARAM("fault_gbps", OPTD_DOUBLE, 0, 0, "2.56",
                 "lru's misses: unified memory's fault-handling rate from the host, GB/s "
                 "(G10's profile; 0: the tier's bandwidth)"),
        WL_PARAM("margin", OPTD_DOUBLE, 0, 0, "0.5",
                 "g10: evict when idle > round trip x (1 + margin)"),
        WL_PARAM("lookahead", OPTD_UINT, 1, 1024, "1", "prefetch-lru: kernels fetched ahead"),
        WL_PARAM("plan_file", OPTD_STRING, 0, 0, "",
                 "write the plans to this new file (an existing one is never replaced)"),
        {.name = NULL},
};

/* Read the numeric parameters into the planner's configuration. */
static int read_cfg(struct wl *w, struct plan_cfg *c, struct llmio_error *e)
{
	uint64_t budget, host, hl, srl, swl, la;
	double hg, sg, margin, fault;
	int ret;

	if (!wl_str(w, "budget")[0])
		return llmio_err(e, -EINVAL,
		                 "workload migrate needs --budget BYTES (the fast tier)");
	if ((ret = wl_u64(w, "budget", &budget, e)) || (ret = wl_u64(w, "host_bytes", &host, e)) ||
	    (ret = wl_u64(w, "host_lat", &hl, e)) || (ret = wl_u64(w, "ssd_read_lat", &srl, e)) ||
	    (ret = wl_u64(w, "ssd_write_lat", &swl, e)) || (ret = wl_u64(w, "lookahead", &la, e)) ||
	    (ret = wl_double(w, "host_gbps", &hg, e)) || (ret = wl_double(w, "ssd_gbps", &sg, e)) ||
	    (ret = wl_double(w, "margin", &margin, e)) ||
	    (ret = wl_double(w, "fault_gbps", &fault, e)))
		return ret;
	if (!(hg > 0) || !(sg > 0) || !(margin >= 0) || !(fault >= 0))
		return llmio_err(
		        e, -EINVAL,
		        "--host_gbps and --ssd_gbps must be > 0, --margin and --fault_gbps "
		        ">= 0");
	plan_cfg_init(c, budget);
	c->tier[PLAN_HOST] = (struct plan_tier_spec){
	        .gbps = hg, .read_lat_ns = hl, .write_lat_ns = hl, .capacity = host};
	c->tier[PLAN_SSD] =
	        (struct plan_tier_spec){.gbps = sg, .read_lat_ns = srl, .write_lat_ns = swl};
	c->margin = margin;
	c->fault_gbps = fault;
	c->lookahead = (uint32_t)la;
	return 0;
}

static int read_step(struct wl *w, struct lt_step *s, struct llmio_error *e)
{
	struct llmio_error le = {0};
	uint64_t mb, seq, tp, batch;
	double tflops, hbm, total;
	int ret;

	if ((ret = wl_u64(w, "micro_batch", &mb, e)) || (ret = wl_u64(w, "seq", &seq, e)) ||
	    (ret = wl_u64(w, "tp", &tp, e)) || (ret = wl_u64(w, "batch", &batch, e)) ||
	    (ret = wl_double(w, "tflops", &tflops, e)) ||
	    (ret = wl_double(w, "hbm_gbps", &hbm, e)) ||
	    (ret = wl_double(w, "compute_s", &total, e)))
		return ret;
	if (!(tflops > 0) || !(hbm > 0))
		return llmio_err(e, -EINVAL, "--tflops and --hbm_gbps must be > 0");
	if (wl_str(w, "lifetimes")[0]) {
		struct lt_g10_opts g = {.batch = (uint32_t)batch,
		                        .tflops = tflops,
		                        .total_s = total,
		                        .elem_bytes = 4};

		ret = lt_read_file(s, wl_str(w, "lifetimes"), &g, &le);
	} else if (w->has_model) {
		enum llmio_dtype dt = w->model.dtype;
		struct lt_model_opts o = {.micro_batch = (uint32_t)mb,
		                          .seq = (uint32_t)seq,
		                          .tp = (uint32_t)tp,
		                          .dtype = dt,
		                          .tflops = tflops,
		                          .hbm_gbps = hbm};

		if (wl_str(w, "dtype")[0] && llmio_dtype_parse(wl_str(w, "dtype"), &o.dtype))
			return llmio_err(e, -EINVAL,
			                 "--dtype=%s is not one of fp32 bf16 fp16 fp8 int8",
			                 wl_str(w, "dtype"));
		ret = lt_from_model(s, &w->model, &o, &le);
	} else {
		return llmio_err(
		        e, -EINVAL,
		        "workload migrate needs --lifetimes FILE or --model NAME for the step");
	}
	/* a file that is not what it should be is the user's input: usage; one that cannot be
	 * read keeps its errno */
	if (ret)
		return llmio_err(e, ret == -E2BIG ? -EINVAL : ret, "%s", llmio_err_msg(&le));
	return 0;
}

static void sim_metrics(struct wl_phase *ph, const struct plan_sim *r, uint64_t budget)
{
	wl_metric(ph, "budget_bytes", (double)budget, "B");
	wl_metric(ph, "step_s", r->step_s, "s");
	wl_metric(ph, "compute_s", r->compute_s, "s");
	wl_metric(ph, "stall_s", r->stall_s, "s");
	wl_metric(ph, "overlap_s", r->overlap_s, "s");
	wl_metric(ph, "ratio_to_ideal", r->ratio, "");
	wl_metric(ph, "host_out_bytes", (double)r->bytes[PLAN_HOST][PLAN_OUT], "B");
	wl_metric(ph, "host_in_bytes", (double)r->bytes[PLAN_HOST][PLAN_IN], "B");
	wl_metric(ph, "ssd_out_bytes", (double)r->bytes[PLAN_SSD][PLAN_OUT], "B");
	wl_metric(ph, "ssd_in_bytes", (double)r->bytes[PLAN_SSD][PLAN_IN], "B");
	wl_metric(ph, "transfers", (double)r->transfers, "");
	wl_metric(ph, "peak_fast_bytes", (double)r->peak_fast, "B");
}

/* What executing the plans needs: the store, where its SSD tier numbers come from, and the
 * file of stalled kernels. */
struct exec_ctx {
	struct llmio_store *st; /* NULL: --simulate */
	char tiers[256];        /* "SSD tier on ENGINE: ... (measured)" for the notes */
	FILE *stalls;
};

/* Execute the plan into phase run-POLICY: the same metrics, measured, and which kernels
 * waited for which tensor. */
static int execute(struct wl *w, const struct plan *p, const struct lt_step *s,
                   const struct plan_cfg *c, const struct plan_sim *sim, struct exec_ctx *x,
                   struct llmio_error *e)
{
	struct plan_cfg pace = *c;
	struct plan_sim again;
	struct wl_phase *ph = wl_phase_new(w, "run-%s", p->policy);
	struct plan_exec r;
	uint32_t worst = UINT32_MAX;
	int ret;

	if (!ph)
		return llmio_err(e, -E2BIG, "too many phases");
	ret = plan_execute_stop(p, s, x->st, w->base.stop, &r, e);
	if (ret == -EINTR) { /* a signal: the phases before this one are the results */
		plan_exec_release(&r);
		w->nphases--;
		return ret;
	}
	if (ret) {
		plan_exec_release(&r);
		return llmio_err_prefix(e, "executing the %s plan", p->policy);
	}
	r.m.peak_fast = sim->peak_fast; /* the plan's: the executor holds what the plan holds */
	sim_metrics(ph, &r.m, p->budget);
	wl_metric(ph, "stalled_kernels", (double)r.stalled_kernels, "");
	wl_metric(ph, "late_wakeup_s", r.late_s, "s");
	/* the model again at the pace the step ran: every kernel as late as they were on average
	 * (late wake-ups give the transfers time the ideal timeline does not have) */
	pace.kernel_late_ns =
	        s->nkernels && r.late_s > 0 ? (uint64_t)(r.late_s * 1e9 / s->nkernels + 0.5) : 0;
	if (!plan_simulate(p, s, &pace, &again, NULL))
		wl_metric(ph, "sim_stall_at_run_pace_s", again.stall_s, "s");
	for (uint32_t k = 0; k <= s->nkernels; k++) {
		if (r.stall_tensor[k] == UINT32_MAX)
			continue;
		if (worst == UINT32_MAX || r.stall_s[k] > r.stall_s[worst])
			worst = k;
		if (x->stalls)
			fprintf(x->stalls, "%s %u %s %.6f %s\n", p->policy, k,
			        k < s->nkernels ? s->kernels[k].name : "(step end)", r.stall_s[k],
			        s->tensors[r.stall_tensor[k]].name);
	}
	if (worst == UINT32_MAX)
		note_set(ph->note, sizeof(ph->note),
		         "measured on %.31s, no kernel waited for a "
		         "transfer; %s",
		         w->base.engine, x->tiers);
	else
		note_set(ph->note, sizeof(ph->note),
		         "measured on %.31s; longest wait: %.6f s before kernel %u (%.32s) for "
		         "tensor "
		         "'%.32s'; %s",
		         w->base.engine, r.stall_s[worst], worst,
		         worst < s->nkernels ? s->kernels[worst].name : "step end",
		         s->tensors[r.stall_tensor[worst]].name, x->tiers);
	plan_exec_release(&r);
	return 0;
}

/* Plan and simulate one policy into a phase, then execute it when there is a store.  A plan
 * that cannot fit is a phase with the reason in its note (and an error when it is the only
 * policy asked for). */
static int one(struct wl *w, const struct plan_policy *pol, const struct lt_step *s,
               const struct plan_cfg *c, bool alone, FILE *out, struct exec_ctx *x,
               struct llmio_error *e)
{
	struct wl_phase *ph = wl_phase_new(w, "simulate-%s", pol->name);
	struct llmio_error le = {0}; /* a plan that cannot fit is a note, not the caller's error */
	struct plan_sim r;
	struct plan p;
	int ret;

	if (!ph)
		return llmio_err(e, -E2BIG, "too many phases");
	ret = plan_build(&p, pol, s, c, &le);
	if (!ret)
		ret = plan_simulate(&p, s, c, &r, &le);
	if (!ret && out && plan_write(&p, s, out))
		ret = llmio_err(&le, -EIO, "cannot write %s: %s", wl_str(w, "plan_file"),
		                strerror(errno));
	if (ret == -ENOSPC && !alone) {
		plan_release(&p);
		note_set(ph->note, sizeof(ph->note), "%s", llmio_err_msg(&le));
		if (out)
			fprintf(out, "# %s\n", llmio_err_msg(&le));
		wl_metric(ph, "budget_bytes", (double)c->budget, "B");
		return 0;
	}
	if (ret) {
		plan_release(&p);
		return llmio_err(e, ret, "%s", llmio_err_msg(&le));
	}
	sim_metrics(ph, &r, c->budget);
	note_set(ph->note, sizeof(ph->note), "simulated (bandwidth model, no I/O)%s%s%s%s: %.150s",
	         p.origin[0] ? "; plan: " : "", p.origin, x->st ? "; " : "", x->st ? x->tiers : "",
	         s->origin);
	if (x->st)
		ret = execute(w, &p, s, c, &r, x, e);
	plan_release(&p);
	return ret;
}

/* A new file: created, never replacing anything (nor following a link). */
static int open_new_file(const char *path, const char *what, FILE **out, struct llmio_error *e)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);

	if (fd < 0) {
		int ret = -errno;

		return llmio_err(
		        e, ret, "cannot create the %s %s: %s%s", what, path, strerror(-ret),
		        ret == -EEXIST ? " (llmio does not replace it: remove it or name another)"
		                       : "");
	}
	*out = fdopen(fd, "w");
	if (!*out) {
		int ret = llmio_err(e, -ENOMEM, "cannot write the %s %s: %s", what, path,
		                    strerror(errno));

		close(fd);
		return ret;
	}
	return 0;
}

/* The executed step is the step scaled: bytes by --scale, kernel times by --time_scale; the
 * plan, its simulation and its execution all see the same one. */
static int scale_step(struct lt_step *s, double bytes, double time, struct llmio_error *e)
{
	if (bytes == 1 && time == 1)
		return 0;
	for (uint32_t k = 0; k < s->nkernels; k++)
		s->kernels[k].dur_ns = (uint64_t)((double)s->kernels[k].dur_ns * time + 0.5);
	for (uint32_t t = 0; t < s->ntensors; t++) {
		uint64_t b = (uint64_t)((double)s->tensors[t].bytes * bytes + 0.5);

		s->tensors[t].bytes = b ? b : 1;
	}
	return lt_finish(s, e);
}

/* Was the option given (not its default)? */
static bool given(const struct wl *w, const char *name)
{
	for (unsigned i = 0; i < w->nkv; i++)
		if (!strcmp(w->keys[i], name))
			return true;
	return false;
}

/* The store for the SSD tier in the run's directory, on the run's engine, big enough for every
 * tensor at once; then the SSD tier's numbers: measured unless all three were given. */
static int open_store(struct wl *w, const struct lt_step *s, struct plan_cfg *c, struct exec_ctx *x,
                      struct llmio_error *e)
{
	const char *targets[] = {w->base.directory};
	struct llmio_store_opts o;
	struct plan_tier_spec m;
	uint64_t calib, need = 16ull << 20;
	char why[LLMIO_PATH_MAX + 128];
	int ret;

	if (!w->base.directory[0])
		return llmio_err(e, -EINVAL,
		                 "executing a migration plan needs --directory DIR for the SSD "
		                 "tier's store (or --simulate for the bandwidth model alone)");
	if ((ret = wl_u64(w, "calib_bytes", &calib, e)))
		return ret;
	for (uint32_t t = 0; t < s->ntensors; t++)
		need += (s->tensors[t].bytes + 4095) / 4096 * 4096; /* the store's extent unit */
	llmio_store_opts_init(&o);
	snprintf(o.engine, sizeof(o.engine), "%s", w->base.engine);
	snprintf(o.engine_opts, sizeof(o.engine_opts), "%s", w->base.engine_opts);
	o.targets = targets;
	o.ntargets = 1;
	o.capacity = need + calib;
	o.direct = w->base.direct;
	if (o.direct && w->direct_auto &&
	    llmio_direct_probe(targets[0], why, sizeof(why)) == -EINVAL)
		o.direct = false; /* our default, not the user's: the page cache where refused */
	if (w->base.iodepth > 1)
		o.iodepth = w->base.iodepth;
	ret = llmio_store_create(&o, &x->st, e);
	if (ret)
		return llmio_err_prefix(e,
		                        "the SSD tier's store in %s (%.2f GB: every tensor of the "
		                        "step; a smaller --scale needs less)",
		                        targets[0], (double)o.capacity / 1e9);
	/* the simulation beside an execution models the execution: the store's one queue for
	 * the SSD's reads and writes, and the emulated kernels' late wake-ups (measured on a
	 * sleep of the step's mean kernel, 10 us to 5 ms); and no faults: the store moves lru's
	 * misses at its own rate */
	c->ssd_one_queue = true;
	c->fault_gbps = 0;
	c->kernel_late_ns = plan_timer_late_ns(
	        s->nkernels ? fmin(fmax((double)s->start_ns[s->nkernels] / s->nkernels, 1e4), 5e6)
	                    : 1e4);
	if (given(w, "ssd_gbps") && given(w, "ssd_read_lat") && given(w, "ssd_write_lat")) {
		snprintf(x->tiers, sizeof(x->tiers),
		         "SSD tier given: %.3f GB/s, %.1f/%.1f us; one SSD queue; kernels late "
		         "%.1f us (measured)",
		         c->tier[PLAN_SSD].gbps, c->tier[PLAN_SSD].read_lat_ns / 1e3,
		         c->tier[PLAN_SSD].write_lat_ns / 1e3, c->kernel_late_ns / 1e3);
		return 0;
	}
	ret = plan_calibrate(x->st, s, calib, &m, e);
	if (ret)
		return ret;
	if (!given(w, "ssd_gbps")) {
		c->tier[PLAN_SSD].gbps = m.gbps;
		c->tier[PLAN_SSD].read_gbps = m.read_gbps;
		c->tier[PLAN_SSD].write_gbps = m.write_gbps;
	}
	if (!given(w, "ssd_read_lat"))
		c->tier[PLAN_SSD].read_lat_ns = m.read_lat_ns;
	if (!given(w, "ssd_write_lat"))
		c->tier[PLAN_SSD].write_lat_ns = m.write_lat_ns;
	/* the figures are bounded (calibration and option ranges); a cut note is still a note */
	if (snprintf(x->tiers, sizeof(x->tiers),
	             "SSD tier on %.32s: %.3f GB/s (%s), read %.1f us (%s), write %.1f us (%s); "
	             "simulated at %.3f GB/s out, %.3f in; one SSD queue; kernels late %.1f us "
	             "(measured)",
	             w->base.engine, c->tier[PLAN_SSD].gbps,
	             given(w, "ssd_gbps") ? "given" : "measured, step's sizes",
	             c->tier[PLAN_SSD].read_lat_ns / 1e3,
	             given(w, "ssd_read_lat") ? "given" : "measured",
	             c->tier[PLAN_SSD].write_lat_ns / 1e3,
	             given(w, "ssd_write_lat") ? "given" : "measured",
	             c->tier[PLAN_SSD].write_gbps > 0 ? c->tier[PLAN_SSD].write_gbps
	                                              : c->tier[PLAN_SSD].gbps,
	             c->tier[PLAN_SSD].read_gbps > 0 ? c->tier[PLAN_SSD].read_gbps
	                                             : c->tier[PLAN_SSD].gbps,
	             c->kernel_late_ns / 1e3) >= (int)sizeof(x->tiers))
		x->tiers[sizeof(x->tiers) - 2] = '~';
	return 0;
}

static int run(struct wl *w, struct llmio_error *e)
{
	struct exec_ctx x = {0};
	const char *policy;
	struct plan_cfg c;
	struct lt_step s;
	FILE *out = NULL;
	uint64_t sim;
	double ts;
	int ret;

	if ((ret = wl_enum(w, "policy", &policy, e)) || (ret = wl_u64(w, "simulate", &sim, e)) ||
	    (ret = wl_double(w, "time_scale", &ts, e)) || (ret = read_cfg(w, &c, e)))
		return ret;
	if (!(ts > 0))
		return llmio_err(e, -EINVAL, "--time_scale must be > 0");
	if (sim && wl_str(w, "stall_file")[0])
		return llmio_err(e, -EINVAL, "--stall_file records an execution: drop --simulate");
	/* the fast and host tiers scale with the tensors */
	c.budget = (uint64_t)((double)c.budget * w->scale + 0.5);
	c.tier[PLAN_HOST].capacity =
	        (uint64_t)((double)c.tier[PLAN_HOST].capacity * w->scale + 0.5);
	lt_init(&s);
	ret = read_step(w, &s, e);
	if (!ret)
		ret = scale_step(&s, w->scale, ts, e);
	if (!ret && !sim)
		ret = open_store(w, &s, &c, &x, e);
	if (!ret && wl_str(w, "plan_file")[0]) {
		ret = open_new_file(wl_str(w, "plan_file"), "plan file", &out, e);
		if (!ret)
			fprintf(out, "llmio-plan 1\n# step: %s\n", s.origin);
	}
	if (!ret && wl_str(w, "stall_file")[0]) {
		ret = open_new_file(wl_str(w, "stall_file"), "stall file", &x.stalls, e);
		if (!ret)
			fprintf(x.stalls,
			        "# llmio migrate stalls: policy kernel name seconds tensor\n"
			        "# step: %s\n",
			        s.origin);
	}
	for (size_t i = 0; i < plan_policy_count() && !ret && !(w->base.stop && *w->base.stop); i++)
		if (!strcmp(policy, "all") || !strcmp(policy, plan_policy_at(i)->name))
			ret = one(w, plan_policy_at(i), &s, &c, strcmp(policy, "all") != 0, out, &x,
			          e);
	if (ret == -EINTR) /* stopped by a signal: not a failure; the CLI says it was cut short */
		ret = 0;
	if (out && fclose(out) && !ret)
		ret = llmio_err(e, -EIO, "cannot write %s: %s", wl_str(w, "plan_file"),
		                strerror(errno));
	if (x.stalls && fclose(x.stalls) && !ret)
		ret = llmio_err(e, -EIO, "cannot write %s: %s", wl_str(w, "stall_file"),
		                strerror(errno));
	llmio_store_destroy(x.st);
	lt_release(&s);
	return ret;
}

const struct recipe recipe_migrate = {
        .name = "migrate",
        .summary = "tensor migration plans (G10, SSDTrain, LRU ...) within a memory budget, "
                   "executed on the tensor store and/or simulated (docs/migration.md)",
        .params = params,
        .no_directory = true,
        .run = run,
};
