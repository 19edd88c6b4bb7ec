/* SPDX-License-Identifier: MIT */
/*
 * One parser, one range check and one field store for every option described by struct
 * llmio_optdesc: job options, engine options, recipe parameters and steady-state keys.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/error.h"
#include "base/optdesc.h"
#include "llmio/common.h"

static const char *const type_names[] = {
        [OPTD_BOOL] = "bool",     [OPTD_INT] = "int",       [OPTD_UINT] = "int",
        [OPTD_SIZE] = "size",     [OPTD_DURATION] = "time", [OPTD_DOUBLE] = "double",
        [OPTD_STRING] = "string", [OPTD_ENUM] = "enum",
};

#define MS_NS 1000000ull
#define S_NS  1000000000ull

const char *optdesc_type_name(const struct llmio_optdesc *d)
{
	if (d->type == OPTD_DURATION && d->store_ns == MS_NS)
		return "time (ms)";
	return (size_t)d->type < sizeof(type_names) / sizeof(type_names[0]) ? type_names[d->type]
	                                                                    : "?";
}

const char *optdesc_expected(const struct llmio_optdesc *d)
{
	if (d->expect)
		return d->expect;
	switch (d->type) {
	case OPTD_BOOL:
		return "1/0, true/false, yes/no or on/off";
	case OPTD_INT:
	case OPTD_UINT:
		return "a whole number";
	case OPTD_SIZE:
		return "a size such as 4096, 4k, 4KiB, 1m, 1.5GiB";
	case OPTD_DURATION:
		if (d->bare_ns == 1000)
			return "microseconds, or a time with unit such as 500us, 2ms";
		if (d->bare_ns == MS_NS)
			return "milliseconds, or a time with unit such as 10ms, 2s";
		if (d->store_ns == S_NS)
			return "whole seconds such as 10s or 2m";
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

const char *optdesc_fio_name(const struct llmio_optdesc *d)
{
	return d->fio ? d->fio : d->alias ? d->alias : d->name;
}

const struct llmio_optdesc *optdesc_find(const struct llmio_optdesc *table, size_t n,
                                         const char *key)
{
	for (size_t i = 0; table && i < n && table[i].name; i++)
		if (!strcmp(table[i].name, key) || (table[i].alias && !strcmp(table[i].alias, key)))
			return &table[i];
	return NULL;
}

/* The effective inclusive bounds of a whole-number option: the exact ones when set, else the
 * double ones, narrowed to what its field can hold. */
struct bounds {
	bool upper; /* an upper bound worth stating */
	uint64_t ulo, uhi;
	int64_t ilo, ihi;
};

static struct bounds bounds_of(const struct llmio_optdesc *d)
{
	const unsigned bits = d->size && d->size < 8 ? (unsigned)d->size * 8 : 64;
	const bool stored = d->type != OPTD_DURATION || d->store_ns <= 1;
	struct bounds b = {.uhi = UINT64_MAX, .ilo = INT64_MIN, .ihi = INT64_MAX};

