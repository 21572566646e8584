// Student's t: the CDF through the regularized incomplete beta function (continued fraction), the
// quantile from the Cornish-Fisher expansion refined by Newton steps. See student_t.h.
#include "api/stats/student_t.h"

#include <cmath>
#include <limits>
#include <numbers>

namespace kbench::api {
namespace {

bool IsNormal(double df) { return !(df > 0) || std::isinf(df) || df > 1e7; }

// Continued fraction of the incomplete beta function (modified Lentz).
double BetaContinuedFraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300;
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  if (std::abs(d) < kTiny) d = kTiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= 300; ++m) {
    const double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
    d = 1 + aa * d;
    if (std::abs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::abs(c) < kTiny) c = kTiny;
    d = 1 / d;
    h *= d * c;
    aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
    d = 1 + aa * d;
    if (std::abs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::abs(c) < kTiny) c = kTiny;
    d = 1 / d;
    const double del = d * c;
    h *= del;
    if (std::abs(del - 1) < 1e-14) break;
  }
  return h;
}

// The regularized incomplete beta function I_x(a, b).
double IncompleteBeta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double front =
      std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x));
  if (x < (a + 1) / (a + b + 2)) return front * BetaContinuedFraction(a, b, x) / a;
  return 1 - front * BetaContinuedFraction(b, a, 1 - x) / b;
}

double StudentTPdf(double t, double df) {
  return std::exp(std::lgamma((df + 1) / 2) - std::lgamma(df / 2) - 0.5 * std::log(df * std::numbers::pi) -
                  (df + 1) / 2 * std::log1p(t * t / df));
}

}  // namespace

double NormalCdf(double z) { return 0.5 * std::erfc(-z / std::numbers::sqrt2); }

double NormalQuantile(double p) {
  if (!(p > 0)) return -std::numeric_limits<double>::infinity();
  if (!(p < 1)) return std::numeric_limits<double>::infinity();
  // Acklam's rational approximation, then one Halley step on erfc (about 1e-15 relative).
  static constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                                 1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  static constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                                 6.680131188771972e+01,  -1.328068155288572e+01};
  static constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                                 -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  static constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                                 3.754408661907416e+00};
  double x;
  if (p < 0.02425) {
    const double q = std::sqrt(-2 * std::log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  } else if (p <= 1 - 0.02425) {
    const double q = p - 0.5, r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  } else {
    const double q = std::sqrt(-2 * std::log1p(-p));
    x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  const double e = NormalCdf(x) - p;
  const double u = e * std::sqrt(2 * std::numbers::pi) * std::exp(x * x / 2);
  return x - u / (1 + x * u / 2);
}

double StudentTCdf(double t, double df) {
  if (std::isnan(t)) return t;
  if (IsNormal(df)) return NormalCdf(t);
  if (std::isinf(t)) return t > 0 ? 1 : 0;
  const double tail = 0.5 * IncompleteBeta(df / 2, 0.5, df / (df + t * t));  // P(T > |t|).
  return t > 0 ? 1 - tail : tail;
}

double StudentTQuantile(double p, double df) {
  if (IsNormal(df)) return NormalQuantile(p);
  if (!(p > 0)) return -std::numeric_limits<double>::infinity();
  if (!(p < 1)) return std::numeric_limits<double>::infinity();
  if (df == 1) return std::tan(std::numbers::pi * (p - 0.5));
  if (df == 2) return (2 * p - 1) / std::sqrt(2 * p * (1 - p));
  // Cornish-Fisher expansion in 1/df, then Newton steps on the exact CDF.
  const double z = NormalQuantile(p), z2 = z * z, n = df;
  double t = z + z * (z2 + 1) / (4 * n) + z * ((5 * z2 + 16) * z2 + 3) / (96 * n * n) +
             z * (((3 * z2 + 19) * z2 + 17) * z2 - 15) / (384 * n * n * n);
  for (int i = 0; i < 4; ++i) {
    const double step = (StudentTCdf(t, df) - p) / StudentTPdf(t, df);
    t -= step;
    if (std::abs(step) < 1e-12 * (1 + std::abs(t))) break;
  }
  return t;
}

}  // namespace kbench::api
