/* SPDX-License-Identifier: MIT */
/*
 * fio's cmdprio_bssplit (docs/fio.md), read as fio 3.33 reads it (its options.c,
 * parse_cmdprio_bssplit_entry(), and engines/cmdprio.c): a list of BS/PCT[/CLASS/LEVEL]
 * entries for reads, a comma, one for writes (one list without a comma is both's; a third, the
 * trims', is not read).  Of the I/Os of size BS, PCT % carry CLASS/LEVEL, or cmdprio_class and
 * cmdprio when the entry gives none; several entries of one size share out its I/Os, in the
 * order written, and what they leave keeps the thread's priority.  fio 3.33 takes a value
 * above its range as the largest (PCT 100, CLASS 3, LEVEL 7), CLASS 0 as best effort, an entry
 * without PCT as 0 %, and reads nothing after LEVEL (a later fio's fifth field, a priority
 * hint for command duration limits): so does this.
 *
 * Each size's shares become a row of 100 priorities, one per value of the I/O's draw, so that
 * the I/O loop finds its priority with one draw and one load (worker.c).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "job/cmdprio.h"
#include "llmio/common.h"

#define IOPRIO_CLASS_BE 2

/* A field of digits into *v, the largest max; false when it is not one. */
static bool number(const char *s, unsigned max, unsigned *v)
{
	unsigned long x;
	char *end;

	if (!*s || strspn(s, "0123456789") != strlen(s))
		return false;
	errno = 0;
	x = strtoul(s, &end, 10);
	*v = errno || x > max ? max : (unsigned)x; /* fio's min(value, max) */
	return true;
}

/* One entry ("64k/25/1/1") of direction d into t; cmdprio its priority without CLASS/LEVEL. */
static int entry(char *item, unsigned d, uint16_t cmdprio, struct cmdprio_table *t,
                 struct llmio_error *e)
{
	char *f[6];
	unsigned nf = 0, pct = 0, cls = 0, level = 0, hint, i, at = 0;
	uint64_t bs;
	uint16_t prio = cmdprio;

	for (char *p = item; nf < 6; nf++) {
		f[nf] = p;
		p = strchr(p, '/');
		if (!p) {
			nf++;
			break;
		}
		*p++ = '\0';
	}
	if (nf > 1 && !f[nf - 1][0])
		nf--; /* "64k/" and "64k/10/": fio reads the fields before the slash */
	if (llmio_parse_size(f[0], &bs) || !bs || bs > (1u << 30))
		return llmio_err(e, -EINVAL,
		                 "cmdprio_bssplit: '%s' is not a block size (4k, 64k ...)", f[0]);
	if (nf == 3 || nf > 5 || (nf > 1 && !number(f[1], 100, &pct)) ||
	    (nf >= 4 && (!number(f[2], 3, &cls) || !number(f[3], 7, &level))) ||
	    (nf == 5 && !number(f[4], 0xffff, &hint)))
		return llmio_err(e, -EINVAL,
		                 "cmdprio_bssplit: the entry of '%s' is not BS/PERCENT or "
		                 "BS/PERCENT/CLASS/LEVEL (whole numbers)",
		                 f[0]);
	if (nf >= 4)
		prio = (uint16_t)((cls ? cls : IOPRIO_CLASS_BE) << 13 | level);
	if (!pct)
		return 0; /* fio skips it: it picks no I/O */
	for (i = 0; i < t->n[d] && t->bs[d][i] != bs; i++)
		;
	if (i == t->n[d]) {
		t->bs[d][t->n[d]++] = (uint32_t)bs;
		for (unsigned r = 0; r < 100; r++)
			t->prio[d][i][r] = CMDPRIO_JOB;
	}
	/* the row's first free draw: the shares of this size so far */
	while (at < 100 && t->prio[d][i][at] != CMDPRIO_JOB)
		at++;
	if (at + pct > 100)
		return llmio_err(e, -EINVAL,
		                 "cmdprio_bssplit: the shares of size %s add up to more than 100 "
		                 "percent (fio refuses it too): make them 100 at most",
		                 f[0]);
	for (unsigned r = at; r < at + pct; r++)
		t->prio[d][i][r] = prio;
	return 0;
}

/* Direction d's list, text's len bytes ("64k/40:1m/10"), into t. */
static int list(const char *text, size_t len, unsigned d, uint16_t cmdprio, struct cmdprio_table *t,
                struct llmio_error *e)
{
	unsigned entries = 0;
	size_t at = 0;

	while (at < len) {
		const char *colon = memchr(text + at, ':', len - at);
		const size_t k = colon ? (size_t)(colon - text) - at : len - at;
		char item[64];
		int ret;

		if (!k) {
			if (at + 1 >= len)
				break; /* a trailing ':' ends the list, as in fio */
			return llmio_err(e, -EINVAL,
			                 "cmdprio_bssplit: an empty entry in '%.*s' (fio would "
			                 "ignore the rest): remove the extra ':'",
			                 (int)len, text);
		}
		if (k >= sizeof(item))
			return llmio_err(e, -EINVAL, "cmdprio_bssplit: an overlong entry in '%.*s'",
			                 (int)len, text);
		if (++entries > CMDPRIO_SIZES_MAX)
			return llmio_err(
			        e, -EINVAL,
			        "cmdprio_bssplit: more than %d entries in one direction (as "
			        "fio)",
			        CMDPRIO_SIZES_MAX);
		memcpy(item, text + at, k);
		item[k] = '\0';
		ret = entry(item, d, cmdprio, t, e);
		if (ret)
			return ret;
		at += k + 1;
	}
	return 0;
}

int cmdprio_table_parse(const char *text, unsigned cls, unsigned level, struct cmdprio_table *out,
                        struct llmio_error *e)
{
	const uint16_t cmdprio = (uint16_t)(cls << 13 | level);
	const char *comma = strchr(text, ',');
	const char *wr = comma ? comma + 1 : text;
	const char *wr_end = strchr(wr, ',');
	int ret;

	memset(out->n, 0, sizeof(out->n));
	ret = list(text, comma ? (size_t)(comma - text) : strlen(text), 0, cmdprio, out, e);
	if (!ret)
		ret = list(wr, wr_end ? (size_t)(wr_end - wr) : strlen(wr), 1, cmdprio, out, e);
	return ret;
}
