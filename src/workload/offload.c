/* SPDX-License-Identifier: MIT */
/*
 * Recipe `offload`: SSDTrain-style activation offload through the tensor store (llmio/store.h).
 * Forward: each layer computes (an emulated compute time), then puts its saved activations;
 * backward: gets them back in reverse order (the store reads ahead along the hint) and computes.
 * The layers come from the model catalog (llmio_model_activation_bytes() for the micro-batch
 * and sequence) or from a trace recorded by python/llmio_offload.py.
 *
 * Each step is a phase with: compute time, exposed stall (what the step took beyond its
 * compute), overlap (the share of the store's I/O time hidden behind compute), peak memory
 * with and without offload, bytes per step, and the drive-write load for --tbw.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/error.h"
#include "llmio/store.h"
#include "workload/workload.h"

#define OFFLOAD_MAX_LAYERS 4096

static const struct llmio_optdesc params[] = {
        WL_PARAM("trace", OPTD_STRING, 0, 0, "",
                 "layers from a trace of python/llmio_offload.py (its last step) instead of "
                 "--model"),
        WL_PARAM("micro_batch", OPTD_UINT, 1, 65536, "1", "sequences per micro-batch (--model)"),
        WL_PARAM("seq", OPTD_UINT, 1, 1 << 24, "2048", "tokens per sequence (--model)"),
        WL_PARAM("layers", OPTD_UINT, 0, OFFLOAD_MAX_LAYERS, "0",
                 "layers to run (0 = the model's or the trace's)"),
        WL_PARAM("fwd_ms", OPTD_DOUBLE, 0, 0, "0",
                 "forward compute per layer, ms (0 = the trace's times; 10 without a trace)"),
        WL_PARAM("bwd_factor", OPTD_DOUBLE, 0, 0, "2",
                 "backward compute = this x forward (with fwd_ms or without a trace)"),
        WL_PARAM("steps", OPTD_UINT, 1, 1000000, "3", "training steps"),
        WL_PARAM("tensor", OPTD_SIZE, 4096, 0, "64m",
                 "largest put: a layer's activations go in pieces of at most this"),
        WL_PARAM("staging", OPTD_SIZE, 0, 0, "64m", "store's staging pool (0 = its default)"),
        WL_PARAM("readahead", OPTD_SIZE, 0, 0, "0",
                 "store's read-ahead window in bytes (0 = its default, half the staging)"),
        WL_PARAM("tbw", OPTD_DOUBLE, 0, 0, "0",
                 "drive's rated endurance in TB written (JEDEC); 0 = no years-to-endurance"),
        WL_PARAM("drive_tb", OPTD_DOUBLE, 0, 0, "1",
                 "drive capacity in TB, for drive writes per day"),
        {.name = NULL},
};

struct layer {
	uint64_t bytes;
	uint64_t fwd_ns, bwd_ns;
};

struct run {
	struct llmio_store *s;
	struct layer *layers;
	unsigned n;
	uint64_t tensor;   /* largest put */
	uint64_t *handles; /* per layer: first handle; pieces are consecutive in pieces[] */
	uint64_t *pieces;
	unsigned *npieces;
	unsigned maxpieces;
	void *src, *dst;
	uint64_t inflight, peak_inflight; /* borrowed put bytes not yet on storage */
	volatile int *stop;               /* set by SIGINT / SIGTERM: the step ends early */
};

static bool stopped(const struct run *r)
{
	return r->stop && *r->stop;
}

