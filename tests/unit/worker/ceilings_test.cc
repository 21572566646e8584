// Which calibrated ceiling a result is held against: the traffic mix interpolated by read share, the
// compute unit's peak, the L2 ceiling for a HOT working set that fits, and the names the Roofline
// block shows for each.
#include "worker/measure/ceilings.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "worker/measure/roofline.h"

namespace kbench::worker {
namespace {

using ::testing::HasSubstr;

// write-only 300, copy 360 (beats the own 1:1 at 350), 2:1 390, read-only 420 GB/s; L2 1200 GB/s.
v1::Calibration Mixes() {
  v1::Calibration c;
  c.set_write_bytes_per_second(300e9);
  c.set_read_write_bytes_per_second(350e9);
  c.set_copy_bytes_per_second(360e9);
  c.set_read2_write1_bytes_per_second(390e9);
  c.set_read_bytes_per_second(420e9);
  c.set_l2_read_bytes_per_second(1200e9);
  (*c.mutable_peak_flops_per_second())["bf16"] = 800e12;
  (*c.mutable_peak_flops_per_second())["f32"] = 50e12;
  c.set_fma_f32_flops_per_second(60e12);
  c.set_sfu_ops_per_second(4e12);
  return c;
}

TEST(MixPoints, MeasuredMixesInOrderTheFasterOneToOne) {
  const auto p = MixPoints(Mixes());
  ASSERT_EQ(p.size(), 4u);
  EXPECT_EQ(p[0].name, "write-only");
  EXPECT_EQ(p[1].name, "copy");  // 360 > 350
  EXPECT_DOUBLE_EQ(p[1].bytes_per_second, 360e9);
  EXPECT_DOUBLE_EQ(p[2].read_share, 2.0 / 3.0);
  EXPECT_EQ(p[3].name, "read-only");
  v1::Calibration own = Mixes();
  own.set_read_write_bytes_per_second(370e9);
  EXPECT_EQ(MixPoints(own)[1].name, "1:1");
}

TEST(BandwidthForMix, AMeasuredMixIsTakenAsItIs) {
  EXPECT_DOUBLE_EQ(BandwidthForMix(Mixes(), 1.0).rate, 420e9);
  EXPECT_EQ(BandwidthForMix(Mixes(), 1.0).name, "read-only");
  EXPECT_DOUBLE_EQ(BandwidthForMix(Mixes(), 0.0).rate, 300e9);
  EXPECT_DOUBLE_EQ(BandwidthForMix(Mixes(), 2.0 / 3.0).rate, 390e9);
  // reduce_sum's 4 written bytes leave it read-only.
  EXPECT_EQ(BandwidthForMix(Mixes(), 0.999).name, "read-only");
}

TEST(BandwidthForMix, BetweenTwoMixesItIsLinearInReadShare) {
  // Read share 0.8 lies 0.4 of the way from 2:1 (0.667) to read-only (1): 390 + 0.4 * 30.
  const Choice c = BandwidthForMix(Mixes(), 0.8);
  EXPECT_NEAR(c.rate, 402e9, 1e3);
  EXPECT_EQ(c.name, "2:1 .. read-only at read share 0.80");
  // Half-way between write-only and the copy.
  EXPECT_NEAR(BandwidthForMix(Mixes(), 0.25).rate, 330e9, 1e3);
}

TEST(BandwidthForMix, OutsideTheMeasuredRangeTheNearestOneIsNamedSo) {
  v1::Calibration copy_only;
  copy_only.set_copy_bytes_per_second(100e9);
  const Choice c = BandwidthForMix(copy_only, 1.0);
  EXPECT_DOUBLE_EQ(c.rate, 100e9);
  EXPECT_THAT(c.name, HasSubstr("copy (nearest measured mix"));
  EXPECT_DOUBLE_EQ(BandwidthForMix(v1::Calibration(), 0.5).rate, 0);
}

TEST(ReadShare, ReadsOverAllBytes) {
  EXPECT_DOUBLE_EQ(ReadShare({.bytes_read = 2, .bytes_written = 1}), 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(ReadShare({}), 0.5);
}

TEST(PeakForUnit, EachUnitItsOwnPeak) {
  EXPECT_DOUBLE_EQ(PeakForUnit(Mixes(), kernels::ComputeUnit::kTensorCore, v1::DTYPE_BF16).rate, 800e12);
  EXPECT_EQ(PeakForUnit(Mixes(), kernels::ComputeUnit::kTensorCore, v1::DTYPE_BF16).name, "GEMM bf16");
  // softmax in bf16 runs its arithmetic on the FMA pipes, not the tensor cores.
  EXPECT_DOUBLE_EQ(PeakForUnit(Mixes(), kernels::ComputeUnit::kFp32Fma, v1::DTYPE_BF16).rate, 60e12);
  EXPECT_EQ(PeakForUnit(Mixes(), kernels::ComputeUnit::kSfu, v1::DTYPE_BF16).name, "SFU exp2");
  // An older calibration without the unit's peak: the GEMM peak, named so.
  v1::Calibration old;
  (*old.mutable_peak_flops_per_second())["f32"] = 50e12;
  const Choice c = PeakForUnit(old, kernels::ComputeUnit::kFp32Fma, v1::DTYPE_F32);
  EXPECT_DOUBLE_EQ(c.rate, 50e12);
  EXPECT_THAT(c.name, HasSubstr("not measured"));
}

TEST(JudgedInL2, OnlyHotWorkingSetsThatFit) {
  EXPECT_TRUE(JudgedInL2(v1::HOT, 40e6, 50'000'000, Mixes()));
  EXPECT_FALSE(JudgedInL2(v1::COLD, 40e6, 50'000'000, Mixes()));
  EXPECT_FALSE(JudgedInL2(v1::HOT, 60e6, 50'000'000, Mixes()));
  EXPECT_FALSE(JudgedInL2(v1::HOT, 40e6, 0, Mixes()));
  EXPECT_FALSE(JudgedInL2(v1::HOT, 40e6, 50'000'000, v1::Calibration()));  // no L2 ceiling measured
}

TEST(Roofline, AVectorAddIsHeldAgainstTheTwoToOneStreamAndSaysSo) {
  // 3 GB moved (2 read, 1 written) in 7.5 ms: 400 GB/s, 102.6% of the 2:1 stream (not 111% of the copy).
  const v1::Roofline r = ComputeRoofline({.bytes_read = 2e9, .bytes_written = 1e9, .flops = 1e9}, 7.5e6,
                                         v1::DTYPE_BF16, Mixes(), std::nullopt);
  const v1::RooflineCeiling& c = r.ceilings(0);
  EXPECT_DOUBLE_EQ(c.bandwidth_bytes_per_second(), 390e9);
  EXPECT_NEAR(c.bandwidth_fraction(), 400.0 / 390.0, 1e-12);
  EXPECT_EQ(c.bandwidth_ceiling(), "2:1");
  // Its FLOPs are f32 FMA ones even in bf16.
  EXPECT_DOUBLE_EQ(c.peak_flops_per_second(), 60e12);
  EXPECT_EQ(c.peak_ceiling(), "f32 FMA");
  EXPECT_DOUBLE_EQ(r.bytes_read(), 2e9);
  EXPECT_DOUBLE_EQ(r.bytes_written(), 1e9);
  EXPECT_FALSE(r.l2_resident());
}

TEST(Roofline, AHotWorkingSetInL2IsHeldAgainstTheL2CeilingAndFlagged) {
  const kernels::Cost cost{.bytes_read = 20e6, .bytes_written = 10e6};
  const RooflineContext hot{.cache_mode = v1::HOT, .working_set_bytes = 30e6, .l2_bytes = 50'000'000};
  const v1::Roofline r = ComputeRoofline(cost, 30e3, v1::DTYPE_BF16, Mixes(), std::nullopt, hot);
  EXPECT_TRUE(r.l2_resident());
  EXPECT_DOUBLE_EQ(r.ceilings(0).bandwidth_bytes_per_second(), 1200e9);
  EXPECT_THAT(r.ceilings(0).bandwidth_ceiling(), HasSubstr("L2 read"));
  // The same result measured COLD is held against DRAM.
  const v1::Roofline cold = ComputeRoofline(cost, 30e3, v1::DTYPE_BF16, Mixes(), std::nullopt,
                                            {.cache_mode = v1::COLD, .working_set_bytes = 30e6, .l2_bytes = 50'000'000});
  EXPECT_FALSE(cold.l2_resident());
  EXPECT_DOUBLE_EQ(cold.ceilings(0).bandwidth_bytes_per_second(), 390e9);
}

TEST(Roofline, TheWarningNamesTheCeilingItWasHeldAgainst) {
  // 1 GB read in 2 ms: 500 GB/s, 119% of the read-only stream.
  const v1::Roofline r = ComputeRoofline({.bytes_read = 1e9}, 2e6, v1::DTYPE_F32, Mixes(), std::nullopt);
  EXPECT_THAT(r.warning(), HasSubstr("bandwidth (read-only)"));
}

}  // namespace
}  // namespace kbench::worker
