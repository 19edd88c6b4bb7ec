/* SPDX-License-Identifier: MIT */
/*
 * The sweep matrix: lists and ranges of values, exclude= expressions, the cartesian product of
 * a section's keys, and the canonical configuration (and its hash) of every point.
 *
 * Ranges (whole numbers and sizes):  A..B  A..B:+STEP  A..B:xFACTOR
 *   bs=2k..16k:x2 -> 2048,4096,8192,16384     numjobs=1..4 -> 1,2,3,4
 * The last value is the last one not above B; a range that never grows (+0, x1, x2 from 0)
 * or is empty (A > B) is an error.
 *
 * exclude= expressions drop points; several exclude= lines are OR-ed:
 *   expr := and ('||' and)*      and := unary ('&&' unary)*
 *   unary := '!' unary | '(' expr ')' | KEY OP VALUE      OP := == != < <= > >=
 * KEY is any key of the point (aliases allowed); VALUE is written as in the job file and
 * compared in canonical form (bs<=4k is bs<=4096, ioengine==sync is ioengine==psync):
 * numerically when both sides are numbers, otherwise as text.  A key the point lacks (an
 * option of another engine) compares unequal to everything.
 * Limits (sweep.h): SWEEP_EXPR_MAX_DEPTH nested '(' or '!', SWEEP_EXPR_MAX_TERMS comparisons
 * and SWEEP_EXPR_MAX_LEN characters, so that the recursion of the parser, evaluator and free
 * stays shallow whatever the file holds (a 150,000-term || chain is a tree that deep).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job/options.h"
#include "base/error.h"
#include "base/hash.h"
#include "engine/engine.h"
#include "sweep/sweep.h"

#define MAX_RANGE_VALUES 100000

/* --- lists and ranges --- */

static int push_value(struct sweep_dim *d, size_t *cap, const char *raw, struct llmio_error *e)
{
	struct sweep_value *v;
	int ret;

	if (d->n == *cap) {
		size_t c = *cap ? 2 * *cap : 8;

		v = realloc(d->v, c * sizeof(*v));
		if (!v)
			return -ENOMEM;
		d->v = v;
		*cap = c;
	}
	v = &d->v[d->n];
	v->raw = strdup(raw);
	if (!v->raw)
		return -ENOMEM;
	ret = sweep_canon(d->kind, d->key, raw, &v->canon, e);
	if (ret) {
		free(v->raw);
		return ret;
	}
	d->n++;
	return 0;
}

/* The type of number a key's range holds: 1 = whole number, 2 = size, 0 = no ranges. */
static int range_type(const struct sweep_dim *d)
{
	enum llmio_optdesc_type type;

	if (d->kind == SK_PARAM)
		return 2;
	if (d->kind == SK_ENGINE)
		return 1;
	if (d->kind != SK_JOB || job_opt_type(d->key, &type))
		return 0;
	return type == OPTD_UINT ? 1 : type == OPTD_SIZE ? 2 : 0;
}

static int parse_num(int type, const char *text, uint64_t *out)
{
	return type == 2 ? llmio_parse_size(text, out) : llmio_parse_uint(text, 0, UINT64_MAX, out);
}

static int expand_range(struct sweep_dim *d, size_t *cap, char *item, char *dots,
                        struct llmio_error *e)
{
	int type = range_type(d);
	char *step = strchr(dots + 2, ':'), num[32];
	uint64_t a, b, k = 1;
	bool mul = false;
	size_t count = 0;
	int ret;

