// The measurement loop with a fake sampler on a fake clock: no real time passes.
#include "worker/measure/harness.h"

#include <random>

#include "gtest/gtest.h"
#include "worker/plan/settings.h"

namespace kbench::worker {
namespace {

// A sampler whose launches "take" the given durations on a fake clock.
struct FakeDevice {
  int64_t now = 1'000'000;
  int launches = 0;
  int flushes = 0;
  std::function<double()> next_launch_ns = [] { return 1000.0; };
  // Per sample (1-based): whether it is throttled, and the write-back it reports.
  std::function<bool(int)> throttled = [](int) { return false; };
  std::function<double(int)> write_back_ns = [](int) { return 0.0; };
  int samples = 0;

  HarnessHooks Hooks() {
    HarnessHooks h;
    h.now_ns = [this] { return now; };
    h.sample = [this](int n) -> absl::StatusOr<SampleTime> {
      double total = 0;
      for (int i = 0; i < n; ++i) total += next_launch_ns();
      launches += n;
      now += static_cast<int64_t>(total);
      ++samples;
      return SampleTime{.ns = total, .throttled = throttled(samples), .write_back_ns = write_back_ns(samples)};
    };
    h.flush = [this] {
      ++flushes;
      now += 500;  // Flushing takes time too, outside the samples.
    };
    return h;
  }
};

v1::MeasurementSettings Settings() {
  v1::MeasurementSettings s;
  s.set_warmup_ns(10'000);
  s.set_min_samples(10);
  s.set_max_samples(100'000);
  s.set_min_time_ns(50'000);
  s.set_max_time_ns(10'000'000);
  return WithDefaults(s);
}

TEST(Harness, ConstantSamplesStopOnTheNoiseTarget) {
  FakeDevice dev;
  const auto timing = Measure(Settings(), dev.Hooks());
  ASSERT_TRUE(timing.ok()) << timing.status();
  EXPECT_EQ(timing->stop_reason(), v1::NOISE_TARGET);
  EXPECT_EQ(timing->cache_mode(), v1::COLD);
  EXPECT_EQ(timing->launches_per_sample(), 1);
  EXPECT_DOUBLE_EQ(timing->median_ns(), 1000);
  EXPECT_DOUBLE_EQ(timing->stddev_ns(), 0);
  EXPECT_EQ(timing->median_relative_standard_error(), 0);
  EXPECT_EQ(timing->count(), timing->samples_ns_size());
  // min_time 50 us of wall time at 1.5 us per sample (launch + flush): 34 samples.
  EXPECT_EQ(timing->count(), 34);
  // Warm-up: 10 us at 1.5 us per launch, so 7 launches; it is reported apart from the samples.
  EXPECT_EQ(timing->warmup_launches(), 7);
  EXPECT_EQ(timing->warmup_ns(), 10'500);
  // One flush before every cold launch, warm-up included.
  EXPECT_EQ(dev.flushes, dev.launches);
}

TEST(Harness, VeryNoisySamplesRunIntoTheTimeLimit) {
  FakeDevice dev;
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> spread(1'000, 100'000);
  dev.next_launch_ns = [&] { return spread(rng); };
  const auto timing = Measure(Settings(), dev.Hooks());
  ASSERT_TRUE(timing.ok()) << timing.status();
  EXPECT_EQ(timing->stop_reason(), v1::TIME_LIMIT);
  EXPECT_GT(timing->median_relative_standard_error(), 0.005);
  EXPECT_GT(timing->max_ns(), timing->min_ns());
  EXPECT_LE(timing->p10_ns(), timing->median_ns());
  EXPECT_LE(timing->median_ns(), timing->p90_ns());
}

TEST(Harness, MaxSamples) {
  FakeDevice dev;
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> spread(1'000, 100'000);
  dev.next_launch_ns = [&] { return spread(rng); };
  v1::MeasurementSettings s = Settings();
  s.set_max_samples(25);
  const auto timing = Measure(s, dev.Hooks());
  ASSERT_TRUE(timing.ok());
  EXPECT_EQ(timing->stop_reason(), v1::MAX_SAMPLES);
  EXPECT_EQ(timing->count(), 25);
}

TEST(Harness, HotModeAveragesABatchAndNeverFlushes) {
  FakeDevice dev;
  int launch = 0;
  // Alternating 1000 and 3000 ns: every batch of 20 averages 2000.
  dev.next_launch_ns = [&] { return (launch++ % 2) ? 3000.0 : 1000.0; };
  v1::MeasurementSettings s = Settings();
  s.set_cache_mode(v1::HOT);
  s.set_hot_batch(20);
  const auto timing = Measure(s, dev.Hooks());
  ASSERT_TRUE(timing.ok());
  EXPECT_EQ(timing->cache_mode(), v1::HOT);
  EXPECT_EQ(timing->launches_per_sample(), 20);
  EXPECT_DOUBLE_EQ(timing->median_ns(), 2000);
  EXPECT_EQ(timing->stop_reason(), v1::NOISE_TARGET);
  EXPECT_EQ(dev.flushes, 0);
}

TEST(Harness, ASlowKernelGetsItsMinimumSamplesPastTheTimeLimit) {
  FakeDevice dev;
  dev.next_launch_ns = [] { return 1e6; };  // 1 ms per launch.
  v1::MeasurementSettings s = Settings();
  s.set_max_time_ns(3'000'000);
  const auto timing = Measure(s, dev.Hooks());
  ASSERT_TRUE(timing.ok());
  EXPECT_EQ(timing->stop_reason(), v1::NOISE_TARGET);  // Constant: quiet as soon as allowed.
  EXPECT_EQ(timing->count(), 10);

  FakeDevice noisy;
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> spread(1e6, 2e6);
  noisy.next_launch_ns = [&] { return spread(rng); };
  const auto t2 = Measure(s, noisy.Hooks());
  ASSERT_TRUE(t2.ok());
  EXPECT_EQ(t2->stop_reason(), v1::TIME_LIMIT);
  EXPECT_EQ(t2->count(), 10);
}

TEST(Harness, NearTheDeadlineItKeepsWhatItHas) {
  FakeDevice dev;
  dev.next_launch_ns = [] { return 1e6; };
  HarnessHooks hooks = dev.Hooks();
  // Warm-up takes one launch (1 ms + flush); then room for four 1 ms samples, not the ten wanted.
  hooks.deadline_ns = dev.now + 6'000'000;
  const auto timing = Measure(Settings(), hooks);
  ASSERT_TRUE(timing.ok()) << timing.status();
  EXPECT_EQ(timing->stop_reason(), v1::TIME_LIMIT);
  EXPECT_EQ(timing->count(), 4);
}

TEST(Harness, ThrottledSamplesAreKeptFlaggedAndLeftOutOfTheStatistics) {
  FakeDevice dev;
  // Every third sample is throttled and slow (5000 ns against 1000).
  dev.throttled = [](int i) { return i % 3 == 0; };
  int call = 0;
  dev.next_launch_ns = [&] { return ++call % 3 == 0 ? 5000.0 : 1000.0; };
  const auto timing = Measure(Settings(), dev.Hooks());
  ASSERT_TRUE(timing.ok()) << timing.status();
  ASSERT_EQ(timing->sample_throttled_size(), timing->samples_ns_size());
  int flagged = 0;
  for (int i = 0; i < timing->samples_ns_size(); ++i) {
    EXPECT_EQ(timing->sample_throttled(i), timing->samples_ns(i) == 5000.0) << i;
    flagged += timing->sample_throttled(i);
  }
  EXPECT_GT(flagged, 0);
  EXPECT_EQ(timing->discarded_throttled(), flagged);
  EXPECT_TRUE(timing->throttled());
  EXPECT_EQ(timing->count(), timing->samples_ns_size() - flagged);
  EXPECT_DOUBLE_EQ(timing->median_ns(), 1000);
  EXPECT_DOUBLE_EQ(timing->max_ns(), 1000);  // the slow ones are not in the statistics
}

TEST(Harness, WhenEverySampleIsThrottledTheStatisticsUseThemAndSaySo) {
  FakeDevice dev;
  dev.throttled = [](int) { return true; };
  v1::MeasurementSettings s = Settings();
  s.set_max_samples(40);
  const auto timing = Measure(s, dev.Hooks());
  ASSERT_TRUE(timing.ok()) << timing.status();
  EXPECT_EQ(timing->stop_reason(), v1::MAX_SAMPLES);  // never quiet without unthrottled samples
  EXPECT_EQ(timing->samples_ns_size(), 40);
  EXPECT_EQ(timing->count(), 40);
  EXPECT_TRUE(timing->throttled());
  EXPECT_DOUBLE_EQ(timing->median_ns(), 1000);
}

TEST(Harness, WriteBackIsTheMedianOfWhatEachSampleAdded) {
  FakeDevice dev;
  // The warm-up's samples are not counted; one outlier among the timed ones does not move the median.
  dev.write_back_ns = [](int i) { return i == 12 ? 10'000.0 : 250.0; };
  const auto timing = Measure(Settings(), dev.Hooks());
  ASSERT_TRUE(timing.ok());
  EXPECT_DOUBLE_EQ(timing->write_back_ns(), 250.0);
  FakeDevice none;
  EXPECT_EQ(Measure(Settings(), none.Hooks())->write_back_ns(), 0);
}

TEST(Harness, CancelAndDeadlineAndSamplerErrors) {
  FakeDevice dev;
  CancelFlag cancel;
  HarnessHooks hooks = dev.Hooks();
  hooks.cancel = &cancel;
  cancel.Cancel();
  EXPECT_TRUE(absl::IsCancelled(Measure(Settings(), hooks).status()));

  FakeDevice dev2;
  hooks = dev2.Hooks();
  hooks.deadline_ns = dev2.now + 5'000;  // Inside the warm-up (10 us).
  EXPECT_TRUE(absl::IsDeadlineExceeded(Measure(Settings(), hooks).status()));

  FakeDevice dev3;
  hooks = dev3.Hooks();
  hooks.sample = [](int) -> absl::StatusOr<SampleTime> { return absl::InternalError("launch failed"); };
  EXPECT_EQ(Measure(Settings(), hooks).status().message(), "launch failed");
}

}  // namespace
}  // namespace kbench::worker
