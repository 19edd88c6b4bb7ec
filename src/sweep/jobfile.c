/* SPDX-License-Identifier: MIT */
/*
 * Job files: fio's INI form ([global] + named sections, each inheriting [global]) read with
 * libinih.  Every key is checked here, once, so that a sweep never starts with a typo in
 * point 9,000: unknown keys, bad values (the message of the option's own parser), empty
 * lists and ranges that never end are reported as FILE:LINE: KEY: problem.
 *
 * inih does not tell its handler the line number, so the file is fed to it through a reader
 * that counts lines: the handler runs while the line just read is being parsed.
 */
#include <errno.h>
#include <ini.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/error.h"
#include "job/options.h"
#include "engine/engine.h"
#include "llmio/engine.h"
#include "sweep/steady.h"
#include "sweep/sweep.h"
#include "workload/workload.h"

/* include FILE: how deep files may include files (fio has no bound; a cycle is refused) */
#define INCLUDE_DEPTH_MAX 16

struct entry {
	char *section; /* NULL = [global] */
	char *key;
	char *value;
	size_t len, cap; /* of value: continuation lines are appended in place */
	unsigned file;   /* index into the reader's paths */
	unsigned line;
	unsigned block; /* the section header it is under: one per header, in file order */
};

/* A [section] header, in the order read. */
struct header {
	char *name;   /* NULL = [global] */
	size_t first; /* entries before it: a [global] above applies to it, one below not */
	unsigned file, line;
};

/* Where a line that inih parsed came from. */
struct where {
	unsigned file, line;
};

struct reader {
	struct {
		FILE *f;
		unsigned file, line;
	} src[INCLUDE_DEPTH_MAX + 1]; /* [0] the job file, [depth] the one being read */
	unsigned depth;
	char **paths; /* every file read, [0] the job file */
	size_t npaths;
	struct where *where; /* per line given to inih, for its error's line number */
	size_t nwhere, cap_where;
	struct where long_line; /* first line longer than inih's limit (line 0: none) */
	char *buf, *tmp;
	size_t cap;
	bool indented;
	bool fio; /* fio_file_load(): `llmio run`'s job file, where ss is fio's steadystate */
	struct llmio_error *err_out;

	struct entry *e;
	size_t n, cap_e;
	struct header *hdr;
	size_t nhdr, cap_hdr;
	int err;
};

/* Room for one more of n elements of size in *arr (capacity *cap, doubled).  0 or -ENOMEM. */
static int room(void **arr, size_t *cap, size_t n, size_t size)
{
	size_t c = *cap ? 2 * *cap : 64;
	void *p;

	if (n < *cap)
		return 0;
	p = realloc(*arr, c * size);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = c;
	return 0;
}

/* Is key a boolean option (a job or an engine option)? */
static bool bool_key(const char *key)
{
	const struct llmio_optdesc *d = job_opt_find(key);

	for (size_t i = 0; !d && i < engine_count(); i++)
		d = engine_opt_find(engine_at(i), key);
	return d && d->type == OPTD_BOOL;
}

/*
 * fio's bare boolean ("time_based", "stonewall" alone on a line) is that option set: inih gets
 * "key=1"; a bare write_bw_log, write_iops_log or write_lat_log gets JOB_LOG_JOBNAME.  Any other
 * bare line stays as it is, for inih to refuse.  Comments, sections and indented continuation lines
 * are left alone.
 */
static void bare_key(char *line, size_t cap, bool indented)
{
	size_t len = strcspn(line, "\r\n"), end = len;
	const char *set = "=1";
	char key[64];

	while (end && (line[end - 1] == ' ' || line[end - 1] == '\t'))
		end--;
	if (indented || !end || end >= sizeof(key) || strchr(";#[", line[0]) ||
	    memchr(line, '=', len) || memchr(line, ':', len))
		return;
	memcpy(key, line, end);
	key[end] = '\0';
	/* fio's bare write_*_log names the logs after the job */
	if (!strcmp(key, "write_bw_log") || !strcmp(key, "write_iops_log") ||
	    !strcmp(key, "write_lat_log"))
		set = "=" JOB_LOG_JOBNAME;
	/* a bare fio option llmio refuses ("exitall") is refused by its name, below */
	else if (!bool_key(key) && !job_fio_refused(key))
		return;
	if (len + strlen(set) + 1 >= cap)
		return;
	memmove(line + end + strlen(set), line + len, strlen(line + len) + 1);
	memcpy(line + end, set, strlen(set));
}

/*
 * fio's comments: a ';' or '#' anywhere on a line ends the line (fio 3.33's strip_blank_end()
 * does so to every line of a job file), so "size=4m ; why", "bs=4k#why" and "description=a # b"
 * keep what comes before it, without the blanks in front of it.
 */
static void strip_comment(char *line)
{
	size_t end = strcspn(line, ";#\r\n");

	if (line[end] != ';' && line[end] != '#')
		return;
	while (end && (line[end - 1] == ' ' || line[end - 1] == '\t'))
		end--;
	memcpy(line + end, "\n", 2);
}

static const char *src_path(const struct reader *r)
{
	return r->paths[r->src[r->depth].file];
}

