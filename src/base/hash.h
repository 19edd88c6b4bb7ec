/* SPDX-License-Identifier: MIT */
/*
 * The two hashes of strings llmio uses, in one place.
 *
 * hash64() is xxHash's XXH3 (libxxhash): for what lives in memory only (the trace writer's
 * string table, the adaptive sweep's groups of points, a chart's colour of a datapath no
 * engine names).  Its values may change with the library's version: never write one down.
 *
 * hash_fnv1a64() is FNV-1a 64 (Fowler, Noll, Vo), kept for one value that is written down: a
 * sweep journal's config_hash (docs/sweeps.md), which `llmio sweep` compares against the
 * journal a resumed sweep left, `llmio report` against older journals, and
 * tests/data/make_journals.py computes on its own.  Another hash there would make every
 * existing journal's points look unmeasured.
 */
#ifndef LLMIO_CORE_HASH_H
#define LLMIO_CORE_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <xxhash.h>

/* XXH3 64 of p[0..n), seeded: a sequence of parts hashes as each part seeded by the last. */
static inline uint64_t hash64(uint64_t seed, const void *p, size_t n)
{
	return XXH3_64bits_withSeed(p, n, seed);
}

/* hash64 of the string s (its bytes, not the terminator). */
static inline uint64_t hash64_str(uint64_t seed, const char *s)
{
	return hash64(seed, s, strlen(s));
}

/* FNV-1a 64's offset basis: the h to start from. */
#define HASH_FNV1A64_INIT 0xcbf29ce484222325ull

/* FNV-1a 64 of the string s continued from h (HASH_FNV1A64_INIT to start). */
static inline uint64_t hash_fnv1a64(uint64_t h, const char *s)
{
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ull; /* the 64-bit FNV prime */
	}
	return h;
}

#endif
