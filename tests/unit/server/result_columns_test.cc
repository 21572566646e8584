// How results are split into store columns: series shapes, and samples stored sorted with the
// permutation back to the order in which they were taken.
#include "server/store/result_columns.h"

#include <vector>

#include "gtest/gtest.h"

namespace kbench::server {
namespace {

google::protobuf::RepeatedField<double> Field(const std::vector<double>& v) {
  return google::protobuf::RepeatedField<double>(v.begin(), v.end());
}

TEST(ResultColumns, SeriesShapeIsDimsThenFlags) {
  v1::Problem p;
  for (int64_t d : {32, 4096, 128}) p.add_dims()->set_value(d);
  EXPECT_EQ(SeriesShape(p), "32x4096x128");
  p.add_flags("causal");
  EXPECT_EQ(SeriesShape(p), "32x4096x128 causal");
}

TEST(ResultColumns, SeriesOfAResult) {
  v1::Result r;
  r.set_op("gemm");
  r.set_variant("v4_wgmma");
  r.mutable_problem()->add_dims()->set_value(4096);
  r.mutable_problem()->set_dtype(v1::DTYPE_BF16);
  r.mutable_device()->set_name("NVIDIA H200");
  EXPECT_EQ(SeriesOf(r), (SeriesKey{"gemm", "v4_wgmma", "4096", v1::DTYPE_BF16, "NVIDIA H200"}));
  EXPECT_EQ(Utilization(r), 0);
  r.mutable_roofline()->add_ceilings()->set_utilization(0.73);
  r.mutable_roofline()->add_ceilings()->set_utilization(0.61);  // Datasheet: second.
  EXPECT_DOUBLE_EQ(Utilization(r), 0.73);
}

TEST(ResultColumns, SamplesAreStoredSortedAndComeBackInOrder) {
  const std::vector<double> taken = {5.5, 1.25, 3.0, 1.25, -0.0, 1e300, 2.0};
  const PackedSamples packed = PackSamples(Field(taken));
  EXPECT_EQ(packed.sorted.size(), taken.size() * 8);
  EXPECT_EQ(packed.order.size(), taken.size() * 4);
  EXPECT_EQ(UnpackSorted(packed.sorted), (std::vector<double>{-0.0, 1.25, 1.25, 2.0, 3.0, 5.5, 1e300}));
  EXPECT_EQ(UnpackInOrder(packed.sorted, packed.order), taken);
  const PackedSamples none = PackSamples(Field({}));
  EXPECT_TRUE(UnpackInOrder(none.sorted, none.order).empty());
}

TEST(ResultColumns, AnOrderThatDoesNotFitLeavesTheSamplesSorted) {
  const PackedSamples packed = PackSamples(Field({3, 1, 2}));
  const std::vector<double> sorted = {1, 2, 3};
  EXPECT_EQ(UnpackInOrder(packed.sorted, ""), sorted);                     // Missing.
  EXPECT_EQ(UnpackInOrder(packed.sorted, packed.order.substr(4)), sorted);  // Too short.
  std::string repeated = packed.order;
  repeated.replace(4, 4, packed.order.substr(0, 4));  // An index twice: not a permutation.
  EXPECT_EQ(UnpackInOrder(packed.sorted, repeated), sorted);
}

}  // namespace
}  // namespace kbench::server
