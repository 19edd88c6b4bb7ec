/* SPDX-License-Identifier: MIT */
/*
 * Job options declared as data (struct llmio_optdesc, base/optdesc.h): one table gives each
 * option's name (fio's where fio has one), type, field, default, range, help and fio mapping.
 * The same table parses CLI flags and job-file keys, prints --help, writes docs/options.md and
 * the fio job file of --emit-fio, so they can never disagree.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "base/error.h"
#include "job/options.h"
#include "llmio/job.h"

/*
 * zipf:THETA, zoned:LIST, zoned_abs:LIST or random (uniform): the distribution in i, theta in
 * d, a zoned LIST in s (checked by job_zones_parse() before the job runs).
 */
static int dist_parse(const char *text, struct llmio_optval *out)
{
	char *end;

	if (!strcmp(text, "random") || !strcmp(text, "uniform")) {
		out->i = LLMIO_DIST_UNIFORM;
		return 0;
	}
	if (!strncmp(text, "zoned:", 6) || !strncmp(text, "zoned_abs:", 10)) {
		out->i = text[5] == ':' ? LLMIO_DIST_ZONED : LLMIO_DIST_ZONED_ABS;
		out->s = strchr(text, ':') + 1;
		return strlen(out->s) < sizeof(((struct llmio_job_opts *)0)->random_zones)
		               ? 0
		               : -EINVAL;
	}
	if (strncmp(text, "zipf:", 5))
		return -EINVAL;
	errno = 0;
	out->d = strtod(text + 5, &end);
	if (errno || end == text + 5 || *end || !(out->d > 0) || out->d > 100)
		return -EINVAL;
	out->i = LLMIO_DIST_ZIPF;
	return 0;
}

static void dist_store(const struct llmio_optval *v, void *base)
{
	struct llmio_job_opts *o = base;

	o->random_distribution = (enum llmio_dist)v->i;
	if (v->i == LLMIO_DIST_ZIPF)
		o->zipf_theta = v->d;
	if (v->i == LLMIO_DIST_ZONED || v->i == LLMIO_DIST_ZONED_ABS)
		snprintf(o->random_zones, sizeof(o->random_zones), "%s", v->s);
}

static void dist_load(const void *base, struct llmio_optval *v)
{
	const struct llmio_job_opts *o = base;

	v->i = o->random_distribution;
	v->d = o->zipf_theta;
	v->s = o->random_zones;
}

static int dist_format(const struct llmio_optval *v, char *buf, size_t len)
{
	int n = v->i == LLMIO_DIST_ZIPF        ? snprintf(buf, len, "zipf:%g", v->d)
	        : v->i == LLMIO_DIST_ZONED     ? snprintf(buf, len, "zoned:%s", v->s)
	        : v->i == LLMIO_DIST_ZONED_ABS ? snprintf(buf, len, "zoned_abs:%s", v->s)
	                                       : snprintf(buf, len, "random");

	return n < 0 || (size_t)n >= len ? -ERANGE : 0;
}

static const struct llmio_optdesc_codec dist_codec = {dist_parse, dist_store, dist_load,
                                                      dist_format};

static const char *const rw_names[] = {
        [LLMIO_RW_READ] = "read",         [LLMIO_RW_WRITE] = "write",
        [LLMIO_RW_RANDREAD] = "randread", [LLMIO_RW_RANDWRITE] = "randwrite",
        [LLMIO_RW_RANDRW] = "randrw",     [LLMIO_RW_RW] = "rw",
        [LLMIO_RW_TRIM] = "trim",         [LLMIO_RW_RANDTRIM] = "randtrim",
};

/*
 * rw: the choices, and fio's second name of the sequential mix (readwrite = rw).  A sequential
 * rw takes fio's offset modifier, TYPE:N: N bytes (k, m ... as a size; negative goes back)
 * skipped after each I/O, into u as a two's complement.  A random rw's :N (fio's new offset
 * every N I/Os) is not done.
 */
static int rw_parse(const char *text, struct llmio_optval *out)
{
	const char *colon = strchr(text, ':');
	const size_t k = colon ? (size_t)(colon - text) : strlen(text);
	uint64_t skip = 0;

	out->i = -1;
	for (size_t i = 0; i < sizeof(rw_names) / sizeof(rw_names[0]); i++)
		if (strlen(rw_names[i]) == k && !strncmp(text, rw_names[i], k))
			out->i = (int64_t)i;
	if (k == strlen("readwrite") && !strncmp(text, "readwrite", k))
		out->i = LLMIO_RW_RW;
	if (out->i < 0)
		return -EINVAL;
	out->u = 0;
	if (!colon)
		return 0;
	if (job_rw_random((enum llmio_rw)out->i) ||
	    llmio_parse_size(colon[1] == '-' ? colon + 2 : colon + 1, &skip) ||
	    skip > (uint64_t)INT64_MAX)
		return -EINVAL;
	out->u = colon[1] == '-' ? (uint64_t) - (int64_t)skip : skip;
	return 0;
}

static void rw_store(const struct llmio_optval *v, void *base)
{
	((struct llmio_job_opts *)base)->rw = (enum llmio_rw)v->i;
	((struct llmio_job_opts *)base)->rw_skip = (int64_t)v->u;
}

static void rw_load(const void *base, struct llmio_optval *v)
{
	v->i = ((const struct llmio_job_opts *)base)->rw;
	v->u = (uint64_t)((const struct llmio_job_opts *)base)->rw_skip;
	v->s = llmio_rw_name((enum llmio_rw)v->i);
}

static int rw_format(const struct llmio_optval *v, char *buf, size_t len)
{
	const int n = v->u ? snprintf(buf, len, "%s:%" PRId64, llmio_rw_name((enum llmio_rw)v->i),
	                              (int64_t)v->u)
	                   : snprintf(buf, len, "%s", llmio_rw_name((enum llmio_rw)v->i));

	return n < 0 || (size_t)n >= len ? -ERANGE : 0;
}

static const struct llmio_optdesc_codec rw_codec = {rw_parse, rw_store, rw_load, rw_format};

/* buffered is fio's mirror of direct: the same field, inverted. */
static int buffered_parse(const char *text, struct llmio_optval *out)
{
	static const char *const yes[] = {"", "1", "true", "yes", "on"};
	static const char *const no[] = {"0", "false", "no", "off"};

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		if (!strcasecmp(text, yes[i])) {
			out->b = true;
			return 0;
		}
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		if (!strcasecmp(text, no[i])) {
			out->b = false;
			return 0;
		}
	return -EINVAL;
}

static void buffered_store(const struct llmio_optval *v, void *base)
{
	((struct llmio_job_opts *)base)->direct = !v->b;
}

static void buffered_load(const void *base, struct llmio_optval *v)
{
	v->b = !((const struct llmio_job_opts *)base)->direct;
}

static int bool_format(const struct llmio_optval *v, char *buf, size_t len)
{
	return snprintf(buf, len, "%d", v->b) >= (int)len ? -ERANGE : 0;
}

static const struct llmio_optdesc_codec buffered_codec = {buffered_parse, buffered_store,
                                                          buffered_load, bool_format};

/* rwmixwrite is fio's other side of rwmixread: the same field, 100 - x. */
static int mixwrite_parse(const char *text, struct llmio_optval *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(text, &end, 10);
	if (errno || end == text || *end || v > 100 || text[0] == '-')
		return -EINVAL;
	out->u = v;
	return 0;
}

static void mixwrite_store(const struct llmio_optval *v, void *base)
{
	((struct llmio_job_opts *)base)->rwmixread = (uint32_t)(100 - v->u);
}

static void mixwrite_load(const void *base, struct llmio_optval *v)
{
	v->u = 100 - ((const struct llmio_job_opts *)base)->rwmixread;
}

static int uint_format(const struct llmio_optval *v, char *buf, size_t len)
{
	return snprintf(buf, len, "%" PRIu64, v->u) >= (int)len ? -ERANGE : 0;
}

static const struct llmio_optdesc_codec mixwrite_codec = {mixwrite_parse, mixwrite_store,
                                                          mixwrite_load, uint_format};

/* One direction's list of bssplit ("4k/10:64k/50:32k/"), into out->bs[d], out->cum[d]. */
static int bssplit_list(const char *text, size_t len, unsigned d, struct job_bssplit *out,
                        struct llmio_error *e)
{
	int pct[JOB_BSSPLIT_MAX];
	unsigned n = 0, blank = 0, last_blank = 0;
	int sum = 0;
	size_t at = 0;

	while (at < len) {
		char item[64], *slash, *end;
		size_t k = strcspn(text + at, ":,");

		if (k > len - at)
			k = len - at;
		if (!k || k >= sizeof(item))
			return llmio_err(e, -EINVAL,
			                 "bssplit: an empty or overlong entry in '%.*s'", (int)len,
			                 text);
		if (n == JOB_BSSPLIT_MAX)
			return llmio_err(e, -EINVAL, "bssplit: more than %d sizes in one direction",
			                 JOB_BSSPLIT_MAX);
		memcpy(item, text + at, k);
		item[k] = '\0';
		slash = strchr(item, '/');
		if (slash)
			*slash = '\0';
		if (llmio_parse_size(item, &out->bs[d][n]) || !out->bs[d][n] ||
		    out->bs[d][n] > (1u << 30))
			return llmio_err(e, -EINVAL,
			                 "bssplit: '%s' is not a block size (4k, 64k ...)", item);
		pct[n] = -1; /* blank (fio: "4k/" or "4k"): a share of the rest */
		if (slash && slash[1]) {
			long v;

			errno = 0;
			v = strtol(slash + 1, &end, 10);
			if (errno || *end || v < 0 || v > 100)
				return llmio_err(e, -EINVAL,
				                 "bssplit: '%s' is not a whole percentage 0..100",
				                 slash + 1);
			pct[n] = (int)v;
			sum += (int)v;
		} else {
			blank++;
			last_blank = n;
		}
		n++;
		at += k + 1;
	}
	if (!n)
		return llmio_err(e, -EINVAL,
		                 "bssplit: a direction without sizes (give each direction's list)");
	if (blank) {
		/* fio's fill: the rest evenly; llmio gives the remainder of the division to the
		 * last blank, so that the shares add up to 100 */
		const int each = sum < 100 ? (100 - sum) / (int)blank : 0;

		for (unsigned i = 0; i < n; i++)
			if (pct[i] < 0) {
				pct[i] = each;
				sum += each;
			}
		if (sum < 100)
			pct[last_blank] += 100 - sum, sum = 100;
	}
	if (sum != 100)
		return llmio_err(
		        e, -EINVAL,
		        "bssplit: the percentages of '%.*s' add up to %d, not 100 (fio gives "
		        "what is missing to one size): make them add up to 100",
		        (int)len, text, sum);
	out->n[d] = n;
	sum = 0;
	for (unsigned i = 0; i < n; i++) {
		sum += pct[i];
		out->cum[d][i] = (uint32_t)sum;
	}
	return 0;
}

