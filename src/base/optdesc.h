/* SPDX-License-Identifier: MIT */
/*
 * One typed description of an option, for every kind llmio has: job options (options.c),
 * engine options (each engine's table), recipe parameters (each recipe's table) and the
 * sweep's steady-state keys (sweep/steady.c).  Name, fio's name, type, field, default, range
 * and help are data; one function parses a value and checks its range, one stores it in the
 * option's field, one writes it back as canonical text.  So no caller writes a parser or a
 * range check by hand, every error reads the same, and --help, docs/options.md, the JSON
 * echo of the configuration and --emit-fio are all generated from the same tables.
 */
#ifndef LLMIO_CORE_OPTDESC_H
#define LLMIO_CORE_OPTDESC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct llmio_error;

enum llmio_optdesc_type {
	OPTD_BOOL,
	OPTD_INT,      /* signed whole number */
	OPTD_UINT,     /* whole number >= 0 */
	OPTD_SIZE,     /* bytes: 4096, 4k, 1.5GiB */
	OPTD_DURATION, /* ns: 30s, 500ms (a bare number counts bare_ns) */
	OPTD_DOUBLE,
	OPTD_STRING,
	OPTD_ENUM, /* one of `choices`; stored as the index of the choice */
};

/*
 * Where an option is given.  A recipe parameter is a CLI flag, so its messages read
 * "--name=value ..."; the others are job-file keys and read "name=value ...".  Recipe is 0 so
 * that a recipe's table needs no scope.
 */
enum llmio_optdesc_scope { OPTD_SCOPE_RECIPE, OPTD_SCOPE_JOB, OPTD_SCOPE_ENGINE, OPTD_SCOPE_SWEEP };

/* How an option reads in a fio job file (`llmio run --emit-fio`, src/report/emit_fio.c). */
enum llmio_optdesc_fio {
	OPTD_FIO_UNMAPPED = 0, /* nobody mapped it: the job file says so with its value */
	OPTD_FIO_VALUE,        /* fio takes the same value under optdesc_fio_name() */
	OPTD_FIO_IF_SET,       /* the same number, only when >= 0 (a CPU number; -1 = unset) */
	OPTD_FIO_ZERO_IS_QD,   /* the same number, 0 meaning iodepth */
	OPTD_FIO_NONE,         /* no equivalent: fio_note when the value is not the default */
	OPTD_FIO_CUSTOM,       /* the owner writes it (an engine's fio_option(), emit_fio.c) */
};

struct llmio_optdesc;
struct llmio_optval;

/*
 * A value no generic type describes (zipf:THETA, iops:5%), like fio's option callbacks: parse
 * fills the members of *out it needs (-EINVAL when the text is not valid: the message is the
 * generic one, with d->expect), store / load move them to and from the owner's struct (NULL:
 * none), format writes the canonical text (0, or -ERANGE when buf is too small).
 */
struct llmio_optdesc_codec {
	int (*parse)(const char *text, struct llmio_optval *out);
	void (*store)(const struct llmio_optval *v, void *base);
	void (*load)(const void *base, struct llmio_optval *v);
	int (*format)(const struct llmio_optval *v, char *buf, size_t len);
};

