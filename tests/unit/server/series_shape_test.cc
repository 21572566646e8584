// The shape a history query or series control names, put in its series' form (series_shape.h).
#include "server/coordinator/series_shape.h"

#include "gtest/gtest.h"

namespace kbench::server {
namespace {

// Like w4a16_gemm: K_words and groups derived from K, and a flag.
v1::OpInfo Packed() {
  v1::OpInfo op;
  op.set_name("packed");
  for (const char* d : {"M", "N", "K", "K_words", "groups"}) op.add_dims(d);
  op.add_dtypes(v1::DTYPE_BF16);
  v1::DerivedDim* d = op.add_derived_dims();
  d->set_name("K_words");
  d->set_expr("K / 8");
  d = op.add_derived_dims();
  d->set_name("groups");
  d->set_expr("cdiv(K, 128)");
  op.add_flags("fast");
  return op;
}

TEST(SeriesShape, EveryFormSubmitTakesBecomesTheSeriesForm) {
  const v1::OpInfo op = Packed();
  for (const char* text : {"4x256x512", "4x256x512x64x4", "M=4,N=256,K=512", "M=4 N=256 K=512", "K=512 N=256 M=4",
                           "M=4,N=256,K=512,K_words=64,groups=4"})
    EXPECT_EQ(SeriesShapeOf(&op, text), "4x256x512x64x4") << text;
  EXPECT_EQ(SeriesShapeOf(&op, "4x256x512,fast"), "4x256x512x64x4 fast");
  EXPECT_EQ(SeriesShapeOf(&op, "4x256x512 fast"), "4x256x512x64x4 fast");
  EXPECT_EQ(SeriesShapeOf(&op, "1x8x200"), "1x8x200x25x2");
  // Given derived values are kept, as a submit keeps them.
  EXPECT_EQ(SeriesShapeOf(&op, "4x256x512x7x9"), "4x256x512x7x9");
}

TEST(SeriesShape, WhatDoesNotResolveKeepsItsWordsFlagsAfterSpaces) {
  const v1::OpInfo op = Packed();
  for (const char* text : {"4x256", "4x256x512 slow", "4x0x512", "garbage", "4x256x512x64", ""})
    EXPECT_EQ(SeriesShapeOf(&op, text), text);
  EXPECT_EQ(SeriesShapeOf(&op, "M=4,N=256"), "M=4 N=256");
  EXPECT_EQ(SeriesShapeOf(&op, "4x256x512,slow"), "4x256x512 slow");
  // No worker lists the op: submit's form still names a series' label.
  EXPECT_EQ(SeriesShapeOf(nullptr, "4x256x512"), "4x256x512");
  EXPECT_EQ(SeriesShapeOf(nullptr, "8192x32x8x128,gptj"), "8192x32x8x128 gptj");
  EXPECT_EQ(SeriesShapeOf(nullptr, " 1x4x2x96x160x128  causal "), "1x4x2x96x160x128 causal");
  EXPECT_EQ(SeriesShapeOf(nullptr, "256x1024,zero_rows, outliers"), "256x1024 zero_rows outliers");
  EXPECT_EQ(SeriesShapeOf(nullptr, "8192x4096"), "8192x4096");
  EXPECT_EQ(SeriesShapeOf(nullptr, ""), "");
}

}  // namespace
}  // namespace kbench::server
