// The plausibility checks of a calibration, the retries of LoadOrCalibrate when they fail, and the
// flag a result gets when it reads above its calibrated ceiling.
#include "worker/calibration_check.h"

#include <chrono>
#include <filesystem>

#include "fake_backend.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "worker/calibration_cache.h"
#include "worker/cuda/calibrate.h"
#include "worker/measure/roofline.h"

namespace kbench::worker {
namespace {

using ::testing::HasSubstr;

v1::Calibration Good() {
  v1::Calibration c;
  c.set_device_uuid("cpu-fake");
  c.set_copy_bytes_per_second(4.2e12);
  (*c.mutable_peak_flops_per_second())["bf16"] = 727e12;
  c.set_copy_spread_fraction(0.004);
  return c;
}

v1::DatasheetPeaks H200() {
  v1::DatasheetPeaks d;
  d.set_model("H200 SXM");
  d.set_memory_bytes_per_second(4.8e12);
  (*d.mutable_peak_flops_per_second())["bf16"] = 989.4e12;
  return d;
}

TEST(SpreadFraction, MaxMinusMinOverMedian) {
  EXPECT_DOUBLE_EQ(SpreadFraction({10, 12, 11}), 2.0 / 11);
  EXPECT_DOUBLE_EQ(SpreadFraction({7}), 0);
  EXPECT_DOUBLE_EQ(SpreadFraction({}), 0);
}

TEST(CheckCalibration, APlausibleOneIsAccepted) {
  EXPECT_TRUE(CheckCalibration(Good(), H200()).ok());
  EXPECT_TRUE(CheckCalibration(Good(), std::nullopt).ok());
}

TEST(CheckCalibration, EachFailureIsRefusedSayingWhy) {
  v1::Calibration busy = Good();
  busy.set_other_load_fraction(0.45);
  EXPECT_THAT(CheckCalibration(busy, std::nullopt).message(), HasSubstr("busy: 45%"));
  v1::Calibration noisy = Good();
  noisy.set_copy_spread_fraction(0.30);
  EXPECT_THAT(CheckCalibration(noisy, std::nullopt).message(), HasSubstr("spread 30.0%"));
  v1::Calibration beyond = Good();
  beyond.set_copy_bytes_per_second(5.5e12);  // more than the HBM can do
  EXPECT_THAT(CheckCalibration(beyond, H200()).message(), HasSubstr("implausible: copy 5500 GB/s"));
  EXPECT_TRUE(CheckCalibration(beyond, std::nullopt).ok());  // without a datasheet there is nothing to hold it to
  v1::Calibration slow = Good();
  slow.set_copy_bytes_per_second(1.0e12);  // a quarter of the datasheet: someone else is copying
  EXPECT_THAT(CheckCalibration(slow, H200()).message(), HasSubstr("only 21%"));
  v1::Calibration peak = Good();
  (*peak.mutable_peak_flops_per_second())["bf16"] = 1200e12;
  EXPECT_THAT(CheckCalibration(peak, H200()).message(), HasSubstr("implausible: bf16 peak 1200.0 TFLOP/s"));
  EXPECT_FALSE(CheckCalibration(v1::Calibration(), std::nullopt).ok());
}

class CalibrationRetryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) / "kbench_calibration_retry";
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  CalibrationCacheOptions Options() { return {.path = (dir_ / "cal.txt").string(), .retry_delay = {}}; }
  std::filesystem::path dir_;
};

TEST_F(CalibrationRetryTest, ABusyAttemptIsMeasuredAgainAndOnlyTheGoodOneIsCached) {
  testing::FakeBackend backend;
  backend.tweak_calibration = [](v1::Calibration& c, int attempt) {
    if (attempt == 1) c.set_other_load_fraction(0.9);
  };
  auto out = LoadOrCalibrate(backend, Options());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(backend.calibrations, 2);
  ASSERT_EQ(out->refusals.size(), 1u);
  EXPECT_THAT(out->refusals[0], HasSubstr("attempt 1: device busy"));
  EXPECT_EQ(out->calibration.warning(), "");
  EXPECT_EQ(backend.calibration()->other_load_fraction(), 0);
  EXPECT_EQ(LoadCalibration(Options().path)->other_load_fraction(), 0);
}

TEST_F(CalibrationRetryTest, WhenEveryAttemptFailsTheBestIsUsedFlaggedAndNotCached) {
  testing::FakeBackend backend;
  backend.tweak_calibration = [](v1::Calibration& c, int attempt) {
    c.set_copy_spread_fraction(0.5);
    c.set_copy_bytes_per_second(attempt == 2 ? 3e10 : 1e10);
  };
  auto out = LoadOrCalibrate(backend, Options());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(backend.calibrations, 3);
  EXPECT_EQ(out->refusals.size(), 3u);
  EXPECT_DOUBLE_EQ(out->calibration.copy_bytes_per_second(), 3e10);
  EXPECT_THAT(out->calibration.warning(), HasSubstr("every calibration attempt failed"));
  EXPECT_THAT(backend.calibration()->warning(), HasSubstr("spread 50.0%"));
  EXPECT_TRUE(absl::IsNotFound(LoadCalibration(Options().path).status()));
}

