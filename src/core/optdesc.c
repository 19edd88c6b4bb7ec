/* SPDX-License-Identifier: MIT */
/* One parser and one range check for options described by struct llmio_optdesc. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/optdesc.h"
#include "llmio/common.h"

static const char *const type_names[] = {
        [OPTD_BOOL] = "bool",     [OPTD_INT] = "int",       [OPTD_UINT] = "int",
        [OPTD_SIZE] = "size",     [OPTD_DURATION] = "time", [OPTD_DOUBLE] = "double",
        [OPTD_STRING] = "string", [OPTD_ENUM] = "enum",
};

const char *optdesc_type_name(enum llmio_optdesc_type t)
{
	return (size_t)t < sizeof(type_names) / sizeof(type_names[0]) ? type_names[t] : "?";
}

const char *optdesc_expected(const struct llmio_optdesc *d)
{
	switch (d->type) {
	case OPTD_BOOL:
		return "1/0, true/false, yes/no or on/off";
	case OPTD_INT:
	case OPTD_UINT:
		return "a whole number";
	case OPTD_SIZE:
		return "a size such as 4096, 4k, 4KiB, 1m, 1.5GiB";
	case OPTD_DURATION:
		return "a time such as 30, 30s, 500ms, 2m";
	case OPTD_DOUBLE:
		return "a number";
	case OPTD_STRING:
		return "a text";
	case OPTD_ENUM:
		return d->choices;
	}
	return "?";
}

/* A bound as the user would write it: sizes with k/m/g, times with a unit. */
static void bound_text(const struct llmio_optdesc *d, double v, char *buf, size_t len)
{
	static const struct {
		double unit;
		const char *sfx;
	} sizes[] = {{1099511627776.0, "t"}, {1073741824.0, "g"}, {1048576.0, "m"}, {1024.0, "k"}},
	  times[] = {{1e9, "s"}, {1e6, "ms"}, {1e3, "us"}, {1, "ns"}};

	if (d->type == OPTD_SIZE || d->type == OPTD_DURATION) {
		const bool sz = d->type == OPTD_SIZE;
		const size_t n =
		        sz ? sizeof(sizes) / sizeof(sizes[0]) : sizeof(times) / sizeof(times[0]);

		for (size_t i = 0; i < n && v > 0; i++) {
			double u = sz ? sizes[i].unit : times[i].unit;

			if (fmod(v, u) == 0) {
				snprintf(buf, len, "%.0f%s", v / u,
				         sz ? sizes[i].sfx : times[i].sfx);
				return;
			}
		}
	}
	snprintf(buf, len, "%.15g", v);
}

void optdesc_range(const struct llmio_optdesc *d, char *buf, size_t len)
{
	char lo[32], hi[32];

	bound_text(d, d->min, lo, sizeof(lo));
	bound_text(d, d->max, hi, sizeof(hi));
	if (d->type == OPTD_BOOL || d->type == OPTD_STRING || d->type == OPTD_ENUM)
		snprintf(buf, len, "%s", "");
	else if (d->max)
		snprintf(buf, len, "%s..%s", lo, hi);
	else if (d->min || d->type == OPTD_INT || d->type == OPTD_DOUBLE)
		snprintf(buf, len, ">= %s", lo);
	else
		snprintf(buf, len, "%s", "");
}

static bool in_choices(const char *choices, const char *v)
{
	size_t n = strlen(v);

	for (const char *c = choices; c && *c;) {
		const char *bar = strchr(c, '|');
		size_t len = bar ? (size_t)(bar - c) : strlen(c);

		if (len == n && !strncmp(c, v, n))
			return true;
		c = bar ? bar + 1 : NULL;
	}
	return false;
}

static int parse_bool(const char *v, bool *out)
{
	static const char *const yes[] = {"1", "true", "yes", "on"}, *const no[] = {"0", "false",
	                                                                            "no", "off"};

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (!strcasecmp(v, yes[i]))
			return *out = true, 0;
		if (!strcasecmp(v, no[i]))
			return *out = false, 0;
	}
	return -EINVAL;
}

int optdesc_parse(const struct llmio_optdesc *d, const char *text, struct llmio_optval *out,
                  char *err, size_t errlen)
{
	char range[80];
	double num = 0;
	char *end;
	int ret = 0;

	if (!text)
		text = d->def ? d->def : "";
	memset(out, 0, sizeof(*out));
	out->s = text;
	switch (d->type) {
	case OPTD_BOOL:
		ret = parse_bool(text, &out->b);
		num = out->b;
		break;
	case OPTD_INT:
		errno = 0;
		out->i = strtoll(text, &end, 0);
		ret = errno || end == text || *end ? -EINVAL : 0;
		num = (double)out->i;
		break;
	case OPTD_UINT:
		ret = llmio_parse_uint(text, 0, UINT64_MAX, &out->u);
		num = (double)out->u;
		break;
	case OPTD_SIZE:
		ret = llmio_parse_size(text, &out->u);
		num = (double)out->u;
		break;
	case OPTD_DURATION:
		ret = llmio_parse_duration(text, &out->u);
		num = (double)out->u;
		break;
	case OPTD_DOUBLE:
		errno = 0;
		out->d = strtod(text, &end);
		ret = errno || end == text || *end || !isfinite(out->d) ? -EINVAL : 0;
		num = out->d;
		break;
	case OPTD_STRING:
		break;
	case OPTD_ENUM:
		ret = in_choices(d->choices, text) ? 0 : -EINVAL;
		break;
	}
	if (ret) {
		snprintf(err, errlen, "--%s=%s is not %s%s (e.g. --%s=%s)", d->name, text,
		         d->type == OPTD_ENUM ? "one of " : "", optdesc_expected(d), d->name,
		         d->def);
		return -EINVAL;
	}
	if (d->type == OPTD_BOOL || d->type == OPTD_STRING || d->type == OPTD_ENUM)
		return 0;
	if (num < d->min || (d->max && num > d->max)) {
		optdesc_range(d, range, sizeof(range));
		snprintf(err, errlen, "--%s=%s is out of range: it takes %s (e.g. --%s=%s)",
		         d->name, text, range, d->name, d->def);
		return -EINVAL;
	}
	return 0;
}
