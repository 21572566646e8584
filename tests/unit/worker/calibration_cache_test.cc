// The calibration cache's key (device, driver, clocks) and expiry: an entry measured under another
// driver or clocks, or too old, is measured again and the refusal says why.
#include "worker/calibration_cache.h"

#include <filesystem>

#include "fake_backend.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kbench::worker {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kHourMs = 3'600'000;

v1::DeviceInfo Gpu() {
  v1::DeviceInfo d;
  d.set_uuid("GPU-1");
  d.set_driver_version("13.0");
  d.set_driver_release("580.65.06");
  d.set_runtime_version("13.0");
  d.set_clock_khz(1980000);
  d.set_memory_clock_khz(2619000);
  d.set_application_sm_clock_mhz(1980);
  d.set_application_memory_clock_mhz(2619);
  return d;
}

v1::Calibration Fresh(const v1::DeviceInfo& d, int64_t at_ms) {
  v1::Calibration c;
  c.set_device_uuid(d.uuid());
  c.set_cache_key(CalibrationKey(d));
  c.set_measured_at_unix_ms(at_ms);
  return c;
}

TEST(CalibrationKey, ChangesWithDriverAndEachClock) {
  const std::string key = CalibrationKey(Gpu());
  EXPECT_EQ(CalibrationKey(Gpu()), key);
  auto differs = [&](auto change) {
    v1::DeviceInfo d = Gpu();
    change(d);
    return CalibrationKey(d) != key;
  };
  EXPECT_TRUE(differs([](v1::DeviceInfo& d) { d.set_uuid("GPU-2"); }));
  EXPECT_TRUE(differs([](v1::DeviceInfo& d) { d.set_driver_release("580.82.07"); }));
  EXPECT_TRUE(differs([](v1::DeviceInfo& d) { d.set_driver_version("13.1"); }));
  EXPECT_TRUE(differs([](v1::DeviceInfo& d) { d.set_clock_khz(1755000); }));
  EXPECT_TRUE(differs([](v1::DeviceInfo& d) { d.set_memory_clock_khz(1593000); }));
  EXPECT_TRUE(differs([](v1::DeviceInfo& d) { d.set_application_sm_clock_mhz(1410); }));
  EXPECT_TRUE(differs([](v1::DeviceInfo& d) { d.set_application_memory_clock_mhz(1593); }));
  EXPECT_FALSE(differs([](v1::DeviceInfo& d) { d.set_name("renamed"); }));
}

TEST(StaleReason, FreshEntriesOfTheSameKeyAreTaken) {
  const int64_t now = 1000 * kHourMs;
  EXPECT_EQ(StaleReason(Fresh(Gpu(), now - kHourMs), Gpu(), now, kCalibrationMaxAge), "");
  v1::DeviceInfo upgraded = Gpu();
  upgraded.set_driver_release("590.10");
  EXPECT_THAT(StaleReason(Fresh(Gpu(), now), upgraded, now, kCalibrationMaxAge),
              HasSubstr("another driver or clocks"));
  v1::DeviceInfo other = Gpu();
  other.set_uuid("GPU-9");
  EXPECT_THAT(StaleReason(Fresh(Gpu(), now), other, now, kCalibrationMaxAge), HasSubstr("another device"));
}

TEST(StaleReason, EntriesExpire) {
  const int64_t now = 1000 * kHourMs;
  const auto week = std::chrono::hours(24 * 7);
  EXPECT_EQ(StaleReason(Fresh(Gpu(), now - 168 * kHourMs), Gpu(), now, week), "");
  EXPECT_THAT(StaleReason(Fresh(Gpu(), now - 169 * kHourMs), Gpu(), now, week), HasSubstr("expired: 169 h old"));
  EXPECT_EQ(StaleReason(Fresh(Gpu(), now + 1), Gpu(), now, week), "dated in the future");
}

class CalibrationExpiryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) / "kbench_calibration_expiry";
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(CalibrationExpiryTest, AnExpiredEntryIsMeasuredAgainAndReplaced) {
  testing::FakeBackend backend;
  const std::string path = (dir_ / "c.txt").string();
  const int64_t now = 10'000 * kHourMs;
  CalibrationCacheOptions options{.path = path, .retry_delay = {}, .now_unix_ms = now};
  // First start: measured, keyed and dated.
  auto first = LoadOrCalibrate(backend, options);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_FALSE(first->from_cache);
  EXPECT_EQ(first->calibration.cache_key(), CalibrationKey(backend.device()));
  EXPECT_EQ(first->calibration.measured_at_unix_ms(), now);
  // A day later: from the cache.
  options.now_unix_ms = now + 24 * kHourMs;
  auto second = LoadOrCalibrate(backend, options);
  ASSERT_TRUE(second.ok());
  EXPECT_TRUE(second->from_cache);
  EXPECT_EQ(backend.calibrations, 1);
  // Past the limit: measured again, and the refusal says why.
  options.now_unix_ms = now + 24 * 8 * kHourMs;
  auto third = LoadOrCalibrate(backend, options);
  ASSERT_TRUE(third.ok());
  EXPECT_FALSE(third->from_cache);
  EXPECT_EQ(backend.calibrations, 2);
  ASSERT_EQ(third->refusals.size(), 1u);
  EXPECT_THAT(third->refusals[0], HasSubstr("expired"));
  EXPECT_EQ(LoadCalibration(path)->measured_at_unix_ms(), now + 24 * 8 * kHourMs);
}

TEST_F(CalibrationExpiryTest, AnEntryWithoutAKeyIsMeasuredAgain) {
  testing::FakeBackend backend;
  const std::string path = (dir_ / "old.txt").string();
  v1::Calibration old;  // written before entries had keys
  old.set_device_uuid(backend.device().uuid());
  old.set_copy_bytes_per_second(1e10);
  old.set_method("full");
  old.set_measured_at_unix_ms(1000);
  ASSERT_TRUE(SaveCalibration(path, old).ok());
  auto out = LoadOrCalibrate(backend, {.path = path, .retry_delay = {}, .now_unix_ms = 2000});
  ASSERT_TRUE(out.ok());
  EXPECT_FALSE(out->from_cache);
  ASSERT_EQ(out->refusals.size(), 1u);
  EXPECT_THAT(out->refusals[0], HasSubstr("another driver or clocks"));
}

}  // namespace
}  // namespace kbench::worker
