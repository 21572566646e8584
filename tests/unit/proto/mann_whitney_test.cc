// Tests of the Mann-Whitney U test (api/stats/mann_whitney.h) against hand-computed values.
#include "api/stats/mann_whitney.h"

#include <limits>
#include <vector>

#include "gtest/gtest.h"

namespace kbench::api {
namespace {

TEST(MannWhitneyTest, TextbookExample) {
  // Ranks of a in the pooled order 11 12 16 17 19 20 22 24 29: 3+5+7+8+9 = 32, U = 32 - 5*6/2 = 17.
  const std::vector<double> a = {19, 22, 16, 29, 24};
  const std::vector<double> b = {20, 11, 17, 12};
  const MannWhitney r = MannWhitneyU(a, b);
  EXPECT_DOUBLE_EQ(r.u, 17);
  // mean 10, variance 5*4*10/12, continuity-corrected |U - mean| = 6.5.
  EXPECT_NEAR(r.z, 1.59216833, 1e-6);
  EXPECT_NEAR(r.p_two_sided, 0.11134689, 1e-6);
  // Swapping the samples: U' = n1*n2 - U, z negated, same p.
  const MannWhitney s = MannWhitneyU(b, a);
  EXPECT_DOUBLE_EQ(s.u, 3);
  EXPECT_NEAR(s.z, -r.z, 1e-12);
  EXPECT_NEAR(s.p_two_sided, r.p_two_sided, 1e-12);
}

TEST(MannWhitneyTest, TiesShareRanksAndShrinkTheVariance) {
  // Pooled: 1a 2a 2a 2b 3a 3b 4b 5b; ranks 1, 3 (x3), 5.5 (x2), 7, 8. R_a = 12.5, U = 2.5.
  // Tie term: (27-3) + (8-2) = 30; variance = 16/12 * (9 - 30/56).
  const std::vector<double> a = {1, 2, 2, 3};
  const std::vector<double> b = {2, 3, 4, 5};
  const MannWhitney r = MannWhitneyU(a, b);
  EXPECT_DOUBLE_EQ(r.u, 2.5);
  EXPECT_NEAR(r.z, -1.48835139, 1e-6);
  EXPECT_NEAR(r.p_two_sided, 0.13665825, 1e-6);
}

TEST(MannWhitneyTest, IdenticalSamplesGiveP1) {
  const std::vector<double> a = {1, 2, 3, 4, 5};
  const MannWhitney r = MannWhitneyU(a, a);
  EXPECT_DOUBLE_EQ(r.u, 12.5);
  EXPECT_DOUBLE_EQ(r.z, 0);
  EXPECT_DOUBLE_EQ(r.p_two_sided, 1);
}

TEST(MannWhitneyTest, AllTiedOrEmptyGiveP1) {
  const std::vector<double> a = {3, 3, 3};
  const std::vector<double> b = {3, 3};
  EXPECT_DOUBLE_EQ(MannWhitneyU(a, b).p_two_sided, 1);
  EXPECT_DOUBLE_EQ(MannWhitneyU(a, {}).p_two_sided, 1);
  EXPECT_DOUBLE_EQ(MannWhitneyU({}, b).p_two_sided, 1);
}

// A NaN sample (a result file or a worker's report) once made the merge loop forever (found by
// tests/fuzz/compare_json); it gives no evidence either way.
TEST(MannWhitneyTest, NanSamplesGiveP1) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> a = {1, 2, nan, 4, 5};
  const std::vector<double> b = {10, 20, 30, 40, 50};
  EXPECT_EQ(MannWhitneyU(a, b).p_two_sided, 1);
  EXPECT_EQ(MannWhitneyU(b, a).p_two_sided, 1);
  const std::vector<double> sorted_with_nan = {nan, 1, 2};
  EXPECT_EQ(MannWhitneyUSorted(sorted_with_nan, b).p_two_sided, 1);
}

TEST(MannWhitneyTest, FullySeparatedSamplesGiveTinyP) {
  std::vector<double> a, b;
  for (int i = 0; i < 20; ++i) {
    a.push_back(100 + i);
    b.push_back(200 + i);
  }
  const MannWhitney r = MannWhitneyU(a, b);
  EXPECT_DOUBLE_EQ(r.u, 0);
  EXPECT_NEAR(r.z, -5.39649276, 1e-6);
  EXPECT_NEAR(r.p_two_sided, 6.7956e-08, 1e-11);
  EXPECT_LT(r.p_two_sided, 1e-6);
}

}  // namespace
}  // namespace kbench::api