/*
 * The smallest and largest sizes of a split (min, max, dmin), and its checks: each direction's
 * sizes multiples of its smallest, which is a multiple of the other direction's.
 */
static int split_bounds(const char *opt, const char *text, struct job_bssplit *out,
                        struct llmio_error *e)
{
	out->min = UINT64_MAX;
	for (unsigned d = 0; d < 2; d++) {
		out->dmin[d] = UINT64_MAX;
		for (unsigned i = 0; i < out->n[d]; i++) {
			if (out->bs[d][i] < out->dmin[d])
				out->dmin[d] = out->bs[d][i];
			if (out->bs[d][i] > out->max)
				out->max = out->bs[d][i];
		}
		if (out->range[d] > out->max)
			out->max = out->range[d];
		if (out->dmin[d] < out->min)
			out->min = out->dmin[d];
	}
	for (unsigned d = 0; d < 2; d++) {
		if (out->dmin[d] % out->min)
			return llmio_err(e, -EINVAL,
			                 "%s=%s: the smallest %s size, %" PRIu64
			                 ", is not a multiple of the other direction's, %" PRIu64,
			                 opt, text, d ? "write" : "read", out->dmin[d], out->min);
		for (unsigned i = 0; i < out->n[d]; i++)
			if (out->bs[d][i] % out->dmin[d])
				return llmio_err(e, -EINVAL,
				                 "%s=%s: %" PRIu64 " is not a multiple of the "
				                 "smallest %s size, %" PRIu64
				                 " (fio rounds it down to one: give that size)",
				                 opt, text, out->bs[d][i], d ? "write" : "read",
				                 out->dmin[d]);
	}
	return 0;
}

/* One direction's MIN-MAX of bsrange (fio also takes MIN:MAX), into out->bs[d][0], range[d]. */
static int bsrange_list(const char *text, size_t len, unsigned d, struct job_bssplit *out,
                        struct llmio_error *e)
{
	char item[64], *dash;
	uint64_t lo, hi;

	if (!len || len >= sizeof(item))
		return llmio_err(e, -EINVAL, "bsrange: an empty or overlong range in '%s'", text);
	memcpy(item, text, len);
	item[len] = '\0';
	dash = strpbrk(item, "-:");
	if (!dash)
		return llmio_err(e, -EINVAL, "bsrange: '%s' is not MIN-MAX (4k-64k)", item);
	*dash = '\0';
	if (llmio_parse_size(item, &lo) || llmio_parse_size(dash + 1, &hi) || !lo ||
	    hi > (1u << 30))
		return llmio_err(e, -EINVAL, "bsrange: '%s-%s' is not MIN-MAX (4k-64k)", item,
		                 dash + 1);
	if (lo > hi || hi % lo)
		return llmio_err(e, -EINVAL,
		                 "bsrange: %" PRIu64 "-%" PRIu64 ": MAX must be a multiple of MIN, "
		                 "at least MIN (fio's draw gives MAX itself a share of its own "
		                 "otherwise): give one",
		                 lo, hi);
	out->n[d] = 1;
	out->bs[d][0] = lo;
	out->cum[d][0] = 100;
	out->range[d] = hi > lo ? hi : 0;
	return 0;
}

int job_bsrange_parse(const char *text, struct job_bssplit *out, struct llmio_error *e)
{
	const char *comma = strchr(text, ',');
	const char *third = comma ? strchr(comma + 1, ',') : NULL;
	struct job_bssplit trims;

	memset(out, 0, sizeof(*out));
	if (bsrange_list(text, comma ? (size_t)(comma - text) : strlen(text), 0, out, e) ||
	    bsrange_list(comma ? comma + 1 : text,
	                 comma ? (third ? (size_t)(third - comma - 1) : strlen(comma + 1))
	                       : strlen(text),
	                 1, out, e))
		return -EINVAL;
	if (third &&
	    (strchr(third + 1, ',') || bsrange_list(third + 1, strlen(third + 1), 0, &trims, e)))
		return llmio_err(e, -EINVAL,
		                 "bsrange=%s: at most three ranges (reads, writes, trims)", text);
	return split_bounds("bsrange", text, out, e);
}

/*
 * fio's zone list, as fio's zone_split_ddir() reads it: ACCESS/SIZE entries split by ':', a blank
 * SIZE (percent) a share of what the others leave, evenly (fio's integer division); the given
 * accesses must add up to 100 (a blank one is then 0), the sizes to at most 100 (zoned_abs:
 * bytes, one zone after another).
 */
int job_zones_parse(const struct llmio_job_opts *o, struct job_zones *out, struct llmio_error *e)
{
	const bool abs = o->random_distribution == LLMIO_DIST_ZONED_ABS;
	const char *opt = abs ? "zoned_abs" : "zoned";
	const char *text = o->random_zones;
	int acc[JOB_ZONES_MAX], sz[JOB_ZONES_MAX];
	unsigned sz_blank = 0, n = 0;
	int acc_sum = 0, sz_sum = 0;
	uint64_t at = 0;

	memset(out, 0, sizeof(*out));
	out->abs = abs;
	if (strchr(text, ','))
		return llmio_err(e, -EINVAL,
		                 "random_distribution=%s:%s: one list for both directions (fio's "
		                 "list per direction is not done)",
		                 opt, text);
	for (const char *p = text; *p;) {
		char item[64], *slash, *end;
		size_t k = strcspn(p, ":");
		long v;

		if (!k || k >= sizeof(item) || n == JOB_ZONES_MAX)
			return llmio_err(e, -EINVAL,
			                 "random_distribution=%s:%s: an empty or overlong zone, or "
			                 "more than %d",
			                 opt, text, JOB_ZONES_MAX);
		memcpy(item, p, k);
		item[k] = '\0';
		p += k + (p[k] == ':');
		slash = strchr(item, '/');
		if (slash)
			*slash = '\0';
		acc[n] = sz[n] = -1;
		if (item[0]) {
			errno = 0;
			v = strtol(item, &end, 10);
			if (errno || *end || v < 0 || v > 100)
				goto bad;
			acc[n] = (int)v;
			acc_sum += (int)v;
		}
		if (abs) {
			if (!slash || llmio_parse_size(slash + 1, &out->size[n]) || !out->size[n])
				goto bad;
			out->start[n] = at;
			at += out->size[n];
		} else if (slash && slash[1]) {
			errno = 0;
			v = strtol(slash + 1, &end, 10);
			if (errno || *end || v < 0 || v > 100)
				goto bad;
			sz[n] = (int)v;
			sz_sum += (int)v;
		} else {
			sz_blank++;
		}
		n++;
	}
	/* fio checks the given accesses before it fills the blanks: they alone make 100 */
	if (acc_sum != 100 || sz_sum > 100)
		goto sums;
	for (unsigned i = 0; i < n; i++) {
		if (acc[i] < 0)
			acc[i] = 0;
		if (!abs && sz[i] < 0)
			sz[i] = n == 1 ? 100 : (100 - sz_sum) / (int)sz_blank;
	}
	acc_sum = sz_sum = 0;
	for (unsigned i = 0; i < n; i++) {
		acc_sum += acc[i];
		out->cum[i] = (uint32_t)acc_sum;
		if (!abs) {
			out->start_pct[i] = (uint32_t)sz_sum;
			out->size_pct[i] = (uint32_t)sz[i];
			sz_sum += sz[i];
		}
	}
	if (acc_sum != 100 || sz_sum > 100)
		goto sums;
	out->n = n;
	return 0;
bad:
	return llmio_err(e, -EINVAL,
	                 "random_distribution=%s:%s: each zone is ACCESS/%s (a whole percentage, "
	                 "then %s)",
	                 opt, text, abs ? "BYTES" : "SIZE", abs ? "a size: 64m" : "one: 50/10");
sums:
	return llmio_err(e, -EINVAL,
	                 "random_distribution=%s:%s: the accesses add up to %d, not 100%s "
	                 "(fio refuses it too): make them add up",
	                 opt, text, acc_sum, abs ? "" : ", or the sizes to more than 100");
}

int job_bs_sizes(const struct llmio_job_opts *o, struct job_bssplit *out, struct llmio_error *e)
{
	memset(out, 0, sizeof(*out));
	if (o->bssplit[0] && o->bsrange[0])
		return llmio_err(e, -EINVAL,
		                 "bssplit and bsrange both given: give one (fio takes bssplit)");
	if (o->bssplit[0])
		return job_bssplit_parse(o->bssplit, out, e);
	if (o->bsrange[0])
		return job_bsrange_parse(o->bsrange, out, e);
	return 0;
}

int job_bssplit_parse(const char *text, struct job_bssplit *out, struct llmio_error *e)
{
	const char *comma = strchr(text, ',');

	memset(out, 0, sizeof(*out));
	if (bssplit_list(text, comma ? (size_t)(comma - text) : strlen(text), 0, out, e))
		return -EINVAL;
	if (comma) {
		/* READS,WRITES[,TRIMS]: llmio does not trim, so a third list is checked only */
		const char *third = strchr(comma + 1, ',');
		struct job_bssplit trims;

		if (bssplit_list(comma + 1, third ? (size_t)(third - comma - 1) : strlen(comma + 1),
		                 1, out, e))
			return -EINVAL;
		if (third && (strchr(third + 1, ',') ||
		              bssplit_list(third + 1, strlen(third + 1), 0, &trims, e)))
			return llmio_err(e, -EINVAL,
			                 "bssplit=%s: at most three lists (reads, writes, trims)",
			                 text);
	} else {
		out->n[1] = out->n[0];
		memcpy(out->bs[1], out->bs[0], sizeof(out->bs[0]));
		memcpy(out->cum[1], out->cum[0], sizeof(out->cum[0]));
	}
	return split_bounds("bssplit", text, out, e);
}

