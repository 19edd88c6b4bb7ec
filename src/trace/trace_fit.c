/* SPDX-License-Identifier: MIT */
/* Power-law fits by the method of Clauset, Shalizi and Newman (trace_fit.h). */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/rand.h"
#include "trace/trace_fit.h"

#define MAX_CANDIDATES 128 /* xmin candidates tried: quantiles of the distinct values */
#define MIN_TAIL       25  /* a candidate keeps at least this many values in its tail */
/* Counts are integers: CSN's continuous form is within 1 % of the discrete one for xmin >= 6
 * (their section 3.1), so no smaller value is a candidate */
#define MIN_XMIN    6.0
#define MAX_VALUES  (1u << 26)
#define BOOT_SEED   0x11a10f17ull
#define SIGNIFICANT 0.1 /* CSN's threshold, for goodness of fit and for the ratios */

static int cmp_double(const void *a, const void *b)
{
	const double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The fit of the tail of sorted ascending ln x, s[k] = sum of lx[k..n): alpha and D for xmin at k.
 */
static void fit_at(const double *lx, const double *s, size_t n, size_t k, double *alpha, double *d)
{
	const size_t m = n - k;
	const double lmin = lx[k], denom = s[k] - (double)m * lmin;
	double a, worst = 0;

	a = denom > 0 ? 1 + (double)m / denom : INFINITY;
	for (size_t j = 0; j < m && isfinite(a); j++) {
		const double f = 1 - exp((1 - a) * (lx[k + j] - lmin));
		const double lo = fabs((double)j / (double)m - f),
		             hi = fabs((double)(j + 1) / (double)m - f);

		worst = fmax(worst, fmax(lo, hi));
	}
	*alpha = a;
	*d = isfinite(a) ? worst : INFINITY;
}

/* xmin by the smallest D among the candidates (sorted ascending values lx, suffix sums s). */
static void best_fit(const double *lx, const double *s, size_t n, size_t *kbest, double *alpha,
                     double *d)
{
	size_t distinct[MAX_CANDIDATES], nd = 0, ndistinct = 0;

	*kbest = 0;
	*alpha = INFINITY;
	*d = INFINITY;
	if (n < MIN_TAIL)
		return;
	/* the distinct values that leave MIN_TAIL in the tail, then quantiles of them */
	for (size_t k = 0; k + MIN_TAIL <= n; k++)
		ndistinct += (!k || lx[k] != lx[k - 1]) && lx[k] >= log(MIN_XMIN);
	for (size_t k = 0, seen = 0; k + MIN_TAIL <= n; k++) {
		if ((k && lx[k] == lx[k - 1]) || lx[k] < log(MIN_XMIN))
			continue;
		/* candidate number seen of ndistinct: keep it when it is the next quantile's */
		if (ndistinct <= MAX_CANDIDATES ||
		    seen * MAX_CANDIDATES / ndistinct != (seen + 1) * MAX_CANDIDATES / ndistinct)
			if (nd < MAX_CANDIDATES)
				distinct[nd++] = k;
		seen++;
	}
	for (size_t i = 0; i < nd; i++) {
		double a, dd;

		fit_at(lx, s, n, distinct[i], &a, &dd);
		if (dd < *d) {
			*d = dd;
			*alpha = a;
			*kbest = distinct[i];
		}
	}
}

/* Sort x ascending into lx as logarithms, with suffix sums. */
static void prepare(double *v, size_t n, double *lx, double *s)
{
	qsort(v, n, sizeof(*v), cmp_double);
	for (size_t k = 0; k < n; k++)
		lx[k] = log(v[k]);
	s[n] = 0;
	for (size_t k = n; k-- > 0;)
		s[k] = s[k + 1] + lx[k];
}

/* ---- the alternatives, truncated at xmin ---- */

static double lognormal_loglik(const double *x, size_t m, double xmin, double mu, double sigma,
                               double *each)
{
	const double q = 0.5 * erfc((log(xmin) - mu) / (sigma * M_SQRT2));
	double sum = 0;

	if (!(sigma > 0) || !(q > 1e-300))
		return -INFINITY;
	for (size_t i = 0; i < m; i++) {
		const double lx = log(x[i]), z = (lx - mu) / sigma;
		const double l = -lx - log(sigma) - 0.5 * log(2 * M_PI) - 0.5 * z * z - log(q);

		if (each)
			each[i] = l;
		sum += l;
	}
	return sum;
}

/* Nelder-Mead on (mu, ln sigma): the truncated lognormal's maximum likelihood. */
static void lognormal_fit(const double *x, size_t m, double xmin, double *mu, double *sigma)
{
	double p[3][2], f[3], mean = 0, var = 0;

	for (size_t i = 0; i < m; i++)
		mean += log(x[i]);
	mean /= (double)m;
	for (size_t i = 0; i < m; i++)
		var += (log(x[i]) - mean) * (log(x[i]) - mean);
	var = var / (double)m > 1e-12 ? var / (double)m : 1e-12;
	p[0][0] = mean;
	p[0][1] = 0.5 * log(var);
	p[1][0] = mean + 1;
	p[1][1] = p[0][1];
	p[2][0] = mean;
	p[2][1] = p[0][1] + 0.5;
	for (int i = 0; i < 3; i++)
		f[i] = -lognormal_loglik(x, m, xmin, p[i][0], exp(p[i][1]), NULL);
	for (int it = 0; it < 400; it++) {
		int hi = 0, lo = 0, mid;
		double c[2], r[2], fr;

		for (int i = 1; i < 3; i++) {
			hi = f[i] > f[hi] ? i : hi;
			lo = f[i] < f[lo] ? i : lo;
		}
		mid = 3 - hi - lo;
		if (fabs(f[hi] - f[lo]) < 1e-10 * (fabs(f[lo]) + 1e-10))
			break;
		for (int d = 0; d < 2; d++) {
			c[d] = (p[lo][d] + p[mid][d]) / 2;
			r[d] = c[d] + (c[d] - p[hi][d]);
		}
		fr = -lognormal_loglik(x, m, xmin, r[0], exp(r[1]), NULL);
		if (fr < f[lo]) { /* expand */
			double e[2], fe;

			for (int d = 0; d < 2; d++)
				e[d] = c[d] + 2 * (c[d] - p[hi][d]);
			fe = -lognormal_loglik(x, m, xmin, e[0], exp(e[1]), NULL);
			if (fe < fr) {
				memcpy(p[hi], e, sizeof(e));
				f[hi] = fe;
			} else {
				memcpy(p[hi], r, sizeof(r));
				f[hi] = fr;
			}
		} else if (fr < f[mid]) {
			memcpy(p[hi], r, sizeof(r));
			f[hi] = fr;
		} else { /* contract towards the best, or shrink */
			double k[2], fk;

			for (int d = 0; d < 2; d++)
				k[d] = c[d] + 0.5 * (p[hi][d] - c[d]);
			fk = -lognormal_loglik(x, m, xmin, k[0], exp(k[1]), NULL);
			if (fk < f[hi]) {
				memcpy(p[hi], k, sizeof(k));
				f[hi] = fk;
			} else {
				for (int i = 0; i < 3; i++) {
					if (i == lo)
						continue;
					for (int d = 0; d < 2; d++)
						p[i][d] = p[lo][d] + 0.5 * (p[i][d] - p[lo][d]);
					f[i] = -lognormal_loglik(x, m, xmin, p[i][0], exp(p[i][1]),
					                         NULL);
				}
			}
		}
	}
	{
		int lo = 0;

		for (int i = 1; i < 3; i++)
			lo = f[i] < f[lo] ? i : lo;
		*mu = p[lo][0];
		*sigma = exp(p[lo][1]);
	}
}

/* Vuong's test of the power law's pointwise log-likelihoods against another's. */
static void vuong(const double *lpl, const double *lalt, size_t m, struct fit_compare *c)
{
	double sum = 0, mean, var = 0;

	for (size_t i = 0; i < m; i++)
		sum += lpl[i] - lalt[i];
	mean = sum / (double)m;
	for (size_t i = 0; i < m; i++) {
		const double d = lpl[i] - lalt[i] - mean;

		var += d * d;
	}
	var /= (double)m;
	if (!(var > 0)) {
		c->R = 0;
		c->p = 1;
		return;
	}
	c->R = sum / sqrt(var * (double)m);
	c->p = erfc(fabs(sum) / sqrt(2 * (double)m * var));
}

static void compare(const double *tail, size_t m, double xmin, double alpha, double *lpl,
                    double *lalt, struct fit_result *r)
{
	double mu, sigma, mean = 0, lambda;

	for (size_t i = 0; i < m; i++)
		lpl[i] = log(alpha - 1) - log(xmin) - alpha * log(tail[i] / xmin);
	lognormal_fit(tail, m, xmin, &mu, &sigma);
	r->lognormal.param1 = mu;
	r->lognormal.param2 = sigma;
	if (isfinite(lognormal_loglik(tail, m, xmin, mu, sigma, lalt)))
		vuong(lpl, lalt, m, &r->lognormal);
	else
		r->lognormal = (struct fit_compare){.R = 0, .p = 1, .param1 = mu, .param2 = sigma};
	for (size_t i = 0; i < m; i++)
		mean += tail[i];
	mean /= (double)m;
	lambda = mean > xmin ? 1 / (mean - xmin) : 0;
	r->exponential.param1 = lambda;
	r->exponential.param2 = 0;
	if (lambda > 0) {
		for (size_t i = 0; i < m; i++)
			lalt[i] = log(lambda) - lambda * (tail[i] - xmin);
		vuong(lpl, lalt, m, &r->exponential);
	} else {
		r->exponential.R = 0;
		r->exponential.p = 1;
	}
}

double trace_fit_gini(const double *x, size_t n)
{
	double *v, sum = 0, weighted = 0;

	if (!n || !(v = malloc(n * sizeof(*v))))
		return 0;
	for (size_t i = 0; i < n; i++)
		v[i] = x[i] > 0 ? x[i] : 0;
	qsort(v, n, sizeof(*v), cmp_double);
	for (size_t i = 0; i < n; i++) {
		sum += v[i];
		weighted += (double)(i + 1) * v[i];
	}
	free(v);
	if (!(sum > 0))
		return 0;
	return 2 * weighted / ((double)n * sum) - (double)(n + 1) / (double)n;
}

int trace_fit_power_law(const double *x, size_t n, unsigned boots, struct fit_result *r)
{
	double *v = NULL, *lx = NULL, *s = NULL, *w = NULL, *lpl = NULL, *lalt = NULL;
	size_t k, m = 0, below;
	struct rng rng;
	int ret = -ENOMEM;

	memset(r, 0, sizeof(*r));
	r->p_gof = -1;
	if (n > MAX_VALUES)
		return -EINVAL;
	r->gini = trace_fit_gini(x, n);
	v = malloc((n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (x[i] > 0 && isfinite(x[i]))
			v[m++] = x[i];
	r->n = m;
	if (m < FIT_MIN_N) {
		free(v);
		return 0;
	}
	lx = malloc(m * sizeof(*lx));
	s = malloc((m + 1) * sizeof(*s));
	w = malloc(m * sizeof(*w));
	lpl = malloc(m * sizeof(*lpl));
	lalt = malloc(m * sizeof(*lalt));
	if (!lx || !s || !w || !lpl || !lalt)
		goto out;
	prepare(v, m, lx, s);
	best_fit(lx, s, m, &k, &r->alpha, &r->ks);
	if (!isfinite(r->alpha)) { /* every candidate's tail was one value */
		ret = 0;
		goto out;
	}
	r->fitted = true;
	r->xmin = v[k];
	r->n_tail = m - k;
	r->sigma = (r->alpha - 1) / sqrt((double)r->n_tail);
	compare(v + k, r->n_tail, r->xmin, r->alpha, lpl, lalt, r);

	/* goodness of fit: semi-parametric bootstrap, each sample fitted as the data were */
	below = k;
	rng_seed(&rng, BOOT_SEED);
	if (boots) {
		unsigned worse = 0;

		for (unsigned b = 0; b < boots; b++) {
			double a, d;
			size_t kb;

			for (size_t i = 0; i < m; i++) {
				if (below && rng_below(&rng, m) < below)
					w[i] = v[rng_below(&rng, below)];
				else
					w[i] = r->xmin *
					       pow(1 - rng_unit(&rng), -1 / (r->alpha - 1));
			}
			prepare(w, m, lx, s);
			best_fit(lx, s, m, &kb, &a, &d);
			worse += d >= r->ks;
		}
		r->boots = boots;
		r->p_gof = (double)worse / (double)boots;
	}
	ret = 0;
out:
	free(v);
	free(lx);
	free(s);
	free(w);
	free(lpl);
	free(lalt);
	return ret;
}

const char *trace_fit_verdict(const struct fit_result *r)
{
	if (!r->fitted)
		return "too few files";
	if (r->p_gof >= 0 && r->p_gof < SIGNIFICANT)
		return "not a power law";
	if ((r->lognormal.R < 0 && r->lognormal.p < SIGNIFICANT) ||
	    (r->exponential.R < 0 && r->exponential.p < SIGNIFICANT))
		return "not a power law";
	return "power law";
}
