/* SPDX-License-Identifier: MIT */
/* Internal view of the job option table (options.c) for job files and sweeps. */
#ifndef LLMIO_CORE_OPTIONS_H
#define LLMIO_CORE_OPTIONS_H

#include <stddef.h>

#include "core/optdesc.h"

#include "llmio/job.h"

/*
 * The canonical form of option `key` (a name or an alias) as set in o, into buf: sizes and
 * counts as decimal bytes / numbers, times in ns, booleans 0/1, enums by their name, strings
 * as they are.  *name (may be NULL) gets the option's own name ("blocksize" -> "bs").
 * \return 0; -ENOENT for an unknown key; -ERANGE when buf is too small.
 */
int job_opt_canonical(const struct llmio_job_opts *o, const char *key, const char **name, char *buf,
                      size_t len);

/* Job option i of the table (NULL past the end), and the one named or aliased key (or NULL). */
const struct llmio_optdesc *job_optdesc(size_t i);
const struct llmio_optdesc *job_opt_find(const char *key);

/* The type of job option `key` (a name or an alias) into *type: 0, or -ENOENT when unknown. */
int job_opt_type(const char *key, enum llmio_optdesc_type *type);

/* Set job option key (a name or an alias) from text.  0; -ENOENT for an unknown key, -EINVAL
 * for a value the option refuses (optdesc_parse()'s message in e). */
int job_opt_set(struct llmio_job_opts *opts, const char *key, const char *value,
                struct llmio_error *e);

/*
 * The job options a result echoes (each option's json, json_ns, json_if and no_echo), in the
 * table's order: fn(arg, key, d, v) for each, with the value as in o.
 */
void job_opts_echo(const struct llmio_job_opts *o,
                   void (*fn)(void *arg, const char *key, const struct llmio_optdesc *d,
                              const struct llmio_optval *v),
                   void *arg);

#endif
