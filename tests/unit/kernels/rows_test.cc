// The row helpers of the CPU variants: lane reductions equal the plain sums for every length (the
// remainder past the last full set of lanes included), and the vectorizable exp is within 1 ulp.
#include "core/cpu/rows.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"

namespace kbench::kernels::cpu {
namespace {

TEST(Rows, LaneReductionsCoverEveryElement) {
  for (int64_t n : {0, 1, 7, 15, 16, 17, 33, 1000}) {
    std::vector<float> x(static_cast<size_t>(n));
    double sum = 0, sum_sq = 0, max = -INFINITY;
    for (int64_t i = 0; i < n; ++i) {
      x[i] = static_cast<float>((i * 37 % 101) - 50) / 8;  // exact in float; the max moves around
      sum += x[i];
      sum_sq += double(x[i]) * x[i];
      max = std::max<double>(max, x[i]);
    }
    EXPECT_EQ(Sum(x.data(), n), sum) << n;  // small integers / 8: every partial sum is exact
    EXPECT_EQ(SumOfSquares(x.data(), n), sum_sq) << n;
    EXPECT_EQ(Max(x.data(), n), max) << n;
  }
}

TEST(Rows, RowAsFloatWidensBf16AndPassesF32Through) {
  std::vector<float> scratch;
  const float f[2] = {1.5f, -2.0f};
  EXPECT_EQ(RowAsFloat(f, 2, scratch), f);
  const Bf16 b[2] = {{0x3fc0}, {0xc000}};  // 1.5, -2
  const float* w = RowAsFloat(b, 2, scratch);
  EXPECT_EQ(w[0], 1.5f);
  EXPECT_EQ(w[1], -2.0f);
}

TEST(Rows, ExpWithinOneUlp) {
  double worst = 0;
  for (double x = -87; x <= 88; x += 0.001237) {
    const double want = std::exp(static_cast<double>(static_cast<float>(x)));
    worst = std::max(worst, std::fabs(ExpF(static_cast<float>(x)) - want) / want);
  }
  EXPECT_LT(worst, 0x1p-23);
  EXPECT_EQ(ExpF(0.0f), 1.0f);
  EXPECT_GE(ExpF(-1000.0f), 0.0f);  // clamped, not NaN or garbage
  EXPECT_LT(ExpF(-1000.0f), 2e-38f);
}

}  // namespace
}  // namespace kbench::kernels::cpu
