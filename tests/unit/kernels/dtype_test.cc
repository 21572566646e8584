// Host conversions of the storage dtypes the quantized and paged ops use: FP8 E4M3 (every one of the
// 256 codes round-trips, rounding is to nearest even, overflow saturates) and the integer tensors.
#include "core/dtype.h"

#include <cmath>

#include "core/random.h"
#include "gtest/gtest.h"

namespace kbench::kernels {
namespace {

TEST(Fp8E4M3, EveryFiniteCodeRoundTrips) {
  int finite = 0;
  for (int c = 0; c < 256; ++c) {
    const float f = Fp8E4M3ToFloat(static_cast<uint8_t>(c));
    if (std::isnan(f)) continue;
    ++finite;
    const uint8_t back = FloatToFp8E4M3(f);
    if (f == 0.0f) {
      EXPECT_EQ(back & 0x7f, 0) << c;
    } else {
      EXPECT_EQ(back, c) << c;
    }
  }
  EXPECT_EQ(finite, 254);  // only 0x7f and 0xff are NaN
}

TEST(Fp8E4M3, KnownValuesRoundingAndSaturation) {
  EXPECT_EQ(Fp8E4M3ToFloat(0x7e), 448.0f);
  EXPECT_EQ(Fp8E4M3ToFloat(0x08), 0.015625f);     // smallest normal 2^-6
  EXPECT_EQ(Fp8E4M3ToFloat(0x01), 0.001953125f);  // smallest subnormal 2^-9
  EXPECT_EQ(FloatToFp8E4M3(1.0f), 0x38);
  EXPECT_EQ(FloatToFp8E4M3(-2.0f), 0xc0);
  EXPECT_EQ(FloatToFp8E4M3(1000.0f), 0x7e);   // saturates, never NaN
  EXPECT_EQ(FloatToFp8E4M3(-1e30f), 0xfe);
  EXPECT_EQ(FloatToFp8E4M3(464.0f), 0x7e);
  // 1.0625 lies halfway between 1.0 (0x38) and 1.125 (0x39): ties go to the even code.
  EXPECT_EQ(FloatToFp8E4M3(1.0625f), 0x38);
  EXPECT_EQ(FloatToFp8E4M3(1.1875f), 0x3a);  // halfway between 1.125 and 1.25: even is 1.25
  EXPECT_EQ(FloatToFp8E4M3(1.07f), 0x39);
  EXPECT_TRUE(std::isnan(Fp8E4M3ToFloat(FloatToFp8E4M3(NAN))));
}

TEST(IntegerDtypes, StoreLoadAndPoison) {
  int32_t i[2];
  uint8_t u[2];
  StoreFromDouble(i, Dtype::kI32, 0, -7);
  StoreFromDouble(u, Dtype::kU8, 0, 200);
  EXPECT_EQ(LoadAsDouble(i, Dtype::kI32, 0), -7);
  EXPECT_EQ(LoadAsDouble(u, Dtype::kU8, 0), 200);
  Poison(Tensor{i, 2, Dtype::kI32});
  EXPECT_EQ(i[1], INT32_MIN);
  EXPECT_EQ(DtypeBytes(Dtype::kI32), 4);
  EXPECT_EQ(DtypeBytes(Dtype::kU8), 1);
}

TEST(FillInput, UsesTheSpecsOwnFillWhenItHasOne) {
  TensorSpec spec{.name = "table", .dims = {"N"}, .fixed_dtype = Dtype::kI32};
  spec.fill = [](const Problem& p, const Tensor& t, uint64_t seed, uint64_t) {
    for (int64_t k = 0; k < t.numel; ++k) StoreFromDouble(t.data, t.dtype, k, static_cast<double>((k + seed) % p.dim("N")));
  };
  Problem p{.dims = {{"N", 4}}};
  int32_t v[4];
  FillInput(spec, p, Tensor{v, 4, Dtype::kI32}, 1, 0);
  EXPECT_EQ(v[0], 1);
  EXPECT_EQ(v[3], 0);
  float w[4];
  TensorSpec uniform{.name = "x", .dims = {"N"}, .init_lo = 2, .init_hi = 3};
  FillInput(uniform, p, Tensor{w, 4, Dtype::kF32}, 1, 0);
  for (float x : w) EXPECT_TRUE(x >= 2 && x <= 3) << x;
}

}  // namespace
}  // namespace kbench::kernels
