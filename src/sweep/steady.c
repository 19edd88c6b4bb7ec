/* SPDX-License-Identifier: MIT */
/*
 * Steady state as fio's ss=iops:X% defines it: the last W one-second samples all lie within
 * X % of their mean.  A stable device usually settles within a few seconds, so a sweep that
 * waits for this instead of a fixed runtime measures many more points per hour; the price
 * (how much the figures differ) is measured in docs/sweeps.md.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/optdesc.h"
#include "sweep/steady.h"

/* iops:PCT / bw:PCT / off: enabled in b, the metric in i, the tolerance in d. */
static int ss_parse(const char *text, struct llmio_optval *out)
{
	const char *colon = strchr(text, ':');
	char *end;

	if (!strcasecmp(text, "off") || !strcasecmp(text, "none") || !strcmp(text, "0"))
		return 0;
	if (colon && colon - text == 4 && !strncasecmp(text, "iops", 4))
		out->i = STEADY_IOPS;
	else if (colon && colon - text == 2 && !strncasecmp(text, "bw", 2))
		out->i = STEADY_BW;
	else
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
		cfg->metric = (enum steady_metric)v->i;
		cfg->tolerance_pct = v->d;
	}
}

static void ss_load(const void *base, struct llmio_optval *v)
{
	const struct steady_cfg *cfg = base;

	v->b = cfg->enabled;
	v->i = cfg->metric;
	v->d = cfg->tolerance_pct;
}

static int ss_format(const struct llmio_optval *v, char *buf, size_t len)
{
	int n = v->b ? snprintf(buf, len, "%s:%g", v->i == STEADY_BW ? "bw" : "iops", v->d)
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
              "steady within PCT %; off = run the whole runtime",
              .codec = &ss_codec, .fio_kind = OPTD_FIO_VALUE,
              .expect = "iops:PCT or bw:PCT (e.g. iops:5%, a tolerance above 0 and up to 100), "
                        "or off"),
        SWEEP("ss_window", OPTD_DURATION, "5s",
              "one-second samples that must agree (whole seconds)", .min = 1e9, .max = 600e9,
              .store_ns = 1000000000, OPTD_FIELD(struct steady_cfg, window), .fio = "ss_dur",
              .fio_kind = OPTD_FIO_VALUE),
        SWEEP("ss_min", OPTD_DURATION, "0", "not steady before this much measured time",
              .fio = "ss_ramp", .fio_kind = OPTD_FIO_VALUE),
        SWEEP("ss_max", OPTD_DURATION, "0", "the longest a point measures; 0 = its runtime",
              .fio_kind = OPTD_FIO_NONE, .fio_note = "fio's runtime bounds it"),
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

bool steady_add(struct steady *s, double elapsed_s, double value)
{
	const unsigned w = s->cfg.window;
	double mean = 0, limit;

	if (s->reached || !s->cfg.enabled)
		return s->reached;
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
