/* SPDX-License-Identifier: MIT */
/*
 * Steady state as fio's ss=iops:X% defines it: the last W samples all lie within X % of their
 * mean; or (ss=iops_ci:X%) once the 95 % confidence interval of the mean of the samples is
 * within X % of it.  A stable device usually settles within a second or two, so a sweep that
 * waits for this instead of a fixed runtime measures many more points per hour; the price
 * (how much the figures differ) is measured in docs/sweeps.md.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/optdesc.h"
#include "sweep/steady.h"

/* The metric and the test packed in one llmio_optval.i: metric + 2 * test. */
static const char *const ss_names[4] = {"iops", "bw", "iops_ci", "bw_ci"};

/* iops:PCT / bw:PCT / iops_ci:PCT / bw_ci:PCT / off: enabled in b, the metric and test in i,
 * the tolerance in d. */
static int ss_parse(const char *text, struct llmio_optval *out)
{
	const char *colon = strchr(text, ':');
	char *end;

	if (!strcasecmp(text, "off") || !strcasecmp(text, "none") || !strcmp(text, "0"))
		return 0;
	out->i = -1;
	for (int k = 0; colon && k < 4; k++)
		if ((size_t)(colon - text) == strlen(ss_names[k]) &&
		    !strncasecmp(text, ss_names[k], strlen(ss_names[k])))
			out->i = k;
	if (out->i < 0)
		return -EINVAL;
	errno = 0;
	out->d = strtod(colon + 1, &end);
	if (errno || end == colon + 1 || (*end && strcmp(end, "%")) || !(out->d > 0) ||
	    out->d > 100)
		return -EINVAL;
	out->b = true;
	return 0;
}

static void ss_store(const struct llmio_optval *v, void *base)
{
	struct steady_cfg *cfg = base;

	cfg->enabled = v->b;
	if (v->b) {
		cfg->metric = (enum steady_metric)(v->i % 2);
		cfg->test = (enum steady_test)(v->i / 2);
		cfg->tolerance_pct = v->d;
	}
}

static void ss_load(const void *base, struct llmio_optval *v)
{
	const struct steady_cfg *cfg = base;

	v->b = cfg->enabled;
	v->i = (int64_t)cfg->metric + 2 * (int64_t)cfg->test;
	v->d = cfg->tolerance_pct;
}

static int ss_format(const struct llmio_optval *v, char *buf, size_t len)
{
	int n = v->b ? snprintf(buf, len, "%s:%g", ss_names[v->i & 3], v->d)
	             : snprintf(buf, len, "off");

	return n < 0 || (size_t)n >= len ? -ERANGE : 0;
}

static const struct llmio_optdesc_codec ss_codec = {ss_parse, ss_store, ss_load, ss_format};

#define SWEEP(n, t, d, h, ...)                                                                     \
	{                                                                                          \
		.name = n, .type = t, .def = d, .help = h, .scope = OPTD_SCOPE_SWEEP, __VA_ARGS__  \
	}

static const struct llmio_optdesc steady_table[] = {
        SWEEP("ss", OPTD_STRING, "off",
              "end a point's measurement once its IOPS (iops:PCT) or bandwidth (bw:PCT) is "
              "steady within PCT %, or once the 95 % confidence interval of its mean is "
              "(iops_ci:PCT, bw_ci:PCT); off = run the whole runtime",
              .codec = &ss_codec, .fio_kind = OPTD_FIO_VALUE,
              .expect = "iops:PCT, bw:PCT, iops_ci:PCT or bw_ci:PCT (e.g. iops:5%, a tolerance "
                        "above 0 and up to 100), or off"),
        SWEEP("ss_window", OPTD_DURATION, "5s",
              "samples that must agree (iops:, bw:) or at least (iops_ci:, bw_ci:), as a time "
              "(whole ms): ss_window / ss_interval samples",
              .min = 1e8, .max = 600e9, .store_ns = 1000000,
              OPTD_FIELD(struct steady_cfg, window_ms), .fio = "ss_dur",
              .fio_kind = OPTD_FIO_VALUE),
        SWEEP("ss_min", OPTD_DURATION, "0", "not steady before this much measured time",
              .fio = "ss_ramp", .fio_kind = OPTD_FIO_VALUE),
        SWEEP("ss_max", OPTD_DURATION, "0", "the longest a point measures; 0 = its runtime",
              .fio_kind = OPTD_FIO_NONE, .fio_note = "fio's runtime bounds it"),
        /* last: its default is not part of a point's configuration (old journals' hashes) */
        SWEEP("ss_interval", OPTD_DURATION, "1s",
              "one steady-state sample per ss_interval (whole ms), e.g. 250ms", .min = 1e8,
              .max = 10e9, .store_ns = 1000000, OPTD_FIELD(struct steady_cfg, interval_ms),
              .fio_kind = OPTD_FIO_NONE, .fio_note = "fio samples once a second"),
};