/* The emulated compute; a signal (which ends nanosleep early) ends it when it stops the run. */
static void sleep_ns(const struct run *r, uint64_t ns)
{
	struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};

	while (ns && !stopped(r) && nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

/*
 * What a trace line may hold.  A layer of more than a TiB, or an hour of compute, is no
 * activation that fits a GPU: a corrupt or hostile trace, refused before any arithmetic on it
 * could wrap (a byte count of 2^64-1 made the piece count wrap and the puts overrun).
 */
#define OFFLOAD_MAX_LAYER_BYTES (1ULL << 40)
#define OFFLOAD_MAX_LAYER_US    3600000000ULL
/* Puts in one step: the handle tables hold one entry each. */
#define OFFLOAD_MAX_PIECES (1u << 20)

/* The layers of the trace's last step: lines "layer bytes fwd_us bwd_us", "# step N". */
static int trace_layers(const char *path, struct layer *l, unsigned *n, struct llmio_error *e)
{
	static const struct {
		const char *name;
		uint64_t max;
	} field[4] = {
	        {"layer", OFFLOAD_MAX_LAYERS - 1},
	        {"bytes", OFFLOAD_MAX_LAYER_BYTES},
	        {"fwd_us", OFFLOAD_MAX_LAYER_US},
	        {"bwd_us", OFFLOAD_MAX_LAYER_US},
	};
	FILE *f = fopen(path, "r");
	char line[512];
	unsigned lineno = 0;
	int ret = 0;

	if (!f)
		return llmio_err(e, -errno,
		                 "--trace=%s: %s (record one with python/llmio_offload.py)", path,
		                 strerror(errno));
	*n = 0;
	while (fgets(line, sizeof(line), f)) {
		char *p = line, *save = NULL, *tok;
		uint64_t v[4];
		int i, rc;

		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			ret = llmio_err(
			        e, -EINVAL,
			        "--trace=%s line %u: longer than %zu bytes; expected 'layer "
			        "bytes fwd_us bwd_us', as python/llmio_offload.py writes",
			        path, lineno, sizeof(line) - 2);
			goto out;
		}
		while (*p == ' ' || *p == '\t')
			p++;
		if (!strncmp(p, "# step", 6)) {
			*n = 0; /* a new step: the last one wins */
			continue;
		}
		if (*p == '#' || *p == '\n' || !*p)
			continue;
		for (i = 0, tok = strtok_r(p, " \t\r\n", &save); i < 4 && tok;
		     i++, tok = strtok_r(NULL, " \t\r\n", &save)) {
			rc = llmio_parse_uint(tok, 0, field[i].max, &v[i]);
			if (rc == -ERANGE) {
				ret = llmio_err(e, -EINVAL,
				                "--trace=%s line %u: %s %.32s is out of range: it "
				                "takes 0..%llu",
				                path, lineno, field[i].name, tok,
				                (unsigned long long)field[i].max);
				goto out;
			}
			if (rc)
				break;
		}
		if (i < 4 || tok) {
			ret = llmio_err(e, -EINVAL,
			                "--trace=%s line %u: expected 'layer bytes fwd_us bwd_us' "
			                "(whole numbers, nothing after), as "
			                "python/llmio_offload.py writes%s%s",
			                path, lineno, i < 4 ? "; bad or missing " : "",
			                i < 4 ? field[i].name : "");
			goto out;
		}
		if (*n == OFFLOAD_MAX_LAYERS) {
			ret = llmio_err(e, -EINVAL,
			                "--trace=%s line %u: more than %u layers in a step", path,
			                lineno, OFFLOAD_MAX_LAYERS);
			goto out;
		}
		l[*n].bytes = v[1];
		l[*n].fwd_ns = v[2] * 1000;
		l[*n].bwd_ns = v[3] * 1000;
		(*n)++;
	}
	if (!*n)
		ret = llmio_err(e, -EINVAL, "--trace=%s has no layer lines", path);
out:
	fclose(f);
	return ret;
}

static uint64_t piece_len(const struct run *r, unsigned l, unsigned k)
{
	uint64_t off = (uint64_t)k * r->tensor;

	return r->layers[l].bytes - off < r->tensor ? r->layers[l].bytes - off : r->tensor;
}

/* The length of the piece put as handle h (a step holds a few hundred: a scan is enough). */
static uint64_t put_len(const struct run *r, uint64_t h)
{
	for (unsigned l = 0; l < r->n; l++)
		for (unsigned k = 0; k < r->npieces[l]; k++)
			if (r->pieces[r->handles[l] + k] == h)
				return piece_len(r, l, k);
	return 0;
}

/* Collect completions: borrowed bytes on storage again, and failures with their cause. */
static int drain(struct run *r, struct llmio_error *e)
{
	struct llmio_store_event ev[64];
	int n;

	while ((n = llmio_store_poll(r->s, ev, 64)) > 0)
		for (int i = 0; i < n; i++) {
			if (ev[i].res < 0 || ev[i].type == LLMIO_STORE_EV_ERROR)
				return llmio_err(e, ev[i].res < 0 ? ev[i].res : -EIO,
				                 "offload: tensor %llu failed: %s",
				                 (unsigned long long)ev[i].handle,
				                 strerror(ev[i].res < 0 ? -ev[i].res : EIO));
			if (ev[i].type == LLMIO_STORE_EV_PUT) {
				uint64_t len = put_len(r, ev[i].handle);

				r->inflight -= len < r->inflight ? len : r->inflight;
			}
		}
	return n < 0 ? llmio_err(e, n, "llmio_store_poll: %s", strerror(-n)) : 0;
}

