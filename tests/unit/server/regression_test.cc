// Regression detection: the Mann-Whitney U test against hand-computed values, the verdict rules, and a
// simulation of the false-alarm rate on noise alone and the power on a 5% slowdown.
#include "server/coordinator/regression.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "api/stats/mann_whitney.h"
#include "gtest/gtest.h"

namespace kbench::server {
namespace {

api::MannWhitney MannWhitneyU(std::vector<double> a, std::vector<double> b) { return api::MannWhitneyU(a, b); }

TEST(MannWhitneyU, SeparatedSamples) {
  // U = 0; mean 4.5; variance 3*3/12*(7) = 5.25; z = (-4.5 + 0.5) / sqrt(5.25).
  const api::MannWhitney r = MannWhitneyU({1, 2, 3}, {4, 5, 6});
  EXPECT_DOUBLE_EQ(r.u, 0);
  EXPECT_NEAR(r.z, -4 / std::sqrt(5.25), 1e-12);
  EXPECT_NEAR(r.p_two_sided, 0.080856, 1e-6);
  // Swapping the samples mirrors z and keeps p.
  const api::MannWhitney s = MannWhitneyU({4, 5, 6}, {1, 2, 3});
  EXPECT_DOUBLE_EQ(s.u, 9);
  EXPECT_NEAR(s.z, -r.z, 1e-12);
  EXPECT_NEAR(s.p_two_sided, r.p_two_sided, 1e-12);
}

TEST(MannWhitneyU, TiesShareRanksAndShrinkTheVariance) {
  // Ranks: the three 1s share 2, the three 2s share 5. R_a = 2 + 2 + 5 = 9, U = 9 - 6 = 3.
  // Tie term 2 * (27 - 3) = 48; variance 9/12 * (7 - 48/30) = 4.05; z = (3 - 4.5 + 0.5) / sqrt(4.05).
  const api::MannWhitney r = MannWhitneyU({1, 1, 2}, {1, 2, 2});
  EXPECT_DOUBLE_EQ(r.u, 3);
  EXPECT_NEAR(r.z, -1 / std::sqrt(4.05), 1e-12);
  EXPECT_NEAR(r.p_two_sided, std::erfc(1 / std::sqrt(4.05) / std::sqrt(2.0)), 1e-12);
}

TEST(MannWhitneyU, DegenerateInputsGiveNoEvidence) {
  EXPECT_DOUBLE_EQ(MannWhitneyU({}, {1, 2}).p_two_sided, 1);
  EXPECT_DOUBLE_EQ(MannWhitneyU({1, 2}, {}).p_two_sided, 1);
  EXPECT_DOUBLE_EQ(MannWhitneyU({5, 5, 5}, {5, 5}).p_two_sided, 1);  // Every value tied.
}

TEST(Median, OddEvenAndEmpty) {
  EXPECT_DOUBLE_EQ(Median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(Median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(Median({}), 0);
}

// n samples around center with relative noise sigma (lognormal).
std::vector<double> Noisy(std::mt19937_64& rng, int n, double center, double sigma) {
  std::lognormal_distribution<double> noise(0.0, sigma);
  std::vector<double> out(n);
  for (double& x : out) x = center * noise(rng);
  return out;
}

std::vector<std::vector<double>> History(std::mt19937_64& rng, int results, int n, double center, double sigma) {
  std::vector<std::vector<double>> out;
  for (int i = 0; i < results; ++i) out.push_back(Noisy(rng, n, center, sigma));
  return out;
}

TEST(AnalyzeRegression, VerdictRules) {
  std::mt19937_64 rng(7);
  const RegressionConfig config;
  const auto baseline = History(rng, 10, 100, 1000, 0.01);

  RegressionAnalysis a = AnalyzeRegression(Noisy(rng, 100, 1000, 0.01), 0, {}, config);
  EXPECT_EQ(a.verdict, v1::NO_BASELINE);

  a = AnalyzeRegression(Noisy(rng, 100, 1100, 0.01), 0, baseline, config);
  EXPECT_EQ(a.verdict, v1::SLOWER);
  EXPECT_NEAR(a.change_fraction, 0.10, 0.01);
  EXPECT_LT(a.p_value, 1e-10);
  EXPECT_NEAR(a.baseline_median_ns, 1000, 5);
  EXPECT_EQ(a.baseline_results, 10);
  EXPECT_EQ(a.baseline_samples, 1000);

  a = AnalyzeRegression(Noisy(rng, 100, 900, 0.01), 0, baseline, config);
  EXPECT_EQ(a.verdict, v1::FASTER);
  EXPECT_NEAR(a.change_fraction, -0.10, 0.01);

  // 1% slower with 1% noise and 100 samples: real, but under the 3% threshold.
  a = AnalyzeRegression(Noisy(rng, 100, 1010, 0.01), 0, baseline, config);
  EXPECT_EQ(a.verdict, v1::AMBIGUOUS);
  EXPECT_LT(a.p_value, config.alpha);

  // 10% slower but buried in 30% noise with few samples: not significant.
  a = AnalyzeRegression(Noisy(rng, 8, 1100, 0.3), 0, History(rng, 2, 8, 1000, 0.3), config);
  EXPECT_EQ(a.verdict, v1::SAME) << a.p_value;

  // Too few samples to test, whatever the change: the median stands in for the samples.
  a = AnalyzeRegression({}, 1500, baseline, config);
  EXPECT_EQ(a.verdict, v1::AMBIGUOUS);
  EXPECT_NEAR(a.change_fraction, 0.5, 0.01);
  a = AnalyzeRegression({1500, 1500, 1500}, 0, baseline, config);
  EXPECT_EQ(a.verdict, v1::AMBIGUOUS);
}

TEST(AnalyzeRegression, BaselineRunsMayComeSortedOrNot) {
  std::mt19937_64 rng(3);
  std::vector<std::vector<double>> runs;
  for (int n : {7, 100, 1, 0, 33}) runs.push_back(Noisy(rng, n, 1000, 0.02));  // Odd count, uneven sizes.
  std::vector<std::vector<double>> sorted = runs;
  for (auto& r : sorted) std::sort(r.begin(), r.end());
  const std::vector<double> current = Noisy(rng, 50, 1010, 0.02);
  const RegressionAnalysis a = AnalyzeRegression(current, 0, runs, RegressionConfig{});
  const RegressionAnalysis b = AnalyzeRegression(current, 0, sorted, RegressionConfig{});
  std::vector<double> pooled;
  for (const auto& r : runs) pooled.insert(pooled.end(), r.begin(), r.end());
  EXPECT_EQ(a.baseline_samples, 141);
  EXPECT_DOUBLE_EQ(a.baseline_median_ns, Median(pooled));
  EXPECT_DOUBLE_EQ(b.baseline_median_ns, Median(pooled));
  EXPECT_DOUBLE_EQ(a.p_value, MannWhitneyU(current, pooled).p_two_sided);
  EXPECT_DOUBLE_EQ(b.p_value, a.p_value);
}

// Rate of each verdict over trials of: a baseline of 10 results, then one new result, all with
// n samples of lognormal noise sigma; the new result's true median is (1 + change) times the baseline's.
// run_sigma adds a per-result offset (run-to-run drift: clocks, placement), the same for all its samples.
struct Rates {
  double slower = 0, faster = 0, same = 0, ambiguous = 0;
};

Rates Simulate(int trials, int n, double sigma, double run_sigma, double change, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> drift(0.0, run_sigma > 0 ? run_sigma : 1e-300);
  const RegressionConfig config;
  Rates r;
  for (int t = 0; t < trials; ++t) {
    std::vector<std::vector<double>> baseline;
    for (int i = 0; i < 10; ++i) baseline.push_back(Noisy(rng, n, 1000 * drift(rng), sigma));
    const RegressionAnalysis a =
        AnalyzeRegression(Noisy(rng, n, 1000 * (1 + change) * drift(rng), sigma), 0, baseline, config);
    const double w = 1.0 / trials;
    if (a.verdict == v1::SLOWER) r.slower += w;
    else if (a.verdict == v1::FASTER) r.faster += w;
    else if (a.verdict == v1::SAME) r.same += w;
    else r.ambiguous += w;
  }
  return r;
}

TEST(RegressionSimulation, FalseAlarmRateOnNoiseAlone) {
  constexpr int kTrials = 1000;
  for (const auto& [n, sigma, run_sigma] : std::vector<std::tuple<int, double, double>>{
           {100, 0.01, 0.0}, {20, 0.05, 0.0}, {100, 0.01, 0.005}, {1000, 0.02, 0.0}}) {
    const Rates r = Simulate(kTrials, n, sigma, run_sigma, 0.0, 11);
    std::printf("noise only: %4d samples, %.0f%% noise, %.1f%% run drift: SLOWER %.1f%%, FASTER %.1f%%, SAME %.1f%%, "
                "AMBIGUOUS %.1f%% (%d trials)\n",
                n, 100 * sigma, 100 * run_sigma, 100 * r.slower, 100 * r.faster, 100 * r.same, 100 * r.ambiguous,
                kTrials);
    EXPECT_LE(r.slower, 0.02) << n << " samples, noise " << sigma;
  }
}

TEST(RegressionSimulation, PowerOnAFivePercentSlowdown) {
  constexpr int kTrials = 1000;
  const Rates r = Simulate(kTrials, 100, 0.01, 0.0, 0.05, 13);
  std::printf("5%% slowdown: 100 samples, 1%% noise: SLOWER (detected) %.1f%% (%d trials)\n", 100 * r.slower,
              kTrials);
  EXPECT_GE(r.slower, 0.90);
  // With run-to-run drift as well, still detected.
  const Rates drift = Simulate(kTrials, 100, 0.01, 0.005, 0.05, 17);
  std::printf("5%% slowdown: 100 samples, 1%% noise, 0.5%% run drift: SLOWER (detected) %.1f%% (%d trials)\n",
              100 * drift.slower, kTrials);
  EXPECT_GE(drift.slower, 0.90);
}

}  // namespace
}  // namespace kbench::server