	if (!type)
		return llmio_err(
		        e, -EINVAL,
		        "%s does not take a range (ranges are for whole numbers and sizes): list "
		        "the values instead",
		        d->key);
	*dots = '\0';
	if (step) {
		*step++ = '\0';
		mul = *step == 'x' || *step == '*';
		if (!mul && *step != '+')
			goto bad_step;
		if (parse_num(mul ? 1 : type, step + 1, &k))
			goto bad_step;
	}
	if (parse_num(type, item, &a) || parse_num(type, dots + 2, &b))
		return llmio_err(e, -EINVAL, "range %s..%s: the ends must be %s", item, dots + 2,
		                 type == 2 ? "sizes (4k, 1m)" : "whole numbers");
	if (a > b)
		return llmio_err(e, -EINVAL,
		                 "range %s..%s is empty: the first value is above the last", item,
		                 dots + 2);
	if ((mul && (k < 2 || a == 0)) || (!mul && k == 0))
		return llmio_err(
		        e, -EINVAL,
		        "range %s..%s:%s never ends: the step must grow the value (+1 or more, x2 "
		        "or more from a value above 0)",
		        item, dots + 2, step);
	for (uint64_t v = a; v <= b; count++) {
		if (count >= MAX_RANGE_VALUES)
			return llmio_err(e, -EINVAL, "range %s..%s has more than %d values", item,
			                 dots + 2, MAX_RANGE_VALUES);
		snprintf(num, sizeof(num), "%llu", (unsigned long long)v);
		ret = push_value(d, cap, num, e);
		if (ret)
			return ret;
		if ((mul && v > UINT64_MAX / k) || (!mul && v > UINT64_MAX - k))
			break;
		v = mul ? v * k : v + k;
	}
	return 0;
bad_step:
	return llmio_err(e, -EINVAL, "range step ':%s' is not valid: expected :+N or :xN", step);
}

static char *trim(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return s;
}

int sweep_dim_expand(struct sweep_dim *d, const char *text, struct llmio_error *e)
{
	char *copy = strdup(text), *save = NULL, *tok, *item;
	size_t cap = 0, commas = 0, items = 0;
	int ret = 0;

	if (!copy)
		return -ENOMEM;
	if (d->kind == SK_ENGINE && engine_owning_option(d->key) &&
	    engine_opt_find(engine_owning_option(d->key), d->key)->type == OPTD_STRING) {
		/* an engine's text is one value, its commas and dots its own (exec's arguments) */
		ret = push_value(d, &cap, trim(copy), e);
		goto out;
	}
	if (!*trim(copy)) {
		ret = llmio_err(e, -EINVAL, "empty list: give at least one value");
		goto out;
	}
	/* strtok_r skips empty items ("4k,,8k"): count them with the commas */
	for (const char *p = text; *p; p++)
		commas += *p == ',';
	for (tok = strtok_r(copy, ",", &save); tok && !ret; tok = strtok_r(NULL, ",", &save)) {
		char *dots;

		item = trim(tok);
		items++;
		if (!*item) {
			ret = llmio_err(e, -EINVAL, "empty value in the list '%s'", text);
			break;
		}
		dots = strstr(item, "..");
		ret = dots ? expand_range(d, &cap, item, dots, e) : push_value(d, &cap, item, e);
	}
	if (!ret && items != commas + 1)
		ret = llmio_err(e, -EINVAL, "empty value in the list '%s'", text);
out:
	free(copy);
	return ret;
}

/* --- exclude= expressions --- */

enum expr_type { EX_OR, EX_AND, EX_NOT, EX_CMP };
enum cmp_op { OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE };

struct sweep_expr {
	enum expr_type type;
	struct sweep_expr *a, *b;
	const char *key; /* canonical name (static, or owned when a recipe parameter) */
	char *owned_key;
	enum cmp_op op;
	char *value; /* canonical */
};

struct expr_parser {
	const char *s, *p;
	bool workload;
	struct llmio_error *e;
	int ret;
	unsigned depth, terms; /* nesting of '(' and '!' now; comparisons so far */
};

static void skip_space(struct expr_parser *x)
{
	while (isspace((unsigned char)*x->p))
		x->p++;
}

static struct sweep_expr *expr_fail(struct expr_parser *x, const char *what)
{
	if (!x->ret) {
		x->ret = llmio_err(x->e, -EINVAL, "%s at column %d of '%s'", what,
		                   (int)(x->p - x->s) + 1, x->s);
	}
	return NULL;
}

static struct sweep_expr *expr_node(struct expr_parser *x, enum expr_type t, struct sweep_expr *a,
                                    struct sweep_expr *b)
{
	struct sweep_expr *e = calloc(1, sizeof(*e));

	if (!e) {
		x->ret = -ENOMEM;
		sweep_expr_free(a);
		sweep_expr_free(b);
		return NULL;
	}
	e->type = t;
	e->a = a;
	e->b = b;
	return e;
}

/* A limit passed: fmt takes the limit and the column (not the text: it may be huge). */
static struct sweep_expr *expr_bound(struct expr_parser *x, const char *fmt, int limit)
{
	x->ret = llmio_err(x->e, -EINVAL, fmt, limit, (int)(x->p - x->s) + 1);
	return NULL;
}

