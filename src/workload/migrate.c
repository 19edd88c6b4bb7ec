/* SPDX-License-Identifier: MIT */
/*
 * Recipe `migrate` (issue 18): plan the migration of a training step's tensors between the
 * fast tier (--budget bytes of accelerator memory), host memory and the SSD with one policy or
 * all of them (src/store/plan.h), and with --simulate run each plan through the bandwidth model:
 * step time, compute, stall, overlap, bytes per tier and the ratio to the ideal step (no memory
 * limit), one phase per policy.  The step comes from --lifetimes FILE (the llmio-lifetimes line
 * format or a G10 operator graph) or from --model (the catalog).  Executing a plan on real
 * storage needs the tensor store; until it is in the build, the recipe refuses without
 * --simulate.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "store/plan.h"
#include "workload/workload.h"

static const struct llmio_optdesc params[] = {
        WL_ENUM("policy", "lru|prefetch-lru|ssdtrain|flashneuron|g10|all", "all",
                "migration policy, or all side by side"),
        WL_PARAM("budget", OPTD_SIZE, 1, 0, "", "fast-tier (accelerator memory) bytes"),
        WL_PARAM("simulate", OPTD_UINT, 0, 1, "0",
                 "1: run the plan through the bandwidth model (no I/O)"),
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
	double hg, sg, margin;
	int ret;

	if (!wl_str(w, "budget")[0])
		return llmio_err(e, -EINVAL,
		                 "workload migrate needs --budget BYTES (the fast tier)");
	if ((ret = wl_u64(w, "budget", &budget, e)) || (ret = wl_u64(w, "host_bytes", &host, e)) ||
	    (ret = wl_u64(w, "host_lat", &hl, e)) || (ret = wl_u64(w, "ssd_read_lat", &srl, e)) ||
	    (ret = wl_u64(w, "ssd_write_lat", &swl, e)) || (ret = wl_u64(w, "lookahead", &la, e)) ||
	    (ret = wl_double(w, "host_gbps", &hg, e)) || (ret = wl_double(w, "ssd_gbps", &sg, e)) ||
	    (ret = wl_double(w, "margin", &margin, e)))
		return ret;
	if (!(hg > 0) || !(sg > 0) || !(margin >= 0))
		return llmio_err(e, -EINVAL,
		                 "--host_gbps and --ssd_gbps must be > 0 and --margin >= 0");
	plan_cfg_init(c, budget);
	c->tier[PLAN_HOST] = (struct plan_tier_spec){
	        .gbps = hg, .read_lat_ns = hl, .write_lat_ns = hl, .capacity = host};
	c->tier[PLAN_SSD] =
	        (struct plan_tier_spec){.gbps = sg, .read_lat_ns = srl, .write_lat_ns = swl};
	c->margin = margin;
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

/* Plan and simulate one policy into a phase.  A plan that cannot fit is a phase with the
 * reason in its note (and an error when it is the only policy asked for). */
static int one(struct wl *w, const struct plan_policy *pol, const struct lt_step *s,
               const struct plan_cfg *c, bool alone, FILE *out, struct llmio_error *e)
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
	plan_release(&p);
	if (ret == -ENOSPC && !alone) {
		snprintf(ph->note, sizeof(ph->note), "%s", llmio_err_msg(&le));
		if (out)
			fprintf(out, "# %s\n", llmio_err_msg(&le));
		wl_metric(ph, "budget_bytes", (double)c->budget, "B");
		return 0;
	}
	if (ret)
		return llmio_err(e, ret, "%s", llmio_err_msg(&le));
	sim_metrics(ph, &r, c->budget);
	snprintf(ph->note, sizeof(ph->note), "simulated (bandwidth model, no I/O): %.320s",
	         s->origin);
	return 0;
}

/* The plan file: created, never replacing anything (nor following a link). */
static int open_plan_file(const char *path, const struct lt_step *s, FILE **out,
                          struct llmio_error *e)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);

	if (fd < 0) {
		int ret = -errno;

		return llmio_err(
		        e, ret, "cannot create the plan file %s: %s%s", path, strerror(-ret),
		        ret == -EEXIST ? " (llmio does not replace it: remove it or name another)"
		                       : "");
	}
	*out = fdopen(fd, "w");
	if (!*out) {
		int ret = llmio_err(e, -ENOMEM, "cannot write the plan file %s: %s", path,
		                    strerror(errno));

		close(fd);
		return ret;
	}
	fprintf(*out, "llmio-plan 1\n# step: %s\n", s->origin);
	return 0;
}

static int run(struct wl *w, struct llmio_error *e)
{
	const char *policy;
	struct plan_cfg c;
	struct lt_step s;
	FILE *out = NULL;
	uint64_t sim;
	int ret;

	if ((ret = wl_enum(w, "policy", &policy, e)) || (ret = wl_u64(w, "simulate", &sim, e)) ||
	    (ret = read_cfg(w, &c, e)))
		return ret;
	if (!sim)
		return llmio_err(
		        e, -EINVAL,
		        "executing a migration plan on real storage needs the tensor store "
		        "(include/llmio/store.h), which this build does not have yet: add "
		        "--simulate to run the plan through the bandwidth model");
	lt_init(&s);
	ret = read_step(w, &s, e);
	if (!ret && wl_str(w, "plan_file")[0])
		ret = open_plan_file(wl_str(w, "plan_file"), &s, &out, e);
	for (size_t i = 0; i < plan_policy_count() && !ret; i++)
		if (!strcmp(policy, "all") || !strcmp(policy, plan_policy_at(i)->name))
			ret = one(w, plan_policy_at(i), &s, &c, strcmp(policy, "all") != 0, out, e);
	if (out && fclose(out) && !ret)
		ret = llmio_err(e, -EIO, "cannot write %s: %s", wl_str(w, "plan_file"),
		                strerror(errno));
	lt_release(&s);
	return ret;
}

const struct recipe recipe_migrate = {
        .name = "migrate",
        .summary = "tensor migration plans (G10, SSDTrain, LRU ...) within a memory budget; "
                   "--simulate runs them through a bandwidth model (docs/migration.md)",
        .params = params,
        .no_directory = true,
        .run = run,
};
