/* SPDX-License-Identifier: MIT */
/*
 * Tensor lifetimes: the step's data, its checks, the llmio-lifetimes line format (read and
 * written) and the vitality analysis (inactive intervals).  The format is documented in
 * docs/migration.md; in short:
 *
 *	llmio-lifetimes 1
 *	kernel NAME DURATION_US
 *	tensor NAME BYTES KIND CREATED USES
 *
 * KIND is weight|activation|gradient|optimizer|workspace, CREATED a kernel index (0-based, in
 * the order of the kernel lines) or "-" for a tensor that lives across steps, USES a
 * comma-separated ascending list of kernel indices or "-".  '#' starts a comment.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/error.h"
#include "migrate/lifetime.h"

static const char *const kind_names[LT_NKINDS] = {"weight", "activation", "gradient", "optimizer",
                                                  "workspace"};

const char *lt_kind_name(enum lt_kind k)
{
	return k < LT_NKINDS ? kind_names[k] : "?";
}

int lt_kind_parse(const char *s, enum lt_kind *out)
{
	for (int k = 0; k < LT_NKINDS; k++)
		if (!strcasecmp(s, kind_names[k])) {
			*out = (enum lt_kind)k;
			return 0;
		}
	return -EINVAL;
}

void lt_init(struct lt_step *s)
{
	memset(s, 0, sizeof(*s));
}

void lt_release(struct lt_step *s)
{
	free(s->kernels);
	free(s->tensors);
	free(s->uses);
	free(s->start_ns);
	lt_init(s);
}

/* Grow *arr (of *cap elements of size sz) to hold need; bounded by max. */
static int grow(void **arr, uint64_t *cap, uint64_t need, size_t sz, uint64_t max)
{
	uint64_t n = *cap ? *cap : 64;
	void *p;

	if (need <= *cap)
		return 0;
	if (need > max)
		return -E2BIG;
	while (n < need)
		n *= 2;
	if (n > max)
		n = max;
	p = realloc(*arr, (size_t)(n * sz));
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = n;
	return 0;
}

/*
 * A name the lifetimes file can hold (lt_write() writes every step that loaded, whatever its
 * reader): one word, no '#' (a comment there), no control character.  NULL, or what is wrong.
 */
static const char *bad_name(const char *name, char *shown, size_t len)
{
	size_t i = 0;

	/* the name as an error line may show it: control characters as '?' */
	for (; name[i] && i + 1 < len; i++)
		shown[i] = (unsigned char)name[i] < ' ' || name[i] == 0x7f ? '?' : name[i];
	shown[i] = '\0';
	if (!name[0])
		return "it is empty";
	for (const char *c = name; *c; c++)
		if (*c == '#' || (unsigned char)*c <= ' ' || *c == 0x7f)
			return "a name is one word without '#' or control characters";
	return NULL;
}

int lt_add_kernel(struct lt_step *s, const char *name, double seconds, struct llmio_error *e)
{
	uint64_t cap = s->kcap;
	void *p = s->kernels;
	char shown[65];
	const char *why = bad_name(name, shown, sizeof(shown));
	int ret;

	if (why)
		return llmio_err(e, -EINVAL, "kernel %u \"%s\": %s", s->nkernels, shown, why);
	if (!(seconds >= 0 && seconds <= LT_MAX_KERNEL_S))
		return llmio_err(e, -E2BIG, "kernel %s would take %g s: a kernel takes 0 to %g s",
		                 name, seconds, LT_MAX_KERNEL_S);
	ret = grow(&p, &cap, (uint64_t)s->nkernels + 1, sizeof(*s->kernels), LT_MAX_KERNELS);
	s->kernels = p;
	s->kcap = (uint32_t)cap;
	if (ret)
		return llmio_err(e, ret, "more than %u kernels in one step (or out of memory)",
		                 LT_MAX_KERNELS);
	snprintf(s->kernels[s->nkernels].name, LT_NAME_MAX, "%s", name);
	s->kernels[s->nkernels++].dur_ns = (uint64_t)(seconds * 1e9 + 0.5);
	return 0;
}

