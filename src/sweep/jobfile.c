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
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/error.h"
#include "core/options.h"
#include "engine/engine.h"
#include "llmio/engine.h"
#include "sweep/steady.h"
#include "sweep/sweep.h"
#include "workload/workload.h"

struct entry {
	char *section; /* NULL = [global] */
	char *key;
	char *value;
	size_t len, cap; /* of value: continuation lines are appended in place */
	unsigned line;
};

struct reader {
	FILE *f;
	char *buf;
	size_t cap;
	unsigned line;
	unsigned long_line; /* first line longer than inih's limit */
	bool indented;

	struct entry *e;
	size_t n, cap_e;
	int err;
};

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
 * "key=1".  Any other bare line stays as it is, for inih to refuse.  Comments, sections and
 * indented continuation lines are left alone.
 */
static void bare_key(char *line, size_t cap, bool indented)
{
	size_t len = strcspn(line, "\r\n"), end = len;
	char key[64];

	while (end && (line[end - 1] == ' ' || line[end - 1] == '\t'))
		end--;
	if (indented || !end || end >= sizeof(key) || strchr(";#[", line[0]) ||
	    memchr(line, '=', len) || memchr(line, ':', len) || len + 3 >= cap)
		return;
	memcpy(key, line, end);
	key[end] = '\0';
	if (!bool_key(key))
		return;
	memmove(line + end + 2, line + len, strlen(line + len) + 1);
	memcpy(line + end, "=1", 2);
}

static char *read_line(char *str, int num, void *stream)
{
	struct reader *r = stream;
	ssize_t n = getline(&r->buf, &r->cap, r->f);

	if (n < 0)
		return NULL;
	r->line++;
	if (n >= num - 1) {
		/* inih would cut it silently; keep the line count right and report it */
		if (!r->long_line)
			r->long_line = r->line;
		snprintf(str, (size_t)num, "\n");
		return str;
	}
	memcpy(str, r->buf, (size_t)n + 1);
	r->indented = r->buf[0] == ' ' || r->buf[0] == '\t';
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
	if (r->n == r->cap_e) {
		size_t cap = r->cap_e ? 2 * r->cap_e : 64;
		struct entry *e = realloc(r->e, cap * sizeof(*e));

		if (!e)
			goto nomem;
		r->e = e;
		r->cap_e = cap;
	}
	last = &r->e[r->n];
	memset(last, 0, sizeof(*last));
	last->line = r->line;
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

static int add_dim(const struct sweep_file *f, struct sweep_section *s, const struct entry *e,
                   enum sweep_kind kind, const char *name, struct llmio_error *err)
{
	struct sweep_dim *d;
	struct llmio_error sub = {0};
	int ret;

	for (size_t i = 0; i < s->ndims; i++)
		if (!strcmp(s->dims[i].key, name))
			return llmio_err(
			        err, -EINVAL,
			        "%s:%u: %s: given twice in [%s] (also line %u): give one list",
			        f->path, e->line, e->key, s->name, s->dims[i].line);
	d = &s->dims[s->ndims];
	memset(d, 0, sizeof(*d));
	d->key = strdup(name);
	if (!d->key)
		return -ENOMEM;
	d->kind = kind;
	d->line = e->line;
	s->ndims++;
	ret = sweep_dim_expand(d, e->value, &sub);
	if (ret == -EINVAL)
		llmio_err(err, ret, "%s:%u: %s: %s", f->path, e->line, e->key, sub.msg);
	return ret ? ret : apply_dir(f, d);
}

/* Build section `name` from [global]'s entries and its own (its own win, key by key). */
static int build_section(struct sweep_file *f, const struct reader *r, const char *name,
                         unsigned line, struct llmio_error *err)
{
	struct sweep_section *s = &f->sec[f->nsec];
	bool workload = false, has_model = false;
	unsigned model_line = 0;
	int ret = 0;

	memset(s, 0, sizeof(*s));
	s->name = strdup(name ? name : "global");
	s->line = line;
	s->dims = calloc(r->n ? r->n : 1, sizeof(*s->dims));
	s->excl = calloc(r->n ? r->n : 1, sizeof(*s->excl));
	f->nsec++;
	if (!s->name || !s->dims || !s->excl)
		return -ENOMEM;
	for (size_t i = 0; i < r->n; i++) {
		const struct entry *e = &r->e[i];

		if (!e->section || same_section(e->section, name)) {
			workload |= !strcmp(e->key, "workload");
			if (!strcmp(e->key, "model") && !has_model) {
				has_model = true;
				model_line = e->line;
			}
		}
	}
	if (has_model && !workload)
		return llmio_err(err, -EINVAL,
		                 "%s:%u: model: model= needs workload= in [%s] or [global]",
		                 f->path, model_line, s->name);
	for (size_t i = 0; i < r->n && !ret; i++) {
		const struct entry *e = &r->e[i];
		enum sweep_kind kind;
		const char *key;
		bool overridden = false;

		if (e->section && !same_section(e->section, name))
			continue;
		if (!strcmp(e->key, "exclude")) {
			struct sweep_exclude *x = &s->excl[s->nexcl];

			struct llmio_error sub = {0};

			ret = sweep_expr_parse(e->value, workload, &x->expr, &sub);
			if (ret == -EINVAL)
				llmio_err(err, ret, "%s:%u: exclude: %s", f->path, e->line,
				          sub.msg);
			x->line = e->line;
			s->nexcl += !ret;
			continue;
		}
		if (sweep_classify(e->key, workload, &kind, &key) && job_fio_refused(e->key))
			return llmio_err(err, -EINVAL,
			                 "%s:%u: %s: a fio option llmio does not do; instead: %s",
			                 f->path, e->line, e->key, job_fio_refused(e->key));
		if (sweep_classify(e->key, workload, &kind, &key))
			return llmio_err(
			        err, -EINVAL,
			        "%s:%u: %s: unknown key (not an option of `llmio run`, an "
			        "engine option, or a sweep key; see `llmio run --help` and "
			        "docs/sweeps.md)",
			        f->path, e->line, e->key);
		/* a [global] key that the section sets itself is the section's */
		for (size_t k = 0; !e->section && name && k < r->n && !overridden; k++) {
			enum sweep_kind kk;
			const char *other;

			overridden = same_section(r->e[k].section, name) &&
			             !sweep_classify(r->e[k].key, workload, &kk, &other) &&
			             !strcmp(other, key);
		}
		if (!overridden)
			ret = add_dim(f, s, e, kind, key, err);
	}
	return ret;
}

static void reader_release(struct reader *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->e[i].section);
		free(r->e[i].key);
		free(r->e[i].value);
	}
	free(r->e);
	free(r->buf);
}

