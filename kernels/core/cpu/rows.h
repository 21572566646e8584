// Row helpers of the row-wise CPU variants (rmsnorm, softmax): widen a row to float once, reduce it
// in independent lanes, and an exp the compiler can vectorize. Lanes let the compiler vectorize a
// float reduction without reassociating (no -ffast-math), and split the rounding error of a long sum.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/cpu/storage.h"

namespace kbench::kernels::cpu {

inline constexpr int kLanes = 16;

// The row as floats: f32 rows are used in place, bf16 rows are widened into scratch.
inline const float* RowAsFloat(const float* row, int64_t, std::vector<float>&) { return row; }
inline const float* RowAsFloat(const Bf16* row, int64_t n, std::vector<float>& scratch) {
  scratch.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) scratch[i] = ToFloat(row[i]);
  return scratch.data();
}

inline float SumOfSquares(const float* x, int64_t n) {
  float lane[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) lane[l] += x[i + l] * x[i + l];
  float s = 0;
  for (; i < n; ++i) s += x[i] * x[i];
  for (int l = 0; l < kLanes; ++l) s += lane[l];
  return s;
}

inline float Sum(const float* x, int64_t n) {
  float lane[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) lane[l] += x[i + l];
  float s = 0;
  for (; i < n; ++i) s += x[i];
  for (int l = 0; l < kLanes; ++l) s += lane[l];
  return s;
}

inline float Max(const float* x, int64_t n) {
  float lane[kLanes];
  std::fill(lane, lane + kLanes, -INFINITY);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) lane[l] = std::max(lane[l], x[i + l]);
  float m = -INFINITY;
  for (; i < n; ++i) m = std::max(m, x[i]);
  for (int l = 0; l < kLanes; ++l) m = std::max(m, lane[l]);
  return m;
}

// exp(x) within 1 ulp (max relative error 8.3e-8 over [-87, 88]) in branch-free arithmetic, so a loop
// of it vectorizes where std::exp (a libm call) does not. exp(x) = 2^n * exp(r) with n = round(x/ln2)
// and r = x - n*ln2 (ln2 split in two for exactness), exp(r) by the Cephes expf polynomial. Below -87
// it returns a value under 2e-38 instead of underflowing to 0; x must be finite.
inline float ExpF(float x) {
  constexpr float kShifter = 12582912.0f;  // 1.5 * 2^23: adding then subtracting it rounds to an integer
  const float n = (x * 1.44269504088896341f + kShifter) - kShifter;
  const float r = (x - n * 0.693359375f) - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  int32_t e = static_cast<int32_t>(n);  // integer clamps: float selects would stop the vectorizer
  e = e < -126 ? -126 : e;
  e = e > 127 ? 127 : e;
  return p * std::bit_cast<float>((e + 127) << 23);
}

}  // namespace kbench::kernels::cpu
