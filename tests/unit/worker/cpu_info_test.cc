// Host description parsers and the calibration cache file.
#include "worker/cpu/cpu_info.h"

#include <unistd.h>

#include <filesystem>

#include "fake_backend.h"
#include "gtest/gtest.h"
#include "test_ops.h"
#include "worker/calibration_cache.h"
#include "worker/cpu/cpu_backend.h"

namespace kbench::worker {
namespace {

TEST(CpuInfo, ParsesProcFiles) {
  const char* cpuinfo =
      "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Platinum 8480+\n"
      "cpu MHz\t\t: 2000.000\ncache size\t: 107520 KB\n\nprocessor\t: 1\nmodel name\t: other\n";
  EXPECT_EQ(ParseCpuModel(cpuinfo), "Intel(R) Xeon(R) Platinum 8480+");
  EXPECT_EQ(ParseCpuClockKhz(cpuinfo), 2'000'000);
  EXPECT_EQ(ParseCpuModel("processor : 0\n"), "");
  EXPECT_EQ(ParseMemTotalBytes("MemTotal:       131891424 kB\nMemFree:  1 kB\n"), int64_t{131891424} * 1024);
  EXPECT_EQ(ParseMemTotalBytes("nothing"), 0);
  EXPECT_EQ(ParseCacheSizeBytes("32768K\n"), int64_t{32} << 20);
  EXPECT_EQ(ParseCacheSizeBytes("2M"), int64_t{2} << 20);
  EXPECT_EQ(ParseCacheSizeBytes("512"), 512);
  EXPECT_EQ(ParseCacheSizeBytes("lots"), 0);
}

TEST(CpuInfo, DeviceUuidIsStableAndPerHost) {
  EXPECT_EQ(CpuDeviceUuid("node-a"), CpuDeviceUuid("node-a"));
  EXPECT_NE(CpuDeviceUuid("node-a"), CpuDeviceUuid("node-b"));
  EXPECT_EQ(CpuDeviceUuid("node-a").rfind("cpu-", 0), 0u);
  EXPECT_EQ(CpuDeviceUuid("node-a").size(), 4u + 16u);
  EXPECT_EQ(StableHash64(""), 0xcbf29ce484222325ull);  // FNV-1a offset basis.
}

TEST(CpuInfo, ThisHostIsDescribed) {
  const v1::DeviceInfo d = MakeCpuDeviceInfo(ReadCpuHostInfo());
  EXPECT_EQ(d.backend(), v1::BACKEND_CPU);
  EXPECT_FALSE(d.name().empty());
  EXPECT_GE(d.multiprocessor_count(), 1);
  EXPECT_GT(d.memory_bytes(), 0);
  EXPECT_GT(d.l2_cache_bytes(), 0);
  EXPECT_EQ(d.compute_capability_major(), 0);
}

class CalibrationCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("kbench-calib-" + std::to_string(getpid()));
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};


TEST_F(CalibrationCacheTest, SaveLoadRoundTrip) {
  v1::Calibration c;
  c.set_device_uuid("cpu-1");
  c.set_copy_bytes_per_second(1.5e10);
  (*c.mutable_peak_flops_per_second())["f32"] = 3e11;
  c.set_method("test");
  const std::string path = (dir_ / "sub" / "calibration.txt").string();
  ASSERT_TRUE(SaveCalibration(path, c).ok());
  auto loaded = LoadCalibration(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->device_uuid(), "cpu-1");
  EXPECT_DOUBLE_EQ(loaded->copy_bytes_per_second(), 1.5e10);
  EXPECT_DOUBLE_EQ(loaded->peak_flops_per_second().at("f32"), 3e11);
  EXPECT_TRUE(absl::IsNotFound(LoadCalibration((dir_ / "none.txt").string()).status()));
}

TEST_F(CalibrationCacheTest, CachedEntryOfTheSameDeviceIsUsed) {
  CpuBackend backend({}, testing::TestHost());
  v1::Calibration c;
  c.set_device_uuid(backend.device().uuid());
  c.set_copy_bytes_per_second(42);
  c.set_method("full");
  c.set_cache_key(CalibrationKey(backend.device()));
  c.set_measured_at_unix_ms(1'000'000);
  const std::string path = (dir_ / "c.txt").string();
  ASSERT_TRUE(SaveCalibration(path, c).ok());
  auto out = LoadOrCalibrate(backend, {.path = path, .now_unix_ms = 2'000'000});
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(out->from_cache);
  EXPECT_DOUBLE_EQ(backend.calibration()->copy_bytes_per_second(), 42);
}

TEST_F(CalibrationCacheTest, QuickCalibrationIsMeasuredSavedAndNotTakenForAFullOne) {
  CpuBackend backend({.quick_calibration = true}, testing::TestHost());
  const std::string path = (dir_ / "q.txt").string();
  auto out = LoadOrCalibrate(backend, {.path = path, .quick = true, .check = false});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_FALSE(out->from_cache);
  EXPECT_TRUE(out->save_status.ok());
  EXPECT_GT(out->calibration.copy_bytes_per_second(), 1e8);
  EXPECT_GT(out->calibration.peak_flops_per_second().at("f32"), 1e8);
  EXPECT_EQ(out->calibration.peak_flops_per_second().at("bf16"), out->calibration.peak_flops_per_second().at("f32"));
  EXPECT_EQ(out->calibration.method().rfind(kQuickCalibrationPrefix, 0), 0u);
  // The CPU's own streams per mix; no L2 or SFU ceiling (absent, 0), the FMA loop as the f32 FMA peak.
  EXPECT_GT(out->calibration.read_bytes_per_second(), 1e8);
  EXPECT_GT(out->calibration.write_bytes_per_second(), 1e8);
  EXPECT_GT(out->calibration.read2_write1_bytes_per_second(), 1e8);
  EXPECT_EQ(out->calibration.l2_read_bytes_per_second(), 0);
  EXPECT_EQ(out->calibration.sfu_ops_per_second(), 0);
  EXPECT_EQ(out->calibration.fma_f32_flops_per_second(), out->calibration.peak_flops_per_second().at("f32"));
  // A second quick worker takes it from the cache...
  auto again = LoadOrCalibrate(backend, {.path = path, .quick = true, .check = false});
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->from_cache);
  // ...and --recalibrate measures anyway.
  auto forced = LoadOrCalibrate(backend, {.path = path, .recalibrate = true, .quick = true, .check = false});
  ASSERT_TRUE(forced.ok());
  EXPECT_FALSE(forced->from_cache);
  // A full worker does not take the quick entry: it measures, and overwrites the entry.
  testing::FakeBackend full;
  auto entry = LoadCalibration(path);
  ASSERT_TRUE(entry.ok());
  entry->set_device_uuid(full.device().uuid());
  ASSERT_TRUE(SaveCalibration(path, *entry).ok());
  auto measured = LoadOrCalibrate(full, {.path = path});
  ASSERT_TRUE(measured.ok());
  EXPECT_FALSE(measured->from_cache);
  EXPECT_EQ(full.calibrations, 1);
  EXPECT_EQ(LoadCalibration(path)->method(), "fake");
  // Now the full entry is there, and taken.
  ASSERT_TRUE(LoadOrCalibrate(full, {.path = path}).ok());
  EXPECT_EQ(full.calibrations, 1);
}

TEST_F(CalibrationCacheTest, EntryOfAnotherDeviceIsIgnored) {
  testing::FakeBackend backend;
  v1::Calibration other;
  other.set_device_uuid("cpu-elsewhere");
  other.set_copy_bytes_per_second(1);
  const std::string path = (dir_ / "o.txt").string();
  ASSERT_TRUE(SaveCalibration(path, other).ok());
  auto out = LoadOrCalibrate(backend, {.path = path});
  ASSERT_TRUE(out.ok());
  EXPECT_FALSE(out->from_cache);
  EXPECT_EQ(backend.calibrations, 1);
}

TEST(CalibrationCache, DefaultPathIsPerDevice) {
  const std::string p = DefaultCalibrationCachePath("cpu-0123");
  if (!p.empty()) {
    EXPECT_NE(p.find("kbench/calibration-cpu-0123.txt"), std::string::npos);
  }
}

}  // namespace
}  // namespace kbench::worker
