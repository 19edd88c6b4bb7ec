/* SPDX-License-Identifier: MIT */
/*
 * The results journal: JSON Lines, one record per point (docs/sweeps.md), appended and
 * fsynced before the next point starts, so that a sweep killed at any moment loses at most
 * the point in progress.  Readers skip (and report) a torn line instead of parsing it.
 */
#ifndef LLMIO_SWEEP_JOURNAL_H
#define LLMIO_SWEEP_JOURNAL_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "base/error.h"

struct journal {
	int fd;
	char *path;
};

/*
 * Open path for appending (created if missing).  A last line without its newline (a record
 * torn by a killed sweep) is left as it is, and a newline is appended so that the next
 * record starts on a line of its own: nothing already written is ever changed.
 * \return 0, or -errno with a message in e.
 */
int journal_open(struct journal *j, const char *path, struct llmio_error *e);

/* Append rec as one line, then fsync.  \return 0 or -errno. */
int journal_append(struct journal *j, const cJSON *rec);

void journal_close(struct journal *j);

/*
 * Called for each valid record (line: 1-based), or with rec NULL and a message for each line
 * that is skipped (torn, not JSON, not a record).  Return non-zero to stop reading.
 */
typedef int (*journal_fn)(void *arg, unsigned line, const cJSON *rec, const char *skipped);

/*
 * Read every line of path.  \return 0 (or what fn returned to stop), -errno with a message
 * in e when the file cannot be read.
 */
int journal_read(const char *path, journal_fn fn, void *arg, struct llmio_error *e);

/* A record's config_hash as a number; false when it has none. */
bool journal_record_hash(const cJSON *rec, uint64_t *hash);

/* A journal's records by config_hash, for looking points up instead of running them
 * (`llmio sweep --adaptive --from JOURNAL`).  Records without a hash are left out. */
struct journal_index {
	cJSON **recs; /* sorted by hash */
	size_t n;
};

/* Read path into ix.  \return 0, or -errno with a message in e. */
int journal_index_read(struct journal_index *ix, const char *path, struct llmio_error *e);
/* The record of the point whose config_hash is hash, or NULL. */
const cJSON *journal_index_find(const struct journal_index *ix, uint64_t hash);
void journal_index_release(struct journal_index *ix);

#endif