/*
 * fio's ${VAR}: the environment variable's value, the empty string when it is unset (fio's
 * rule); and fio's reserved keywords $pagesize, $mb_memory, $ncpus: this machine's values.
 * Both in the value part of a line (right of '=', or a whole continuation line).  false when
 * the result does not fit in cap; *subst says whether anything was substituted.
 */
static bool expand_vars(char *line, size_t cap, char *tmp, bool indented, bool *subst)
{
	char *v = indented ? line : strchr(line, '=');
	char num[32];
	size_t used, i;

	*subst = false;
	if (!v || !strchr(v, '$'))
		return true;
	used = (size_t)(v - line);
	memcpy(tmp, line, used);
	for (i = used; line[i];) {
		char *close =
		        line[i] == '$' && line[i + 1] == '{' ? strchr(line + i + 2, '}') : NULL;
		const char *val = NULL;
		size_t len;

		if (close) {
			*close = '\0';
			val = getenv(line + i + 2);
			*close = '}';
			val = val ? val : "";
			len = strlen(val);
			i = (size_t)(close - line) + 1;
			*subst = true;
		} else if (line[i] == '$' &&
		           (val = sweep_keyword(line + i + 1, &len, num, sizeof(num)))) {
			i += 1 + len;
			len = strlen(val);
			*subst = true;
		} else {
			val = line + i++;
			len = 1;
		}
		if (used + len + 1 > cap)
			return false;
		memcpy(tmp + used, val, len);
		used += len;
	}
	tmp[used] = '\0';
	memcpy(line, tmp, used + 1);
	return true;
}

/* The type of option key (a job, engine or steady-state option); false when none is. */
static bool key_type(const char *key, enum llmio_optdesc_type *type)
{
	const struct llmio_optdesc *d = job_opt_find(key);

	if (!d)
		d = steady_opt_find(key);
	for (size_t i = 0; !d && i < engine_count(); i++)
		d = engine_opt_find(engine_at(i), key);
	if (d)
		*type = d->type;
	return d != NULL;
}

static void *fail(struct reader *r, int err, const char *fmt, const char *a, const char *b)
{
	r->err = llmio_err(r->err_out, err, fmt, src_path(r), r->src[r->depth].line, a, b);
	return NULL;
}

/*
 * fio's arithmetic in a value: an element (between commas) in parentheses is evaluated
 * ("bs=(4096*2)"), and so is one that a keyword or ${VAR} made into an expression of numbers
 * ("bs=$pagesize*2", "size=${SZ}*4"); not in options that take text.  In a time option a
 * parenthesised expression counts microseconds, as in fio.  false (r->err set) when an
 * expression in parentheses is not one, divides by zero or comes out negative.
 */
static bool arithmetic(struct reader *r, char *line, size_t cap, bool subst)
{
	enum llmio_optdesc_type type = OPTD_STRING;
	char *v = r->indented ? line : strchr(line, '='), key[64] = "", *out;
	size_t used = 0, end;
	bool known;

	if (!v || (!subst && !strchr(v, '(')))
		return true;
	if (r->indented) {
		if (r->n)
			snprintf(key, sizeof(key), "%s", r->e[r->n - 1].key);
	} else {
		size_t kl = (size_t)(v - line);

		while (kl && (line[kl - 1] == ' ' || line[kl - 1] == '\t'))
			kl--;
		snprintf(key, sizeof(key), "%.*s", (int)kl, line);
		v++;
	}
	known = key_type(key, &type);
	if (type == OPTD_STRING || type == OPTD_ENUM || type == OPTD_BOOL) {
		/* text, or a key of no option: only a recipe's parameters hold numbers */
		if (known || !strcmp(key, "exclude") || !strcmp(key, "workload") ||
		    !strcmp(key, "model") || !strcmp(key, "include"))
			return true;
	}
	/* the value ends at the line's end (its comment is gone: strip_comment()) */
	end = strcspn(v, "\r\n");
	out = malloc(cap);
	if (!out) {
		fail(r, -ENOMEM, "%s:%u: %s%s", "out of memory", "");
		return false;
	}
	for (size_t i = 0; i <= end;) {
		size_t j = i, a, b;
		bool paren;

		while (j < end && v[j] != ',')
			j++;
		for (a = i; a < j && (v[a] == ' ' || v[a] == '\t'); a++)
			;
		for (b = j; b > a && (v[b - 1] == ' ' || v[b - 1] == '\t'); b--)
			;
		paren = b - a >= 2 && v[a] == '(' && v[b - 1] == ')';
		if (paren || (subst && sweep_arith_has_op(v + a, b - a))) {
			char elem[256], num[64];
			double x;
			int rc = sweep_arith_eval(v + a, b - a, &x);

			snprintf(elem, sizeof(elem), "%s=%.*s", key, (int)(b - a), v + a);
			if (!rc && x < 0)
				rc = -ERANGE;
			if (rc && (paren || rc != -EINVAL)) {
				free(out);
				fail(r, -EINVAL,
				     "%s:%u: %s: %s (fio's arithmetic: numbers with k/m/g/t/p, "
				     "+ - * / %% ^ and parentheses)",
				     elem,
				     rc == -EDOM     ? "divides by zero"
				     : rc == -ERANGE ? "comes out negative"
				                     : "not an arithmetic expression");
				return false;
			}
			if (!rc) {
				if (x == floor(x) && x < 9e18)
					snprintf(num, sizeof(num), "%lld%s", (long long)x,
					         paren && type == OPTD_DURATION ? "us" : "");
				else
					snprintf(num, sizeof(num), "%.15g%s", x,
					         paren && type == OPTD_DURATION ? "us" : "");
				/* the element's blanks around it go: inih trims them anyway */
				if (used + strlen(num) + 2 > cap)
					goto too_long;
				memcpy(out + used, num, strlen(num));
				used += strlen(num);
				goto next;
			}
		}
		if (used + (j - i) + 2 > cap)
			goto too_long;
		memcpy(out + used, v + i, j - i);
		used += j - i;
	next:
		if (j < end)
			out[used++] = ',';
		i = j + 1;
	}
	if (used + strlen(v + end) + 1 > cap)
		goto too_long;
	memcpy(out + used, v + end, strlen(v + end) + 1);
	memcpy(v, out, strlen(out) + 1);
	free(out);
	return true;
too_long:
	free(out);
	if (!r->long_line.line)
		r->long_line = r->where[r->nwhere - 1];
	return true;
}

