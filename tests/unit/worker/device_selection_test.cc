// The worker's device flags: --devices all|list, the one-GPU --device, --cpu-devices, and the
// per-device calibration cache path.
#include "worker/agent/device_selection.h"

#include "gtest/gtest.h"

namespace kbench::worker {
namespace {

std::vector<int> Ordinals(const absl::StatusOr<std::vector<SelectedDevice>>& s) {
  std::vector<int> out;
  if (s.ok())
    for (const SelectedDevice& d : *s) out.push_back(d.ordinal);
  return out;
}

TEST(DeviceSelectionTest, CudaDefaultsToEveryVisibleGpu) {
  EXPECT_EQ(Ordinals(SelectDevices({.kind = "cuda", .visible_gpus = 2})), (std::vector<int>{0, 1}));
  EXPECT_EQ(Ordinals(SelectDevices({.kind = "cuda", .devices = "all", .visible_gpus = 3})),
            (std::vector<int>{0, 1, 2}));
}

TEST(DeviceSelectionTest, CudaListAndSingleDevice) {
  EXPECT_EQ(Ordinals(SelectDevices({.kind = "cuda", .devices = "1, 0", .visible_gpus = 2})),
            (std::vector<int>{1, 0}));
  EXPECT_EQ(Ordinals(SelectDevices({.kind = "cuda", .device = 1, .visible_gpus = 2})), (std::vector<int>{1}));
}

TEST(DeviceSelectionTest, BadCudaSelectionsNameTheFlag) {
  auto expect_invalid = [](const DeviceSelectionFlags& f, const std::string& needle) {
    auto s = SelectDevices(f);
    ASSERT_TRUE(absl::IsInvalidArgument(s.status())) << s.status();
    EXPECT_NE(s.status().message().find(needle), std::string::npos) << s.status();
  };
  expect_invalid({.kind = "cuda", .devices = "0,x", .visible_gpus = 2}, "--devices");
  expect_invalid({.kind = "cuda", .devices = "0,2", .visible_gpus = 2}, "no GPU 2");
  expect_invalid({.kind = "cuda", .devices = "1,1", .visible_gpus = 2}, "twice");
  expect_invalid({.kind = "cuda", .devices = "0", .device = 0, .visible_gpus = 2}, "not both");
  expect_invalid({.kind = "cuda", .device = 4, .visible_gpus = 2}, "--device");
  expect_invalid({.kind = "cuda", .cpu_devices = 2, .visible_gpus = 2}, "--cpu-devices");
  EXPECT_TRUE(absl::IsFailedPrecondition(SelectDevices({.kind = "cuda", .visible_gpus = 0}).status()));
}

TEST(DeviceSelectionTest, CpuIsTheHostOrNTestDevices) {
  auto host = SelectDevices({.kind = "cpu"});
  ASSERT_TRUE(host.ok());
  ASSERT_EQ(host->size(), 1u);
  EXPECT_EQ((*host)[0].cpu_device, -1);
  auto two = SelectDevices({.kind = "cpu", .cpu_devices = 2});
  ASSERT_TRUE(two.ok());
  ASSERT_EQ(two->size(), 2u);
  EXPECT_EQ((*two)[0].cpu_device, 0);
  EXPECT_EQ((*two)[1].cpu_device, 1);
  EXPECT_TRUE(absl::IsInvalidArgument(SelectDevices({.kind = "cpu", .devices = "all"}).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(SelectDevices({.kind = "cpu", .cpu_devices = -1}).status()));
}

TEST(DeviceSelectionTest, CalibrationCachePathIsPerDeviceWhenThereAreSeveral) {
  EXPECT_EQ(CalibrationCachePathFor("/c/cal", 1, "u0"), "/c/cal");
  EXPECT_EQ(CalibrationCachePathFor("/c/cal", 2, "u1"), "/c/cal.u1");
  EXPECT_EQ(CalibrationCachePathFor("", 2, "u1"), "");  // the default is per uuid already
}

}  // namespace
}  // namespace kbench::worker