	if (d->umin || d->umax) {
		b.ulo = d->umin;
		b.uhi = d->umax ? d->umax : UINT64_MAX;
		b.upper = d->umax != 0;
	} else {
		b.ulo = d->min > 0 ? (uint64_t)d->min : 0;
		b.uhi = d->max > 0 ? (uint64_t)d->max : UINT64_MAX;
		b.upper = d->max != 0;
	}
	if (d->imin || d->imax) {
		b.ilo = d->imin;
		b.ihi = d->imax;
		b.upper = true;
	} else {
		b.ilo = (int64_t)d->min;
		b.ihi = d->max ? (int64_t)d->max : INT64_MAX;
	}
	/* a field narrower than 64 bits bounds the value (durations count stored units) */
	if (bits < 64 && stored && d->type != OPTD_BOOL && d->type != OPTD_ENUM &&
	    d->type != OPTD_DOUBLE && d->type != OPTD_STRING) {
		if (d->type == OPTD_INT && b.ihi > (INT64_C(1) << (bits - 1)) - 1) {
			b.ihi = (INT64_C(1) << (bits - 1)) - 1;
			b.upper = true;
		} else if (d->type != OPTD_INT && b.uhi > (UINT64_C(1) << bits) - 1) {
			b.uhi = (UINT64_C(1) << bits) - 1;
			b.upper = true;
		}
	}
	return b;
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

/* A whole-number bound: beyond a double's exact integers (2^53) as digits, else as the user
 * would write it. */
static void exact_text(const struct llmio_optdesc *d, uint64_t v, char *buf, size_t len)
{
	if (v > (UINT64_C(1) << 53))
		snprintf(buf, len, "%llu", (unsigned long long)v);
	else
		bound_text(d, (double)v, buf, len);
}

void optdesc_range(const struct llmio_optdesc *d, char *buf, size_t len)
{
	const struct bounds b = bounds_of(d);
	char lo[32], hi[32];

	if (d->type == OPTD_BOOL || d->type == OPTD_STRING || d->type == OPTD_ENUM || d->codec) {
		snprintf(buf, len, "%s", "");
		return;
	}
	if (d->type == OPTD_DOUBLE) {
		bound_text(d, d->min, lo, sizeof(lo));
		bound_text(d, d->max, hi, sizeof(hi));
	} else if (d->type == OPTD_INT) {
		snprintf(lo, sizeof(lo), "%lld", (long long)b.ilo);
		snprintf(hi, sizeof(hi), "%lld", (long long)b.ihi);
	} else {
		exact_text(d, b.ulo, lo, sizeof(lo));
		exact_text(d, b.uhi, hi, sizeof(hi));
	}
	if (d->type == OPTD_DOUBLE ? d->max != 0 : b.upper)
		snprintf(buf, len, "%s..%s", lo, hi);
	else if (d->min || d->type == OPTD_INT || d->type == OPTD_DOUBLE)
		snprintf(buf, len, ">= %s", lo);
	else
		snprintf(buf, len, "%s", "");
}

/* The index of v among "a|b|c", or -1. */
static int choice_index(const char *choices, const char *v)
{
	size_t n = strlen(v);
	int i = 0;

	for (const char *c = choices; c && *c; i++) {
		const char *bar = strchr(c, '|');
		size_t len = bar ? (size_t)(bar - c) : strlen(c);

		if (len == n && !strncmp(c, v, n))
			return i;
		c = bar ? bar + 1 : NULL;
	}
	return -1;
}

/* Choice i of "a|b|c" into buf ("?" when there is none). */
static void choice_at(const char *choices, int64_t i, char *buf, size_t len)
{
	const char *c = choices;

	for (; c && i > 0; i--) {
		c = strchr(c, '|');
		c = c ? c + 1 : NULL;
	}
	if (!c || i < 0) {
		snprintf(buf, len, "?");
		return;
	}
	snprintf(buf, len, "%.*s", (int)strcspn(c, "|"), c);
}

static int parse_bool(const char *v, bool *out)
{
	/* "" is true: a flag given without a value (--direct) */
	static const char *const yes[] = {"1", "true", "yes", "on", ""}, *const no[] = {
	                                                                         "0", "false", "no",
	                                                                         "off"};

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		if (!strcasecmp(v, yes[i]))
			return *out = true, 0;
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		if (!strcasecmp(v, no[i]))
			return *out = false, 0;
	return -EINVAL;
}

static int parse_duration(const struct llmio_optdesc *d, const char *text, uint64_t *ns)
{
	uint64_t n;
	int ret;

	if (d->bare_ns && llmio_parse_uint(text, 0, UINT64_MAX / d->bare_ns, &n) == 0)
		return *ns = n * d->bare_ns, 0;
	ret = llmio_parse_duration(text, ns);
	if (ret)
		return ret == -ERANGE ? ret : -EINVAL;
	return d->store_ns > 1 && *ns % d->store_ns ? -EINVAL : 0;
}

/* The one wording of a refused value: a recipe's flag, or a job-file key. */
static int reject(const struct llmio_optdesc *d, const char *text, bool range,
                  struct llmio_error *e)
{
	const bool flag = d->scope == OPTD_SCOPE_RECIPE;
	const char *dash = flag ? "--" : "";
	char r[80];

