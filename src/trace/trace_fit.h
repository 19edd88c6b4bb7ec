/* SPDX-License-Identifier: MIT */
/*
 * Is a distribution (bytes or accesses per file) a power law?  The method of Clauset, Shalizi
 * and Newman, "Power-law distributions in empirical data", SIAM Review 51(4), 2009 (CSN):
 *
 * - the exponent by maximum likelihood for x >= xmin (continuous form, their eq. 3.1:
 *   alpha = 1 + n / sum ln(x_i / xmin)), its standard error (alpha - 1) / sqrt(n) (eq. 3.2);
 * - xmin as the candidate that minimises the Kolmogorov-Smirnov distance D between the tail's
 *   empirical distribution and the fitted one (their section 3.3): up to 128 quantiles of the
 *   distinct values that leave at least 25 values in the tail, none below 6 (below it the
 *   continuous form misreads integer counts by more than 1 %);
 * - goodness of fit: the share of semi-parametric bootstrap samples (section 4.1: each point
 *   from the fitted tail with probability n_tail / n, else from the observed values below
 *   xmin, then fitted again, xmin included) whose D is at least the data's; p < 0.1 rules the
 *   power law out;
 * - against lognormal and exponential tails (both truncated at the same xmin and fitted by
 *   maximum likelihood): Vuong's normalised log-likelihood ratio R / (sigma sqrt(n)) and its
 *   two-sided p-value (section 5.1); R > 0 favours the power law, and only p < 0.1 counts.
 *
 * The verdict (trace_fit_verdict()): "power law" when p >= 0.1 and no alternative is
 * significantly better; "not a power law" when p < 0.1 or an alternative is significantly
 * better; "too few files" below FIT_MIN_N values.  Byte counts are integers; the continuous
 * form is CSN's approximation for them, good when xmin is large (bytes: always).
 * Deterministic: the bootstrap uses a fixed seed.
 */
#ifndef LLMIO_TRACE_FIT_H
#define LLMIO_TRACE_FIT_H

#include <stdbool.h>
#include <stddef.h>

#define FIT_MIN_N 50 /* fewer values than this are not fitted */

struct fit_compare {
	double R;      /* normalised log-likelihood ratio, power law over the alternative */
	double p;      /* two-sided significance of its sign */
	double param1; /* lognormal mu / exponential lambda, fitted on the tail */
	double param2; /* lognormal sigma; 0 for the exponential */
};

struct fit_result {
	size_t n;       /* values given (positive ones) */
	size_t n_tail;  /* values >= xmin */
	double xmin;    /* chosen lower cut-off */
	double alpha;   /* exponent */
	double sigma;   /* its standard error */
	double ks;      /* D of the fit */
	double p_gof;   /* bootstrap goodness of fit */
	unsigned boots; /* bootstrap samples drawn */
	struct fit_compare lognormal, exponential;
	double gini; /* of all n values: 0 = all equal, towards 1 = one value holds all */
	bool fitted; /* false: too few values, or none of 25 or more at or above 6 (the rest is
	              * 0, gini still set when n > 0) */
};

/*
 * Fit x[0..n) (values <= 0 are ignored; x is not modified).  boots: bootstrap samples for
 * p_gof (0: none, p_gof = -1).  \return 0, -EINVAL (n too large for the sizes used), -ENOMEM.
 */
int trace_fit_power_law(const double *x, size_t n, unsigned boots, struct fit_result *r);

/* The verdict in words ("power law", "not a power law", "too few files"). */
const char *trace_fit_verdict(const struct fit_result *r);

/* Gini coefficient of x[0..n) (values < 0 count as 0). */
double trace_fit_gini(const double *x, size_t n);

#endif
