// Student's t distribution: the CDF and its inverse, for the run verdict's intervals and p-values
// (run_verdict.h). df <= 0 (or infinite) means the normal distribution. Closed forms or a few Newton
// steps on the exact CDF; no tables.
#pragma once

namespace kbench::api {

// P(T <= t) for T ~ Student's t with df degrees of freedom.
double StudentTCdf(double t, double df);
// t with StudentTCdf(t, df) == p, for p in (0, 1).
double StudentTQuantile(double p, double df);
// The standard normal distribution's CDF and quantile.
double NormalCdf(double z);
double NormalQuantile(double p);

}  // namespace kbench::api