	if (range) {
		optdesc_range(d, r, sizeof(r));
		if (flag)
			return llmio_err(e, -ERANGE,
			                 "--%s=%s is out of range: it takes %s (e.g. --%s=%s)",
			                 d->name, text, r, d->name, d->def);
		return llmio_err(e, -ERANGE, "%s=%s is out of range: it takes %s", d->name, text,
		                 r);
	}
	if (d->type == OPTD_STRING && d->size)
		return llmio_err(e, -EINVAL,
		                 "%s%s=%s is not valid: expected a text shorter than %zu "
		                 "bytes",
		                 dash, d->name, text, d->size);
	if (flag)
		return llmio_err(e, -EINVAL, "--%s=%s is not %s%s (e.g. --%s=%s)", d->name, text,
		                 d->type == OPTD_ENUM && !d->expect ? "one of " : "",
		                 optdesc_expected(d), d->name, d->def);
	return llmio_err(e, -EINVAL, "%s=%s is not valid: expected %s%s", d->name, text,
	                 d->type == OPTD_ENUM && !d->expect ? "one of " : "", optdesc_expected(d));
}

static int parse_number(const struct llmio_optdesc *d, const char *text, struct llmio_optval *out,
                        struct llmio_error *e)
{
	const struct bounds b = bounds_of(d);
	char *end;
	int ret = 0;

