// The FP8 E4M3 comparison of core/compare.h: an output must be the reference rounded to nearest even
// on the E4M3 grid (saturating at 448), except within the tolerance band around a rounding
// midpoint, where either neighbour passes; never two steps off, never NaN.
#include <cmath>
#include <vector>

#include "core/compare.h"
#include "core/dtype.h"
#include "gtest/gtest.h"

namespace kbench::kernels {
namespace {

constexpr Tolerance kTight{.rtol = 1e-5, .atol = 1e-12};

TEST(Fp8Compare, GridValuesMatchThemselvesOnly) {
  for (double v : {0.0, 1.0, 1.125, -1.125, 448.0, -448.0, 0x1p-9, 3 * 0x1p-9, 0x1p-6, 240.0, 256.0}) {
    EXPECT_TRUE(Fp8E4M3Matches(v, v, kTight)) << v;
  }
  EXPECT_FALSE(Fp8E4M3Matches(1.25, 1.125, kTight));
  EXPECT_FALSE(Fp8E4M3Matches(-1.125, 1.125, kTight));
}

TEST(Fp8Compare, RoundsToNearest) {
  // Between 1 and 1.125 (step 1/8): 1.05 rounds to 1, 1.08 to 1.125.
  EXPECT_TRUE(Fp8E4M3Matches(1.0, 1.05, kTight));
  EXPECT_FALSE(Fp8E4M3Matches(1.125, 1.05, kTight));
  EXPECT_TRUE(Fp8E4M3Matches(1.125, 1.08, kTight));
  EXPECT_FALSE(Fp8E4M3Matches(1.0, 1.08, kTight));
  // Between 256 and 288 (step 32).
  EXPECT_TRUE(Fp8E4M3Matches(-288.0, -280.0, kTight));
  EXPECT_FALSE(Fp8E4M3Matches(-256.0, -280.0, kTight));
}

TEST(Fp8Compare, TiesGoToEvenButTheBandAdmitsBoth) {
  // 1.0625 is the midpoint of 1 (mantissa 000, even) and 1.125 (001).
  const Tolerance exact{.rtol = 0, .atol = 0};
  EXPECT_TRUE(Fp8E4M3Matches(1.0, 1.0625, exact));
  EXPECT_FALSE(Fp8E4M3Matches(1.125, 1.0625, exact));
  // 1.1875: midpoint of 1.125 (001) and 1.25 (010): even is 1.25.
  EXPECT_TRUE(Fp8E4M3Matches(1.25, 1.1875, exact));
  EXPECT_FALSE(Fp8E4M3Matches(1.125, 1.1875, exact));
  // 15.5 * 2^-9... the top of a binade: 1.9375 is the midpoint of 1.875 (111) and 2 (next binade, even).
  EXPECT_TRUE(Fp8E4M3Matches(2.0, 1.9375, exact));
  // Within the band either neighbour passes, outside it only the nearest.
  const Tolerance band{.rtol = 1.0 / 128, .atol = 0};
  EXPECT_TRUE(Fp8E4M3Matches(1.125, 1.0625 * (1 - 1e-3), band));
  EXPECT_TRUE(Fp8E4M3Matches(1.0, 1.0625 * (1 + 1e-3), band));
  EXPECT_FALSE(Fp8E4M3Matches(1.125, 1.0625 * (1 - 0.02), band));
  // Never two steps away, whatever the band.
  EXPECT_FALSE(Fp8E4M3Matches(1.25, 1.0625, Tolerance{.rtol = 0.5, .atol = 0}));
}

TEST(Fp8Compare, SaturatesAt448) {
  EXPECT_TRUE(Fp8E4M3Matches(448.0, 1000.0, kTight));
  EXPECT_TRUE(Fp8E4M3Matches(-448.0, -464.0, kTight));
  EXPECT_FALSE(Fp8E4M3Matches(416.0, 1000.0, kTight));
  EXPECT_FALSE(Fp8E4M3Matches(NAN, 1000.0, kTight));
  // 440 is between 416 and 448, nearer 448.
  EXPECT_TRUE(Fp8E4M3Matches(448.0, 440.0, kTight));
}

TEST(Fp8Compare, Subnormals) {
  // Steps of 2^-9 below 2^-6; 2.5 * 2^-9 ties to the even 2 * 2^-9.
  EXPECT_TRUE(Fp8E4M3Matches(2 * 0x1p-9, 2.5 * 0x1p-9, Tolerance{.rtol = 0, .atol = 0}));
  EXPECT_FALSE(Fp8E4M3Matches(3 * 0x1p-9, 2.5 * 0x1p-9, Tolerance{.rtol = 0, .atol = 0}));
  EXPECT_TRUE(Fp8E4M3Matches(0.0, 0.4 * 0x1p-9, kTight));
  EXPECT_FALSE(Fp8E4M3Matches(0x1p-9, 0.4 * 0x1p-9, kTight));
}

// The host conversion (FloatToFp8E4M3) is what a correct kernel does: it passes with no band at all
// on a sweep of values, and a kernel that truncates instead fails.
TEST(Fp8Compare, HostConversionPassesTruncationFails) {
  const Tolerance exact{.rtol = 0, .atol = 0};
  int truncation_failures = 0;
  for (int i = -60000; i <= 60000; ++i) {
    const float v = static_cast<float>(i) * 0.0091f;  // -546 .. 546, many binades and ties
    const double out = Fp8E4M3ToFloat(FloatToFp8E4M3(v));
    ASSERT_TRUE(Fp8E4M3Matches(out, v, exact)) << v << " -> " << out;
    // Toward zero: the grid value at or below |v|.
    const double a = std::min(std::fabs(static_cast<double>(v)), 448.0);
    const double step = a < 0x1p-6 ? 0x1p-9 : std::ldexp(1.0, std::ilogb(a) - 3);
    const double truncated = std::copysign(std::floor(a / step) * step, v);
    truncation_failures += !Fp8E4M3Matches(truncated, v, exact);
  }
  EXPECT_GT(truncation_failures, 40000);
}

TEST(Fp8Compare, CompareAppliesTheRuleOnlyToFp8Outputs) {
  const std::vector<double> ref = {1.05, 300.0, 0.0, -1000.0};
  const std::vector<double> out = {1.0, 288.0, 0.0, -448.0};
  EXPECT_TRUE(Compare(out, ref, kTight, Dtype::kFP8E4M3).passed);
  // The same values as an f32 output are far off.
  EXPECT_FALSE(Compare(out, ref, kTight, Dtype::kF32).passed);
  EXPECT_FALSE(Compare(out, ref, kTight).passed);
  // One element a step off is one mismatch, at its index.
  std::vector<double> off = out;
  off[1] = 320.0;
  const CompareResult r = Compare(off, ref, kTight, Dtype::kFP8E4M3);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.mismatches, 1);
  EXPECT_EQ(r.first_mismatch, 1);
  // NaN (an unwritten, poisoned output) fails.
  off = out;
  off[2] = NAN;
  EXPECT_EQ(Compare(off, ref, kTight, Dtype::kFP8E4M3).non_finite, 1);
}

}  // namespace
}  // namespace kbench::kernels
