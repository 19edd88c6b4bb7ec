/* SPDX-License-Identifier: MIT */
/* Number formats shared by every table (report/fmt.h). */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "report/fmt.h"

void fmt_ns(char *buf, size_t len, uint64_t ns)
{
	if (ns < 10000)
		snprintf(buf, len, "%llu ns", (unsigned long long)ns);
	else if (ns < 10000000)
		snprintf(buf, len, "%.1f us", (double)ns / 1e3);
	else if (ns < 10000000000ull)
		snprintf(buf, len, "%.1f ms", (double)ns / 1e6);
	else
		snprintf(buf, len, "%.2f s", (double)ns / 1e9);
}

void fmt_wrapped(FILE *f, const char *prefix, size_t indent, const char *text)
{
	size_t col = strlen(prefix);
	bool first = true; /* the text's first word follows the prefix directly */

	fputs(prefix, f);
	text += strspn(text, " ");
	while (*text) {
		size_t word = strcspn(text, " ");

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