/*
 * bssplit: the text as written; job_opts_resolve() checks it before the job runs, with a message
 * that names what is wrong in it, and makes its smallest size bs.
 */
static int bssplit_parse(const char *text, struct llmio_optval *out)
{
	if (strlen(text) >= sizeof(((struct llmio_job_opts *)0)->bssplit))
		return -EINVAL;
	out->s = text;
	return 0;
}

static void bssplit_store(const struct llmio_optval *v, void *base)
{
	struct llmio_job_opts *o = base;

	snprintf(o->bssplit, sizeof(o->bssplit), "%s", v->s);
}

static void bssplit_load(const void *base, struct llmio_optval *v)
{
	v->s = ((const struct llmio_job_opts *)base)->bssplit;
}

/* bsrange: the text as written, checked (and its smallest MIN made bs) as bssplit's is */
static int bsrange_parse(const char *text, struct llmio_optval *out)
{
	if (strlen(text) >= sizeof(((struct llmio_job_opts *)0)->bsrange))
		return -EINVAL;
	out->s = text;
	return 0;
}

static void bsrange_store(const struct llmio_optval *v, void *base)
{
	struct llmio_job_opts *o = base;

	snprintf(o->bsrange, sizeof(o->bsrange), "%s", v->s);
}

static void bsrange_load(const void *base, struct llmio_optval *v)
{
	v->s = ((const struct llmio_job_opts *)base)->bsrange;
}

static int text_format(const struct llmio_optval *v, char *buf, size_t len)
{
	return snprintf(buf, len, "%s", v->s) >= (int)len ? -ERANGE : 0;
}

/* gtod_reduce=1: fio's shorthand for the four disable_* options; 0 leaves them, as fio's does */
static void gtod_store(const struct llmio_optval *v, void *base)
{
	struct llmio_job_opts *o = base;

	if (v->b)
		o->disable_lat = o->disable_clat = o->disable_slat = o->disable_bw = true;
}

static void gtod_load(const void *base, struct llmio_optval *v)
{
	const struct llmio_job_opts *o = base;

	v->b = o->disable_lat && o->disable_clat && o->disable_slat && o->disable_bw;
}

static const struct llmio_optdesc_codec gtod_codec = {buffered_parse, gtod_store, gtod_load,
                                                      bool_format};

/*
 * create_on_open, create_serialize: taken, with no field: llmio lays out a job's files before
 * the run either way, outside the measured window, one job after another (the files and bytes
 * are fio's, tests/cli_fio_conformance.sh).
 */
static void taken_load(const void *base, struct llmio_optval *v)
{
	(void)base;
	v->b = false;
}

static const struct llmio_optdesc_codec taken_codec = {buffered_parse, NULL, taken_load,
                                                       bool_format};

/* io_submit_mode: inline only (fio's default); offload is refused */
static int inline_parse(const char *text, struct llmio_optval *out)
{
	out->s = "inline";
	return strcmp(text, "inline") ? -EINVAL : 0;
}

static void inline_load(const void *base, struct llmio_optval *v)
{
	(void)base;
	v->s = "inline";
}

static const struct llmio_optdesc_codec inline_codec = {inline_parse, NULL, inline_load,
                                                        text_format};

/*
 * random_generator: taken, with no field.  fio's choice (tausworthe, tausworthe64, lfsr) is the
 * generator behind its own offsets, which llmio's never reproduce either way; what the choice
 * means for the I/O, each block once per pass, is the random map (norandommap=0), which llmio
 * gives with its one generator.
 */
static int generator_parse(const char *text, struct llmio_optval *out)
{
	out->s = text;
	return strcmp(text, "tausworthe") && strcmp(text, "tausworthe64") && strcmp(text, "lfsr")
	               ? -EINVAL
	               : 0;
}

static void generator_load(const void *base, struct llmio_optval *v)
{
	(void)base;
	v->s = "tausworthe";
}

static const struct llmio_optdesc_codec generator_codec = {generator_parse, NULL, generator_load,
                                                           text_format};

/* thread: llmio's jobs are always threads of one process (fio's thread=1); 0 is refused. */
static int thread_parse(const char *text, struct llmio_optval *out)
{
	int ret = buffered_parse(text, out);

	return ret || !out->b ? -EINVAL : 0;
}

static void thread_load(const void *base, struct llmio_optval *v)
{
	(void)base;
	v->b = true;
}

/* slat_percentiles: llmio reports none (fio's default, 0); 1 is refused */
static int no_parse(const char *text, struct llmio_optval *out)
{
	int ret = buffered_parse(text, out);

	return ret || out->b ? -EINVAL : 0;
}

static const struct llmio_optdesc_codec no_codec = {no_parse, NULL, taken_load, bool_format};

static const struct llmio_optdesc_codec thread_codec = {thread_parse, NULL, thread_load,
                                                        bool_format};

/* clat_percentiles: fio's 1 is the zero of clat_percentiles_off, so a zeroed struct reports them */
static void clatpct_store(const struct llmio_optval *v, void *base)
{
	((struct llmio_job_opts *)base)->clat_percentiles_off = !v->b;
}

static void clatpct_load(const void *base, struct llmio_optval *v)
{
	v->b = !((const struct llmio_job_opts *)base)->clat_percentiles_off;
}

static const struct llmio_optdesc_codec clatpct_codec = {buffered_parse, clatpct_store,
                                                         clatpct_load, bool_format};

/*
 * threads: an option of fio's tiobench profile (its numjobs), which fio parses in any job and
 * uses only with profile=tiobench: without the profile it changes nothing, in fio as here.
 */
static int count_parse(const char *text, struct llmio_optval *out)
{
	return llmio_parse_uint(text, 0, UINT32_MAX, &out->u) ? -EINVAL : 0;
}

static void count_load(const void *base, struct llmio_optval *v)
{
	(void)base;
	v->u = 1;
}

static const struct llmio_optdesc_codec count_codec = {count_parse, NULL, count_load, uint_format};

/*
 * fio's steadystate (ss): iops | iops_slope | bw | bw_slope, ':' and a limit, a percentage of
 * the mean with '%' ("iops:10%", "bw_slope:0.1%"), else IOPS or bytes per second ("bw:10m").
 */
static int ss_parse(const char *text, struct llmio_optval *out)
{
	static const char *const kinds[] = {"iops", "iops_slope", "bw", "bw_slope"};
	const char *colon = strchr(text, ':');
	char *end;

	out->i = -1;
	for (size_t k = 0; colon && k < 4; k++)
		if ((size_t)(colon - text) == strlen(kinds[k]) &&
		    !strncmp(text, kinds[k], strlen(kinds[k])))
			out->i = (k < 2 ? LLMIO_SS_IOPS : 0) | (k % 2 ? LLMIO_SS_SLOPE : 0);
	if (out->i < 0)
		return -EINVAL;
	errno = 0;
	out->d = strtod(colon + 1, &end);
	if (*end == '%' && !end[1] && end > colon + 1) {
		out->i |= LLMIO_SS_PCT;
	} else if (errno || end == colon + 1 || *end) {
		uint64_t bytes;

		/* a bandwidth with a unit (fio's sizes: 10m) */
		if ((out->i & LLMIO_SS_IOPS) || llmio_parse_size(colon + 1, &bytes))
			return -EINVAL;
		out->d = (double)bytes;
	}
	return errno || !(out->d >= 0) ? -EINVAL : 0;
}

static void ss_store(const struct llmio_optval *v, void *base)
{
	struct llmio_job_opts *o = base;

	o->ss_state = (uint8_t)v->i;
	o->ss_limit = v->d;
}

static void ss_load(const void *base, struct llmio_optval *v)
{
	const struct llmio_job_opts *o = base;

	v->i = o->ss_state;
	v->d = o->ss_limit;
}

/* fio's spelling of the criterion, as its JSON's "ss" writes it ("iops:10.000000%") */
static int ss_format(const struct llmio_optval *v, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s%s:%f%s", v->i & LLMIO_SS_IOPS ? "iops" : "bw",
	                 v->i & LLMIO_SS_SLOPE ? "_slope" : "", v->d,
	                 v->i & LLMIO_SS_PCT ? "%" : "");

	return n < 0 || (size_t)n >= len ? -ERANGE : 0;
}

static const struct llmio_optdesc_codec ss_codec = {ss_parse, ss_store, ss_load, ss_format};

/*
 * fio's rate and rate_iops: READ[,WRITE[,TRIM]], fio's per-direction values (HOWTO's bs
 * rule): a value left empty is no limit, and the last one given goes on to the directions
 * after it (rate=1m is 1m for each, rate=,256k limits writes and trims).  \return 0, or
 * -EINVAL when an element is no number or there are more than three.
 */
static int dirs_split(const char *text, bool size, uint64_t out[3])
{
	const char *at = text;
	unsigned n = 0;

	for (;;) {
		size_t len = strcspn(at, ",");
		char one[64];

		if (n == 3 || len >= sizeof(one))
			return -EINVAL;
		memcpy(one, at, len);
		one[len] = '\0';
		out[n] = 0;
		if (len && (size ? llmio_parse_size(one, &out[n])
		                 : llmio_parse_uint(one, 0, UINT32_MAX, &out[n])))
			return -EINVAL;
		n++;
		if (!at[len])
			break;
		at += len + 1;
	}
	for (; n < 3; n++)
		out[n] = out[n - 1];
	return 0;
}

/* The text is kept (borrowed) for the store, which splits it again; u is the reads' value. */
static int dirs_parse(const char *text, bool size, struct llmio_optval *out)
{
	uint64_t v[3];

	out->s = text;
	return dirs_split(text, size, v) ? -EINVAL : (out->u = v[0], 0);
}

