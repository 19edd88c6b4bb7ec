/* SPDX-License-Identifier: MIT */
/* Parsing of sizes, durations and integers shared by the CLI, job options and job files. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llmio/common.h"

const char *llmio_version(void)
{
	return LLMIO_VERSION_STRING;
}

struct unit {
	const char *name;
	double mult;
};

/* Reads a non-negative decimal (with optional fraction) and returns where the unit starts. */
static int parse_number(const char *text, double *val, const char **unit)
{
	const char *p = text;
	char *end;

	if (!text || !isdigit((unsigned char)*p))
		return -EINVAL; /* no sign, no leading space, no bare unit */
	errno = 0;
	*val = strtod(p, &end);
	if (errno == ERANGE)
		return -ERANGE;
	if (end == p || !isfinite(*val))
		return -EINVAL;
	/* strtod accepts hex and exponents; a size is plain decimal */
	for (const char *q = p; q < end; q++)
		if (!isdigit((unsigned char)*q) && *q != '.')
			return -EINVAL;
	*unit = end;
	return 0;
}

static int apply_unit(double val, const char *unit, const struct unit *units, size_t nunits,
                      double *out)
{
	for (size_t i = 0; i < nunits; i++) {
		if (strcmp(unit, units[i].name))
			continue;
		*out = val * units[i].mult;
		return 0;
	}
	return -EINVAL;
}

int llmio_parse_size(const char *text, uint64_t *out)
{
	static const struct unit units[] = {
	        {"", 1},
	        {"b", 1},
	        {"B", 1},
	        {"k", 1024.0},
	        {"K", 1024.0},
	        {"kb", 1024.0},
	        {"KB", 1024.0},
	        {"KiB", 1024.0},
	        {"kib", 1024.0},
	        {"m", 1048576.0},
	        {"M", 1048576.0},
	        {"mb", 1048576.0},
	        {"MB", 1048576.0},
	        {"MiB", 1048576.0},
	        {"mib", 1048576.0},
	        {"g", 1073741824.0},
	        {"G", 1073741824.0},
	        {"gb", 1073741824.0},
	        {"GB", 1073741824.0},
	        {"GiB", 1073741824.0},
	        {"gib", 1073741824.0},
	        {"t", 1099511627776.0},
	        {"T", 1099511627776.0},
	        {"tb", 1099511627776.0},
	        {"TB", 1099511627776.0},
	        {"TiB", 1099511627776.0},
	        {"tib", 1099511627776.0},
	};
	const char *unit;
	double v, bytes;
	int ret;

	ret = parse_number(text, &v, &unit);
	if (ret)
		return ret;
	if (apply_unit(v, unit, units, sizeof(units) / sizeof(units[0]), &bytes))
		return -EINVAL;
	if (bytes >= 18446744073709551616.0)
		return -ERANGE;
	if (bytes != floor(bytes))
		return -EINVAL; /* "1.3k" is not a whole number of bytes */
	*out = (uint64_t)bytes;
	return 0;
}

int llmio_parse_duration(const char *text, uint64_t *out_ns)
{
	static const struct unit units[] = {
	        {"", 1e9},   {"s", 1e9},    {"us", 1e3},   {"ms", 1e6},
	        {"m", 60e9}, {"min", 60e9}, {"h", 3600e9},
	};
	const char *unit;
	double v, ns;
	int ret;

	ret = parse_number(text, &v, &unit);
	if (ret)
		return ret;
	if (apply_unit(v, unit, units, sizeof(units) / sizeof(units[0]), &ns))
		return -EINVAL;
	if (ns >= 18446744073709551616.0)
		return -ERANGE;
	*out_ns = (uint64_t)ns;
	return 0;
}

int llmio_parse_uint(const char *text, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!text || !isdigit((unsigned char)*text))
		return -EINVAL;
	errno = 0;
	v = strtoull(text, &end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	if (*end)
		return -EINVAL;
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

char *llmio_format_bytes(uint64_t bytes, char *buf, size_t len)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
	double v = (double)bytes;
	unsigned u = 0;

	while (v >= 1024 && u < sizeof(units) / sizeof(units[0]) - 1) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%llu B", (unsigned long long)bytes);
	else
		snprintf(buf, len, "%.2f %s", v, units[u]);
	return buf;
}
