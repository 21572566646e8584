// The roofline block with hand-computed numbers, and each bound class.
#include "worker/measure/roofline.h"

#include "gtest/gtest.h"

namespace kbench::worker {
namespace {

// 100 GB/s copy bandwidth, 1 TFLOP/s f32: ridge 10 FLOP/B.
v1::Calibration Calib() {
  v1::Calibration c;
  c.set_copy_bytes_per_second(100e9);
  (*c.mutable_peak_flops_per_second())["f32"] = 1e12;
  return c;
}

TEST(Roofline, MemoryBoundByHand) {
  // 1 GB moved, 1e8 FLOPs: memory floor 10 ms, compute floor 0.1 ms. Measured 12.5 ms.
  const v1::Roofline r = ComputeRoofline({.bytes_read = 1e9, .flops = 1e8}, 12.5e6, v1::DTYPE_F32, Calib(), std::nullopt);
  EXPECT_DOUBLE_EQ(r.bytes(), 1e9);
  EXPECT_DOUBLE_EQ(r.flops(), 1e8);
  EXPECT_DOUBLE_EQ(r.arithmetic_intensity(), 0.1);
  EXPECT_DOUBLE_EQ(r.achieved_bytes_per_second(), 80e9);
  EXPECT_DOUBLE_EQ(r.achieved_flops_per_second(), 8e9);
  ASSERT_EQ(r.ceilings_size(), 1);
  const v1::RooflineCeiling& c = r.ceilings(0);
  EXPECT_EQ(c.source(), "calibrated");
  EXPECT_DOUBLE_EQ(c.ridge_flops_per_byte(), 10);
  EXPECT_DOUBLE_EQ(c.floor_ns(), 10e6);
  EXPECT_DOUBLE_EQ(c.utilization(), 0.8);
  EXPECT_DOUBLE_EQ(c.bandwidth_fraction(), 0.8);
  EXPECT_DOUBLE_EQ(c.flops_fraction(), 0.008);
  EXPECT_EQ(r.bound_class(), v1::MEMORY_BOUND);
}

TEST(Roofline, ComputeBoundByHand) {
  // 1e12 FLOPs over 1e9 bytes (I = 1000): compute floor 1 s, memory floor 10 ms. Measured 2 s.
  const v1::Roofline r = ComputeRoofline({.bytes_read = 1e9, .flops = 1e12}, 2e9, v1::DTYPE_F32, Calib(), std::nullopt);
  EXPECT_DOUBLE_EQ(r.ceilings(0).floor_ns(), 1e9);
  EXPECT_DOUBLE_EQ(r.ceilings(0).utilization(), 0.5);
  EXPECT_DOUBLE_EQ(r.ceilings(0).flops_fraction(), 0.5);
  EXPECT_EQ(r.bound_class(), v1::COMPUTE_BOUND);
}

TEST(Roofline, LatencyBoundWhenBothFractionsAreLow) {
  // 1 MB in 100 us: 10 GB/s = 10% of bandwidth, FLOPs negligible.
  const v1::Roofline r = ComputeRoofline({.bytes_read = 1e6, .flops = 1e3}, 1e5, v1::DTYPE_F32, Calib(), std::nullopt);
  EXPECT_DOUBLE_EQ(r.ceilings(0).bandwidth_fraction(), 0.1);
  EXPECT_EQ(r.bound_class(), v1::LATENCY_BOUND);
  // Just at 45% of the bandwidth the kernel counts as memory-bound.
  const v1::Roofline edge = ComputeRoofline({.bytes_read = 4.5e6, .flops = 0}, 1e5, v1::DTYPE_F32, Calib(), std::nullopt);
  EXPECT_EQ(edge.bound_class(), v1::MEMORY_BOUND);
}

TEST(Roofline, Bf16FallsBackToTheF32PeakAndDatasheetComesSecond) {
  v1::DatasheetPeaks ds;
  ds.set_model("Test");
  ds.set_memory_bytes_per_second(200e9);
  (*ds.mutable_peak_flops_per_second())["bf16"] = 4e12;
  const v1::Roofline r = ComputeRoofline({.bytes_read = 1e9, .flops = 1e12}, 2e9, v1::DTYPE_BF16, Calib(), ds);
  ASSERT_EQ(r.ceilings_size(), 2);
  EXPECT_DOUBLE_EQ(r.ceilings(0).peak_flops_per_second(), 1e12);  // calibration has only f32
  EXPECT_EQ(r.ceilings(1).source(), "datasheet");
  EXPECT_DOUBLE_EQ(r.ceilings(1).peak_flops_per_second(), 4e12);
  EXPECT_DOUBLE_EQ(r.ceilings(1).ridge_flops_per_byte(), 20);
  EXPECT_DOUBLE_EQ(r.ceilings(1).floor_ns(), 0.25e9);
  EXPECT_DOUBLE_EQ(r.ceilings(1).utilization(), 0.125);
}

TEST(Roofline, WithoutCalibrationOnlyTheCostAndAchievedNumbers) {
  const v1::Roofline r = ComputeRoofline({.bytes_read = 1e9, .flops = 0}, 1e9, v1::DTYPE_F32, std::nullopt, std::nullopt);
  EXPECT_EQ(r.ceilings_size(), 0);
  EXPECT_EQ(r.bound_class(), v1::BOUND_CLASS_UNSPECIFIED);
  EXPECT_DOUBLE_EQ(r.achieved_bytes_per_second(), 1e9);
  EXPECT_DOUBLE_EQ(r.arithmetic_intensity(), 0);
}

}  // namespace
}  // namespace kbench::worker