struct step_out {
	uint64_t compute_ns, wall_ns;
};

/* One forward + backward; returns the step's times.  -EINTR (no message) when the run was
 * stopped: checked between pieces, so a signal waits for one transfer at most. */
static int step(struct run *r, struct step_out *o, struct llmio_error *e)
{
	uint64_t t0 = now_ns();
	int ret;

	/* every put of the last step was got back, so written: what it left are late events */
	if ((ret = drain(r, e)))
		return ret;
	r->inflight = r->peak_inflight = 0;
	o->compute_ns = 0;
	for (unsigned l = 0; l < r->n; l++) {
		sleep_ns(r, r->layers[l].fwd_ns); /* the layer computes its activations... */
		o->compute_ns += r->layers[l].fwd_ns;
		for (unsigned k = 0; k < r->npieces[l]; k++) { /* ...which go out behind the next */
			uint64_t len = piece_len(r, l, k);

			if (stopped(r))
				return -EINTR;
			ret = llmio_store_put(r->s, r->src, len, LLMIO_STORE_BORROW,
			                      &r->pieces[r->handles[l] + k], e);
			if (ret) {
				llmio_err_prefix(e, "offload: forward, layer %u", l);
				return ret;
			}
			r->inflight += len;
			if (r->inflight > r->peak_inflight)
				r->peak_inflight = r->inflight;
		}
		if ((ret = drain(r, e)))
			return ret;
	}
	ret = llmio_store_hint(r->s, LLMIO_STORE_ORDER_REVERSE, NULL, 0, e);
	if (ret) {
		llmio_err_prefix(e, "offload: backward order hint");
		return ret;
	}
	for (unsigned l = r->n; l-- > 0;) {
		for (unsigned k = r->npieces[l]; k-- > 0;) {
			uint64_t h = r->pieces[r->handles[l] + k];

			if (stopped(r))
				return -EINTR;
			ret = llmio_store_get(r->s, h, r->dst, piece_len(r, l, k), true, e);
			if (!ret)
				ret = llmio_store_release(r->s, h, e);
			if (ret) {
				llmio_err_prefix(e, "offload: backward, layer %u", l);
				return ret;
			}
		}
		if ((ret = drain(r, e)))
			return ret;
		sleep_ns(r, r->layers[l].bwd_ns);
		o->compute_ns += r->layers[l].bwd_ns;
	}
	o->wall_ns = now_ns() - t0;
	return 0;
}

struct cfg {
	uint64_t steps, tensor, staging, readahead;
	double tbw, drive_tb;
};

static int setup_layers(struct wl *w, struct layer *l, unsigned *n, struct llmio_error *e)
{
	const char *trace = wl_str(w, "trace");
	uint64_t b, s, nl;
	double fwd_ms, bwd_factor;
	int ret;

	if ((ret = wl_u64(w, "micro_batch", &b, e)) || (ret = wl_u64(w, "seq", &s, e)) ||
	    (ret = wl_u64(w, "layers", &nl, e)) || (ret = wl_double(w, "fwd_ms", &fwd_ms, e)) ||
	    (ret = wl_double(w, "bwd_factor", &bwd_factor, e)))
		return ret;
	if (trace[0]) {
		ret = trace_layers(trace, l, n, e);
		if (ret)
			return ret;
	} else if (w->has_model) {
		uint64_t per =
		        llmio_model_activation_bytes(&w->model, (uint32_t)b, (uint32_t)s, 1, false);

		*n = w->model.layers < OFFLOAD_MAX_LAYERS ? w->model.layers : OFFLOAD_MAX_LAYERS;
		for (unsigned i = 0; i < *n; i++)
			l[i] = (struct layer){.bytes = per};
		if (fwd_ms <= 0)
			fwd_ms = 10;
	} else {
		return llmio_err(e, -EINVAL,
		                 "workload offload needs --model NAME (per-layer activation bytes "
		                 "from the catalog) or --trace FILE (recorded by "
		                 "python/llmio_offload.py)");
	}
	if (nl && nl < *n)
		*n = (unsigned)nl;
	for (unsigned i = 0; i < *n; i++) {
		/* --scale shrinks the bytes, never below one aligned block */
		l[i].bytes = wl_scaled(w, l[i].bytes, wl_align(w), wl_align(w));
		if (l[i].bytes > OFFLOAD_MAX_LAYER_BYTES)
			return llmio_err(e, -EINVAL,
			                 "offload: layer %u would hold %llu bytes of activations, "
			                 "more than %llu; use a smaller --micro_batch, --seq or "
			                 "--scale",
			                 i, (unsigned long long)l[i].bytes,
			                 (unsigned long long)OFFLOAD_MAX_LAYER_BYTES);
		if (fwd_ms > 0) {
			l[i].fwd_ns = (uint64_t)(fwd_ms * 1e6);
			l[i].bwd_ns = (uint64_t)(fwd_ms * bwd_factor * 1e6);
		}
	}
	return 0;
}