/* Into f[0], f[1], f[2] (reads, writes, trims): the text's values, or u for each (a load's). */
static void dirs_store(const struct llmio_optval *v, bool size, uint64_t *f[3])
{
	uint64_t d[3] = {v->u, v->u, v->u};

	if (v->s)
		dirs_split(v->s, size, d);
	for (int i = 0; i < 3; i++)
		*f[i] = d[i];
}

static int rate_parse(const char *text, struct llmio_optval *out)
{
	return dirs_parse(text, true, out);
}

static int iops_parse(const char *text, struct llmio_optval *out)
{
	return dirs_parse(text, false, out);
}

static void rate_store(const struct llmio_optval *v, void *base)
{
	struct llmio_job_opts *o = base;

	dirs_store(v, true, (uint64_t *[3]){&o->rate, &o->rate_write, &o->rate_trim});
}

static void iops_store(const struct llmio_optval *v, void *base)
{
	struct llmio_job_opts *o = base;

	dirs_store(v, false,
	           (uint64_t *[3]){&o->rate_iops, &o->rate_iops_write, &o->rate_iops_trim});
}

/* the echo is the reads' number (a record's rate stays a number); --emit-fio writes each */
static void rate_load(const void *base, struct llmio_optval *v)
{
	v->u = ((const struct llmio_job_opts *)base)->rate;
	v->s = NULL;
}

static void iops_load(const void *base, struct llmio_optval *v)
{
	v->u = ((const struct llmio_job_opts *)base)->rate_iops;
	v->s = NULL;
}

static const struct llmio_optdesc_codec rate_codec = {rate_parse, rate_store, rate_load,
                                                      uint_format};
static const struct llmio_optdesc_codec iops_codec = {iops_parse, iops_store, iops_load,
                                                      uint_format};

bool job_opt_per_dir(const struct llmio_optdesc *d)
{
	return d && (d->codec == &rate_codec || d->codec == &iops_codec);
}

static const struct llmio_optdesc_codec bssplit_codec = {bssplit_parse, bssplit_store, bssplit_load,
                                                         text_format};
static const struct llmio_optdesc_codec bsrange_codec = {bsrange_parse, bsrange_store, bsrange_load,
                                                         text_format};

#define JOB(n, a, t, f, d, h, ...)                                                                 \
	{                                                                                          \
		.name = n, .alias = a, .type = t, OPTD_FIELD(struct llmio_job_opts, f), .def = d,  \
		.help = h, .scope = OPTD_SCOPE_JOB, __VA_ARGS__                                    \
	}
/* fio's option added later: in a sweep point only when set (optdesc.h: sweep_if_set) */
#define FIOJOB(n, a, t, f, d, h, ...) JOB(n, a, t, f, d, h, .sweep_if_set = true, __VA_ARGS__)
/* fio's other spelling of another option's field (optdesc.h: mirror) */
#define MIRROR(n, t, c, h, x)                                                                      \
	{                                                                                          \
		.name = n, .type = t, .def = "", .mirror = true, .scope = OPTD_SCOPE_JOB,          \
		.codec = &c, .help = h, .expect = x, .fio_kind = OPTD_FIO_CUSTOM, .no_echo = true  \
	}
/* fio takes the value as it is under the same name */
#define FIO .fio_kind = OPTD_FIO_VALUE
/* emit_fio.c converts it (or writes it with another option) */
#define FIO_CUSTOM .fio_kind = OPTD_FIO_CUSTOM