/*
 * fio's include FILE: FILE (relative to the including file's directory) is read in place of
 * the line, so its keys belong to the section around it.  A file that includes itself,
 * directly or not, is refused, and so is nesting deeper than INCLUDE_DEPTH_MAX.
 */
static void *include(struct reader *r, const char *name)
{
	const char *from = src_path(r), *slash = strrchr(from, '/');
	char path[LLMIO_PATH_MAX], real[PATH_MAX], other[PATH_MAX];
	char **paths;
	int n;

	if (name[0] == '/' || !slash)
		n = snprintf(path, sizeof(path), "%s", name);
	else
		n = snprintf(path, sizeof(path), "%.*s/%s", (int)(slash - from), from, name);
	if (n < 0 || (size_t)n >= sizeof(path))
		return fail(r, -EINVAL, "%s:%u: include %s: path too long%s", name, "");
	if (r->depth == INCLUDE_DEPTH_MAX)
		return fail(r, -EINVAL, "%s:%u: include %s: files nested too deep (%s%s)", name,
		            "more than 16 levels");
	if (!realpath(path, real))
		return fail(r, -EINVAL, "%s:%u: include %s: cannot read it: %s", path,
		            strerror(errno));
	for (unsigned d = 0; d <= r->depth; d++)
		if (realpath(r->paths[r->src[d].file], other) && !strcmp(other, real))
			return fail(r, -EINVAL,
			            "%s:%u: include %s: a cycle (%s is being read already): remove "
			            "one of the includes",
			            name, r->paths[r->src[d].file]);
	paths = realloc(r->paths, (r->npaths + 1) * sizeof(*paths));
	if (!paths)
		return fail(r, -ENOMEM, "%s:%u: include %s: %s", name, "out of memory");
	r->paths = paths;
	r->paths[r->npaths] = strdup(path);
	if (!r->paths[r->npaths])
		return fail(r, -ENOMEM, "%s:%u: include %s: %s", name, "out of memory");
	r->depth++;
	r->src[r->depth].f = fopen(path, "re");
	r->src[r->depth].file = (unsigned)r->npaths++;
	r->src[r->depth].line = 0;
	if (!r->src[r->depth].f) {
		r->depth--;
		return fail(r, -EINVAL, "%s:%u: include %s: cannot read it: %s", path,
		            strerror(errno));
	}
	return r;
}

/* A [section] header: remember where it is, for the [global]s above it. */
static void *header(struct reader *r, const char *line)
{
	const char *end = strchr(line, ']');
	struct header *h;
	size_t len;

	if (!end)
		return r; /* inih refuses it */
	if (r->depth)
		return fail(r, -EINVAL,
		            "%s:%u: %s%sa [section] in an included file: fio's include files hold "
		            "keys only (put the section in the job file)",
		            "", "");
	if (room((void **)&r->hdr, &r->cap_hdr, r->nhdr, sizeof(*h)))
		return fail(r, -ENOMEM, "%s:%u: %s%s", "out of memory", "");
	line++;
	while (*line == ' ' || *line == '\t')
		line++;
	len = (size_t)(end - line);
	while (len && (line[len - 1] == ' ' || line[len - 1] == '\t'))
		len--;
	h = &r->hdr[r->nhdr];
	h->name = strndup(line, len);
	if (!h->name)
		return fail(r, -ENOMEM, "%s:%u: %s%s", "out of memory", "");
	if (!strcasecmp(h->name, "global") || !len) {
		free(h->name);
		h->name = NULL;
	}
	h->first = r->n;
	h->file = r->src[0].file; /* not included: r->depth is 0 */
	h->line = r->src[0].line;
	r->nhdr++;
	return r;
}

static bool where_add(struct reader *r)
{
	if (room((void **)&r->where, &r->cap_where, r->nwhere, sizeof(*r->where)))
		return false;
	r->where[r->nwhere].file = r->src[r->depth].file;
	r->where[r->nwhere++].line = r->src[r->depth].line;
	return true;
}