static void report(struct wl_phase *ph, const struct run *r, const struct cfg *c,
                   const struct step_out *o, const struct llmio_store_stats *a,
                   const struct llmio_store_stats *b)
{
	uint64_t keep = 0, maxl = 0, busy = b->io_busy_ns - a->io_busy_ns;
	double stall = o->wall_ns > o->compute_ns ? (double)(o->wall_ns - o->compute_ns) : 0;
	double written = (double)(b->bytes_put - a->bytes_put);
	double per_day = o->wall_ns ? written * 86400e9 / (double)o->wall_ns : 0;

	for (unsigned l = 0; l < r->n; l++) {
		keep += r->layers[l].bytes;
		maxl = r->layers[l].bytes > maxl ? r->layers[l].bytes : maxl;
	}
	wl_metric(ph, "step_s", (double)o->wall_ns / 1e9, "s");
	wl_metric(ph, "compute_s", (double)o->compute_ns / 1e9, "s");
	wl_metric(ph, "exposed_stall_s", stall / 1e9, "s");
	wl_metric(ph, "store_stall_s", (double)(b->stall_ns - a->stall_ns) / 1e9, "s");
	wl_metric(ph, "overlap", busy ? 1 - fmin(stall, (double)busy) / (double)busy : 1, "");
	wl_metric(ph, "bytes_written", written, "B");
	wl_metric(ph, "bytes_read", (double)(b->bytes_got - a->bytes_got), "B");
	wl_metric(ph, "device_bytes_written",
	          (double)(b->device_bytes_written - a->device_bytes_written), "B");
	wl_metric(ph, "device_bytes_read", (double)(b->device_bytes_read - a->device_bytes_read),
	          "B");
	wl_metric(ph, "peak_mem_keep", (double)keep, "B");
	/* with offload: the layer being computed, the writes still borrowing their activations
	   and the store's staging (read-ahead and bounces) */
	wl_metric(ph, "peak_mem_offload", (double)(maxl + r->peak_inflight + b->peak_staging_bytes),
	          "B");
	wl_metric(ph, "prefetch_hits", (double)(b->prefetch_hits - a->prefetch_hits), "");
	wl_metric(ph, "drive_writes_per_day", per_day / (c->drive_tb * 1e12), "DWPD");
	if (c->tbw > 0)
		wl_metric(ph, "years_to_tbw", per_day > 0 ? c->tbw * 1e12 / per_day / 365.0 : 0,
		          "years");
}

