/* SPDX-License-Identifier: MIT */
/*
 * llmio common definitions: export macro, version, parsing helpers shared by the CLI and by
 * job files.  Every function returns 0 or a negative errno unless its comment says otherwise.
 */
#ifndef LLMIO_COMMON_H
#define LLMIO_COMMON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LLMIO_API __attribute__((visibility("default")))

#define LLMIO_VERSION_MAJOR  0
#define LLMIO_VERSION_MINOR  2
#define LLMIO_VERSION_STRING "0.2.0"

/** Longest message an llmio_error carries, terminating NUL included. */
#define LLMIO_ERROR_MSG_MAX 1024

/**
 * The one error carrier of the library.  A failing function returns a negative errno and, when
 * the caller passed a carrier (NULL is allowed everywhere), stores the same code and one line
 * naming what failed and how to fix it.  Functions that succeed leave it untouched, so a caller
 * may reuse one carrier across calls; llmio_error_init() empties it.
 */
struct llmio_error {
	int code;                      /**< 0 or the negative errno of the last failure */
	char msg[LLMIO_ERROR_MSG_MAX]; /**< "" or one line, no trailing newline */
};

/** Empty an error carrier (code 0, empty message). */
LLMIO_API void llmio_error_init(struct llmio_error *e);

/** Version string of the library actually linked ("0.2.0"). */
LLMIO_API const char *llmio_version(void);

/**
 * Parse a byte size: a decimal or fractional number with an optional unit.  Units are
 * binary as in fio: k/K/KiB/kib = 1024, m/M/MiB = 2^20, g/G/GiB = 2^30, t/T/TiB = 2^40;
 * "b"/"B" or none = bytes.  "4k", "4KiB", "1m", "1.5GiB" and "4096" are valid; the result must
 * be a whole number of bytes.
 * \return 0 and *out set, -EINVAL for text that is not a size (nothing is written to *out),
 *         -ERANGE when the value does not fit in 64 bits.
 */
LLMIO_API int llmio_parse_size(const char *text, uint64_t *out);

/**
 * Parse a duration: a number with an optional unit us, ms, s (the default), m, h.
 * \return 0 and *out_ns set, -EINVAL for anything else, -ERANGE on overflow.
 */
LLMIO_API int llmio_parse_duration(const char *text, uint64_t *out_ns);

/**
 * Parse an unsigned integer (decimal, no unit, no sign) within [min, max].
 * \return 0, -EINVAL for text that is not a number, -ERANGE outside [min, max].
 */
LLMIO_API int llmio_parse_uint(const char *text, uint64_t min, uint64_t max, uint64_t *out);

/** Format a byte count with a binary unit ("1.50 GiB") into buf; returns buf. */
LLMIO_API char *llmio_format_bytes(uint64_t bytes, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