	switch (d->type) {
	case OPTD_INT:
		errno = 0;
		out->i = strtoll(text, &end, 10);
		if (end == text || *end || (errno && errno != ERANGE))
			return reject(d, text, false, e);
		if (errno == ERANGE)
			return reject(d, text, true, e);
		return out->i < b.ilo || out->i > b.ihi ? reject(d, text, true, e) : 0;
	case OPTD_UINT:
		ret = llmio_parse_uint(text, 0, UINT64_MAX, &out->u);
		break;
	case OPTD_SIZE:
		ret = llmio_parse_size(text, &out->u);
		break;
	case OPTD_DURATION:
		ret = parse_duration(d, text, &out->u);
		/* stored in coarser units: the field's width bounds the count of units */
		if (!ret && d->store_ns > 1 && d->size && d->size < 8 &&
		    out->u / d->store_ns >= UINT64_C(1) << (d->size * 8 - 1))
			return reject(d, text, true, e);
		break;
	case OPTD_DOUBLE:
		errno = 0;
		out->d = strtod(text, &end);
		if (errno || end == text || *end || !isfinite(out->d))
			return reject(d, text, false, e);
		return out->d < d->min || (d->max && out->d > d->max) ? reject(d, text, true, e)
		                                                      : 0;
	default:
		return 0;
	}
	if (ret == -ERANGE)
		return reject(d, text, true, e);
	if (ret)
		return reject(d, text, false, e);
	return out->u < b.ulo || out->u > b.uhi ? reject(d, text, true, e) : 0;
}

/*
 * No value holds a control character: a newline in a path would add lines to a job file
 * written from the options (--emit-fio: fio would read them as options of its own,
 * exec_prerun among them), and to every message and record that echoes it.  Refused before
 * any message quotes the value.
 */
int optdesc_check_text(const char *dash, const char *name, const char *text, struct llmio_error *e)
{
	for (const char *c = text; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return llmio_err(
			        e, -EINVAL,
			        "%s%s holds a control character (byte 0x%02x at offset %zu): "
			        "option values are one line of printable text; remove it",
			        dash, name, (unsigned)(unsigned char)*c, (size_t)(c - text));
	return 0;
}

int optdesc_parse(const struct llmio_optdesc *d, const char *text, struct llmio_optval *out,
                  struct llmio_error *e)
{
	if (!text)
		text = d->def ? d->def : "";
	if (optdesc_check_text(d->scope == OPTD_SCOPE_RECIPE ? "--" : "", d->name, text, e))
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->s = text;
	if (d->codec)
		return d->codec->parse(text, out) ? reject(d, text, false, e) : 0;
	switch (d->type) {
	case OPTD_BOOL:
		if (parse_bool(text, &out->b))
			return reject(d, text, false, e);
		out->i = out->b;
		return 0;
	case OPTD_STRING:
		return d->size && strlen(text) >= d->size ? reject(d, text, false, e) : 0;
	case OPTD_ENUM:
		out->i = choice_index(d->choices, text);
		return out->i < 0 ? reject(d, text, false, e) : 0;
	default:
		return parse_number(d, text, out, e);
	}
}

static void store_int(void *field, size_t size, uint64_t v)
{
	switch (size) {
	case 1: {
		uint8_t x = (uint8_t)v;
		memcpy(field, &x, 1);
		break;
	}
	case 2: {
		uint16_t x = (uint16_t)v;
		memcpy(field, &x, 2);
		break;
	}
	case 4: {
		uint32_t x = (uint32_t)v;
		memcpy(field, &x, 4);
		break;
	}
	default:
		memcpy(field, &v, 8);
	}
}

static uint64_t load_int(const void *field, size_t size, bool sign)
{
	uint8_t b;
	uint16_t h;
	uint32_t w;
	uint64_t q;

	switch (size) {
	case 1:
		memcpy(&b, field, 1);
		return sign ? (uint64_t)(int64_t)(int8_t)b : b;
	case 2:
		memcpy(&h, field, 2);
		return sign ? (uint64_t)(int64_t)(int16_t)h : h;
	case 4:
		memcpy(&w, field, 4);
		return sign ? (uint64_t)(int64_t)(int32_t)w : w;
	default:
		memcpy(&q, field, 8);
		return q;
	}
}

int optdesc_store(const struct llmio_optdesc *d, const struct llmio_optval *v, void *base,
                  struct llmio_error *e)
{
	char *field = (char *)base + d->offset;

	(void)e;
	if (d->codec) {
		if (d->codec->store)
			d->codec->store(v, base);
		return 0;
	}
	if (!d->size)
		return 0;
	switch (d->type) {
	case OPTD_BOOL:
		store_int(field, d->size, v->b);
		break;
	case OPTD_INT:
	case OPTD_ENUM:
		store_int(field, d->size, (uint64_t)v->i);
		break;
	case OPTD_UINT:
	case OPTD_SIZE:
		store_int(field, d->size, v->u);
		break;
	case OPTD_DURATION:
		store_int(field, d->size, v->u / (d->store_ns ? d->store_ns : 1));
		break;
	case OPTD_DOUBLE:
		memcpy(field, &v->d, sizeof(v->d));
		break;
	case OPTD_STRING:
		memcpy(field, v->s, strlen(v->s) + 1); /* optdesc_parse() checked the length */
		break;
	}
	return 0;
}

int optdesc_set(const struct llmio_optdesc *d, const char *text, void *base, struct llmio_error *e)
{
	struct llmio_optval v;
	int ret = optdesc_parse(d, text, &v, e);

	return ret ? ret : optdesc_store(d, &v, base, e);
}

void optdesc_load(const struct llmio_optdesc *d, const void *base, struct llmio_optval *v)
{
	const char *field = (const char *)base + d->offset;

	memset(v, 0, sizeof(*v));
	v->s = "";
	if (d->codec) {
		if (d->codec->load)
			d->codec->load(base, v);
		return;
	}
	if (!d->size)
		return;
	switch (d->type) {
	case OPTD_BOOL:
		v->b = load_int(field, d->size, false) != 0;
		v->i = v->b;
		break;
	case OPTD_INT:
	case OPTD_ENUM:
		v->i = (int64_t)load_int(field, d->size, true);
		break;
	case OPTD_UINT:
	case OPTD_SIZE:
		v->u = load_int(field, d->size, false);
		break;
	case OPTD_DURATION:
		v->u = load_int(field, d->size, false) * (d->store_ns ? d->store_ns : 1);
		break;
	case OPTD_DOUBLE:
		memcpy(&v->d, field, sizeof(v->d));
		break;
	case OPTD_STRING:
		v->s = field;
		break;
	}
}

int optdesc_format(const struct llmio_optdesc *d, const struct llmio_optval *v, char *buf,
                   size_t len)
{
	char choice[64];
	int n = 0;

	if (d->codec)
		return d->codec->format(v, buf, len);
	switch (d->type) {
	case OPTD_BOOL:
		n = snprintf(buf, len, "%d", v->b ? 1 : 0);
		break;
	case OPTD_INT:
		n = snprintf(buf, len, "%lld", (long long)v->i);
		break;
	case OPTD_UINT:
	case OPTD_SIZE:
	case OPTD_DURATION:
		n = snprintf(buf, len, "%llu", (unsigned long long)v->u);
		break;
	case OPTD_DOUBLE:
		n = snprintf(buf, len, "%.17g", v->d);
		break;
	case OPTD_STRING:
		n = snprintf(buf, len, "%s", v->s);
		break;
	case OPTD_ENUM:
		choice_at(d->choices, v->i, choice, sizeof(choice));
		n = snprintf(buf, len, "%s", choice);
		break;
	}
	return n < 0 || (size_t)n >= len ? -ERANGE : 0;
}