int lt_add_tensor(struct lt_step *s, const char *name, uint64_t bytes, enum lt_kind kind,
                  uint32_t created, const uint32_t *uses, uint32_t nuses, struct llmio_error *e)
{
	uint64_t cap = s->tcap;
	void *p = s->tensors;
	struct lt_tensor *t;
	char shown[65];
	const char *why = bad_name(name, shown, sizeof(shown));
	int ret;

	if (why)
		return llmio_err(e, -EINVAL, "tensor %u \"%s\": %s", s->ntensors, shown, why);
	if (!bytes || bytes > LT_MAX_TENSOR_BYTES)
		return llmio_err(e, -E2BIG,
		                 "tensor %s of %llu bytes: a tensor holds 1 byte to 1 TiB", name,
		                 (unsigned long long)bytes);
	ret = grow(&p, &cap, (uint64_t)s->ntensors + 1, sizeof(*s->tensors), LT_MAX_TENSORS);
	s->tensors = p;
	s->tcap = (uint32_t)cap;
	if (!ret) {
		p = s->uses;
		ret = grow(&p, &s->ucap, s->nuses + nuses, sizeof(*s->uses), LT_MAX_USES);
		s->uses = p;
	}
	if (ret)
		return llmio_err(e, ret,
		                 "more than %u tensors or %u uses in one step (or out of memory)",
		                 LT_MAX_TENSORS, LT_MAX_USES);
	t = &s->tensors[s->ntensors++];
	memset(t, 0, sizeof(*t));
	snprintf(t->name, LT_NAME_MAX, "%s", name);
	t->bytes = bytes;
	t->kind = kind;
	t->created = created;
	t->nuses = nuses;
	t->use_off = s->nuses;
	if (nuses)
		memcpy(s->uses + s->nuses, uses, nuses * sizeof(*uses));
	s->nuses += nuses;
	return 0;
}

uint32_t lt_last_event(const struct lt_step *s, const struct lt_tensor *t)
{
	return t->nuses ? lt_uses(s, t)[t->nuses - 1] : t->created;
}

bool lt_alive(const struct lt_step *s, const struct lt_tensor *t, uint32_t k)
{
	if (t->created == LT_PERSISTENT)
		return true;
	return k >= t->created && k <= lt_last_event(s, t);
}

/* "tensor 'x' (line 12)" or "tensor 'x'" for messages. */
static void tensor_where(const struct lt_tensor *t, char *buf, size_t len)
{
	if (t->line)
		snprintf(buf, len, "line %u: tensor '%s'", t->line, t->name);
	else
		snprintf(buf, len, "tensor '%s'", t->name);
}

int lt_finish(struct lt_step *s, struct llmio_error *e)
{
	uint64_t *st;
	char w[LT_NAME_MAX + 32];

	if (!s->nkernels)
		return llmio_err(e, -EINVAL, "%s: the step has no kernels",
		                 s->origin[0] ? s->origin : "lifetimes");
	for (uint32_t i = 0; i < s->ntensors; i++) {
		const struct lt_tensor *t = &s->tensors[i];
		const uint32_t *u = lt_uses(s, t);

		tensor_where(t, w, sizeof(w));
		if (t->created != LT_PERSISTENT && t->created >= s->nkernels)
			return llmio_err(
			        e, -EINVAL,
			        "%s: %s is created by kernel %u but the step has %u kernels",
			        s->origin, w, t->created, s->nkernels);
		if (t->created == LT_PERSISTENT && !t->nuses)
			return llmio_err(e, -EINVAL,
			                 "%s: %s lives across steps but no kernel uses it",
			                 s->origin, w);
		for (uint32_t j = 0; j < t->nuses; j++) {
			if (u[j] >= s->nkernels)
				return llmio_err(
				        e, -EINVAL,
				        "%s: %s is used by kernel %u but the step has %u kernels",
				        s->origin, w, u[j], s->nkernels);
			if (j && u[j] <= u[j - 1])
				return llmio_err(
				        e, -EINVAL,
				        "%s: %s: uses must be ascending and distinct (%u after %u)",
				        s->origin, w, u[j], u[j - 1]);
			if (t->created != LT_PERSISTENT && u[j] < t->created)
				return llmio_err(
				        e, -EINVAL,
				        "%s: %s is used by kernel %u before kernel %u creates it",
				        s->origin, w, u[j], t->created);
		}
	}
	st = realloc(s->start_ns, ((size_t)s->nkernels + 1) * sizeof(*st));
	if (!st)
		return llmio_err(e, -ENOMEM, "out of memory for %u kernels", s->nkernels);
	s->start_ns = st;
	st[0] = 0;
	for (uint32_t k = 0; k < s->nkernels; k++)
		st[k + 1] = st[k] + s->kernels[k].dur_ns;
	return 0;
}

/* ---- the line format ---- */

#define LINE_MAX_BYTES (1u << 20)

