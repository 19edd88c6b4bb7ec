/* SPDX-License-Identifier: MIT */
/*
 * Sweep journal reader: one JSON object per line (docs/report.md, "The journal").  A line that
 * does not end in a newline (the writer was killed mid-record) or is not valid JSON is torn:
 * it is reported with its line number through the warn callback and skipped, never parsed as
 * data.  Blank lines are skipped silently.  Not thread-safe: one reader per thread.
 */
#ifndef LLMIO_REPORT_JOURNAL_READ_H
#define LLMIO_REPORT_JOURNAL_READ_H

#include <cjson/cJSON.h>
#include <stdio.h>

struct journal_reader {
	FILE *f;
	const char *path; /* borrowed from the caller */
	char *line;       /* getline buffer */
	size_t cap;
	unsigned long lineno;  /* line number of the record last returned (1-based) */
	unsigned long skipped; /* torn or invalid lines seen so far */
	/* called for every skipped line; NULL = print one line on stderr */
	void (*warn)(void *arg, const char *path, unsigned long lineno, const char *why);
	void *warn_arg;
};

/** Open path for reading.  \return 0, or -errno (the reader needs no close then). */
int journal_open(struct journal_reader *r, const char *path);

/**
 * The next record as a parsed JSON object, owned by the caller (cJSON_Delete).
 * \return 1 and *rec set, 0 at the end of the file, -errno on a read error.
 */
int journal_next(struct journal_reader *r, cJSON **rec);

/** Release the reader; safe after a failed open. */
void journal_close(struct journal_reader *r);

#endif
