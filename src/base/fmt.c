/* SPDX-License-Identifier: MIT */
/* Number formats shared by every table (base/fmt.h). */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/fmt.h"

/*
 * v with three significant digits and no exponent ("812", "12.5", "3.14"); false when it
 * rounds to 1000 or more, so that the caller moves to the next unit.
 */
static bool sig3(char *buf, size_t len, double v)
{
	if (v < 9.995)
		snprintf(buf, len, "%.2f", v);
	else if (v < 99.95)
		snprintf(buf, len, "%.1f", v);
	else if (v < 999.5)
		snprintf(buf, len, "%.0f", v);
	else
		return false;
	return true;
}

void fmt_ns(char *buf, size_t len, uint64_t ns)
{
	static const char *const units[] = {"us", "ms"};
	char v[32];
	double x = (double)ns;

	if (ns < 1000) {
		snprintf(buf, len, "%llu ns", (unsigned long long)ns);
		return;
	}
	for (unsigned u = 0; u < 2; u++) {
		x /= 1000;
		if (sig3(v, sizeof(v), x)) {
			snprintf(buf, len, "%s %s", v, units[u]);
			return;
		}
	}
	fmt_seconds(buf, len, x / 1000);
}

void fmt_seconds(char *buf, size_t len, double s)
{
	char v[32];

	if (!(s >= 0)) /* negative or NaN: nothing was measured */
		s = 0;
	if (s > 0 && s < 0.9995) {
		fmt_ns(buf, len, (uint64_t)(s * 1e9 + 0.5));
		return;
	}
	if (sig3(v, sizeof(v), s))
		snprintf(buf, len, "%s s", v);
	else if (s < 3600)
		snprintf(buf, len, "%.0f s", s);
	else
		snprintf(buf, len, "%.0f h %02.0f min", floor(s / 3600), floor(fmod(s, 3600) / 60));
}

void fmt_params(char *buf, size_t len, uint64_t n)
{
	if (n >= 1000000000ull)
		snprintf(buf, len, "%.2f B", (double)n / 1e9);
	else
		snprintf(buf, len, "%.0f M", (double)n / 1e6);
}

void fmt_hms(char *buf, size_t len, double s)
{
	/* a huge or odd estimate must not overflow the conversion (undefined behaviour) */
	unsigned long t = s > 0 && s < 1e15 ? (unsigned long)(s + 0.5)
	                  : s >= 1e15       ? 999999999999999ul
	                                    : 0;

	if (t >= 3600)
		snprintf(buf, len, "%luh%02lum", t / 3600, t / 60 % 60);
	else if (t >= 60)
		snprintf(buf, len, "%lum%02lus", t / 60, t % 60);
	else
		snprintf(buf, len, "%lus", t);
}

/*
 * x divided by step until it is below 999.5 (so that three significant digits hold it, and
 * 1000 to 1023 of a unit read as 0.98 of the next), then with its unit.
 */
static void scaled(char *buf, size_t len, double x, double step, const char *const *units,
                   unsigned n)
{
	unsigned u = 0;
	char v[32];

	if (!(x >= 0)) /* negative or NaN: nothing was measured */
		x = 0;
	if (x < 999.5) {
		snprintf(buf, len, "%.0f %s", x, units[0]);
		return;
	}
	while (x >= 999.5 && u + 1 < n) {
		x /= step;
		u++;
	}
	if (!sig3(v, sizeof(v), x))
		snprintf(v, sizeof(v), "%.0f", x);
	snprintf(buf, len, "%s %s", v, units[u]);
}

void fmt_bytes(char *buf, size_t len, double bytes)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};

	scaled(buf, len, bytes, 1024, units, sizeof(units) / sizeof(units[0]));
}

void fmt_rate(char *buf, size_t len, double bytes_per_s)
{
	static const char *const units[] = {"B/s", "kB/s", "MB/s", "GB/s", "TB/s"};

	scaled(buf, len, bytes_per_s, 1000, units, sizeof(units) / sizeof(units[0]));
}

void fmt_number(char *buf, size_t len, double v)
{
	char t[32];
	double a = fabs(v);

	if (v == 0 || !isfinite(v)) {
		snprintf(buf, len, "%s", v == 0 ? "0" : "-");
	} else if (a >= 999.5) {
		fmt_count(buf, len, v);
	} else if (v == floor(v)) { /* a count: 8 ranks, 16 hits */
		snprintf(buf, len, "%.0f", v);
	} else if (a < 0.001) {
		snprintf(buf, len, "%.1g", v);
		/* a tiny figure: no exponent in a human table */
		if (strchr(buf, 'e'))
			snprintf(buf, len, "%s<0.001", v < 0 ? "-" : "");
	} else if (a < 1) {
		snprintf(buf, len, "%.3g", v);
	} else {
		sig3(t, sizeof(t), a);
		snprintf(buf, len, "%s%s", v < 0 ? "-" : "", t);
	}
}

void fmt_path(char *buf, size_t len, const char *path, size_t width)
{
	size_t n = strlen(path), head, tail;

	if (width < 8)
		width = 8;
	if (n <= width || len < width + 4) {
		snprintf(buf, len, "%s", path);
		return;
	}
	/* "..." in the middle (ASCII: any terminal, any locale, three columns): the start says
	 * where, the end which file */
	tail = (width - 3) / 2;
	head = width - 3 - tail;
	snprintf(buf, len, "%.*s...%s", (int)head, path, path + n - tail);
}