/* A key or a value: up to a space, an operator or a parenthesis. */
static size_t word_len(const char *p)
{
	size_t n = 0;

	while (p[n] && !isspace((unsigned char)p[n]) && !strchr("()!&|<>=", p[n]))
		n++;
	return n;
}

static struct sweep_expr *parse_or(struct expr_parser *x);

static struct sweep_expr *parse_cmp(struct expr_parser *x)
{
	static const struct {
		const char *text;
		enum cmp_op op;
	} ops[] = {{"==", OP_EQ}, {"!=", OP_NE}, {"<=", OP_LE},
	           {">=", OP_GE}, {"<", OP_LT},  {">", OP_GT}};
	struct llmio_error sub = {0};
	char key[128], raw[256];
	enum sweep_kind kind;
	const char *name;
	struct sweep_expr *e;
	size_t n = word_len(x->p), i;

	if (++x->terms > SWEEP_EXPR_MAX_TERMS)
		return expr_bound(
		        x,
		        "more than %d comparisons in one expression (at column %d): split it "
		        "into several exclude= lines, which are OR-ed",
		        SWEEP_EXPR_MAX_TERMS);
	if (!n || n >= sizeof(key))
		return expr_fail(x, "expected a key");
	memcpy(key, x->p, n);
	key[n] = '\0';
	if (sweep_classify(key, x->workload, &kind, &name))
		return expr_fail(x, "unknown key");
	x->p += n;
	skip_space(x);
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strncmp(x->p, ops[i].text, strlen(ops[i].text)))
			break;
	if (i == sizeof(ops) / sizeof(ops[0]))
		return expr_fail(x, "expected == != < <= > or >=");
	x->p += strlen(ops[i].text);
	skip_space(x);
	n = word_len(x->p);
	if (!n || n >= sizeof(raw))
		return expr_fail(x, "expected a value");
	memcpy(raw, x->p, n);
	raw[n] = '\0';
	e = expr_node(x, EX_CMP, NULL, NULL);
	if (!e)
		return NULL;
	e->op = ops[i].op;
	e->key = name;
	if (kind == SK_PARAM) {
		e->owned_key = strdup(key);
		e->key = e->owned_key;
	}
	x->ret = (kind == SK_PARAM && !e->owned_key)
	                 ? -ENOMEM
	                 : sweep_canon(kind, name, raw, &e->value, &sub);
	if (x->ret == -EINVAL)
		llmio_err(x->e, x->ret, "%s (in '%s')", sub.msg, x->s);
	if (x->ret) {
		sweep_expr_free(e);
		return NULL;
	}
	x->p += n;
	return e;
}

static struct sweep_expr *parse_unary(struct expr_parser *x)
{
	struct sweep_expr *e;

	skip_space(x);
	if ((*x->p == '!' && x->p[1] != '=') || *x->p == '(') {
		if (x->depth >= SWEEP_EXPR_MAX_DEPTH)
			return expr_bound(
			        x,
			        "'(' and '!' nested more than %d deep (at column %d): write the "
			        "expression flatter",
			        SWEEP_EXPR_MAX_DEPTH);
		x->depth++;
	}
	if (*x->p == '!' && x->p[1] != '=') {
		x->p++;
		e = parse_unary(x);
		x->depth--;
		return e ? expr_node(x, EX_NOT, e, NULL) : NULL;
	}
	if (*x->p == '(') {
		x->p++;
		e = parse_or(x);
		x->depth--;
		if (!e)
			return NULL;
		skip_space(x);
		if (*x->p != ')') {
			sweep_expr_free(e);
			return expr_fail(x, "expected ')'");
		}
		x->p++;
		return e;
	}
	return parse_cmp(x);
}

static struct sweep_expr *parse_binary(struct expr_parser *x, const char *tok, enum expr_type t)
{
	struct sweep_expr *e = t == EX_OR ? parse_binary(x, "&&", EX_AND) : parse_unary(x), *r;

	while (e) {
		skip_space(x);
		if (strncmp(x->p, tok, 2))
			break;
		x->p += 2;
		r = t == EX_OR ? parse_binary(x, "&&", EX_AND) : parse_unary(x);
		if (!r) {
			sweep_expr_free(e);
			return NULL;
		}
		e = expr_node(x, t, e, r);
	}
	return e;
}