TEST_F(CalibrationRetryTest, ACachedCalibrationThatFailsItsChecksIsMeasuredAgain) {
  testing::FakeBackend backend;
  v1::Calibration stale;
  stale.set_device_uuid(backend.device().uuid());
  stale.set_copy_bytes_per_second(1e10);
  stale.set_other_load_fraction(0.8);  // taken on a loaded host
  stale.set_method("full");
  stale.set_cache_key(CalibrationKey(backend.device()));
  stale.set_measured_at_unix_ms(std::chrono::duration_cast<std::chrono::milliseconds>(
                                    std::chrono::system_clock::now().time_since_epoch())
                                    .count());
  ASSERT_TRUE(SaveCalibration(Options().path, stale).ok());
  auto out = LoadOrCalibrate(backend, Options());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_FALSE(out->from_cache);
  EXPECT_EQ(backend.calibrations, 1);
  ASSERT_EQ(out->refusals.size(), 1u);
  EXPECT_THAT(out->refusals[0], HasSubstr("cached"));
  EXPECT_THAT(out->refusals[0], HasSubstr("device busy"));
  EXPECT_EQ(LoadCalibration(Options().path)->other_load_fraction(), 0);  // replaced by the good one
}

TEST(CeilingWarning, AResultAboveItsCeilingBeyondTheSpreadIsFlagged) {
  v1::Calibration cal;
  cal.set_copy_bytes_per_second(100e9);
  (*cal.mutable_peak_flops_per_second())["f32"] = 1e12;
  cal.set_copy_spread_fraction(0.02);
  // 1 GB in 10.0 ms is 100%; in 5.95 ms 168%, far beyond a 2% spread.
  EXPECT_EQ(ComputeRoofline({.bytes_read = 1e9, .flops = 1}, 10.0e6, v1::DTYPE_F32, cal, std::nullopt).warning(), "");
  EXPECT_EQ(ComputeRoofline({.bytes_read = 1e9, .flops = 1}, 9.85e6, v1::DTYPE_F32, cal, std::nullopt).warning(), "");
  const std::string w = ComputeRoofline({.bytes_read = 1e9, .flops = 1}, 5.95e6, v1::DTYPE_F32, cal, std::nullopt).warning();
  EXPECT_THAT(w, HasSubstr("168.1% of the calibrated bandwidth"));
  EXPECT_THAT(w, HasSubstr("spread (2.0%)"));
  // Above the FLOP peak too (1e10 FLOPs in 5 ms is 2 TFLOP/s against 1).
  EXPECT_THAT(ComputeRoofline({.bytes_read = 1, .flops = 1e10}, 5e6, v1::DTYPE_F32, cal, std::nullopt).warning(),
              HasSubstr("200.0% of the calibrated peak"));
  // Below the ceiling but on a suspect calibration: still flagged.
  cal.set_warning("every calibration attempt failed its checks");
  EXPECT_THAT(ComputeRoofline({.bytes_read = 1e9, .flops = 1}, 20e6, v1::DTYPE_F32, cal, std::nullopt).warning(),
              HasSubstr("calibration suspect: every calibration attempt failed"));
}

// The compute ceilings are timed on the same GEMM size quick or not (a quick calibration only repeats
// less), 8192^3 wherever its three fp32 matrices fit in a quarter of the memory.
TEST(CeilingGemmSize, LargeGpusTime8192CubedAndSmallOnesShrinkToFit) {
  EXPECT_EQ(CeilingGemmSize(uint64_t{141} << 30), 8192);  // H200
  EXPECT_EQ(CeilingGemmSize(uint64_t{80} << 30), 8192);   // H100, A100 80 GB
  EXPECT_EQ(CeilingGemmSize(uint64_t{3} << 30), 8192);    // 768 MiB of matrices: exactly a quarter
  EXPECT_EQ(CeilingGemmSize(uint64_t{2} << 30), 4096);
  EXPECT_EQ(CeilingGemmSize(0), 1024);                    // never below 1024, never zero
  for (uint64_t gib : {1, 4, 8, 16, 24}) {
    const int n = CeilingGemmSize(gib << 30);
    EXPECT_LE(3 * uint64_t(n) * n * 4, (gib << 30) / 4) << gib << " GiB";
  }
}

}  // namespace
}  // namespace kbench::worker