static char *read_line(char *str, int num, void *stream)
{
	struct reader *r = stream;
	bool subst;
	ssize_t n;
	char *p;

	if (r->err)
		return NULL;
	for (;;) {
		n = getline(&r->buf, &r->cap, r->src[r->depth].f);
		if (n >= 0)
			break;
		if (!r->depth)
			return NULL;
		fclose(r->src[r->depth--].f); /* an included file ended: back to its includer */
	}
	r->src[r->depth].line++;
	if (!where_add(r))
		return fail(r, -ENOMEM, "%s:%u: %s%s", "out of memory", "");
	if (n >= num - 1) {
		/* inih would cut it silently; keep the line count right and report it */
		if (!r->long_line.line)
			r->long_line = r->where[r->nwhere - 1];
		snprintf(str, (size_t)num, "\n");
		return str;
	}
	memcpy(str, r->buf, (size_t)n + 1);
	strip_comment(str);
	r->indented = r->buf[0] == ' ' || r->buf[0] == '\t';
	if (!r->indented && !strncmp(str, "include", 7) && (str[7] == ' ' || str[7] == '\t')) {
		p = str + 8;
		p += strspn(p, " \t");
		p[strcspn(p, "\r\n")] = '\0';
		for (size_t len = strlen(p); len && (p[len - 1] == ' ' || p[len - 1] == '\t');)
			p[--len] = '\0';
		if (!include(r, p))
			return NULL;
		snprintf(str, (size_t)num, "\n"); /* the include line itself is empty to inih */
		return str;
	}
	if (!r->indented && str[0] == '[' && !header(r, str))
		return NULL;
	if (!r->tmp && !(r->tmp = malloc((size_t)num)))
		return fail(r, -ENOMEM, "%s:%u: %s%s", "out of memory", "");
	if (!expand_vars(str, (size_t)num, r->tmp, r->indented, &subst) && !r->long_line.line)
		r->long_line = r->where[r->nwhere - 1];
	if (!arithmetic(r, str, (size_t)num, subst))
		return NULL;
	bare_key(str, (size_t)num, r->indented);
	return str;
}

static bool is_global(const char *section)
{
	return !section || !*section || !strcasecmp(section, "global");
}

static int on_entry(void *user, const char *section, const char *name, const char *value)
{
	struct reader *r = user;
	struct entry *last = r->n ? &r->e[r->n - 1] : NULL;
	const char *sec = is_global(section) ? NULL : section;

	if (r->indented && last && !strcmp(last->key, name) &&
	    ((!sec && !last->section) || (sec && last->section && !strcmp(sec, last->section)))) {
		/*
		 * An indented continuation line: more values of the same list (or expression).
		 * Appended in a buffer that doubles, so that N lines cost O(N), not O(N^2).
		 */
		size_t add = strlen(value), need = last->len + add + 2;

		if (need > last->cap) {
			size_t cap = last->cap * 2 > need ? last->cap * 2 : need;
			char *v = realloc(last->value, cap);

			if (!v)
				goto nomem;
			last->value = v;
			last->cap = cap;
		}
		last->value[last->len++] = strcmp(name, "exclude") ? ',' : ' ';
		memcpy(last->value + last->len, value, add + 1);
		last->len += add;
		return 1;
	}
	if (room((void **)&r->e, &r->cap_e, r->n, sizeof(*r->e)))
		goto nomem;
	last = &r->e[r->n];
	memset(last, 0, sizeof(*last));
	last->file = r->src[r->depth].file;
	last->line = r->src[r->depth].line;
	last->block = (unsigned)r->nhdr;
	last->section = sec ? strdup(sec) : NULL;
	last->key = strdup(name);
	last->value = strdup(value);
	last->len = strlen(value);
	last->cap = last->len + 1;
	r->n++;
	if ((sec && !last->section) || !last->key || !last->value)
		goto nomem;
	return 1;
nomem:
	r->err = -ENOMEM;
	return 0;
}

int sweep_classify(const char *key, bool workload_section, enum sweep_kind *kind, const char **name)
{
	const struct llmio_optdesc *d;

	if ((d = steady_opt_find(key))) {
		*kind = SK_STEADY;
		*name = d->name;
		return 0;
	}
	if (!strcmp(key, "workload") || !strcmp(key, "model")) {
		*kind = SK_WORKLOAD;
		*name = !strcmp(key, "model") ? "model" : "workload";
		return 0;
	}
	if ((d = job_opt_find(key))) {
		*kind = SK_JOB;
		*name = d->name;
		return 0;
	}
	for (size_t i = 0; i < engine_count(); i++)
		if ((d = engine_opt_find(engine_at(i), key))) {
			*kind = SK_ENGINE;
			*name = d->name;
			return 0;
		}
	if (workload_section) {
		*kind = SK_PARAM;
		*name = key;
		return 0;
	}
	return -ENOENT;
}

/* The canonical text of an option's value, as every kind of option writes it (optdesc). */
static int opt_canon(const struct llmio_optdesc *d, const char *raw, char *buf, size_t len,
                     struct llmio_error *e)
{
	struct llmio_optval v;
	int ret = optdesc_parse(d, raw, &v, e);

	return ret ? ret : optdesc_format(d, &v, buf, len);
}