static int file_load(const char *path, const char *dir, struct sweep_file **out,
                     struct llmio_error *err)
{
	struct reader r = {0};
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
	r.f = fopen(path, "re");
	if (!r.f) {
		ret = -errno;
		llmio_err(err, ret, "cannot read job file %s: %s", path, strerror(-ret));
		goto err_free;
	}
	ret = ini_parse_stream(read_line, &r, on_entry, &r);
	fclose(r.f);
	if (r.err) {
		ret = r.err;
		goto err_entries;
	}
	if (r.long_line) {
		ret = llmio_err(err, -EINVAL,
		                "%s:%u: line too long: continue a list on the next line, indented",
		                path, r.long_line);
		goto err_entries;
	}
	if (ret) {
		ret = llmio_err(err, -EINVAL, "%s:%d: not a key=value line or a [section] header",
		                path, ret);
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
	f->sec = calloc(r.n, sizeof(*f->sec));
	if (!f->sec) {
		ret = -ENOMEM;
		goto err_entries;
	}
	/* sections in the order they first appear; only [global] = one section of its own */
	for (size_t i = 0; i < r.n && !ret; i++) {
		bool seen = false;

		if (!r.e[i].section)
			continue;
		nsec++;
		for (size_t k = 0; k < i && !seen; k++)
			seen = r.e[k].section && !strcmp(r.e[k].section, r.e[i].section);
		if (!seen)
			ret = build_section(f, &r, r.e[i].section, r.e[i].line, err);
	}
	if (!ret && !nsec)
		ret = build_section(f, &r, NULL, r.e[0].line, err);
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
	return file_load(path, dir, out, e);
}
