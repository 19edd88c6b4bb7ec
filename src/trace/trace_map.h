/* SPDX-License-Identifier: MIT */
/*
 * A small open-addressing map from 64-bit keys to dense indexes 0, 1, 2, ... (trace tools).
 * Every 64-bit key is valid, UINT64_MAX included: a slot is empty when its value is 0, and a
 * used slot holds index + 1 (so no key value has to be given up as the "empty" mark).
 */
#ifndef LLMIO_TRACE_MAP_H
#define LLMIO_TRACE_MAP_H

#include <stddef.h>
#include <stdint.h>

struct tmap {
	uint64_t *key;
	uint32_t *val; /* index + 1; 0 = empty slot */
	size_t cap, n;
};

/* A map holds at most this many keys (indexes fit a uint32_t with room for the +1). */
#define TMAP_MAX (UINT32_MAX - 1u)

/*
 * The index of key; a new key gets the next index (m->n before the call).
 * \return the index, or -ENOMEM (as a negative number; also when TMAP_MAX keys are held).
 */
int64_t tmap_index(struct tmap *m, uint64_t key);
/* The index of key, or -1 when absent. */
int64_t tmap_find(const struct tmap *m, uint64_t key);
void tmap_release(struct tmap *m);

#endif