/* Parse "3,5,9" or "-" into uses (allocated, bounded). */
static int parse_uses(const char *tok, uint32_t **uses, uint32_t *n, uint32_t cap)
{
	uint32_t cnt = 1, *u;
	const char *p;

	*uses = NULL;
	*n = 0;
	if (!strcmp(tok, "-"))
		return 0;
	for (p = tok; *p; p++)
		cnt += *p == ',';
	if (cnt > cap)
		return -E2BIG;
	u = calloc(cnt, sizeof(*u));
	if (!u)
		return -ENOMEM;
	p = tok;
	for (uint32_t i = 0; i < cnt; i++) {
		char *end;
		unsigned long v;

		if (*p < '0' || *p > '9') {
			free(u);
			return -EINVAL;
		}
		v = strtoul(p, &end, 10);
		if (v >= LT_MAX_KERNELS || (*end != ',' && *end) || (*end == ',' && i + 1 == cnt)) {
			free(u);
			return -EINVAL;
		}
		u[i] = (uint32_t)v;
		p = end + (*end == ',');
	}
	*uses = u;
	*n = cnt;
	return 0;
}

static int parse_u64(const char *tok, uint64_t *out)
{
	char *end;

	if (*tok < '0' || *tok > '9')
		return -EINVAL;
	errno = 0;
	*out = strtoull(tok, &end, 10);
	return errno || *end ? -EINVAL : 0;
}

static int parse_line(struct lt_step *s, char *line, const char *path, unsigned ln, bool *header,
                      struct llmio_error *e)
{
	char *save = NULL, *tok[8];
	unsigned n = 0;
	int ret;

	line[strcspn(line, "#\r\n")] = 0;
	for (char *t = strtok_r(line, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
		if (n == 8)
			return llmio_err(e, -EINVAL, "%s:%u: too many fields", path, ln);
		tok[n++] = t;
	}
	if (!n)
		return 0;
	if (!*header) {
		if (n != 2 || strcmp(tok[0], "llmio-lifetimes") || strcmp(tok[1], "1"))
			return llmio_err(
			        e, -EINVAL,
			        "%s:%u: not an llmio-lifetimes file (the first line must be "
			        "\"llmio-lifetimes 1\")",
			        path, ln);
		*header = true;
		return 0;
	}
	if (!strcmp(tok[0], "kernel")) {
		char *end;
		double us;

		if (n != 3)
			return llmio_err(e, -EINVAL,
			                 "%s:%u: a kernel line is: kernel NAME DURATION_US", path,
			                 ln);
		us = strtod(tok[2], &end);
		if (*end || !(us >= 0) || us > LT_MAX_KERNEL_S * 1e6)
			return llmio_err(
			        e, -EINVAL,
			        "%s:%u: kernel duration '%s' is not a number of microseconds "
			        "from 0 to %.0f",
			        path, ln, tok[2], LT_MAX_KERNEL_S * 1e6);
		ret = lt_add_kernel(s, tok[1], us / 1e6, e);
		return ret ? llmio_err_prefix(e, "%s:%u", path, ln) : 0;
	}
	if (!strcmp(tok[0], "tensor")) {
		uint64_t bytes, created = LT_PERSISTENT;
		enum lt_kind kind;
		uint32_t *uses, nu;

		if (n != 6)
			return llmio_err(
			        e, -EINVAL,
			        "%s:%u: a tensor line is: tensor NAME BYTES KIND CREATED USES",
			        path, ln);
		if (parse_u64(tok[2], &bytes) || !bytes || bytes > LT_MAX_TENSOR_BYTES)
			return llmio_err(
			        e, -EINVAL,
			        "%s:%u: tensor size '%s' is not a byte count from 1 to 1 TiB", path,
			        ln, tok[2]);
		if (lt_kind_parse(tok[3], &kind))
			return llmio_err(
			        e, -EINVAL,
			        "%s:%u: tensor kind '%s' is not weight, activation, gradient, "
			        "optimizer or workspace",
			        path, ln, tok[3]);
		if (strcmp(tok[4], "-") &&
		    (parse_u64(tok[4], &created) || created >= LT_MAX_KERNELS))
			return llmio_err(
			        e, -EINVAL,
			        "%s:%u: CREATED '%s' is not a kernel index or '-' (lives across "
			        "steps)",
			        path, ln, tok[4]);
		ret = parse_uses(tok[5], &uses, &nu, LT_MAX_USES);
		if (ret)
			return llmio_err(
			        e, ret == -ENOMEM ? -ENOMEM : -EINVAL,
			        "%s:%u: USES '%.64s' is not '-' or ascending kernel indices "
			        "separated by commas",
			        path, ln, tok[5]);
		ret = lt_add_tensor(s, tok[1], bytes, kind, (uint32_t)created, uses, nu, e);
		free(uses);
		if (ret)
			return llmio_err_prefix(e, "%s:%u", path, ln);
		s->tensors[s->ntensors - 1].line = ln;
		return 0;
	}
	return llmio_err(e, -EINVAL, "%s:%u: unknown record '%s' (kernel or tensor)", path, ln,
	                 tok[0]);
}

int lt_read_lines(struct lt_step *s, FILE *f, const char *path, struct llmio_error *e)
{
	char *buf = malloc(LINE_MAX_BYTES);
	bool header = false;
	unsigned ln = 0;
	int ret = 0;

	if (!buf)
		return llmio_err(e, -ENOMEM, "out of memory reading %s", path);
	snprintf(s->origin, sizeof(s->origin), "%s", path);
	while (fgets(buf, LINE_MAX_BYTES, f)) {
		ln++;
		if (!strchr(buf, '\n') && !feof(f)) {
			ret = llmio_err(e, -EINVAL, "%s:%u: line longer than %u bytes", path, ln,
			                LINE_MAX_BYTES);
			goto out;
		}
		ret = parse_line(s, buf, path, ln, &header, e);
		if (ret)
			goto out;
	}
	if (ferror(f)) {
		ret = llmio_err(e, -EIO, "%s: read error", path);
		goto out;
	}
	if (!header) {
		ret = llmio_err(e, -EINVAL,
		                "%s: empty (an llmio-lifetimes file starts with "
		                "\"llmio-lifetimes 1\")",
		                path);
		goto out;
	}
	ret = lt_finish(s, e);
out:
	free(buf);
	return ret;
}

int lt_write(const struct lt_step *s, FILE *f)
{
	fprintf(f, "llmio-lifetimes 1\n# origin: %s\n", s->origin);
	for (uint32_t k = 0; k < s->nkernels; k++)
		fprintf(f, "kernel %s %.3f\n", s->kernels[k].name,
		        (double)s->kernels[k].dur_ns / 1e3);
	for (uint32_t i = 0; i < s->ntensors; i++) {
		const struct lt_tensor *t = &s->tensors[i];
		const uint32_t *u = lt_uses(s, t);

		fprintf(f, "tensor %s %" PRIu64 " %s ", t->name, t->bytes, lt_kind_name(t->kind));
		if (t->created == LT_PERSISTENT)
			fprintf(f, "- ");
		else
			fprintf(f, "%u ", t->created);
		for (uint32_t j = 0; j < t->nuses; j++)
			fprintf(f, "%s%u", j ? "," : "", u[j]);
		fprintf(f, "%s\n", t->nuses ? "" : "-");
	}
	return ferror(f) ? -EIO : 0;
}

int lt_read_file(struct lt_step *s, const char *path, const struct lt_g10_opts *g,
                 struct llmio_error *e)
{
	FILE *f = fopen(path, "r");
	int c, ret;