/* A unit after a figure ("2.65 GB/s"): a line never breaks between the two. */
static bool is_unit(const char *w, size_t n)
{
	static const char *const units[] = {"ns",   "us",   "ms",        "s",    "B",    "KiB",
	                                    "MiB",  "GiB",  "TiB",       "B/s",  "kB/s", "MB/s",
	                                    "GB/s", "IOPS", "GB/s/core", "cores"};

	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strlen(units[i]) == n && !strncmp(w, units[i], n))
			return true;
	/* with punctuation after it: "GB/s," "ms)" */
	return n > 1 && strchr(",;:)", w[n - 1]) && is_unit(w, n - 1);
}

void fmt_wrapped(FILE *f, const char *prefix, size_t indent, const char *text)
{
	size_t col = strlen(prefix);
	bool first = true; /* the text's first word follows the prefix directly */

	fputs(prefix, f);
	text += strspn(text, " ");
	while (*text) {
		size_t word = strcspn(text, " ");
		const char *next = text + word + strspn(text + word, " ");

		if (*next && is_unit(next, strcspn(next, " ")))
			word = (size_t)(next - text) + strcspn(next, " ");
		if (!first && col + 1 + word > FMT_COLUMNS) {
			fprintf(f, "\n%*s", (int)indent, "");
			col = indent;
		} else if (!first) {
			fputc(' ', f);
			col++;
		}
		fwrite(text, 1, word, f);
		col += word;
		text += word + strspn(text + word, " ");
		first = false;
	}
	fputc('\n', f);
}

void fmt_count(char *buf, size_t len, double v)
{
	if (v >= 1e6)
		snprintf(buf, len, "%.2fM", v / 1e6);
	else if (v >= 1e4)
		snprintf(buf, len, "%.1fk", v / 1e3);
	else
		snprintf(buf, len, "%.0f", v);
}

void fmt_size(char *buf, size_t len, uint64_t bytes)
{
	static const char units[] = "kmgt";
	unsigned u = 0;

	if (!bytes || bytes % 1024) {
		snprintf(buf, len, "%llu", (unsigned long long)bytes);
		return;
	}
	bytes /= 1024;
	while (u < 3 && bytes >= 1024 && bytes % 1024 == 0) {
		bytes /= 1024;
		u++;
	}
	snprintf(buf, len, "%llu%c", (unsigned long long)bytes, units[u]);
}

void fmt_metric(char *buf, size_t len, double v, const char *unit)
{
	char t[48];

	if (!strcmp(unit, "B")) {
		fmt_bytes(buf, len, v);
	} else if (!strcmp(unit, "s")) {
		fmt_seconds(buf, len, v);
	} else if (!strcmp(unit, "ms") || !strcmp(unit, "us") || !strcmp(unit, "ns")) {
		const double per_s = unit[0] == 'm' ? 1e3 : unit[0] == 'u' ? 1e6 : 1e9;

		fmt_seconds(buf, len, v / per_s);
	} else if (!strcmp(unit, "GB/s")) {
		fmt_rate(buf, len, v * 1e9);
	} else {
		fmt_number(t, sizeof(t), v);
		snprintf(buf, len, "%s%s%s", t, unit[0] ? " " : "", unit);
	}
}

/* Last words of a key that only name its unit: the value printed beside it carries it. */
static bool unit_word(const char *w, size_t n)
{
	static const char *const units[] = {"s", "us", "ns", "ms", "B", "GBps", "per", "pct"};

	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strlen(units[i]) == n && !strncmp(w, units[i], n))
			return true;
	return false;
}

void fmt_words(char *buf, size_t len, const char *key)
{
	static const struct {
		const char *word, *as;
	} words[] = {{"cpu", "CPU"},         {"kv", "KV"},  {"mem", "memory"},
	             {"GBps", "throughput"}, {"io", "I/O"}, {"ios", "I/Os"}};
	size_t n = strlen(key), used = 0;

	/* drop the unit words at the end ("load_time_s" -> "load time"), not the whole key */
	for (;;) {
		const char *u = key + n;
		size_t k = 0;

		while (u > key && u[-1] != '_') {
			u--;
			k++;
		}
		if (u == key || !unit_word(u, k))
			break;
		n = (size_t)(u - key) - 1;
	}
	if (len)
		buf[0] = '\0';
	for (size_t i = 0; i < n && used + 1 < len;) {
		size_t k = strcspn(key + i, "_");
		const char *w = key + i;
		int wl = (int)(k < n - i ? k : n - i);

		for (size_t j = 0; j < sizeof(words) / sizeof(words[0]); j++)
			if (strlen(words[j].word) == (size_t)wl && !strncmp(w, words[j].word, k)) {
				w = words[j].as;
				wl = (int)strlen(w);
				break;
			}
		used += (size_t)snprintf(buf + used, len - used, "%s%.*s", i ? " " : "", wl, w);
		i += k + 1;
	}
}

void fmt_html(FILE *f, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		switch (s[i]) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&#39;", f);
			break;
		default:
			fputc(s[i], f);
		}
	}
}