static struct sweep_expr *parse_or(struct expr_parser *x)
{
	return parse_binary(x, "||", EX_OR);
}

int sweep_expr_parse(const char *text, bool workload_section, struct sweep_expr **out,
                     struct llmio_error *e)
{
	struct expr_parser x = {.s = text, .p = text, .workload = workload_section, .e = e};
	size_t len = strnlen(text, SWEEP_EXPR_MAX_LEN + 1);
	struct sweep_expr *ex;

	*out = NULL;
	if (len > SWEEP_EXPR_MAX_LEN)
		return llmio_err(
		        e, -EINVAL,
		        "the expression is longer than %d characters: split it into several "
		        "exclude= lines, which are OR-ed",
		        SWEEP_EXPR_MAX_LEN);
	ex = parse_or(&x);

	if (ex) {
		skip_space(&x);
		if (*x.p) {
			sweep_expr_free(ex);
			ex = expr_fail(&x, "expected && or || or the end");
		}
	}
	if (!ex && x.ret == -ENOMEM)
		llmio_err(e, x.ret, "out of memory");
	*out = ex;
	return ex ? 0 : x.ret ? x.ret : -EINVAL;
}

void sweep_expr_free(struct sweep_expr *e)
{
	if (!e)
		return;
	sweep_expr_free(e->a);
	sweep_expr_free(e->b);
	free(e->owned_key);
	free(e->value);
	free(e);
}

static bool as_number(const char *s, double *out)
{
	char *end;

	if (!*s)
		return false;
	*out = strtod(s, &end);
	return !*end;
}

static bool compare(const struct sweep_expr *e, const char *have)
{
	double a, b;
	int c;

	if (!have)
		return e->op == OP_NE;
	if (as_number(have, &a) && as_number(e->value, &b))
		c = a < b ? -1 : a > b;
	else
		c = strcmp(have, e->value);
	switch (e->op) {
	case OP_EQ:
		return c == 0;
	case OP_NE:
		return c != 0;
	case OP_LT:
		return c < 0;
	case OP_LE:
		return c <= 0;
	case OP_GT:
		return c > 0;
	case OP_GE:
		return c >= 0;
	}
	return false;
}

bool sweep_expr_eval(const struct sweep_expr *e, const struct sweep_config *c)
{
	switch (e->type) {
	case EX_OR:
		return sweep_expr_eval(e->a, c) || sweep_expr_eval(e->b, c);
	case EX_AND:
		return sweep_expr_eval(e->a, c) && sweep_expr_eval(e->b, c);
	case EX_NOT:
		return !sweep_expr_eval(e->a, c);
	case EX_CMP:
		return compare(e, sweep_config_get(c, e->key));
	}
	return false;
}

/* --- configurations --- */

const char *sweep_config_get(const struct sweep_config *c, const char *key)
{
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->kv[i].key, key))
			return c->kv[i].canon;
	return NULL;
}

static int config_set(struct sweep_config *c, const char *key, const struct sweep_value *v,
                      enum sweep_kind kind, bool from_file)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (!strcmp(c->kv[i].key, key))
			break;
	if (i == SWEEP_MAX_KEYS)
		return -E2BIG;
	c->kv[i] = (struct sweep_kv){key, v->raw, v->canon, kind, from_file};
	if (i == c->n)
		c->n++;
	return 0;
}

static int config_add_defaults(struct sweep_config *c, const struct sweep_defaults *d,
                               enum sweep_kind kind)
{
	int ret = 0;

	for (size_t i = 0; i < d->n && !ret; i++)
		if (!sweep_config_get(c, d->key[i]))
			ret = config_set(c, d->key[i], &d->v[i], kind, false);
	return ret;
}

static bool defaults_have(const struct sweep_defaults *d, const char *key)
{
	for (size_t i = 0; i < d->n; i++)
		if (!strcmp(d->key[i], key))
			return true;
	return false;
}

static int kv_cmp(const void *a, const void *b)
{
	return strcmp(((const struct sweep_kv *)a)->key, ((const struct sweep_kv *)b)->key);
}