#define NSTEADY (sizeof(steady_table) / sizeof(steady_table[0]))

const struct llmio_optdesc *steady_optdesc(size_t i)
{
	return i < NSTEADY ? &steady_table[i] : NULL;
}

const struct llmio_optdesc *steady_opt_find(const char *key)
{
	return optdesc_find(steady_table, NSTEADY, key);
}

int steady_parse(const char *text, struct steady_cfg *cfg, struct llmio_error *e)
{
	return optdesc_set(&steady_table[0], text, cfg, e);
}

void steady_format(const struct steady_cfg *cfg, char *buf, size_t len)
{
	struct llmio_optval v;

	optdesc_load(&steady_table[0], cfg, &v);
	ss_format(&v, buf, len);
}

void steady_init(struct steady *s, const struct steady_cfg *cfg)
{
	memset(s, 0, sizeof(*s));
	s->cfg = *cfg;
	if (!s->cfg.window)
		s->cfg.window = 5;
	if (s->cfg.window > STEADY_MAX_WINDOW)
		s->cfg.window = STEADY_MAX_WINDOW;
}

unsigned steady_window_samples(double window_s, double interval_s)
{
	double n = window_s / (interval_s > 0 ? interval_s : 1);
	unsigned w = n > STEADY_MAX_WINDOW ? STEADY_MAX_WINDOW : (unsigned)(n + 0.5);

	return w < 2 ? 2 : w;
}

double steady_t95(unsigned df)
{
	/* two-sided 95 %: t(0.975, df) */
	static const double t[30] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
	                             2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120,
	                             2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
	                             2.060,  2.056, 2.052, 2.048, 2.045, 2.042};

	if (!df)
		return INFINITY;
	if (df <= 30)
		return t[df - 1];
	return df <= 60 ? 2.000 : df <= 120 ? 1.980 : 1.960;
}

/* ci: Welford's mean and variance of every sample; the half-width against the tolerance. */
static bool ci_add(struct steady *s, double elapsed_s, double value)
{
	double delta = value - s->mean, half;

	s->n++;
	s->mean += delta / s->n;
	s->m2 += delta * (value - s->mean);
	if (s->n < 2 || !(s->mean > 0))
		return false;
	half = steady_t95(s->n - 1) * sqrt(s->m2 / (s->n - 1) / s->n);
	s->ci_pct = half / s->mean * 100;
	if (s->n < s->cfg.window || s->n < STEADY_CI_MIN_SAMPLES || elapsed_s < s->cfg.min_s ||
	    s->ci_pct > s->cfg.tolerance_pct)
		return false;
	s->reached = true;
	s->reached_s = elapsed_s;
	return true;
}

bool steady_add(struct steady *s, double elapsed_s, double value)
{
	const unsigned w = s->cfg.window;
	double mean = 0, limit;

	if (s->reached || !s->cfg.enabled)
		return s->reached;
	if (s->cfg.test == STEADY_CI)
		return ci_add(s, elapsed_s, value);
	s->sample[s->n % w] = value;
	s->n++;
	if (s->n < w || elapsed_s < s->cfg.min_s)
		return false;
	for (unsigned i = 0; i < w; i++)
		mean += s->sample[i];
	mean /= w;
	if (!(mean > 0))
		return false; /* no I/O at all is not a steady state worth stopping for */
	limit = mean * s->cfg.tolerance_pct / 100;
	for (unsigned i = 0; i < w; i++)
		if (fabs(s->sample[i] - mean) > limit)
			return false;
	s->reached = true;
	s->reached_s = elapsed_s;
	return true;
}
