/* SPDX-License-Identifier: MIT */
/*
 * The store's extent allocator: the targets' preallocated space seen as one logical range
 * (striped over the targets by targets.c), handed out in runs of whole alignment units, first
 * fit, over a sorted list of free runs that merges neighbours on free.  It runs on the
 * caller's thread only; the list grows by doubling (at most one run per live tensor plus one),
 * so an allocation costs no malloc in the steady state.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_internal.h"

static int grow(struct store_extents *x)
{
	size_t cap = x->cap ? x->cap * 2 : 64;
	uint64_t *st = realloc(x->start, cap * sizeof(*st));

	if (!st)
		return -ENOMEM;
	x->start = st;
	st = realloc(x->len, cap * sizeof(*st));
	if (!st)
		return -ENOMEM;
	x->len = st;
	x->cap = cap;
	return 0;
}

int extents_init(struct store_extents *x, uint64_t total, uint64_t align)
{
	memset(x, 0, sizeof(*x));
	x->total = total;
	x->align = align;
	if (grow(x))
		return -ENOMEM;
	x->start[0] = 0;
	x->len[0] = total;
	x->n = 1;
	x->nfree = total;
	return 0;
}

void extents_fini(struct store_extents *x)
{
	free(x->start);
	free(x->len);
	memset(x, 0, sizeof(*x));
}

int extents_alloc(struct store_extents *x, uint64_t len, uint64_t *start)
{
	for (size_t i = 0; i < x->n; i++) {
		if (x->len[i] < len)
			continue;
		*start = x->start[i];
		x->start[i] += len;
		x->len[i] -= len;
		x->nfree -= len;
		if (!x->len[i]) {
			memmove(x->start + i, x->start + i + 1, (x->n - i - 1) * sizeof(*x->start));
			memmove(x->len + i, x->len + i + 1, (x->n - i - 1) * sizeof(*x->len));
			x->n--;
		}
		return 0;
	}
	return -ENOSPC;
}

void extents_free(struct store_extents *x, uint64_t start, uint64_t len)
{
	size_t i = 0;
	bool left, right;

	/* The first run after it (binary search: the list is sorted). */
	for (size_t lo = 0, hi = x->n; lo < hi; i = lo) {
		size_t mid = (lo + hi) / 2;

		if (x->start[mid] < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	x->nfree += len;
	left = i > 0 && x->start[i - 1] + x->len[i - 1] == start;
	right = i < x->n && start + len == x->start[i];
	if (left && right) {
		x->len[i - 1] += len + x->len[i];
		memmove(x->start + i, x->start + i + 1, (x->n - i - 1) * sizeof(*x->start));
		memmove(x->len + i, x->len + i + 1, (x->n - i - 1) * sizeof(*x->len));
		x->n--;
	} else if (left) {
		x->len[i - 1] += len;
	} else if (right) {
		x->start[i] = start;
		x->len[i] += len;
	} else {
		/* A new run: the list holds at most one run per live tensor plus one, and each
		 * put grew it ahead of time (store.c), so this never fails. */
		memmove(x->start + i + 1, x->start + i, (x->n - i) * sizeof(*x->start));
		memmove(x->len + i + 1, x->len + i, (x->n - i) * sizeof(*x->len));
		x->start[i] = start;
		x->len[i] = len;
		x->n++;
	}
}

/* Make room for one more run, so that a later free cannot fail. */
int extents_reserve(struct store_extents *x, size_t runs)
{
	while (x->cap < runs)
		if (grow(x))
			return -ENOMEM;
	return 0;
}

uint64_t extents_largest(const struct store_extents *x)
{
	uint64_t m = 0;

	for (size_t i = 0; i < x->n; i++)
		if (x->len[i] > m)
			m = x->len[i];
	return m;
}