int sweep_config_build(const struct sweep_file *f, uint32_t sec, const uint32_t *choice,
                       struct sweep_config *c, struct llmio_error *e)
{
	static const struct sweep_value off = {"off", "off"};
	const struct sweep_section *s = &f->sec[sec];
	const struct sweep_defaults *eng = NULL;
	const struct engine_ops *ops;
	bool ss_on;
	size_t k = 0;
	int ret;

	c->n = 0;
	ret = config_add_defaults(c, &f->job, SK_JOB);
	if (!ret)
		ret = config_set(c, "ss", &off, SK_STEADY, false);
	for (size_t i = 0; i < s->ndims && !ret; i++)
		ret = config_set(c, s->dims[i].key, &s->dims[i].v[choice[i]], s->dims[i].kind,
		                 true);
	/* the options of the point's own engine: the file's, then the engine's defaults */
	ops = engine_find(sweep_config_get(c, "ioengine"));
	for (size_t i = 0; ops && i < f->nengines; i++)
		if (engine_at(i) == ops)
			eng = &f->engine[i];
	for (size_t i = 0; i < c->n; i++)
		if (c->kv[i].kind != SK_ENGINE || (eng && defaults_have(eng, c->kv[i].key)))
			c->kv[k++] = c->kv[i];
	c->n = k;
	if (!ret && eng)
		ret = config_add_defaults(c, eng, SK_ENGINE);
	/* steady-state settings belong to the point only when steady state is on */
	ss_on = strcmp(sweep_config_get(c, "ss"), "off");
	k = 0;
	for (size_t i = 0; i < c->n; i++)
		if (ss_on || c->kv[i].kind != SK_STEADY || !strcmp(c->kv[i].key, "ss"))
			c->kv[k++] = c->kv[i];
	c->n = k;
	if (!ret && ss_on)
		ret = config_add_defaults(c, &f->steady, SK_STEADY);
	if (!ret && f->dir && !*sweep_config_get(c, "filename")) {
		const struct sweep_value dir = {f->dir, f->dir};

		ret = config_set(c, "directory", &dir, SK_JOB, true);
	}
	if (ret)
		return llmio_err(e, ret, "[%s]: more than %d keys in one point", s->name,
		                 SWEEP_MAX_KEYS);
	qsort(c->kv, c->n, sizeof(c->kv[0]), kv_cmp);
	return 0;
}

/* Calls fn for each key in sorted order, "repeat" in its place. */
static void config_walk(const struct sweep_config *c, unsigned repeat,
                        void (*fn)(void *arg, const char *key, const char *canon), void *arg)
{
	char r[16];
	bool done = false;

	snprintf(r, sizeof(r), "%u", repeat);
	for (size_t i = 0; i < c->n; i++) {
		if (!done && strcmp(c->kv[i].key, "repeat") > 0) {
			fn(arg, "repeat", r);
			done = true;
		}
		fn(arg, c->kv[i].key, c->kv[i].canon);
	}
	if (!done)
		fn(arg, "repeat", r);
}

static void hash_kv(void *arg, const char *key, const char *canon)
{
	uint64_t *h = arg;

	*h = hash_fnv1a64(hash_fnv1a64(hash_fnv1a64(hash_fnv1a64(*h, key), "="), canon), "\n");
}

/* FNV-1a, not hash64(): the journal keeps this value (base/hash.h) */
uint64_t sweep_config_hash(const struct sweep_config *c, unsigned repeat)
{
	uint64_t h = HASH_FNV1A64_INIT;

	config_walk(c, repeat, hash_kv, &h);
	return h;
}

static void json_kv(void *arg, const char *key, const char *canon)
{
	const char *p = canon + (*canon == '-');
	size_t digits = strspn(p, "0123456789");

	/* whole numbers that a double holds exactly are numbers; the rest stays text */
	if (digits && !p[digits] && digits <= 15)
		cJSON_AddNumberToObject(arg, key, strtod(canon, NULL));
	else
		cJSON_AddStringToObject(arg, key, canon);
}

cJSON *sweep_config_json(const struct sweep_config *c, unsigned repeat)
{
	cJSON *o = cJSON_CreateObject();

	if (o)
		config_walk(c, repeat, json_kv, o);
	return o;
}

/* --- the plan --- */

struct hash_set {
	uint64_t *slot;
	size_t cap, n;
};

