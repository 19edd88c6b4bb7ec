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

#include "sweep/steady.h"

int steady_parse(const char *text, struct steady_cfg *cfg, char *err, size_t errlen)
{
	const char *colon = strchr(text, ':');
	char *end;
	double tol;

	if (!strcasecmp(text, "off") || !strcasecmp(text, "none") || !strcmp(text, "0")) {
		cfg->enabled = false;
		return 0;
	}
	if (colon && colon - text == 4 && !strncasecmp(text, "iops", 4))
		cfg->metric = STEADY_IOPS;
	else if (colon && colon - text == 2 && !strncasecmp(text, "bw", 2))
		cfg->metric = STEADY_BW;
	else
		goto bad;
	errno = 0;
	tol = strtod(colon + 1, &end);
	if (errno || end == colon + 1 || (*end && strcmp(end, "%")) || !(tol > 0) || tol > 100)
		goto bad;
	cfg->enabled = true;
	cfg->tolerance_pct = tol;
	return 0;
bad:
	snprintf(err, errlen,
	         "ss=%s is not valid: expected iops:PCT or bw:PCT (e.g. iops:5%%, a tolerance "
	         "above 0 and up to 100), or off",
	         text);
	return -EINVAL;
}

void steady_format(const struct steady_cfg *cfg, char *buf, size_t len)
{
	if (!cfg->enabled)
		snprintf(buf, len, "off");
	else
		snprintf(buf, len, "%s:%g", cfg->metric == STEADY_BW ? "bw" : "iops",
		         cfg->tolerance_pct);
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