static const struct llmio_optdesc opts_table[] = {
        JOB("ioengine", "engine", OPTD_STRING, engine, "psync", "datapath: see `llmio engines`",
            .fio = "ioengine", FIO_CUSTOM),
        JOB("filename", NULL, OPTD_STRING, filename, "",
            "file or block device to do I/O to (s3://bucket/key with --engine s3); llmio run: "
            "a:b:c for several (fio's), inside --directory when given",
            FIO_CUSTOM),
        JOB("directory", NULL, OPTD_STRING, directory, "",
            "directory: files llmio.0 .. llmio.N-1 in its llmio-work (llmio's own), or with "
            "filename / filename_format those inside it; s3://bucket/prefix: its objects "
            "(--engine s3)",
            FIO_CUSTOM),
        JOB("nrfiles", NULL, OPTD_UINT, nrfiles, "1", "number of files in --directory", .min = 1,
            .max = 1000000, FIO_CUSTOM, .json_if = "directory"),
        FIOJOB("filename_format", NULL, OPTD_STRING, filename_format, "",
               "names of the job's files without filename: $jobname, $jobnum, $filenum (fio's; "
               "llmio run's default $jobname.$jobnum.$filenum)",
               FIO, .no_echo = true),
        JOB("rw", "readwrite", OPTD_ENUM, rw, "read",
            "read | write | randread | randwrite | randrw | rw (sequential mix; also readwrite) "
            "| trim | randtrim (ioengine=falloc: punch holes); a sequential one with :N skips N "
            "bytes after each I/O (fio's; -N goes back)",
            .choices = "read|write|randread|randwrite|randrw|rw|trim|randtrim",
            .expect = "read, write, randread, randwrite, randrw, rw (readwrite), trim or "
                      "randtrim, a sequential one with fio's :N (bytes skipped after each I/O, "
                      "-N backwards; a random one's :N is not done)",
            .fio = "rw", .codec = &rw_codec, FIO_CUSTOM),
        JOB("rwmixread", NULL, OPTD_UINT, rwmixread, "50", "percent of reads in randrw", .min = 0,
            .max = 100, FIO_CUSTOM, .json_if = "rw=randrw"),
        JOB("bs", "blocksize", OPTD_SIZE, bs, "4k", "block size of every I/O", .min = 1,
            .max = 1u << 30, .fio = "bs", FIO),
        JOB("iodepth", NULL, OPTD_UINT, iodepth, "1", "I/Os in flight per thread (async engines)",
            .min = 1, .max = 4096, FIO_CUSTOM),
        JOB("numjobs", NULL, OPTD_UINT, numjobs, "1", "threads, each with its own iodepth",
            .min = 1, .max = 1024, FIO_CUSTOM),
        JOB("size", NULL, OPTD_SIZE, size, "0",
            "bytes of the target (all files together); 0 = an existing file's size", FIO_CUSTOM),
        JOB("io_size", "io_limit", OPTD_SIZE, io_size, "0",
            "bytes each thread transfers; 0 = the job moves size once, or unlimited with runtime",
            .fio = "io_size", FIO_CUSTOM),
        JOB("runtime", NULL, OPTD_DURATION, runtime_ns, "0",
            "measured time (s, or with unit: 500ms, 2m); 0 = by size", FIO_CUSTOM,
            .json = "runtime_s", .json_ns = 1e9),
        JOB("ramp_time", NULL, OPTD_DURATION, ramp_time_ns, "0",
            "I/O run before measuring starts, not counted", FIO_CUSTOM, .json = "ramp_time_s",
            .json_ns = 1e9),
        FIOJOB("startdelay", NULL, OPTD_DURATION, startdelay_ns, "0",
               "wait this long before starting, once the jobs started with it are laid out "
               "(plain number = seconds, as in fio)",
               FIO_CUSTOM, .no_echo = true),
        JOB("direct", NULL, OPTD_BOOL, direct, "0", "O_DIRECT: bypass the page cache", FIO),
        JOB("random_distribution", NULL, OPTD_ENUM, random_distribution, "random",
            "random (uniform) | zipf:THETA | zoned:ACCESS%/SIZE%:... | "
            "zoned_abs:ACCESS%/BYTES:... (fio's)",
            .codec = &dist_codec,
            .expect = "random, zipf:THETA with THETA > 0 (e.g. zipf:1.2), or fio's "
                      "zoned:ACCESS/SIZE:... (percentages) or zoned_abs:ACCESS/BYTES:...",
            FIO_CUSTOM),
        /* a seed is any 64-bit number, which a double bound cannot state */
        JOB("randseed", NULL, OPTD_UINT, randseed, "1",
            "seed of offsets and op mix (runs repeat exactly)", .umin = 0, .umax = UINT64_MAX,
            FIO_CUSTOM),
        JOB("invalidate", NULL, OPTD_BOOL, invalidate, "1",
            "drop the target's page cache before the run", FIO),
        JOB("fadvise_hint", NULL, OPTD_ENUM, fadvise_hint, "1",
            "posix_fadvise() of the target's files, as fio's: 1 = random for random rw, "
            "sequential otherwise (readahead off or doubled) | 0 = none | random | sequential "
            "| normal",
            .choices = "0|1|random|sequential|normal",
            .expect = "0, 1, random, sequential or normal", FIO_CUSTOM, .sweep_if_set = true),
        JOB("noatime", NULL, OPTD_BOOL, noatime, "1",
            "open files with O_NOATIME where permitted: reads skip the access-time update "
            "(0 = measure it too)",
            FIO_CUSTOM, .sweep_if_set = true),
        JOB("fsync", NULL, OPTD_UINT, fsync, "0", "fsync after every N writes; 0 = never",
            FIO_CUSTOM),
        JOB("end_fsync", NULL, OPTD_BOOL, end_fsync, "0", "fsync when a write job ends", FIO),
        JOB("rate", NULL, OPTD_SIZE, rate, "0",
            "bytes per second per thread, fio's per clone (e.g. 100m), each direction on its "
            "own; READ,WRITE,TRIM as fio's (,256k: writes only); 0 = no limit",
            .codec = &rate_codec, .expect = "a size per second, or READ,WRITE[,TRIM] sizes",
            FIO_CUSTOM),
        JOB("thinktime", NULL, OPTD_DURATION, thinktime_ns, "0",
            "pause after every thinktime_blocks I/Os (plain number = microseconds, as in fio)",
            .bare_ns = 1000, FIO_CUSTOM, .json = "thinktime_us", .json_ns = 1e3),
        JOB("thinktime_blocks", NULL, OPTD_UINT, thinktime_blocks, "1",
            "I/Os between think-time pauses", .min = 1, FIO_CUSTOM),
        JOB("cpus_allowed", NULL, OPTD_STRING, cpus_allowed, "",
            "CPUs the job threads run on, e.g. 1 or 0-3,6 (fio's list); empty = any", FIO_CUSTOM),
        JOB("cpus_allowed_policy", NULL, OPTD_STRING, cpus_allowed_policy, "shared",
            "shared: every thread on every listed CPU | split: thread i on the i-th CPU",
            FIO_CUSTOM, .json_if = "cpus_allowed"),
        FIOJOB("numa_cpu_nodes", NULL, OPTD_STRING, numa_cpu_nodes, "",
               "fio's: the job threads run on the CPUs of these NUMA nodes (0, 0-1,3 or all; "
               "/sys/devices/system/node), in place of cpus_allowed",
               FIO, .no_echo = true),
        FIOJOB("numa_mem_policy", NULL, OPTD_STRING, numa_mem_policy, "",
               "fio's: each job thread's memory policy, before its buffers are allocated: "
               "default | local | prefer:NODE | bind:NODES | interleave[:NODES]",
               FIO, .no_echo = true),
        JOB("allow_destructive", "allow-destructive", OPTD_BOOL, allow_destructive, "0",
            "allow writes to a raw block device (destroys its data)", FIO_CUSTOM, .no_echo = true,
            .fio_note = "fio asks nothing before writing to a raw device (a comment says so)"),
        JOB("force", NULL, OPTD_BOOL, force, "0",
            "with allow_destructive: write over a filesystem signature too (never a mounted "
            "device)",
            FIO_CUSTOM, .fio_note = "as allow_destructive", .no_echo = true),
        JOB("readonly", NULL, OPTD_BOOL, readonly, "0",
            "a safety net, as fio's --readonly: refuse the job if it would write anything (a "
            "write I/O, or laying out a file: creating, extending or filling it)",
            FIO_CUSTOM, .no_echo = true),
        JOB("extend", NULL, OPTD_BOOL, extend, "0",
            "a job that only reads may append to an existing file shorter than size (its own "
            "bytes and holes are never written)",
            FIO_CUSTOM, .fio_note = "fio lays a short file out to size itself", .no_echo = true),
        /* ---- fio's options with fio's meaning (docs/fio.md) ---- */
        FIOJOB("name", NULL, OPTD_STRING, name, "", "the job's name in the output (fio's name)",
               FIO_CUSTOM),
        FIOJOB("description", NULL, OPTD_STRING, description, "",
               "a line of text about the job, echoed in the output", FIO),
        FIOJOB("time_based", NULL, OPTD_BOOL, time_based, "1",
               "with runtime: run the whole runtime; 0 = stop once the bytes are moved (fio's "
               "default, which llmio run's command lines and job files get; 1 is the "
               "library's, for recipes and sweeps)",
               FIO_CUSTOM, .json_if = "time_based=0"),
        FIOJOB("loops", NULL, OPTD_UINT, loops, "1", "move the job's bytes this many times",
               .min = 1, .max = 1000000, FIO, .no_echo = true),
        FIOJOB("number_ios", NULL, OPTD_UINT, number_ios, "0",
               "at most this many I/Os per thread; 0 = no limit", FIO, .json_if = "number_ios", ),
        FIOJOB("filesize", NULL, OPTD_SIZE, filesize, "0",
               "bytes of each file: size = filesize x nrfiles when size is 0", FIO_CUSTOM,
               .no_echo = true),
        FIOJOB("rate_min", "ratemin", OPTD_SIZE, rate_min, "0",
               "fio's: bytes per second per thread (per clone) each direction that moves "
               "bytes must keep, checked every second after 2 s; below it the job fails (EIO)",
               .fio = "rate_min", FIO, .no_echo = true),
        FIOJOB("rate_iops", NULL, OPTD_UINT, rate_iops, "0",
               "I/Os per second per thread (fio's, per clone), each direction on its own; "
               "READ,WRITE,TRIM as rate's; 0 = no limit",
               .codec = &iops_codec, .expect = "a whole number, or READ,WRITE[,TRIM] numbers",
               FIO_CUSTOM, .no_echo = true),
        FIOJOB("randrepeat", NULL, OPTD_BOOL, randrepeat, "1",
               "1: the same offsets every run (randseed); 0: a new seed each run, echoed",
               FIO_CUSTOM, .no_echo = true),
        FIOJOB("norandommap", NULL, OPTD_BOOL, norandommap, "0",
               "0 (fio's default): a random job's thread moves over every block once per pass "
               "(fio's random map; one block size, uniform); 1: offsets drawn independently",
               FIO_CUSTOM, .no_echo = true),
        FIOJOB("group_reporting", NULL, OPTD_BOOL, group_reporting, "0",
               "report the threads of numjobs (and a job file's group) as one; without it fio's "
               "JSON has one job per thread",
               FIO_CUSTOM, .no_echo = true),
        FIOJOB("stonewall", "wait_for_previous", OPTD_BOOL, stonewall, "0",
               "a job file: this job starts a new group, after the earlier ones end", FIO_CUSTOM,
               .no_echo = true),
        FIOJOB("new_group", NULL, OPTD_BOOL, new_group, "0",
               "a job file: this job starts a new reporting group", FIO_CUSTOM, .no_echo = true, ),
        FIOJOB("wait_for", NULL, OPTD_STRING, wait_for, "",
               "a job file: this job starts once the named earlier job has ended (fio's)", FIO,
               .no_echo = true),
        FIOJOB("exitall", NULL, OPTD_BOOL, exitall, "0",
               "a job file: when a job ends, stop the others as exit_what says (fio's: set in "
               "any job, for every job)",
               FIO_CUSTOM, .no_echo = true),
        FIOJOB("exit_what", NULL, OPTD_ENUM, exit_what, "group",
               "with exitall: group (the jobs of its group) | stonewall (every running job) | "
               "all (every job; those not started never start)",
               .choices = "group|stonewall|all", FIO_CUSTOM, .no_echo = true),
        FIOJOB("steadystate", "ss", OPTD_ENUM, ss_state, "iops_slope:0.01%",
               "with ss_dur: end the job once its IOPS or bandwidth is steady, fio's criterion: "
               "iops | iops_slope | bw | bw_slope, ':' and a limit (10% of the mean, or a value)",
               .codec = &ss_codec,
               .expect = "iops, iops_slope, bw or bw_slope, ':' and a limit, e.g. iops:10% or "
                         "bw_slope:1%",
               FIO_CUSTOM, .no_echo = true),
        FIOJOB("ss_dur", "steadystate_duration", OPTD_DURATION, ss_dur_ns, "0",
               "steadystate's window: the criterion over the last ss_dur seconds, one sample a "
               "second; 0 = no steady state (fio's)",
               FIO_CUSTOM, .no_echo = true),
        FIOJOB("ss_ramp", "steadystate_ramp_time", OPTD_DURATION, ss_ramp_ns, "0",
               "steadystate's samples start ss_ramp + 1 s into the measured window (fio's)",
               FIO_CUSTOM, .no_echo = true),
        FIOJOB("latency_target", NULL, OPTD_DURATION, latency_target_ns, "0",
               "search the highest depth up to iodepth whose I/Os' total latency meets this "
               "(plain number = microseconds, as in fio); 0 = no search",
               .bare_ns = 1000, FIO_CUSTOM, .no_echo = true),
        FIOJOB("latency_window", NULL, OPTD_DURATION, latency_window_ns, "0",
               "latency_target's window: each depth runs this long before it is judged "
               "(plain number = microseconds, as in fio)",
               .bare_ns = 1000, FIO_CUSTOM, .no_echo = true),
        FIOJOB("latency_percentile", NULL, OPTD_DOUBLE, latency_percentile, "100",
               "latency_target: the share of a window's I/Os (%) that must meet the target",
               .min = 0, .max = 100, FIO_CUSTOM, .no_echo = true),
        FIOJOB("latency_run", NULL, OPTD_BOOL, latency_run, "0",
               "latency_target: keep adjusting the depth all run (fio's); 0 = end the job "
               "one window after the depth is found",
               FIO_CUSTOM, .no_echo = true),
        FIOJOB("flow", NULL, OPTD_UINT, flow, "0",
               "fio's flow weight: the threads of the jobs of one flow_id keep their I/O counts "
               "in the ratio of their weights; 0 = none",
               .max = 1000, FIO, .no_echo = true),
        FIOJOB("flow_id", NULL, OPTD_UINT, flow_id, "0", "the flow a job's flow weight is in",
               .max = UINT32_MAX, FIO, .no_echo = true),
        FIOJOB("flow_sleep", NULL, OPTD_DURATION, flow_sleep_ns, "0",
               "a thread ahead of its flow's share waits this long (plain number = "
               "microseconds, as in fio) once its I/Os in flight are done; 0 = a short pause",
               .bare_ns = 1000, FIO_CUSTOM, .no_echo = true),
        FIOJOB("percentile_list", NULL, OPTD_STRING, percentile_list, "",
               "latency percentiles of the JSON, e.g. 50:99:99.9; empty = fio's default list", FIO,
               .no_echo = true),
        FIOJOB("bssplit", NULL, OPTD_STRING, bssplit, "",
               "fio's weighted block sizes, e.g. 4k/10:64k/90 (READS,WRITES for each direction); "
               "bs becomes the smallest, offsets its multiples",
               .codec = &bssplit_codec,
               .expect = "fio's SIZE/PERCENT:SIZE/PERCENT... (a list per direction, comma "
                         "separated), the sizes multiples of the smallest, the percentages "
                         "adding up to 100",
               FIO, .json_if = "bssplit"),
        FIOJOB("bsrange", "blocksize_range", OPTD_STRING, bsrange, "",
               "fio's block size range, e.g. 4k-64k (READS,WRITES for each direction): each I/O "
               "a multiple of MIN up to MAX, evenly, as fio draws them; bs becomes MIN",
               .codec = &bsrange_codec, .fio = "bsrange",
               .expect = "fio's MIN-MAX (a range per direction, comma separated), MAX a "
                         "multiple of MIN",
               FIO, .json_if = "bsrange"),
        FIOJOB("blockalign", "ba", OPTD_SIZE, blockalign, "0",
               "random offsets are multiples of this (fio's; 0 = of bs, or of a direction's "
               "smallest bssplit or bsrange size); a multiple of bs",
               .max = 1u << 30, .fio = "blockalign", FIO, .json_if = "blockalign"),
        FIOJOB("zonemode", NULL, OPTD_ENUM, zonemode, "none",
               "none | strided: a sequential job moves zonesize bytes in each zone of zonerange "
               "bytes, then skips zoneskip (fio's; zbd is refused)",
               .choices = "none|strided|zbd", FIO, .json_if = "zonemode=strided"),
        FIOJOB("zonerange", NULL, OPTD_SIZE, zonerange, "0",
               "zonemode=strided: the size of a zone (0 = zonesize)", FIO, .json_if = "zonerange"),
        FIOJOB("zonesize", NULL, OPTD_SIZE, zonesize, "0",
               "zonemode=strided: the bytes moved in a zone before the next (a zone is gone "
               "over again when above zonerange)",
               FIO, .json_if = "zonesize"),
        FIOJOB("zoneskip", NULL, OPTD_SIZE, zoneskip, "0",
               "zonemode=strided: the bytes skipped between one zone's end and the next's start",
               FIO, .json_if = "zoneskip"),
        FIOJOB("verify", NULL, OPTD_ENUM, verify, "0",
               "0 | crc32c | md5 | sha256 | crc64 | meta: a checksum in every written block, "
               "checked when read (same bs); meta: the block's header alone (its offset)",
               .choices = "0|crc32c|md5|sha256|crc64|meta", FIO, .json_if = "verify"),
        FIOJOB("do_verify", NULL, OPTD_BOOL, do_verify, "1",
               "with verify: a write job reads back and checks every block it wrote", FIO,
               .no_echo = true),
        FIOJOB("write_bw_log", NULL, OPTD_STRING, write_bw_log, "",
               "write NAME_bw.N.log per thread N: KiB/s per I/O or per log_avg_msec (fio's log)",
               FIO, .no_echo = true),
        FIOJOB("write_lat_log", NULL, OPTD_STRING, write_lat_log, "",
               "write NAME_{slat,clat,lat}.N.log per thread N: ns per I/O or mean per "
               "log_avg_msec (fio's log)",
               FIO, .no_echo = true),
        FIOJOB("write_iops_log", NULL, OPTD_STRING, write_iops_log, "",
               "write NAME_iops.N.log per thread N: 1 per I/O, or I/Os per second per "
               "log_avg_msec (fio's log)",
               FIO, .no_echo = true),
        FIOJOB("log_avg_msec", NULL, OPTD_UINT, log_avg_msec, "0",
               "interval of the logs in ms; 0 = one line per I/O, as fio", .max = 3600000, FIO,
               .no_echo = true),
        FIOJOB("log_offset", NULL, OPTD_BOOL, log_offset, "0",
               "the logs carry each I/O's offset (a column before the priority), as fio's", FIO,
               .no_echo = true),
        FIOJOB("log_prio", NULL, OPTD_BOOL, log_prio, "0",
               "the logs' priority column holds each I/O's priority value (0x6000); else 1 for "
               "a realtime I/O, 0 for another, as fio's",
               FIO, .no_echo = true),
        FIOJOB("prioclass", NULL, OPTD_UINT, prioclass, "0",
               "I/O priority class of the job's threads: 1 realtime, 2 best effort, 3 idle; 0 "
               "= the kernel's default (fio's, ioprio_set)",
               .max = 3, FIO, .no_echo = true),
        FIOJOB("prio", NULL, OPTD_UINT, prio, "0",
               "I/O priority level 0 (highest) .. 7 in prioclass (fio's, ioprio_set)", .max = 7,
               FIO, .no_echo = true),
        FIOJOB("cmdprio_percentage", NULL, OPTD_UINT, cmdprio_percentage, "0",
               "libaio, io_uring: this percentage of the I/Os carries cmdprio_class and "
               "cmdprio as its own priority (fio's)",
               .max = 100, FIO, .no_echo = true),
        FIOJOB("cmdprio_class", NULL, OPTD_UINT, cmdprio_class, "1",
               "cmdprio_percentage's (and cmdprio_bssplit's) priority class: 1 realtime, 2 best "
               "effort, 3 idle",
               .min = 1, .max = 3, FIO_CUSTOM, .no_echo = true),
        FIOJOB("cmdprio", NULL, OPTD_UINT, cmdprio, "0",
               "cmdprio_percentage's (and cmdprio_bssplit's) priority level 0 .. 7", .max = 7, FIO,
               .no_echo = true),
        FIOJOB("cmdprio_bssplit", NULL, OPTD_STRING, cmdprio_bssplit, "",
               "libaio, io_uring: per block size, shares of its I/Os with a priority of their "
               "own, e.g. 64k/25:1m/10 (cmdprio_class, cmdprio) or 64k/25/1/1:64k/75/3/2 "
               "(CLASS/LEVEL each); READS,WRITES (fio's)",
               FIO, .no_echo = true),
        FIOJOB("dedupe_percentage", NULL, OPTD_UINT, dedupe_percentage, "0",
               "this percentage of the writes repeat earlier content, whole blocks a "
               "deduplicating device can drop (fio's)",
               .max = 100, FIO, .no_echo = true),
        FIOJOB("dedupe_mode", NULL, OPTD_ENUM, dedupe_mode, "repeat",
               "with dedupe_percentage: repeat (the last unique write's content) | "
               "working_set (one of the first dedupe_working_set_percentage % of the unique "
               "writes, drawn)",
               .choices = "repeat|working_set", FIO, .no_echo = true),
        FIOJOB("dedupe_working_set_percentage", NULL, OPTD_UINT, dedupe_working_set_percentage, "5",
               "dedupe_mode=working_set: the working set is this percentage of size (fio's)",
               .max = 100, FIO, .no_echo = true),
        FIOJOB("dedupe_global", NULL, OPTD_BOOL, dedupe_global, "0",
               "dedupe_mode=working_set: the working set is spread over every thread of the "
               "job file with dedupe_global, so their files share duplicates (fio's)",
               FIO, .no_echo = true),
        FIOJOB("buffer_pattern", NULL, OPTD_STRING, buffer_pattern, "",
               "every write's bytes: this pattern repeated from the I/O's start, fio's text: "
               "hex 0x..., decimals, quoted strings, one after the other",
               FIO, .no_echo = true),
        FIOJOB("verify_pattern", NULL, OPTD_STRING, verify_pattern, "",
               "every written block's bytes: this pattern repeated from its start "
               "(buffer_pattern's text); verify=meta checks it after each header",
               FIO, .no_echo = true),
        FIOJOB("verify_interval", NULL, OPTD_SIZE, verify_interval, "0",
               "verify=meta: fio's header every this many bytes of a block (0 = bs; divides bs)",
               FIO, .no_echo = true),
        FIOJOB("fill_device", "fill_fs", OPTD_BOOL, fill_device, "0",
               "fio's fill-until-full: a write the full filesystem refuses (ENOSPC, EDQUOT) ends "
               "the job, exit 0; without size the job is sized at the filesystem's free blocks "
               "(a job that reads then refused)",
               FIO, .no_echo = true),
        FIOJOB("buffer_compress_percentage", NULL, OPTD_UINT, buffer_compress_percentage, "0",
               "every write compresses to about this percentage less: as many of each "
               "buffer_compress_chunk's bytes are zeros (fio's)",
               .max = 100, FIO, .no_echo = true),
        FIOJOB("buffer_compress_chunk", NULL, OPTD_SIZE, buffer_compress_chunk, "512",
               "buffer_compress_percentage's chunk: its share of zeros is in each chunk of this "
               "many bytes",
               FIO_CUSTOM, .no_echo = true),
        MIRROR("buffered", OPTD_BOOL, buffered_codec,
               "fio's mirror of direct: buffered=1 is direct=0",
               "1/0, true/false, yes/no or on/off"),
        MIRROR("rwmixwrite", OPTD_UINT, mixwrite_codec,
               "fio's other side of rwmixread: rwmixwrite=30 is rwmixread=70",
               "a percentage 0..100"),
        FIOJOB("disable_lat", NULL, OPTD_BOOL, disable_lat, "0",
               "report no total latency (lat_ns empty, as fio's); llmio's clock reads cost "
               "nothing to save",
               FIO_CUSTOM, .no_echo = true),
        FIOJOB("disable_clat", NULL, OPTD_BOOL, disable_clat, "0",
               "report no completion latency (clat_ns empty, no percentiles, as fio's)", FIO_CUSTOM,
               .no_echo = true),
        FIOJOB("disable_slat", NULL, OPTD_BOOL, disable_slat, "0",
               "report no submission latency (slat_ns empty, as fio's)", FIO_CUSTOM,
               .no_echo = true),
        FIOJOB("disable_bw_measurement", "disable_bw", OPTD_BOOL, disable_bw, "0",
               "taken, as fio 3.33 takes it: its JSON keeps the per-second IOPS and bandwidth "
               "samples, and so does llmio's",
               FIO_CUSTOM, .no_echo = true),
        FIOJOB("unlink", NULL, OPTD_BOOL, unlink, "0",
               "remove the job's files after it, as fio's; only those the job created (a file "
               "that was there before stays)",
               FIO_CUSTOM, .no_echo = true),
        FIOJOB("file_service_type", NULL, OPTD_STRING, file_service_type, "",
               "fio's, checked against llmio's one way per rw: sequential jobs walk their files "
               "one after another (sequential), random ones draw offsets over all of them "
               "(random, or roundrobin for files of one size)",
               FIO, .no_echo = true),
        FIOJOB("fallocate", NULL, OPTD_ENUM, fallocate, "native",
               "fio's: how a file a write-only job creates is laid out: native or posix "
               "(reserved; llmio writes it too) | none or 0 (empty) | keep (blocks reserved, "
               "size 0) | truncate (its size, no blocks) | 1 (posix); a read's files are "
               "written in full",
               .choices = "native|none|posix|keep|truncate|0|1",
               .expect = "none, native, posix, keep, truncate, 0 or 1", FIO, .no_echo = true),
        FIOJOB("openfiles", NULL, OPTD_UINT, openfiles, "0",
               "fio's: at most N files open per thread (0 = all); llmio keeps a job's files "
               "open, so fewer than the job's files is refused, except with filecreate (each "
               "I/O opens and closes its file)",
               .umin = 0, .umax = UINT32_MAX, FIO, .no_echo = true),
        MIRROR("lat_percentiles", OPTD_BOOL, thread_codec,
               "fio's: 1, llmio's only way (lat_ns percentiles always reported)",
               "1: llmio always reports lat_ns percentiles (give percentile_list for which)"),
        MIRROR("clat_percentiles", OPTD_BOOL, clatpct_codec,
               "fio's: 1 (its default): clat_ns percentiles (and json+ bins) reported; 0: none",
               "1/0, true/false, yes/no or on/off"),
        MIRROR("slat_percentiles", OPTD_BOOL, no_codec,
               "fio's: 0 (its default), llmio's only way (no slat_ns percentiles)",
               "0: llmio reports no slat_ns percentiles"),
        MIRROR("create_on_open", OPTD_BOOL, taken_codec,
               "fio's: create a file when the job opens it; llmio creates and lays out the "
               "job's files before it runs, outside the measured window, as fio's default",
               "1/0, true/false, yes/no or on/off"),
        MIRROR("create_serialize", OPTD_BOOL, taken_codec,
               "fio's: lay the jobs' files out one job after another; llmio's only way",
               "1/0, true/false, yes/no or on/off"),
        MIRROR("io_submit_mode", OPTD_STRING, inline_codec,
               "fio's io_submit_mode: inline, llmio's only way (the job threads submit); "
               "offload is refused",
               "inline (llmio's job threads submit their own I/O; fio's offload to a "
               "separate submitting thread is not done)"),
        MIRROR("gtod_reduce", OPTD_BOOL, gtod_codec,
               "fio's gtod_reduce: disable_lat, disable_clat, disable_slat and "
               "disable_bw_measurement together; I/Os, bytes, IOPS and bandwidth stay",
               "1/0, true/false, yes/no or on/off"),
        MIRROR("random_generator", OPTD_STRING, generator_codec,
               "fio's random_generator: tausworthe, tausworthe64 or lfsr are taken; llmio draws "
               "with its own (xoshiro256**), and the random map gives lfsr's once per pass",
               "tausworthe, tausworthe64 or lfsr (llmio draws with its own generator)"),
        MIRROR("flow_watermark", OPTD_UINT, count_codec,
               "fio's old flow option, which fio 3.33 takes and ignores (flow's ratio replaced it)",
               "a whole number (it changes nothing, as in fio 3.33)"),
        MIRROR("threads", OPTD_UINT, count_codec,
               "fio's tiobench profile's thread count, which fio takes in any job and uses only "
               "with that profile: taken, with no effect (numjobs makes threads)",
               "a whole number (it changes nothing: numjobs makes threads)"),
        MIRROR("thread", OPTD_BOOL, thread_codec, "fio's thread=1: llmio's jobs are always threads",
               "1: llmio's jobs are always threads of one process (fio's processes, thread=0, "
               "are not done)"),
};

