/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>

#include "trace/trace_map.h"

static size_t slot(uint64_t k, size_t cap)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull; /* murmur3 finaliser */
	k ^= k >> 33;
	return (size_t)k & (cap - 1);
}

static int rehash(struct tmap *m)
{
	size_t cap = m->cap ? m->cap * 2 : 256;
	uint64_t *key = malloc(cap * sizeof(*key));
	uint32_t *val = calloc(cap, sizeof(*val));

	if (!key || !val) {
		free(key);
		free(val);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->cap; i++) {
		size_t k;

		if (!m->val[i])
			continue;
		for (k = slot(m->key[i], cap); val[k]; k = (k + 1) & (cap - 1))
			;
		key[k] = m->key[i];
		val[k] = m->val[i];
	}
	free(m->key);
	free(m->val);
	m->key = key;
	m->val = val;
	m->cap = cap;
	return 0;
}

int64_t tmap_find(const struct tmap *m, uint64_t key)
{
	if (!m->cap)
		return -1;
	for (size_t k = slot(key, m->cap); m->val[k]; k = (k + 1) & (m->cap - 1))
		if (m->key[k] == key)
			return (int64_t)m->val[k] - 1;
	return -1;
}

int64_t tmap_index(struct tmap *m, uint64_t key)
{
	int64_t v = tmap_find(m, key);
	size_t k;

	if (v >= 0)
		return v;
	if (m->n >= TMAP_MAX)
		return -ENOMEM;
	if ((m->n + 1) * 2 > m->cap && rehash(m))
		return -ENOMEM;
	for (k = slot(key, m->cap); m->val[k]; k = (k + 1) & (m->cap - 1))
		;
	m->key[k] = key;
	m->val[k] = (uint32_t)(m->n + 1);
	return (int64_t)m->n++;
}

void tmap_release(struct tmap *m)
{
	free(m->key);
	free(m->val);
	m->key = NULL;
	m->val = NULL;
	m->cap = m->n = 0;
}
