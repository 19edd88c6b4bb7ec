/* SPDX-License-Identifier: MIT */
/* A small open-addressing map from 64-bit keys to dense indexes 0, 1, 2, ... (trace tools). */
#ifndef LLMIO_TRACE_MAP_H
#define LLMIO_TRACE_MAP_H

#include <stddef.h>
#include <stdint.h>

struct tmap {
	uint64_t *key; /* key + 1; 0 = empty */
	uint32_t *val;
	size_t cap, n;
};

/*
 * The index of key; a new key gets the next index (m->n before the call).
 * \return the index, or -ENOMEM (as a negative number).
 */
int64_t tmap_index(struct tmap *m, uint64_t key);
/* The index of key, or -1 when absent. */
int64_t tmap_find(const struct tmap *m, uint64_t key);
void tmap_release(struct tmap *m);

#endif