static int workload_canon(const char *key, const char *raw, char *buf, size_t len,
                          struct llmio_error *e)
{
	if (!strcmp(key, "workload")) {
		const struct recipe *r = recipe_find(raw);
		char names[256] = "";
		size_t used = 0;

		if (r) {
			snprintf(buf, len, "%s", r->name);
			return 0;
		}
		for (size_t i = 0; i < recipe_count() && used < sizeof(names); i++)
			used += (size_t)snprintf(names + used, sizeof(names) - used, " %s",
			                         recipe_at(i)->name);
		return llmio_err(e, -EINVAL, "workload=%s is not a recipe: expected%s", raw, names);
	}
	snprintf(buf, len, "%s", raw);
	return 0;
}

int sweep_canon(enum sweep_kind kind, const char *key, const char *raw, char **canon,
                struct llmio_error *err)
{
	struct llmio_error e = {0};
	char buf[LLMIO_PATH_MAX + 64];
	const struct engine_ops *eng;
	int ret = -ENOENT;

	buf[0] = '\0';
	switch (kind) {
	case SK_JOB:
		if (!strcmp(key, "ioengine")) {
			eng = engine_find(raw);
			if (!eng) {
				char why[512];

				llmio_engine_probe(raw, why, sizeof(why));
				return llmio_err(err, -EINVAL, "%s", why);
			}
			raw = eng->name;
		}
		ret = job_opt_find(key) ? opt_canon(job_opt_find(key), raw, buf, sizeof(buf), &e)
		                        : llmio_err(&e, -ENOENT, "unknown option '%s'", key);
		break;
	case SK_ENGINE:
		/* valid when some engine that has the option accepts the value */
		llmio_err(&e, -ENOENT, "%s: no engine has this option", key);
		for (size_t i = 0; i < engine_count() && ret; i++) {
			const struct llmio_optdesc *d = engine_opt_find(engine_at(i), key);
			struct llmio_error e_eng = {0};

			if (!d)
				continue;
			ret = opt_canon(d, raw, buf, sizeof(buf), &e_eng);
			if (ret &&
			    e.code == -ENOENT) /* the first engine's refusal is the message */
				llmio_err(&e, ret, "%s option %s", engine_at(i)->name, e_eng.msg);
		}
		break;
	case SK_STEADY:
		ret = steady_opt_find(key)
		              ? opt_canon(steady_opt_find(key), raw, buf, sizeof(buf), &e)
		              : -ENOENT;
		break;
	case SK_WORKLOAD:
		ret = workload_canon(key, raw, buf, sizeof(buf), &e);
		break;
	case SK_PARAM:
		snprintf(buf, sizeof(buf), "%s", raw);
		ret = 0;
		break;
	}
	if (ret)
		return llmio_err(err, ret == -ENOMEM ? ret : -EINVAL, "%s", e.msg);
	*canon = strdup(buf);
	return *canon ? 0 : -ENOMEM;
}

static void values_free(struct sweep_value *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].raw);
		free(v[i].canon);
	}
	free(v);
}

static void defaults_free(struct sweep_defaults *d)
{
	values_free(d->v, d->n);
	free(d->key);
	memset(d, 0, sizeof(*d));
}

static int defaults_alloc(struct sweep_defaults *d, size_t n)
{
	d->key = calloc(n ? n : 1, sizeof(*d->key));
	d->v = calloc(n ? n : 1, sizeof(*d->v));
	return d->key && d->v ? 0 : -ENOMEM;
}

/* The defaults of every option of one table (n entries, or up to name == NULL), each
 * canonical as its own entry writes it. */
static int table_defaults(struct sweep_defaults *d, const struct llmio_optdesc *t, size_t n)
{
	char buf[LLMIO_PATH_MAX + 64];
	size_t count = 0;
	int ret;

	while (t && count < n && t[count].name)
		count++;
	ret = defaults_alloc(d, count);
	for (size_t i = 0; !ret && i < count; i++) {
		const size_t k = d->n;

		if (t[i].mirror || t[i].sweep_if_set)
			continue; /* another option's field, or in a point only when set */
		d->key[k] = t[i].name;
		ret = opt_canon(&t[i], NULL, buf, sizeof(buf), NULL);
		d->v[k].raw = strdup(t[i].def);
		d->v[k].canon = strdup(buf);
		d->n++;
		if (!ret && (!d->v[k].raw || !d->v[k].canon))
			ret = -ENOMEM;
	}
	return ret;
}

static int load_defaults(struct sweep_file *f)
{
	int ret;

	/* job options and steady state (all but ss itself, which a section sets) */
	ret = table_defaults(&f->job, job_optdesc(0), llmio_job_option_count());
	if (!ret)
		ret = table_defaults(&f->steady, steady_optdesc(1), 3);
	f->nengines = engine_count();
	f->engine = ret ? NULL : calloc(f->nengines, sizeof(*f->engine));
	if (!ret && !f->engine)
		ret = -ENOMEM;
	for (size_t i = 0; !ret && i < f->nengines; i++)
		ret = table_defaults(&f->engine[i], engine_at(i)->opts, SIZE_MAX);
	return ret;
}

