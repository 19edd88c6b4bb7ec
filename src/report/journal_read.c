/* SPDX-License-Identifier: MIT */
/* Sweep journal reader with torn-line detection (see journal_read.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "report/journal_read.h"

int journal_open(struct journal_reader *r, const char *path)
{
	memset(r, 0, sizeof(*r));
	r->path = path;
	r->f = fopen(path, "re");
	return r->f ? 0 : -errno;
}

static void warn_line(struct journal_reader *r, const char *why)
{
	r->skipped++;
	if (r->warn)
		r->warn(r->warn_arg, r->path, r->lineno, why);
	else
		fprintf(stderr, "llmio: %s line %lu: %s: ignored\n", r->path, r->lineno, why);
}

static bool blank(const char *s)
{
	return s[strspn(s, " \t\r\n")] == '\0';
}

int journal_next(struct journal_reader *r, cJSON **rec)
{
	ssize_t n;

	*rec = NULL;
	for (;;) {
		errno = 0;
		n = getline(&r->line, &r->cap, r->f);
		if (n < 0)
			return ferror(r->f) ? -(errno ? errno : EIO) : 0;
		r->lineno++;
		if (blank(r->line))
			continue;
		if (r->line[n - 1] != '\n') {
			/* the writer appends "record\n" and fsyncs: no newline = cut short */
			warn_line(r, "torn last line (no newline: the writer was interrupted)");
			continue;
		}
		*rec = cJSON_ParseWithLength(r->line, (size_t)n);
		if (*rec && cJSON_IsObject(*rec))
			return 1;
		cJSON_Delete(*rec);
		*rec = NULL;
		warn_line(r, "torn line (not a valid JSON object)");
	}
}

void journal_close(struct journal_reader *r)
{
	if (r->f)
		fclose(r->f);
	free(r->line);
	r->f = NULL;
	r->line = NULL;
}
