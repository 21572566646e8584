// Statistics, the stop rule and the settings defaults, on synthetic numbers.
#include "worker/measure/stats.h"

#include <cmath>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "worker/measure/stopping.h"
#include "worker/plan/settings.h"

namespace kbench::worker {
namespace {

TEST(Stats, OrderStatisticsOfAKnownArray) {
  // Unsorted on purpose: ComputeStats sorts a copy.
  const std::vector<double> x = {7, 1, 9, 3, 5, 2, 8, 4, 10, 6};
  const SampleStats s = ComputeStats(x);
  EXPECT_EQ(s.count, 10);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 10);
  EXPECT_DOUBLE_EQ(s.median, 5.5);
  EXPECT_DOUBLE_EQ(s.mean, 5.5);
  // Type-7 quantiles, as numpy.percentile([1..10], [10, 90]).
  EXPECT_DOUBLE_EQ(s.p10, 1.9);
  EXPECT_DOUBLE_EQ(s.p90, 9.1);
  // Sample standard deviation of 1..10: sqrt(55/6).
  EXPECT_NEAR(s.stddev, std::sqrt(55.0 / 6.0), 1e-12);
  EXPECT_EQ(x[0], 7);  // Input order kept.
}

TEST(Stats, OddCountMedianAndSingleSample) {
  EXPECT_DOUBLE_EQ(ComputeStats(std::vector<double>{3, 1, 2}).median, 2);
  const SampleStats one = ComputeStats(std::vector<double>{42});
  EXPECT_EQ(one.count, 1);
  EXPECT_DOUBLE_EQ(one.median, 42);
  EXPECT_DOUBLE_EQ(one.p10, 42);
  EXPECT_DOUBLE_EQ(one.stddev, 0);
  EXPECT_TRUE(std::isinf(one.median_rse));
  EXPECT_EQ(ComputeStats(std::vector<double>{}).count, 0);
}

TEST(Stats, QuantileInterpolates) {
  const std::vector<double> sorted = {10, 20, 30, 40};
  EXPECT_DOUBLE_EQ(Quantile(sorted, 0), 10);
  EXPECT_DOUBLE_EQ(Quantile(sorted, 1), 40);
  EXPECT_DOUBLE_EQ(Quantile(sorted, 0.5), 25);
  EXPECT_DOUBLE_EQ(Quantile(sorted, 1.0 / 3), 20);
}

TEST(Stats, ConstantSamplesHaveZeroRse) {
  const std::vector<double> x(50, 1000.0);
  EXPECT_EQ(MedianRelativeStandardError(x), 0);
}

TEST(Stats, RseShrinksLikeOneOverSqrtN) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> noise(1000.0, 50.0);  // 5% relative spread.
  auto rse_of = [&](int n) {
    std::vector<double> x(static_cast<size_t>(n));
    for (double& v : x) v = noise(rng);
    std::sort(x.begin(), x.end());
    return MedianRelativeStandardError(x);
  };
  const double small = rse_of(100), large = rse_of(10000);
  EXPECT_GT(small, large);
  // Asymptotically sqrt(pi/2) * sigma / (mu sqrt n): 0.00627 at n=100, 0.000627 at n=10000.
  EXPECT_NEAR(small, 0.00627, 0.0025);
  EXPECT_NEAR(large, 0.000627, 0.0002);
  EXPECT_NEAR(small / large, 10, 4);
}

v1::MeasurementSettings Rule() {
  v1::MeasurementSettings s;
  s.set_min_samples(10);
  s.set_max_samples(100);
  s.set_min_time_ns(1000);
  s.set_max_time_ns(1'000'000);
  return WithDefaults(s);
}

TEST(Stopping, ContinuesBeforeMinimumsEvenWhenQuiet) {
  EXPECT_EQ(ShouldStop({.samples = 9, .elapsed_ns = 5000, .median_rse = 0}, Rule()), std::nullopt);
  EXPECT_EQ(ShouldStop({.samples = 50, .elapsed_ns = 999, .median_rse = 0}, Rule()), std::nullopt);
  EXPECT_FALSE(NoiseTestDue({.samples = 9, .elapsed_ns = 5000}, Rule()));
  EXPECT_TRUE(NoiseTestDue({.samples = 10, .elapsed_ns = 1000}, Rule()));
}

TEST(Stopping, NoiseTargetOnceMinimumsAreMet) {
  EXPECT_EQ(ShouldStop({.samples = 10, .elapsed_ns = 1000, .median_rse = 0.004}, Rule()), v1::NOISE_TARGET);
  EXPECT_EQ(ShouldStop({.samples = 10, .elapsed_ns = 1000, .median_rse = 0.005}, Rule()), std::nullopt);
}

TEST(Stopping, MaxSamplesAndTimeLimit) {
  EXPECT_EQ(ShouldStop({.samples = 100, .elapsed_ns = 2000, .median_rse = 0.1}, Rule()), v1::MAX_SAMPLES);
  EXPECT_EQ(ShouldStop({.samples = 50, .elapsed_ns = 1'000'000, .median_rse = 0.1}, Rule()), v1::TIME_LIMIT);
  // min_samples is a floor: a slow kernel gets them even past the time limit.
  EXPECT_EQ(ShouldStop({.samples = 2, .elapsed_ns = 2'000'000, .median_rse = 1}, Rule()), std::nullopt);
  EXPECT_EQ(ShouldStop({.samples = 10, .elapsed_ns = 2'000'000, .median_rse = 1}, Rule()), v1::TIME_LIMIT);
  // max_samples caps even before min_time.
  EXPECT_EQ(ShouldStop({.samples = 100, .elapsed_ns = 10, .median_rse = 1}, Rule()), v1::MAX_SAMPLES);
  // Quiet enough wins over the other criteria at the same moment.
  EXPECT_EQ(ShouldStop({.samples = 100, .elapsed_ns = 2'000'000, .median_rse = 0}, Rule()), v1::NOISE_TARGET);
}

TEST(Settings, DefaultsFillZeros) {
  const v1::MeasurementSettings s = WithDefaults({});
  EXPECT_EQ(s.cache_mode(), v1::COLD);
  EXPECT_EQ(s.warmup_ns(), 50'000'000);
  EXPECT_EQ(s.min_samples(), 10);
  EXPECT_EQ(s.max_samples(), 1000);
  EXPECT_EQ(s.min_time_ns(), 100'000'000);
  EXPECT_EQ(s.max_time_ns(), 2'000'000'000);
  EXPECT_DOUBLE_EQ(s.noise_target(), 0.005);
  EXPECT_EQ(s.correctness_trials(), 3);
  EXPECT_EQ(s.seed(), 1u);
  EXPECT_EQ(s.timeout_ns(), 60'000'000'000);
  EXPECT_EQ(s.hot_batch(), 20);
}

TEST(Settings, GivenValuesKeptAndMinimumFollowsASmallMaximum) {
  v1::MeasurementSettings in;
  in.set_cache_mode(v1::HOT);
  in.set_max_samples(4);
  in.set_seed(99);
  const v1::MeasurementSettings s = WithDefaults(in);
  EXPECT_EQ(s.cache_mode(), v1::HOT);
  EXPECT_EQ(s.max_samples(), 4);
  EXPECT_EQ(s.min_samples(), 4);
  EXPECT_EQ(s.seed(), 99u);
}

}  // namespace
}  // namespace kbench::worker
