/* SPDX-License-Identifier: MIT */
#include <math.h>

#include "base/rand.h"

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void rng_seed(struct rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&seed);
}

void randmap_rekey(struct randmap *m, struct rng *r)
{
	for (int k = 0; k < 4; k++)
		m->key[k] = rng_next(r);
	m->i = 0;
}

void randmap_init(struct randmap *m, uint64_t n, struct rng *r)
{
	m->n = n ? n : 1;
	m->h = 1;
	while (m->h < 32 && (1ull << (2 * m->h)) < m->n)
		m->h++;
	randmap_rekey(m, r);
}

/*
 * Rejection-inversion sampling for Zipf (Hoermann & Derflinger, "Rejection-inversion to
 * generate variates from monotone discrete distributions", 1996).  With ranks k = 1..n and
 * H(x) the integral of x^-theta, a uniform u between H(n + 1/2) and H(3/2) - 1 is mapped back
 * through H^-1 and accepted when it falls under the pmf's histogram; acceptance is above 90 %
 * for every theta, so the loop runs about once per sample.
 */
static double helper1(double x) /* log1p(x)/x, accurate near 0 */
{
	return fabs(x) > 1e-8 ? log1p(x) / x : 1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x));
}

static double helper2(double x) /* expm1(x)/x, accurate near 0 */
{
	return fabs(x) > 1e-8 ? expm1(x) / x
	                      : 1.0 + x * 0.5 * (1.0 + x * (1.0 / 3.0) * (1.0 + 0.25 * x));
}

static double zh(const struct zipf *z, double x)
{
	double lx = log(x);

	return helper2((1.0 - z->theta) * lx) * lx;
}

static double zh_inv(const struct zipf *z, double x)
{
	double t = x * (1.0 - z->theta);

	if (t < -1.0)
		t = -1.0; /* numerical guard: keeps log1p finite */
	return exp(helper1(t) * x);
}

void zipf_init(struct zipf *z, uint64_t n, double theta)
{
	z->n = n;
	z->theta = theta;
	z->h_x1 = zh(z, 1.5) - 1.0;
	z->h_n = zh(z, (double)n + 0.5);
	z->s = 2.0 - zh_inv(z, zh(z, 2.5) - exp(-theta * log(2.0)));
}

uint64_t zipf_next(const struct zipf *z, struct rng *r)
{
	for (;;) {
		double u = z->h_n + rng_unit(r) * (z->h_x1 - z->h_n);
		double x = zh_inv(z, u);
		double k = floor(x + 0.5);

		if (k < 1)
			k = 1;
		else if (k > (double)z->n)
			k = (double)z->n;
		if (k - x <= z->s || u >= zh(z, k + 0.5) - exp(-z->theta * log(k)))
			return (uint64_t)k - 1;
	}
}

static uint64_t gcd(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/*
 * Zipf ranks are scattered over the blocks by k -> k * m mod n with gcd(m, n) = 1, a bijection,
 * so the hottest blocks are spread over the file the way hot tensors or KV blocks are, instead
 * of all sitting at its start (which read-ahead would flatter).
 */
uint64_t scatter_multiplier(uint64_t n)
{
	uint64_t m = (uint64_t)((double)n * 0.6180339887498949) | 1;

	if (n <= 2)
		return 1;
	while (gcd(m, n) != 1)
		m += 2;
	return m % n ? m % n : 1;
}