static int run(struct wl *w, struct llmio_error *e)
{
	struct llmio_store_opts so;
	struct run r = {0};
	struct cfg c;
	const char *target = w->base.directory;
	uint64_t total = 0;
	unsigned npieces = 0;
	int ret;

	if ((ret = wl_u64(w, "steps", &c.steps, e)) || (ret = wl_u64(w, "tensor", &c.tensor, e)) ||
	    (ret = wl_u64(w, "staging", &c.staging, e)) ||
	    (ret = wl_u64(w, "readahead", &c.readahead, e)) ||
	    (ret = wl_double(w, "tbw", &c.tbw, e)) ||
	    (ret = wl_double(w, "drive_tb", &c.drive_tb, e)))
		return ret;
	if (c.drive_tb <= 0)
		return llmio_err(e, -EINVAL, "--drive_tb=%g must be above 0", c.drive_tb);
	r.layers = calloc(OFFLOAD_MAX_LAYERS, sizeof(*r.layers));
	if (!r.layers)
		return -ENOMEM;
	ret = setup_layers(w, r.layers, &r.n, e);
	if (ret)
		goto out;
	r.tensor = (c.tensor + wl_align(w) - 1) / wl_align(w) * wl_align(w);
	r.handles = calloc(r.n, sizeof(*r.handles));
	r.npieces = calloc(r.n, sizeof(*r.npieces));
	if (!r.handles || !r.npieces) {
		ret = -ENOMEM;
		goto out;
	}
	for (unsigned l = 0; l < r.n; l++) {
		uint64_t k = r.layers[l].bytes / r.tensor + (r.layers[l].bytes % r.tensor != 0);

		/* per layer at most 2^40 bytes (setup_layers): neither sum can wrap */
		if (npieces + k > OFFLOAD_MAX_PIECES) {
			ret = llmio_err(
			        e, -EINVAL,
			        "offload: a step of these layers takes more than %u puts of "
			        "--tensor=%llu bytes; use a larger --tensor or a smaller "
			        "--scale",
			        OFFLOAD_MAX_PIECES, (unsigned long long)r.tensor);
			goto out;
		}
		r.handles[l] = npieces;
		r.npieces[l] = (unsigned)k;
		npieces += (unsigned)k;
		total += r.layers[l].bytes;
	}
	r.pieces = calloc(npieces ? npieces : 1, sizeof(*r.pieces));
	if (!r.pieces || posix_memalign(&r.src, 4096, r.tensor) ||
	    posix_memalign(&r.dst, 4096, r.tensor)) {
		ret = -ENOMEM;
		goto out;
	}
	memset(r.src, 0x5a, r.tensor); /* never changes: every put may borrow it */

	llmio_store_opts_init(&so);
	snprintf(so.engine, sizeof(so.engine), "%s", w->base.engine);
	snprintf(so.engine_opts, sizeof(so.engine_opts), "%s", w->base.engine_opts);
	so.targets = &target;
	so.ntargets = 1;
	/* one step's activations live at once (the extents are reused after release), in whole
	   stripes, with one stripe to spare for the allocator's rounding */
	so.capacity = (total + r.tensor + so.stripe_size - 1) / so.stripe_size * so.stripe_size +
	              so.stripe_size;
	so.direct = w->base.direct;
	if (w->base.iodepth)
		so.iodepth = w->base.iodepth;
	if (c.staging)
		so.staging_bytes = c.staging;
	if (c.readahead)
		so.readahead_bytes = c.readahead;
	ret = llmio_store_create(&so, &r.s, e);
	if (ret) {
		llmio_err_prefix(e, "offload");
		goto out;
	}
	r.stop = w->base.stop;
	for (uint64_t i = 0; i < c.steps && !(w->base.stop && *w->base.stop); i++) {
		struct llmio_store_stats a = {.stats_size = sizeof(a)},
		                         b = {.stats_size = sizeof(b)};
		struct wl_phase *ph = wl_phase_new(w, "step %llu", (unsigned long long)i + 1);
		struct step_out o = {0};

		if (!ph) {
			ret = llmio_err(e, -EINVAL,
			                "offload: more than %d steps to record; use --steps %d",
			                WL_MAX_PHASES, WL_MAX_PHASES);
			break;
		}
		ph->promised_bytes = 2 * total;
		/* the store's bytes are not job results: say how they travelled */
		snprintf(ph->note, sizeof(ph->note), "tensor store, %s",
		         so.direct ? "O_DIRECT" : "buffered: reads may come from the page cache");
		llmio_store_stats(r.s, &a);
		ret = step(&r, &o, e);
		if (ret == -EINTR) { /* a signal: the steps before this one are the results */
			w->nphases--;
			ret = 0;
			break;
		}
		if (!ret)
			ret = llmio_store_stats(r.s, &b);
		if (ret)
			break;
		ph->wall_s = (double)o.wall_ns / 1e9;
		report(ph, &r, &c, &o, &a, &b);
	}
out:
	if (r.s)
		llmio_store_destroy(r.s);
	free(r.src);
	free(r.dst);
	free(r.pieces);
	free(r.handles);
	free(r.npieces);
	free(r.layers);
	return ret;
}

const struct recipe recipe_offload = {
        .name = "offload",
        .summary = "SSDTrain-style activation offload through the tensor store: forward puts "
                   "each layer's activations, backward gets them in reverse",
        .params = params,
        .shared = NULL,
        .needs_model = false,
        .run = run,
};
