/* SPDX-License-Identifier: MIT */
/*
 * fio's reserved keywords and arithmetic in job-file values (fio's HOWTO, "Job file format":
 * $pagesize, $mb_memory, $ncpus; "Job file parameters": an expression in parentheses wherever
 * a number goes, with + - * / % ^).  The grammar, by precedence:
 *
 *   expr   = term { ("+" | "-") term }
 *   term   = power { ("*" | "/" | "%") power }
 *   power  = unary [ "^" power ]             (right-associative, as in fio)
 *   unary  = [ "-" | "+" ] unary | atom
 *   atom   = number [ suffix ] | "(" expr ")"
 *   suffix = k | m | g | t | p, then an optional "i" and "b" (any case): 1024-based, fio's
 *            default kb_base
 *
 * Evaluated in double precision: sizes up to 2^53 bytes (8 PiB) are exact.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sweep/sweep.h"

struct ev {
	const char *p;
	int err; /* 0, -EINVAL (not an expression), -EDOM (division by zero) */
};

static double expr(struct ev *v);

static void blanks(struct ev *v)
{
	while (*v->p == ' ' || *v->p == '\t')
		v->p++;
}

static double atom(struct ev *v)
{
	static const char units[] = "kmgtp";
	const char *u;
	char *end;
	double x;

	blanks(v);
	if (*v->p == '(') {
		v->p++;
		x = expr(v);
		blanks(v);
		if (*v->p != ')')
			v->err = v->err ? v->err : -EINVAL;
		else
			v->p++;
		return x;
	}
	if (!isdigit((unsigned char)*v->p) && *v->p != '.') {
		v->err = v->err ? v->err : -EINVAL;
		return 0;
	}
	x = strtod(v->p, &end);
	if (end == v->p) {
		v->err = v->err ? v->err : -EINVAL;
		return 0;
	}
	v->p = end;
	u = *v->p ? strchr(units, tolower((unsigned char)*v->p)) : NULL;
	if (u) {
		x *= pow(1024, (double)(u - units + 1));
		v->p++;
		if (tolower((unsigned char)*v->p) == 'i')
			v->p++;
		if (tolower((unsigned char)*v->p) == 'b')
			v->p++;
	}
	if (isalnum((unsigned char)*v->p) || *v->p == '_')
		v->err = v->err ? v->err : -EINVAL; /* "4x", "10s": not a number fio's way */
	return x;
}

static double unary(struct ev *v)
{
	blanks(v);
	if (*v->p == '-') {
		v->p++;
		return -unary(v);
	}
	if (*v->p == '+') {
		v->p++;
		return unary(v);
	}
	return atom(v);
}

static double power(struct ev *v)
{
	double x = unary(v);

	blanks(v);
	if (*v->p == '^') {
		v->p++;
		return pow(x, power(v));
	}
	return x;
}

static double term(struct ev *v)
{
	double x = power(v), y;
	char op;

	for (;;) {
		blanks(v);
		op = *v->p;
		if (op != '*' && op != '/' && op != '%')
			return x;
		v->p++;
		y = power(v);
		if (op == '*') {
			x *= y;
		} else if (y == 0) {
			v->err = v->err ? v->err : -EDOM;
			return 0;
		} else {
			x = op == '/' ? x / y : fmod(x, y);
		}
	}
}

static double expr(struct ev *v)
{
	double x = term(v);

	for (;;) {
		blanks(v);
		if (*v->p == '+') {
			v->p++;
			x += term(v);
		} else if (*v->p == '-') {
			v->p++;
			x -= term(v);
		} else {
			return x;
		}
	}
}

int sweep_arith_eval(const char *s, size_t len, double *out)
{
	char buf[256];
	struct ev v = {buf, 0};

	if (len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	*out = expr(&v);
	blanks(&v);
	if (!v.err && *v.p)
		v.err = -EINVAL; /* something after the expression */
	if (!v.err && !isfinite(*out))
		v.err = -EDOM;
	return v.err;
}

bool sweep_arith_has_op(const char *s, size_t len)
{
	/* an operator after the first character: "-1" alone is a number, not arithmetic */
	for (size_t i = 1; i < len; i++)
		if (strchr("+-*/%^", s[i]))
			return true;
	return false;
}

const char *sweep_keyword(const char *name, size_t *len, char *buf, size_t cap)
{
	static const char *const names[] = {"pagesize", "mb_memory", "ncpus"};
	long page = sysconf(_SC_PAGESIZE), pages = sysconf(_SC_PHYS_PAGES);
	long long v[3];

	v[0] = page;
	v[1] = page > 0 && pages > 0 ? (long long)pages * page / (1024 * 1024) : 0;
	v[2] = sysconf(_SC_NPROCESSORS_ONLN);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		size_t n = strlen(names[i]);

		/* the whole name: "$ncpusX" is no keyword */
		if (!strncmp(name, names[i], n) && !isalnum((unsigned char)name[n]) &&
		    name[n] != '_') {
			*len = n;
			snprintf(buf, cap, "%lld", v[i]);
			return buf;
		}
	}
	return NULL;
}
