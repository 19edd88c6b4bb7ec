/* SPDX-License-Identifier: MIT */
/*
 * Filling the library's error carrier (struct llmio_error, include/llmio/common.h).
 *
 * Every internal function that can fail for a reason a user must read takes a
 * `struct llmio_error *e` last (NULL allowed) and fails with
 *
 *	return llmio_err(e, -EINVAL, "bs=%s is not a size (use 4k, 1m, ...)", v);
 *
 * A caller that adds context to a message set deeper down uses llmio_err_prefix(), which keeps
 * the inner code and message and puts "context: " in front, so the user reads the outer
 * situation first and the root cause last, in one line.
 */
#ifndef LLMIO_CORE_ERROR_H
#define LLMIO_CORE_ERROR_H

#include "llmio/common.h"

/* Store code and message in e (when not NULL); returns code, so a failure is one statement.
 * A message longer than the carrier is cut with "..." rather than lost. */
__attribute__((format(printf, 3, 4))) int llmio_err(struct llmio_error *e, int code,
                                                    const char *fmt, ...);

/* Put "context: " in front of the message already in e; returns e's code (or -EIO when e holds
 * no code, which means a callee failed without saying why: a bug, but not a silent one). */
__attribute__((format(printf, 2, 3))) int llmio_err_prefix(struct llmio_error *e, const char *fmt,
                                                           ...);

/* Message of e, or "" when e is NULL: for callers that print after a failure. */
const char *llmio_err_msg(const struct llmio_error *e);

#endif