#define NOPTS (sizeof(opts_table) / sizeof(opts_table[0]))

bool job_rw_random(enum llmio_rw rw)
{
	return rw == LLMIO_RW_RANDREAD || rw == LLMIO_RW_RANDWRITE || rw == LLMIO_RW_RANDRW ||
	       rw == LLMIO_RW_RANDTRIM;
}

int job_fadvise_advice(const struct llmio_job_opts *o)
{
	switch (o->fadvise_hint) {
	case LLMIO_FADV_TYPE:
		if (o->io_source)
			return -1;
		return job_rw_random(o->rw) ? POSIX_FADV_RANDOM : POSIX_FADV_SEQUENTIAL;
	case LLMIO_FADV_RANDOM:
		return POSIX_FADV_RANDOM;
	case LLMIO_FADV_SEQUENTIAL:
		return POSIX_FADV_SEQUENTIAL;
	case LLMIO_FADV_NORMAL:
		return POSIX_FADV_NORMAL;
	case LLMIO_FADV_NONE:
		break;
	}
	return -1;
}

const char *llmio_rw_name(enum llmio_rw rw)
{
	return (unsigned)rw < sizeof(rw_names) / sizeof(rw_names[0]) ? rw_names[rw] : "?";
}

size_t llmio_job_option_count(void)
{
	return NOPTS;
}