	if (!f)
		return llmio_err(e, -errno, "cannot open lifetimes file %s: %s", path,
		                 strerror(errno));
	/* G10's graphs start with an operator id; ours with "llmio-lifetimes" (or a comment) */
	do
		c = fgetc(f);
	while (c == ' ' || c == '\n' || c == '\t' || c == '\r');
	ungetc(c, f);
	if (c >= '0' && c <= '9')
		ret = lt_read_g10(s, f, path, g, e);
	else
		ret = lt_read_lines(s, f, path, e);
	fclose(f);
	return ret;
}

/* ---- vitality analysis ---- */

int lt_intervals(const struct lt_step *s, struct lt_interval **out, size_t *n,
                 struct llmio_error *e)
{
	size_t cap = (size_t)s->nuses + s->ntensors, cnt = 0;
	struct lt_interval *iv = calloc(cap ? cap : 1, sizeof(*iv));
	const uint64_t total = s->start_ns[s->nkernels];

	if (!iv)
		return llmio_err(e, -ENOMEM, "out of memory for the inactive intervals");
	for (uint32_t i = 0; i < s->ntensors; i++) {
		const struct lt_tensor *t = &s->tensors[i];
		const uint32_t *u = lt_uses(s, t);
		bool persistent = t->created == LT_PERSISTENT;
		uint32_t prev = persistent ? UINT32_MAX : t->created;

		for (uint32_t j = 0; j < t->nuses; j++) {
			if (prev != UINT32_MAX && u[j] > prev + 1)
				iv[cnt++] = (struct lt_interval){
				        .tensor = i,
				        .after = prev,
				        .before = u[j],
				        .idle_ns = s->start_ns[u[j]] - s->start_ns[prev + 1],
				};
			prev = u[j];
		}
		/* a tensor that lives across steps is idle from its last use to its first use in
		 * the next step: the interval G10 calls the loop-around */
		if (persistent && t->nuses) {
			uint32_t first = u[0], last = u[t->nuses - 1];
			uint64_t idle = total - s->start_ns[last + 1] + s->start_ns[first];

			if (idle > 0)
				iv[cnt++] = (struct lt_interval){.tensor = i,
				                                 .after = last,
				                                 .before = first,
				                                 .wraps = true,
				                                 .idle_ns = idle};
		}
	}
	*out = iv;
	*n = cnt;
	return 0;
}
