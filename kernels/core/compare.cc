#include "core/compare.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace kbench::kernels {

namespace {

// 2^e for |e| < 1000, built from its bits (a check runs this for every element of a 2^27-element
// output, twice a result: no library calls).
double Pow2(int e) {
  const uint64_t bits = static_cast<uint64_t>(e + 1023) << 52;
  double d;
  std::memcpy(&d, &bits, 8);
  return d;
}

// The exponent e of a normal double a (2^e <= a < 2^(e+1)).
int Exponent(double a) {
  uint64_t bits;
  std::memcpy(&bits, &a, 8);
  return static_cast<int>((bits >> 52) & 0x7ff) - 1023;
}

}  // namespace

bool Fp8E4M3Matches(double out, double ref, Tolerance tol) {
  constexpr double kMax = 448.0;
  if (!std::isfinite(ref) || !std::isfinite(out)) return false;
  const double a = std::min(std::fabs(ref), kMax);  // saturating
  // Grid spacing around a: 2^-9 below the smallest normal 2^-6, else 2^(e-3) in [2^e, 2^(e+1)).
  const int step_exp = a < 0x1.0p-6 ? -9 : Exponent(a) - 3;
  const double step = Pow2(step_exp);
  const auto k = static_cast<int64_t>(a * Pow2(-step_exp));  // floor: a / step < 16, exact
  const double lo = static_cast<double>(k) * step, hi = lo == a ? a : lo + step;
  // Nearest, ties to the even multiple of step (the even mantissa, binade ends included).
  const double mid = lo + step / 2;
  const double nearest = a < mid ? lo : a > mid ? hi : (k % 2 == 0 ? lo : hi);
  const double sign = std::signbit(ref) ? -1.0 : 1.0;
  if (out == sign * nearest || (a == 0 && out == 0)) return true;
  const bool near_midpoint = lo != hi && std::fabs(a - mid) < tol.atol + tol.rtol * a;
  return near_midpoint && (out == sign * lo || out == sign * hi);
}

CompareResult Compare(std::span<const double> out, std::span<const double> ref, Tolerance tol, Dtype out_dtype) {
  const bool fp8 = out_dtype == Dtype::kFP8E4M3;
  CompareResult r;
  double diff2 = 0, ref2 = 0;
  const size_t n = std::min(out.size(), ref.size());
  if (out.size() != ref.size()) {
    r.passed = false;
    r.mismatches = static_cast<int64_t>(std::max(out.size(), ref.size()) - n);
    r.first_mismatch = static_cast<int64_t>(n);
  }
  for (size_t i = 0; i < n; ++i) {
    const double o = out[i], e = ref[i];
    const bool ref_finite = std::isfinite(e);
    if (!std::isfinite(o)) {
      if (ref_finite || std::isnan(o) != std::isnan(e) || o != e) {
        ++r.non_finite;
        ++r.mismatches;
        if (r.first_mismatch < 0) r.first_mismatch = static_cast<int64_t>(i);
      }
      continue;
    }
    const double abs_err = std::fabs(o - e);
    const double rel_err = e != 0 ? abs_err / std::fabs(e) : (abs_err == 0 ? 0 : INFINITY);
    if (abs_err > r.max_abs_error) r.max_abs_error = abs_err;
    if (rel_err > r.max_rel_error && std::isfinite(rel_err)) r.max_rel_error = rel_err;
    diff2 += abs_err * abs_err;
    ref2 += e * e;
    if (fp8 ? !Fp8E4M3Matches(o, e, tol) : !(abs_err <= tol.atol + tol.rtol * std::fabs(e))) {
      ++r.mismatches;
      if (r.first_mismatch < 0) r.first_mismatch = static_cast<int64_t>(i);
    }
  }
  r.rel_l2_error = ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
  r.passed = r.passed && r.mismatches == 0 && r.non_finite == 0;
  return r;
}

void Merge(CompareResult& a, const CompareResult& b) {
  a.passed = a.passed && b.passed;
  a.max_abs_error = std::max(a.max_abs_error, b.max_abs_error);
  a.max_rel_error = std::max(a.max_rel_error, b.max_rel_error);
  a.rel_l2_error = std::max(a.rel_l2_error, b.rel_l2_error);
  a.mismatches += b.mismatches;
  a.non_finite += b.non_finite;
  if (a.first_mismatch < 0) a.first_mismatch = b.first_mismatch;
}

}  // namespace kbench::kernels