const struct llmio_optdesc *job_optdesc(size_t i)
{
	return i < NOPTS ? &opts_table[i] : NULL;
}

int llmio_job_option(size_t i, struct llmio_option_info *out)
{
	const struct llmio_optdesc *d = job_optdesc(i);

	if (!d)
		return -ENOENT;
	*out = (struct llmio_option_info){d->name, d->alias, optdesc_type_name(d), d->def, d->help};
	return 0;
}

const struct llmio_optdesc *job_opt_find(const char *key)
{
	return optdesc_find(opts_table, NOPTS, key);
}

int job_opt_type(const char *key, enum llmio_optdesc_type *type)
{
	const struct llmio_optdesc *d = job_opt_find(key);

	if (!d)
		return -ENOENT;
	*type = d->type;
	return 0;
}

int job_opt_set(struct llmio_job_opts *opts, const char *key, const char *value,
                struct llmio_error *e)
{
	const struct llmio_optdesc *d = job_opt_find(key);

	if (!d)
		return llmio_err(e, -ENOENT, "unknown option '%s' (see `llmio run --help`)", key);
	return optdesc_set(d, value ? value : "", opts, e);
}

int llmio_job_opts_set(struct llmio_job_opts *opts, const char *key, const char *value,
                       struct llmio_error *e)
{
	return job_opt_set(opts, key, value, e);
}

void llmio_job_opts_init(struct llmio_job_opts *opts)
{
	memset(opts, 0, sizeof(*opts));
	opts->opts_size = sizeof(*opts);
	for (size_t i = 0; i < NOPTS; i++)
		if (!opts_table[i].mirror)
			optdesc_set(&opts_table[i], NULL, opts, NULL);
}

/* Does json_if hold in o: the named option set (non-empty, non-zero), or "key=value"? */
static bool echo_if(const struct llmio_job_opts *o, const char *cond)
{
	const char *eq = strchr(cond, '=');
	char key[64], text[LLMIO_PATH_MAX];

	snprintf(key, sizeof(key), "%.*s", (int)(eq ? eq - cond : (ptrdiff_t)strlen(cond)), cond);
	if (!job_opt_find(key) || job_opt_canonical(o, key, NULL, text, sizeof(text)))
		return false;
	if (eq)
		return !strcmp(text, eq + 1);
	return text[0] && (job_opt_find(key)->type == OPTD_STRING || strcmp(text, "0"));
}

void job_opts_echo(const struct llmio_job_opts *o,
                   void (*fn)(void *arg, const char *key, const struct llmio_optdesc *d,
                              const struct llmio_optval *v),
                   void *arg)
{
	for (size_t i = 0; i < NOPTS; i++) {
		const struct llmio_optdesc *d = &opts_table[i];
		struct llmio_optval v;

		if (d->no_echo || (d->json_if && !echo_if(o, d->json_if)))
			continue;
		optdesc_load(d, o, &v);
		if (d->type == OPTD_STRING && !d->codec && !v.s[0])
			continue;
		fn(arg, d->json ? d->json : d->name, d, &v);
	}
}

int job_opt_canonical(const struct llmio_job_opts *o, const char *key, const char **name, char *buf,
                      size_t len)
{
	const struct llmio_optdesc *d = job_opt_find(key);
	struct llmio_optval v;

	if (!d)
		return -ENOENT;
	if (name)
		*name = d->name;
	optdesc_load(d, o, &v);
	return optdesc_format(d, &v, buf, len);
}

/*
 * fio options that llmio does not do, each with the nearest llmio equivalent or the reason, so
 * that a fio command line or job file is refused by name and never half run (docs/fio.md).
 */