/* Insert h; \return 1 if it was new, 0 if present, -ENOMEM. */
static int set_insert(struct hash_set *s, uint64_t h)
{
	h = h ? h : 1; /* 0 marks an empty slot */
	if (2 * (s->n + 1) > s->cap) {
		struct hash_set bigger = {calloc(s->cap ? 2 * s->cap : 1024, sizeof(uint64_t)),
		                          s->cap ? 2 * s->cap : 1024, 0};

		if (!bigger.slot)
			return -ENOMEM;
		for (size_t i = 0; i < s->cap; i++)
			if (s->slot[i])
				set_insert(&bigger, s->slot[i]);
		free(s->slot);
		*s = bigger;
	}
	for (size_t i = h % s->cap;; i = (i + 1) % s->cap) {
		if (s->slot[i] == h)
			return 0;
		if (!s->slot[i]) {
			s->slot[i] = h;
			s->n++;
			return 1;
		}
	}
}

static int plan_push(struct sweep_plan *plan, size_t *cap, uint32_t sec, const uint32_t *choice,
                     size_t ndims)
{
	struct sweep_plan_point *pt;

	if (plan->n == *cap) {
		size_t c = *cap ? 2 * *cap : 64;

		pt = realloc(plan->p, c * sizeof(*pt));
		if (!pt)
			return -ENOMEM;
		plan->p = pt;
		*cap = c;
	}
	pt = &plan->p[plan->n];
	pt->sec = sec;
	pt->choice = malloc((ndims ? ndims : 1) * sizeof(*choice));
	if (!pt->choice)
		return -ENOMEM;
	memcpy(pt->choice, choice, ndims * sizeof(*choice));
	plan->n++;
	return 0;
}

static int plan_section(const struct sweep_file *f, uint32_t sec, struct sweep_plan *plan,
                        size_t *cap, struct hash_set *seen, struct sweep_config *c,
                        struct llmio_error *e)
{
	const struct sweep_section *s = &f->sec[sec];
	uint32_t *choice = calloc(s->ndims ? s->ndims : 1, sizeof(*choice));
	size_t total = 1;
	int ret = 0;

	if (!choice)
		return -ENOMEM;
	for (size_t i = 0; i < s->ndims; i++) {
		total *= s->dims[i].n;
		if (total > SWEEP_MAX_COMBINATIONS) {
			ret = llmio_err(
			        e, -EINVAL,
			        "%s:%u: [%s] has more than %d combinations: shorten its lists or "
			        "split it into sections",
			        s->file, s->line, s->name, SWEEP_MAX_COMBINATIONS);
			goto out;
		}
	}
	plan->combinations += total;
	for (size_t k = 0; k < total && !ret; k++) {
		bool excluded = false;

		ret = sweep_config_build(f, sec, choice, c, e);
		for (size_t x = 0; !ret && x < s->nexcl && !excluded; x++)
			excluded = sweep_expr_eval(s->excl[x].expr, c);
		if (!ret && excluded) {
			plan->excluded++;
		} else if (!ret) {
			ret = set_insert(seen, sweep_config_hash(c, 0));
			if (ret == 0)
				plan->duplicates++;
			else if (ret == 1)
				ret = plan_push(plan, cap, sec, choice, s->ndims);
		}
		/* next combination: the last key varies fastest */
		for (size_t i = s->ndims; i-- > 0;) {
			if (++choice[i] < s->dims[i].n)
				break;
			choice[i] = 0;
		}
	}
	if (ret == -ENOMEM)
		llmio_err(e, ret, "out of memory expanding [%s]", s->name);
out:
	free(choice);
	return ret;
}

int sweep_plan_build(const struct sweep_file *f, struct sweep_plan *plan, struct llmio_error *e)
{
	struct sweep_config *c = malloc(sizeof(*c));
	struct hash_set seen = {0};
	size_t cap = 0;
	int ret = 0;

	memset(plan, 0, sizeof(*plan));
	if (!c)
		return -ENOMEM;
	for (uint32_t s = 0; s < f->nsec && !ret; s++)
		ret = plan_section(f, s, plan, &cap, &seen, c, e);
	free(seen.slot);
	free(c);
	if (ret)
		sweep_plan_release(plan);
	return ret;
}

void sweep_plan_release(struct sweep_plan *plan)
{
	for (size_t i = 0; i < plan->n; i++)
		free(plan->p[i].choice);
	free(plan->p);
	memset(plan, 0, sizeof(*plan));
}
