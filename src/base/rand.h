/* SPDX-License-Identifier: MIT */
/*
 * Random numbers for offsets and op mixes: xoshiro256** (fast, 256-bit state, passes BigCrush)
 * seeded through splitmix64, and a Zipf sampler.  Each worker owns its own state, seeded from
 * (randseed, thread index), so a run repeats exactly under the same seed.
 */
#ifndef LLMIO_RAND_H
#define LLMIO_RAND_H

#include <stdint.h>

struct rng {
	uint64_t s[4];
};

void rng_seed(struct rng *r, uint64_t seed);

static inline uint64_t rng_rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static inline uint64_t rng_next(struct rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rng_rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rng_rotl(s[3], 45);
	return result;
}

/* Uniform in [0, n) without modulo bias worth caring about (Lemire's multiply-shift). */
static inline uint64_t rng_below(struct rng *r, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)rng_next(r) * n) >> 64);
}

/* Uniform double in [0, 1). */
static inline double rng_unit(struct rng *r)
{
	return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

/*
 * Zipf over items 0..n-1 with exponent theta (P(k) ~ 1/(k+1)^theta, theta > 0, theta != 1
 * handled as well as theta == 1), by rejection-inversion (Hoermann & Derflinger 1996, as in
 * Apache Commons' RejectionInversionZipfSampler): O(1) per sample and no table, so n can be
 * the number of blocks of a large file.  Item 0 is the most popular; callers scatter items
 * over the address space with a bijection so hot blocks are not all at the start.
 */
struct zipf {
	uint64_t n;
	double theta;
	double h_x1, h_n, s;
};

void zipf_init(struct zipf *z, uint64_t n, double theta);
uint64_t zipf_next(const struct zipf *z, struct rng *r);

/*
 * A multiplier m with gcd(m, n) = 1, near n / golden ratio: k -> k * m mod n is then a
 * bijection of 0..n-1 that scatters neighbours far apart (zipf ranks over blocks, shuffled
 * dataset samples).
 */
uint64_t scatter_multiplier(uint64_t n);

/*
 * A random map, fio's norandommap=0: each of the slots 0..n-1 once per pass, in an order drawn
 * from the caller's generator, with no table (a file's blocks may be billions) and nothing
 * allocated.  A 4-round Feistel network, keyed afresh for every pass, permutes 0..4^h-1
 * (the smallest 4^h >= n); a value >= n is sent through it again until it lands below n
 * ("cycle walking", Black & Rogaway 2002), which keeps a bijection of 0..n-1 and takes fewer
 * than 4 tries on average, as 4^h < 4n.
 */
struct randmap {
	uint64_t n, i; /* slots, and slots drawn in this pass */
	unsigned h;    /* bits of each Feistel half */
	uint64_t key[4];
};

void randmap_init(struct randmap *m, uint64_t n, struct rng *r);
void randmap_rekey(struct randmap *m, struct rng *r);

static inline uint64_t randmap_feistel(const struct randmap *m, uint64_t x)
{
	const uint64_t mask = (1ull << m->h) - 1;
	uint64_t l = x >> m->h, r = x & mask;

	for (int k = 0; k < 4; k++) {
		uint64_t f = (r ^ m->key[k]) * 0x9e3779b97f4a7c15ull;
		const uint64_t t = r;

		f ^= f >> 29;
		r = (l ^ f) & mask;
		l = t;
	}
	return (l << m->h) | r;
}

/* The next slot of the pass; a new pass (a new order) begins after the n-th. */
static inline uint64_t randmap_next(struct randmap *m, struct rng *r)
{
	uint64_t x;

	if (m->i == m->n)
		randmap_rekey(m, r);
	x = randmap_feistel(m, m->i++);
	while (x >= m->n)
		x = randmap_feistel(m, x);
	return x;
}

#endif