static const struct {
	const char *name, *instead;
} fio_refused[] = {
        {"bs_unaligned", "bsrange or bssplit (sizes are multiples of the smallest)"},
        {"offset", "a --filename of its own (llmio uses the whole target)"},
        {"offset_increment", "--numjobs (llmio gives each thread its own slice)"},
        {"iodepth_batch", "the io_uring engine's --submit_batch"},
        {"iodepth_batch_submit", "the io_uring engine's --submit_batch"},
        {"iodepth_batch_complete", "the io_uring engine's --reap_batch"},
        {"iodepth_batch_complete_max", "the io_uring engine's --reap_batch"},
        {"iodepth_low", "--iodepth (llmio refills every free slot)"},
        {"sync", "--fsync=1 (llmio does not open with O_SYNC)"},
        {"dsync", "--fsync=1 (llmio does not open with O_DSYNC)"},
        {"fdatasync", "--fsync=N"},
        {"fsync_on_close", "--end_fsync=1"},
        {"max_open_zones", "nothing: zoned block devices (zonemode=zbd) are not done"},
        {"job_max_open_zones", "nothing: zoned block devices (zonemode=zbd) are not done"},
        {"ignore_zone_limits", "nothing: zoned block devices (zonemode=zbd) are not done"},
        {"zone_reset_threshold", "nothing: zoned block devices (zonemode=zbd) are not done"},
        {"zone_reset_frequency", "nothing: zoned block devices (zonemode=zbd) are not done"},
        {"read_beyond_wp", "nothing: zoned block devices (zonemode=zbd) are not done"},
        {"zonecapacity", "nothing: zoned block devices (zonemode=zbd) are not done"},
        {"write_hist_log", "--output-format=json+ (clat_ns.bins)"},
        {"log_hist_msec", "--output-format=json+ (clat_ns.bins)"},
        {"log_hist_coarseness", "--output-format=json+ (clat_ns.bins)"},
        {"log_max_value", "log_avg_msec=0 (every I/O's value) or N (the mean per interval)"},
        {"log_unix_epoch", "nothing: log times are ms since the measured window started"},
        {"log_alternate_epoch", "nothing: log times are ms since the measured window started"},
        {"log_compression", "nothing: llmio writes its logs as plain text"},
        {"log_store_compressed", "nothing: llmio writes its logs as plain text"},
        {"per_job_logs", "--json"},
        {"clocksource", "nothing: llmio uses CLOCK_MONOTONIC"},
        {"refill_buffers", "nothing: every llmio write is unique already"},
        {"scramble_buffers", "nothing: every llmio write is unique already"},
        {"zero_buffers", "nothing: llmio writes unique, non-zero data"},
        {"atomic", "nothing: llmio does not ask for atomic writes (RWF_ATOMIC)"},
        {"opendir", "--directory"},
        {"rate_process", "--rate"},
        {"rate_cycle", "--rate"},
        {"read_iolog", "llmio replay (traces from llmio trace)"},
        {"write_iolog", "llmio trace"},
        {"replay_no_stall", "llmio replay"},
        {"cpumask", "--cpus_allowed"},
        {"nice", "nothing: run llmio under nice(1)"},
        {"ioscheduler", "nothing: set /sys/block/DEV/queue/scheduler before the run"},
        {"mem", "nothing: llmio allocates aligned buffers"},
        {"iomem", "nothing: llmio allocates aligned buffers"},
        {"iomem_align", "nothing: llmio aligns buffers to the device"},
        {"hugepage-size", "nothing: llmio allocates aligned buffers"},
        {"continue_on_error", "nothing: llmio stops at the first failed I/O and names it"},
        {"ignore_error", "nothing: llmio stops at the first failed I/O and names it"},
        {"exec_prerun", "a script around llmio run"},
        {"exec_postrun", "a script around llmio run"},
        {"max-jobs", "--numjobs"},
        {"status-interval", "nothing: llmio prints progress once a second"},
        {"eta", "nothing: llmio prints progress on a terminal"},
        {"eta-newline", "--progress (one progress line, redrawn; into a file with --progress)"},
        {"thinktime_spin", "thinktime (llmio sleeps between batches; it does not spin)"},
        {"minimal", "--csv FILE"},
        {"terse-version", "--csv FILE"},
        {"kb_base", "nothing: llmio prints binary units (KiB, MiB) and exact bytes in JSON"},
        {"unit_base", "nothing: llmio prints bytes"},
        {"overwrite", "nothing: llmio lays files out before a write job"},
        {"pre_read", "--invalidate=0 after a read job"},
        {"percentage_random", "--rw=randrw or --rw=rw"},
        {"allrandrepeat", "--randrepeat"},
        {"serialize_overlap", "nothing: llmio's I/Os of one thread never overlap"},
        {"trim_percentage", "nothing: llmio does not trim"},
        {"experimental_verify", "verify=crc32c|md5|sha256"},
        {"cgroup", "nothing: run llmio in a cgroup (systemd-run)"},
        {"uid", "nothing: run llmio as that user"},
        {"gid", "nothing: run llmio as that group"},
        {"stats", "nothing: llmio always measures"},
        /* fio's spellings and options that fio's examples/ use (bench/fio_examples.sh) */
        {"rate_iops_min", "--rate_iops"},
        {"verify_backlog", "verify= (llmio checks a write job's blocks when it ends)"},
        {"verify_async", "verify= (checked in the job's own threads)"},
        {"verify_dump", "verify= (a mismatch is named in one line)"},
        {"verify_fatal", "verify= (llmio stops at the first mismatch)"},
        {"verify_offset", "verify= (llmio's header starts each block)"},
        {"verify_write_sequence", "verify= (llmio checks each block's own offset)"},
        {"random_sequence_stride", "--rw=read (random_distribution=sequence is not done)"},
        {"writefua", "nothing: llmio's uring_cmd writes without FUA"},
        {"readfua", "nothing: llmio's uring_cmd reads without FUA"},
        {"block_error_percentiles", "nothing: llmio stops at the first failed I/O"},
        {"steadystate_check_interval", "llmio sweep job files (steady state ends sweep points)"},
        {"allow_file_create", "nothing: llmio creates a missing file it was told to use"},
        {"grace_time", "nothing: llmio's loops end with the job"},
        {"nonvectored", "nothing: llmio's engines do one buffer per I/O"},
        {"fdp", "nothing: NVMe flexible data placement is not done"},
        {"fdp_pli", "nothing: NVMe flexible data placement is not done"},
        {"fdp_pli_select", "nothing: NVMe flexible data placement is not done"},
        {"dataplacement", "nothing: NVMe data placement is not done"},
        {"plids", "nothing: NVMe data placement is not done"},
        {"pi_act", "nothing: NVMe protection information is not done"},
        {"pi_chk", "nothing: NVMe protection information is not done"},
        {"apptag", "nothing: NVMe protection information is not done"},
        {"apptag_mask", "nothing: NVMe protection information is not done"},
        {"md_per_io_size", "nothing: NVMe metadata (protection information) is not done"},
        {"write_mode", "nothing: llmio's uring_cmd writes with NVMe WRITE (no zeroes, "
                       "uncorrectable or verify commands)"},
        {"num_range", "nothing: llmio does not trim"},
};

const char *job_fio_refused(const char *key)
{
	for (size_t i = 0; i < sizeof(fio_refused) / sizeof(fio_refused[0]); i++)
		if (!strcmp(fio_refused[i].name, key))
			return fio_refused[i].instead;
	return NULL;
}

/* fio's default percentile_list (stat.c, def_percentile_list) */
static const double fio_default_pct[] = {1,  5,  10, 20, 30,   40,   50,    60,   70,
                                         80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99};

int job_percentile_list(const char *text, double *out, size_t max, size_t *n, struct llmio_error *e)
{
	const char *p = text;

	*n = 0;
	if (!text || !text[0]) {
		for (size_t i = 0; i < sizeof(fio_default_pct) / sizeof(fio_default_pct[0]); i++)
			out[(*n)++] = fio_default_pct[i];
		return 0;
	}
	while (*p) {
		char *end;
		double v;

		errno = 0;
		v = strtod(p, &end);
		if (errno || end == p || (*end && *end != ':' && *end != ',') || !(v >= 0) ||
		    v > 100)
			return llmio_err(e, -EINVAL,
			                 "percentile_list=%s is not valid: expected numbers 0..100 "
			                 "separated by ':' (e.g. 50:99:99.9)",
			                 text);
		if (*n == max)
			return llmio_err(e, -EINVAL, "percentile_list=%s: at most %zu percentiles",
			                 text, max);
		out[(*n)++] = v;
		p = *end ? end + 1 : end;
	}
	return 0;
}

int job_opts_resolve(struct llmio_job_opts *o, struct llmio_error *e)
{
	const uint64_t files = o->directory[0] && o->nrfiles ? o->nrfiles : 1;

	double pct[JOB_PCT_MAX];
	size_t npct;

	if (job_percentile_list(o->percentile_list, pct, JOB_PCT_MAX, &npct, e))
		return -EINVAL;
	if (o->bssplit[0] || o->bsrange[0]) {
		/* fio's bssplit and bsrange replace bs: the smallest size is the layout's grain */
		struct job_bssplit split;

		if (job_bs_sizes(o, &split, e))
			return -EINVAL;
		o->bs = split.min;
	}
	for (int k = 0; k < 3; k++) {
		/* fio's bare write_*_log: the logs take the job's name (else the engine's, which
		 * names the job in the output) */
		char *log = k == 0   ? o->write_bw_log
		            : k == 1 ? o->write_iops_log
		                     : o->write_lat_log;

		if (!strcmp(log, JOB_LOG_JOBNAME))
			snprintf(log, sizeof(o->write_bw_log), "%s",
			         o->name[0] ? o->name : o->engine);
	}
	if (o->filesize) {
		if (o->size && o->size != o->filesize * files)
			return llmio_err(
			        e, -EINVAL,
			        "size=%" PRIu64 " and filesize=%" PRIu64
			        " both given: llmio's size is all files together; give one",
			        o->size, o->filesize);
		o->size = o->filesize * files;
	}
	if (o->zonemode == LLMIO_ZONE_ZBD)
		return llmio_err(e, -EINVAL,
		                 "zonemode=zbd: zoned block devices are not done; zonemode=strided "
		                 "or none");
	if (o->zonesize && o->zonemode == LLMIO_ZONE_NONE) /* as fio 3.33 (its default: none) */
		return llmio_err(e, -EINVAL,
		                 "zonesize=%" PRIu64 " with zonemode=none: give zonemode=strided",
		                 o->zonesize);
	if (o->zonemode == LLMIO_ZONE_STRIDED && !o->zonesize)
		return llmio_err(e, -EINVAL,
		                 "zonemode=strided needs zonesize (the bytes per zone)");
	if (o->zonemode == LLMIO_ZONE_STRIDED && !o->zonerange)
		o->zonerange = o->zonesize; /* fio's default */
	if (o->rate_iops || o->rate_iops_write || o->rate_iops_trim) {
		/* per thread (fio's per clone) and per direction, as rate */
		const uint64_t per = o->bs;
		const uint64_t iops[3] = {o->rate_iops, o->rate_iops_write, o->rate_iops_trim};
		uint64_t *rate[3] = {&o->rate, &o->rate_write, &o->rate_trim};

		for (int d = 0; d < 3; d++) {
			if (!iops[d])
				continue; /* that direction's rate, if any, stands */
			if (*rate[d] && *rate[d] != iops[d] * per)
				return llmio_err(e, -EINVAL,
				                 "rate=%" PRIu64 " and rate_iops=%" PRIu64
				                 " both given: give one",
				                 *rate[d], iops[d]);
			*rate[d] = iops[d] * per;
		}
	}
	if (!o->randrepeat) {
		/* a new seed each run; the result echoes it, so the run can still be repeated */
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		/* below 2^53, so that the JSON echo (a double) holds it exactly */
		o->randseed = ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec) &
		              ((UINT64_C(1) << 53) - 1);
		o->randrepeat = true;
	}
	return 0;
}
