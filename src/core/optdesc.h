/* SPDX-License-Identifier: MIT */
/*
 * One typed description of an option (a recipe parameter today; job and engine options are
 * to follow): its type, default, range and help are data, and one function parses a value
 * and checks its range, so no caller writes a range check by hand and every range error reads
 * the same.
 */
#ifndef LLMIO_CORE_OPTDESC_H
#define LLMIO_CORE_OPTDESC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum llmio_optdesc_type {
	OPTD_BOOL,
	OPTD_INT,      /* signed whole number */
	OPTD_UINT,     /* whole number >= 0 */
	OPTD_SIZE,     /* bytes: 4096, 4k, 1.5GiB */
	OPTD_DURATION, /* ns: 30s, 500ms */
	OPTD_DOUBLE,
	OPTD_STRING,
	OPTD_ENUM, /* one of `choices` */
};

enum llmio_optdesc_scope { OPTD_SCOPE_JOB, OPTD_SCOPE_ENGINE, OPTD_SCOPE_RECIPE, OPTD_SCOPE_SWEEP };

struct llmio_optdesc {
	const char *name;
	enum llmio_optdesc_type type;
	const char *def; /* default as text ("" for none) */
	/* Inclusive range of numbers (sizes in bytes, durations in ns); max 0 = no upper bound. */
	double min, max;
	const char *choices; /* OPTD_ENUM: "a|b|c" */
	const char *help;
	enum llmio_optdesc_scope scope;
};

/* A parsed value: the member of the description's type. */
struct llmio_optval {
	bool b;
	int64_t i;
	uint64_t u; /* OPTD_UINT, OPTD_SIZE, OPTD_DURATION */
	double d;
	const char *s; /* OPTD_STRING, OPTD_ENUM: the text itself (borrowed) */
};

/* The type's name in --help ("int", "size", "time" ...). */
const char *optdesc_type_name(enum llmio_optdesc_type t);

/* What a value of d looks like, for "is not ..." messages ("a whole number"). */
const char *optdesc_expected(const struct llmio_optdesc *d);

/*
 * Parse `text` (NULL: the default) by d's type into *out and check d's range and choices.
 * 0, or -EINVAL with one line in err naming the option, what it got and what it takes.
 */
int optdesc_parse(const struct llmio_optdesc *d, const char *text, struct llmio_optval *out,
                  char *err, size_t errlen);

/* d's range as text for messages and --help ("1..64", "4k..64m", ">= 1"); "" when none. */
void optdesc_range(const struct llmio_optdesc *d, char *buf, size_t len);

#endif
