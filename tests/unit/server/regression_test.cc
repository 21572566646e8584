// Regression detection: the Mann-Whitney U test against hand-computed values (kept in api/stats, no
// longer the verdict), the run verdict through the server (runs as observations, the confirming
// re-run, the pinned reference). The rates on synthetic histories: verdict_simulation_test.cc.
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
  // Ten runs whose medians spread by ~1% run to run (each run's samples agree to 0.1%).
  std::lognormal_distribution<double> run(0.0, 0.01);
  std::vector<std::vector<double>> baseline;
  for (int i = 0; i < 10; ++i) baseline.push_back(Noisy(rng, 100, 1000 * run(rng), 0.001));

  RegressionAnalysis a = AnalyzeRegression(Noisy(rng, 100, 1000, 0.01), 0, {}, config);
  EXPECT_EQ(a.verdict, v1::NO_BASELINE);

  a = AnalyzeRegression(Noisy(rng, 100, 1100, 0.001), 0, baseline, config);
  EXPECT_EQ(a.verdict, v1::SLOWER);
  EXPECT_NEAR(a.change_fraction, 0.10, 0.03);
  EXPECT_LT(a.p_value, config.alpha);
  EXPECT_NEAR(a.baseline_median_ns, 1000, 15);
  EXPECT_EQ(a.baseline_results, 10);
  EXPECT_EQ(a.baseline_samples, 1000);
  EXPECT_GT(a.measured_spread, 0.003);
  EXPECT_LT(a.measured_spread, 0.03);
  EXPECT_GE(a.run_spread, a.measured_spread);
  EXPECT_LT(a.change_low, a.change_fraction);
  EXPECT_GT(a.change_high, a.change_fraction);

  a = AnalyzeRegression(Noisy(rng, 100, 900, 0.001), 0, baseline, config);
  EXPECT_EQ(a.verdict, v1::FASTER);

  // The same run median as the baseline's center, 1000 samples: SAME.
  a = AnalyzeRegression(Noisy(rng, 1000, a.baseline_median_ns, 0.001), 0, baseline, config);
  EXPECT_EQ(a.verdict, v1::SAME) << a.change_fraction;

  // 10% slower but the runs spread by 8%: no verdict either way (the old rule said SAME).
  std::vector<std::vector<double>> noisy_runs;
  std::lognormal_distribution<double> wild(0.0, 0.08);
  for (int i = 0; i < 10; ++i) noisy_runs.push_back(Noisy(rng, 100, 1000 * wild(rng), 0.001));
  a = AnalyzeRegression(Noisy(rng, 100, 1100, 0.001), 0, noisy_runs, config);
  EXPECT_EQ(a.verdict, v1::AMBIGUOUS) << a.p_value;

  // Fewer samples than min_samples in the run: AMBIGUOUS whatever the change.
  a = AnalyzeRegression({1500, 1500, 1500}, 0, baseline, config);
  EXPECT_EQ(a.verdict, v1::AMBIGUOUS);
  // A run without samples is judged by its median alone.
  a = AnalyzeRegression({}, 1500, baseline, config);
  EXPECT_EQ(a.verdict, v1::SLOWER);
  EXPECT_NEAR(a.change_fraction, 0.5, 0.05);
}

TEST(AnalyzeRegression, SamplesOfOneRunCountOnce) {
  // Pooling raw samples made a 1.5% run-to-run wobble significant; runs as observations do not.
  std::mt19937_64 rng(5);
  std::vector<std::vector<double>> baseline;
  for (double m : {1000.0, 1012.0, 991.0, 1005.0, 996.0, 1009.0, 1002.0, 994.0})
    baseline.push_back(Noisy(rng, 500, m, 0.0005));
  const RegressionAnalysis a = AnalyzeRegression(Noisy(rng, 500, 1030, 0.0005), 0, baseline, RegressionConfig{});
  EXPECT_LT(MannWhitneyU(Noisy(rng, 500, 1030, 0.0005), baseline[0]).p_two_sided, 1e-10);  // What pooling saw.
  EXPECT_EQ(a.verdict, v1::AMBIGUOUS) << a.p_value;  // ~3% on a series whose runs spread ~0.7%: not beyond 3% for sure.
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
  EXPECT_EQ(a.baseline_samples, 141);
  // The center: geometric mean of the runs' medians (the run without samples has none).
  double log_sum = 0;
  for (const auto& r : runs)
    if (!r.empty()) log_sum += std::log(Median(r));
  EXPECT_NEAR(a.baseline_median_ns, std::exp(log_sum / 4), 1e-9);
  EXPECT_DOUBLE_EQ(b.baseline_median_ns, a.baseline_median_ns);
  EXPECT_DOUBLE_EQ(b.p_value, a.p_value);
}

TEST(ConfirmRuns, TwoRunsConfirmARealSlowdownButNotAClockState) {
  const RegressionConfig config;
  PooledBaseline baseline;
  baseline.results = 10;
  for (double m : {1000.0, 1010.0, 990.0, 1005.0, 995.0, 1008.0, 992.0, 1003.0, 997.0, 1000.0})
    baseline.runs.push_back(api::RunObservation{m, 0.0005});
  const api::RunObservation slow{1060, 0.0005}, slow_again{1055, 0.0005}, normal{1000, 0.0005};
  const RegressionAnalysis first = AnalyzeRuns(std::span(&slow, 1), 100, baseline, nullptr, config);
  ASSERT_EQ(first.verdict, v1::SLOWER);
  EXPECT_TRUE(NeedsConfirmation(first, config));
  EXPECT_EQ(ConfirmRuns(slow, slow_again, 100, baseline, nullptr, config).verdict, v1::SLOWER);
  // The re-run reads as usual: the first run was a clock state, not the kernel.
  EXPECT_NE(ConfirmRuns(slow, normal, 100, baseline, nullptr, config).verdict, v1::SLOWER);
  EXPECT_FALSE(NeedsConfirmation(AnalyzeRuns(std::span(&normal, 1), 100, baseline, nullptr, config), config));
  // Beyond the threshold but not significant on one run: re-run too; within it: not.
  RegressionAnalysis unsure;
  unsure.verdict = v1::AMBIGUOUS;
  unsure.change_fraction = 0.04;
  unsure.p_value = 0.05;
  EXPECT_TRUE(NeedsConfirmation(unsure, config));
  unsure.change_fraction = 0.02;
  EXPECT_FALSE(NeedsConfirmation(unsure, config));
}

TEST(AnalyzeRuns, ThePinnedReferenceCatchesCreep) {
  const RegressionConfig config;
  PooledBaseline recent{6, {}, {}}, reference{5, {}, {}};
  for (double m : {1060.0, 1065.0, 1070.0, 1075.0, 1070.0, 1068.0}) recent.runs.push_back({m, 0});
  for (double m : {1000.0, 1002.0, 998.0, 1001.0, 999.0}) reference.runs.push_back({m, 0});
  const api::RunObservation run{1080, 0};
  EXPECT_NE(AnalyzeRuns(std::span(&run, 1), -1, recent, nullptr, config).verdict, v1::SLOWER);
  const RegressionAnalysis a = AnalyzeRuns(std::span(&run, 1), -1, recent, &reference, config);
  EXPECT_EQ(a.verdict, v1::SLOWER);
  EXPECT_TRUE(a.against_reference);
  EXPECT_NEAR(a.baseline_median_ns, 1000, 1);
}

}  // namespace
}  // namespace kbench::server