struct llmio_optdesc {
	const char *name;
	const char *alias; /* another accepted name (often fio's), or NULL */
	enum llmio_optdesc_type type;
	const char *def; /* default as text, parsed like user input ("" for none) */
	/*
	 * Inclusive range of numbers (sizes in bytes, durations in ns); max 0 = no upper bound.
	 * umin/umax and imin/imax are the exact 64-bit bounds of whole numbers that a double
	 * cannot hold (randseed's UINT64_MAX); when set they replace min/max.
	 */
	double min, max;
	uint64_t umin, umax;
	int64_t imin, imax;
	const char *choices; /* OPTD_ENUM: "a|b|c" */
	const char *help;
	enum llmio_optdesc_scope scope;
	/* The field that holds the value in its owner's struct (size 0: none); whole numbers
	 * and enums by the field's size (1, 2, 4, 8 bytes), strings as char[size]. */
	size_t offset, size;
	/* OPTD_DURATION: ns a bare number counts (0: seconds) and ns a stored unit counts
	 * (0: ns); a value must be a whole number of stored units. */
	uint64_t bare_ns, store_ns;
	const char *expect; /* what a valid value looks like, when the type's words don't fit */
	const struct llmio_optdesc_codec *codec; /* a value no type describes, or NULL */
	enum llmio_optdesc_fio fio_kind;
	const char *fio;      /* fio's name when neither name nor alias, or NULL */
	const char *fio_note; /* OPTD_FIO_NONE: what fio does instead */
	/*
	 * The echo of the configuration in a result's JSON: under `json` (NULL: the name), a
	 * time as a number of json_ns (0: ns), only when json_if holds ("key": that option is
	 * set, non-empty and non-zero; "key=value": it has that value); strings only when set;
	 * never when no_echo.
	 */
	const char *json;
	double json_ns;
	const char *json_if;
	bool no_echo;
	/*
	 * fio's other spelling of another option's field (buffered = !direct, rwmixwrite = 100 -
	 * rwmixread): no default and no value of its own, so defaults, echoes and sweep configs
	 * skip it; only a value given by name is stored.
	 */
	bool mirror;
	/*
	 * Left out of a sweep point's configuration unless the job file sets it: fio's options
	 * added after journals were written, so an old journal's points keep their hashes.
	 */
	bool sweep_if_set;
};

/* The field of option f in struct `type`, for a table entry. */
#define OPTD_FIELD(type, f) .offset = offsetof(type, f), .size = sizeof(((type *)0)->f)

/* A parsed value: the member of the description's type. */
struct llmio_optval {
	bool b;
	int64_t i;  /* OPTD_INT; OPTD_ENUM: the index of the choice */
	uint64_t u; /* OPTD_UINT, OPTD_SIZE, OPTD_DURATION (ns) */
	double d;
	const char *s; /* OPTD_STRING, OPTD_ENUM: the text itself (borrowed) */
};

/* The type's name in --help ("int", "size", "time", "time (ms)" ...). */
const char *optdesc_type_name(const struct llmio_optdesc *d);

/* What a value of d looks like, for "is not ..." messages ("a whole number"). */
const char *optdesc_expected(const struct llmio_optdesc *d);

/* fio's name for d: fio, else the alias, else the name. */
const char *optdesc_fio_name(const struct llmio_optdesc *d);

/* The entry of table (terminated by name == NULL, or n entries) named or aliased key. */
const struct llmio_optdesc *optdesc_find(const struct llmio_optdesc *table, size_t n,
                                         const char *key);

/*
 * Refuse a value holding a control character (a newline, a tab, DEL...), named DASH NAME:
 * every value optdesc_parse() reads, and texts read beside the table (a model name).
 * \return 0 or -EINVAL (e set).
 */
int optdesc_check_text(const char *dash, const char *name, const char *text, struct llmio_error *e);
/*
 * Parse `text` (NULL: the default) by d's type into *out and check d's range and choices.
 * 0; -EINVAL for a value that is not of the type (or not a choice), -ERANGE for one out of
 * range (a control character: -EINVAL, optdesc_check_text()); either with one line in e naming the
 * option, what it got and what it takes.
 */
int optdesc_parse(const struct llmio_optdesc *d, const char *text, struct llmio_optval *out,
                  struct llmio_error *e);

/* Store v in d's field of base (the owner's struct); -ERANGE (with e) when it does not fit. */
int optdesc_store(const struct llmio_optdesc *d, const struct llmio_optval *v, void *base,
                  struct llmio_error *e);

/* optdesc_parse() then optdesc_store(). */
int optdesc_set(const struct llmio_optdesc *d, const char *text, void *base, struct llmio_error *e);

/* The value of d's field in base. */
void optdesc_load(const struct llmio_optdesc *d, const void *base, struct llmio_optval *v);

/*
 * The canonical text of v into buf: whole numbers, sizes in bytes and times in ns as decimal,
 * booleans 0/1, enums and strings as their text.  0, or -ERANGE when buf is too small.
 */
int optdesc_format(const struct llmio_optdesc *d, const struct llmio_optval *v, char *buf,
                   size_t len);

/* d's range as text for messages and --help ("1..64", "4k..64m", ">= 1"); "" when none. */
void optdesc_range(const struct llmio_optdesc *d, char *buf, size_t len);

#endif