static void section_free(struct sweep_section *s)
{
	for (size_t i = 0; i < s->ndims; i++) {
		values_free(s->dims[i].v, s->dims[i].n);
		free(s->dims[i].key);
	}
	for (size_t i = 0; i < s->nexcl; i++)
		sweep_expr_free(s->excl[i].expr);
	free(s->dims);
	free(s->excl);
	free(s->name);
}

void sweep_file_free(struct sweep_file *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->nsec; i++)
		section_free(&f->sec[i]);
	free(f->sec);
	defaults_free(&f->job);
	defaults_free(&f->steady);
	for (size_t i = 0; f->engine && i < f->nengines; i++)
		defaults_free(&f->engine[i]);
	free(f->engine);
	for (size_t i = 0; i < f->nfiles; i++)
		free(f->files[i]);
	free(f->files);
	free(f->path);
	free(f->dir);
	free(f);
}

static bool same_section(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

/* --dir: directory= becomes dir, a relative filename= lives inside dir. */
static int apply_dir(const struct sweep_file *f, struct sweep_dim *d)
{
	for (size_t i = 0; f->dir && i < d->n; i++) {
		struct sweep_value *v = &d->v[i];
		size_t len = strlen(f->dir) + strlen(v->raw) + 2;
		char *p;

		if (strcmp(d->key, "directory") &&
		    (strcmp(d->key, "filename") || !v->raw[0] || v->raw[0] == '/'))
			continue;
		p = malloc(len);
		if (!p)
			return -ENOMEM;
		if (!strcmp(d->key, "directory"))
			snprintf(p, len, "%s", f->dir);
		else
			snprintf(p, len, "%s/%s", f->dir, v->raw);
		free(v->raw);
		free(v->canon);
		v->raw = p;
		v->canon = strdup(p);
		if (!v->canon)
			return -ENOMEM;
	}
	return 0;
}

/*
 * fio's READ,WRITE,TRIM values leave a direction empty for its default, no limit (rate=,64k):
 * 0 there, so that the list reads as one of numbers.  *out: the text so (the caller's to free).
 */
static int empty_is_zero(const char *text, char **out)
{
	size_t len = strlen(text);
	char *p = malloc(2 * len + 2), *o = p;

	if (!p)
		return -ENOMEM;
	for (const char *t = text;; t++) {
		if ((*t == ',' || !*t) && (t == text || t[-1] == ','))
			*o++ = '0';
		if (!*t)
			break;
		*o++ = *t;
	}
	*o = '\0';
	*out = p;
	return 0;
}

static int add_dim(const struct sweep_file *f, struct sweep_section *s, const struct entry *e,
                   enum sweep_kind kind, const char *name, struct llmio_error *err)
{
	char *dirs = NULL;
	const char *file = f->files[e->file];
	struct sweep_dim *d;
	struct llmio_error sub = {0};
	int ret;

	for (size_t i = 0; i < s->ndims; i++)
		if (!strcmp(s->dims[i].key, name))
			return llmio_err(
			        err, -EINVAL,
			        "%s:%u: %s: given twice in [%s] (also %s:%u): give one list", file,
			        e->line, e->key, s->name, s->dims[i].file, s->dims[i].line);
	d = &s->dims[s->ndims];
	memset(d, 0, sizeof(*d));
	d->key = strdup(name);
	if (!d->key)
		return -ENOMEM;
	d->kind = kind;
	d->file = file;
	d->line = e->line;
	s->ndims++;
	if (kind == SK_JOB && job_opt_per_dir(job_opt_find(name)) && strchr(e->value, ',') &&
	    (ret = empty_is_zero(e->value, &dirs)))
		return ret;
	ret = sweep_dim_expand(d, dirs ? dirs : e->value, &sub);
	free(dirs);
	if (ret == -EINVAL)
		llmio_err(err, ret, "%s:%u: %s: %s", file, e->line, e->key, sub.msg);
	return ret ? ret : apply_dir(f, d);
}

/*
 * Does entry i belong to section `name` whose header is after `first` entries?  Its own keys
 * do, and a [global]'s above its header (fio: "a job is only affected by a global section
 * residing above it").
 */
static bool in_section(const struct reader *r, size_t i, const char *name, size_t first)
{
	const struct entry *e = &r->e[i];

	return e->section ? same_section(e->section, name) : i < first;
}

/*
 * A key no one knows in a section whose ioengine is a fio engine llmio does not have is most
 * likely that engine's option: the engine is what to refuse, by its name (its own line).
 * true with the message in err.
 */
static bool unknown_engine(const struct reader *r, char *const *files, const char *name,
                           size_t first, struct llmio_error *err)
{
	const struct entry *eng = NULL;
	char why[512];

	for (size_t k = 0; k < r->n; k++) {
		const struct entry *o = &r->e[k];

		if (in_section(r, k, name, first) && !strcmp(o->key, "ioengine") &&
		    (o->section || !eng || !eng->section))
			eng = o;
	}
	if (!eng || engine_find(eng->value))
		return false;
	llmio_engine_probe(eng->value, why, sizeof(why));
	llmio_err(err, -EINVAL, "%s:%u: ioengine: %s", files[eng->file], eng->line, why);
	return true;
}

/*
 * Is entry i, a [global] key, set again for the section: by the section itself, or by a later
 * [global] above it (each [global] applies to the sections after it, the last one wins)?  Two
 * settings in one [global] are left for add_dim to refuse.
 */
/*
 * sweep_classify() for this file: in `llmio run`'s job file (fio_file_load()) fio's ss (its
 * steadystate, a job option) is meant, not llmio sweep's ss.
 */
static int classify(const struct reader *r, const char *key, bool workload, enum sweep_kind *kind,
                    const char **name)
{
	int ret = sweep_classify(key, workload, kind, name);

	if (!ret && r->fio && *kind == SK_STEADY && job_opt_find(key)) {
		*kind = SK_JOB;
		*name = job_opt_find(key)->name;
	}
	return ret;
}

static bool superseded(const struct reader *r, size_t i, const char *name, size_t first,
                       bool workload, const char *key)
{
	for (size_t k = 0; k < r->n; k++) {
		const struct entry *o = &r->e[k];
		enum sweep_kind kind;
		const char *other;

		if (k == i || !in_section(r, k, name, first) ||
		    (!o->section && (k < i || o->block == r->e[i].block)))
			continue;
		if (!classify(r, o->key, workload, &kind, &other) && !strcmp(other, key))
			return true;
	}
	return false;
}

/* Build section `name` from the [global]s above it and its own keys (its own win, key by key). */
static int build_section(struct sweep_file *f, const struct reader *r, const char *name,
                         size_t first, unsigned file, unsigned line, struct llmio_error *err)
{
	struct sweep_section *s = &f->sec[f->nsec];
	bool workload = false, has_model = false;
	const struct entry *model = NULL;
	int ret = 0;

	memset(s, 0, sizeof(*s));
	s->name = strdup(name ? name : "global");
	s->file = f->files[file];
	s->line = line;
	s->dims = calloc(r->n ? r->n : 1, sizeof(*s->dims));
	s->excl = calloc(r->n ? r->n : 1, sizeof(*s->excl));
	f->nsec++;
	if (!s->name || !s->dims || !s->excl)
		return -ENOMEM;
	for (size_t i = 0; i < r->n; i++) {
		const struct entry *e = &r->e[i];

		if (in_section(r, i, name, first)) {
			workload |= !strcmp(e->key, "workload");
			if (!strcmp(e->key, "model") && !has_model) {
				has_model = true;
				model = e;
			}
		}
	}
	if (has_model && !workload)
		return llmio_err(err, -EINVAL,
		                 "%s:%u: model: model= needs workload= in [%s] or [global]",
		                 f->files[model->file], model->line, s->name);
	for (size_t i = 0; i < r->n && !ret; i++) {
		const struct entry *e = &r->e[i];
		const char *path = f->files[e->file];
		enum sweep_kind kind;
		const char *key;

		if (!in_section(r, i, name, first))
			continue;
		if (!strcmp(e->key, "exclude")) {
			struct sweep_exclude *x = &s->excl[s->nexcl];

			struct llmio_error sub = {0};

			ret = sweep_expr_parse(e->value, workload, &x->expr, &sub);
			if (ret == -EINVAL)
				llmio_err(err, ret, "%s:%u: exclude: %s", path, e->line, sub.msg);
			x->line = e->line;
			s->nexcl += !ret;
			continue;
		}
		if (classify(r, e->key, workload, &kind, &key) && job_fio_refused(e->key))
			return llmio_err(err, -EINVAL,
			                 "%s:%u: %s: a fio option llmio does not do; instead: %s",
			                 path, e->line, e->key, job_fio_refused(e->key));
		if (classify(r, e->key, workload, &kind, &key) &&
		    unknown_engine(r, f->files, name, first, err))
			return -EINVAL;
		if (classify(r, e->key, workload, &kind, &key))
			return llmio_err(
			        err, -EINVAL,
			        "%s:%u: %s: unknown key (not an option of `llmio run`, an "
			        "engine option, or a sweep key; see `llmio run --help` and "
			        "docs/sweeps.md)",
			        path, e->line, e->key);
		if (e->section || !superseded(r, i, name, first, workload, key))
			ret = add_dim(f, s, e, kind, key, err);
	}
	return ret;
}

/*
 * inih's refusal of line `line` of path, naming what is on it: a bare word that is an option
 * but no boolean (fio's bare "write_bw_log") needs its value.
 */
static void bad_line(const char *path, unsigned line, struct llmio_error *err)
{
	char buf[256], text[256] = "", key[64], eng[64] = "", why[512];
	FILE *f = fopen(path, "re");
	enum llmio_optdesc_type type;
	unsigned eng_line = 0;
	size_t n;

	for (unsigned i = 1; f && fgets(buf, sizeof(buf), f); i++) {
		if (i == line)
			memcpy(text, buf, sizeof(text));
		/* a fio engine llmio lacks, named in the file: the bare word is likely its option
		 */
		if (!eng_line && sscanf(buf, " ioengine = %63[^ \t\r\n;#]", eng) == 1 &&
		    !engine_find(eng))
			eng_line = i;
	}
	if (f)
		fclose(f);
	text[strcspn(text, "\r\n;#")] = '\0';
	n = strspn(text, " \t");
	memmove(text, text + n, strlen(text + n) + 1);
	for (n = strlen(text); n && (text[n - 1] == ' ' || text[n - 1] == '\t'); n--)
		text[n - 1] = '\0';
	n = strlen(text) < sizeof(key) ? strlen(text) : 0;
	memcpy(key, text, n);
	key[n] = '\0';
	if (key[0] && !strpbrk(key, " \t=[") && key_type(key, &type)) {
		llmio_err(err, -EINVAL,
		          "%s:%u: %s: a bare line is a boolean option set; this option needs a "
		          "value (%s=...)",
		          path, line, key, key);
		return;
	}
	if (eng_line) {
		llmio_engine_probe(eng, why, sizeof(why));
		llmio_err(err, -EINVAL,
		          "%s:%u: ioengine: %s ('%s' on line %u is likely its option)", path,
		          eng_line, why, text, line);
		return;
	}
	llmio_err(err, -EINVAL, "%s:%u: not a key=value line or a [section] header%s%s%s", path,
	          line, text[0] ? " ('" : "", text, text[0] ? "')" : "");
}

static void reader_release(struct reader *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->e[i].section);
		free(r->e[i].key);
		free(r->e[i].value);
	}
	for (size_t i = 0; i < r->nhdr; i++)
		free(r->hdr[i].name);
	while (r->depth)
		fclose(r->src[r->depth--].f);
	for (size_t i = 0; i < r->npaths; i++)
		free(r->paths[i]);
	free(r->paths);
	free(r->hdr);
	free(r->where);
	free(r->e);
	free(r->buf);
	free(r->tmp);
}

