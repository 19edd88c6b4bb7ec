/* SPDX-License-Identifier: MIT */
/* fio's buffer_pattern and verify_pattern: their text parsed, and buffers filled with it
 * (job/pattern.c). */
#ifndef LLMIO_JOB_PATTERN_H
#define LLMIO_JOB_PATTERN_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

/* text (fio's syntax) of option name into out, at most cap bytes; its length in *len.  0 or
 * -EINVAL (e, naming the option). */
int pattern_parse(const char *name, const char *text, uint8_t *out, size_t cap, size_t *len,
                  struct llmio_error *e);
/* buf's len bytes: the n bytes of pat repeated from its start (n > 0). */
void pattern_fill(void *buf, size_t len, const uint8_t *pat, size_t n);

#endif