static int file_load(const char *path, const char *dir, bool fio, struct sweep_file **out,
                     struct llmio_error *err)
{
	struct reader r = {.fio = fio};
	struct sweep_file *f;
	size_t nsec = 0;
	int ret;

	*out = NULL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->path = strdup(path);
	f->dir = dir ? strdup(dir) : NULL;
	if (!f->path || (dir && !f->dir)) {
		ret = -ENOMEM;
		goto err_free;
	}
	r.err_out = err;
	r.paths = calloc(1, sizeof(*r.paths));
	if (!r.paths || !(r.paths[0] = strdup(path))) {
		ret = -ENOMEM;
		goto err_entries;
	}
	r.npaths = 1;
	r.src[0].f = fopen(path, "re");
	if (!r.src[0].f) {
		ret = -errno;
		llmio_err(err, ret, "cannot read job file %s: %s", path, strerror(-ret));
		goto err_entries;
	}
	ret = ini_parse_stream(read_line, &r, on_entry, &r);
	while (r.depth)
		fclose(r.src[r.depth--].f);
	fclose(r.src[0].f);
	if (r.err) {
		ret = r.err;
		goto err_entries;
	}
	if (r.long_line.line) {
		ret = llmio_err(err, -EINVAL,
		                "%s:%u: line too long: continue a list on the next line, indented",
		                r.paths[r.long_line.file], r.long_line.line);
		goto err_entries;
	}
	if (ret) {
		const struct where *w =
		        ret > 0 && (size_t)ret <= r.nwhere ? &r.where[ret - 1] : NULL;

		bad_line(r.paths[w ? w->file : 0], w ? w->line : (unsigned)ret, err);
		ret = -EINVAL;
		goto err_entries;
	}
	if (!r.n) {
		ret = llmio_err(err, -EINVAL,
		                "%s: no keys at all: write a [section] with key=value lines", path);
		goto err_entries;
	}
	ret = load_defaults(f);
	if (ret)
		goto err_entries;
	/* the files read are the file's now: its sections' keys point at their names */
	f->files = r.paths;
	f->nfiles = r.npaths;
	r.paths = NULL;
	r.npaths = 0;
	f->sec = calloc(r.nhdr + 1, sizeof(*f->sec));
	if (!f->sec) {
		ret = -ENOMEM;
		goto err_entries;
	}
	/* sections in the order they first appear; only [global]s = one section of their own */
	for (size_t i = 0; i < r.nhdr && !ret; i++) {
		const struct header *h = &r.hdr[i];
		bool seen = false;

		if (!h->name)
			continue;
		nsec++;
		for (size_t k = 0; k < i && !seen; k++)
			seen = r.hdr[k].name && !strcmp(r.hdr[k].name, h->name);
		if (!seen)
			ret = build_section(f, &r, h->name, h->first, h->file, h->line, err);
	}
	if (!ret && !nsec)
		ret = build_section(f, &r, NULL, r.n, r.e[0].file, r.e[0].line, err);
	if (ret)
		goto err_entries;
	reader_release(&r);
	*out = f;
	return 0;

err_entries:
	if (ret == -ENOMEM)
		llmio_err(err, ret, "out of memory reading %s", path);
	reader_release(&r);
err_free:
	sweep_file_free(f);
	return ret;
}

int sweep_file_load(const char *path, const char *dir, struct sweep_file **out,
                    struct llmio_error *e)
{
	return file_load(path, dir, false, out, e);
}

int fio_file_load(const char *path, struct sweep_file **out, struct llmio_error *e)
{
	return file_load(path, NULL, true, out, e);
}
