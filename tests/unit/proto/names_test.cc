#include "api/names.h"

#include "gtest/gtest.h"

namespace kbench::api {
namespace {

TEST(Names, DtypeRoundTrip) {
  for (auto d : {v1::DTYPE_F32, v1::DTYPE_BF16, v1::DTYPE_F16, v1::DTYPE_TF32, v1::DTYPE_FP8_E4M3}) {
    auto parsed = ParseDtype(DtypeName(d));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, d);
  }
  EXPECT_FALSE(ParseDtype("int7").ok());
  EXPECT_NE(ParseDtype("int7").status().message().find("int7"), absl::string_view::npos);
}

TEST(Names, Labels) {
  v1::Problem p;
  auto* d = p.add_dims();
  d->set_name("rows");
  d->set_value(8192);
  d = p.add_dims();
  d->set_name("cols");
  d->set_value(4096);
  p.set_dtype(v1::DTYPE_BF16);
  EXPECT_EQ(ShapeLabel(p), "8192x4096");
  EXPECT_EQ(ProblemLabel(p), "rows=8192,cols=4096 bf16");
  EXPECT_EQ(JobStateName(v1::CANCELLED_JOB), "CANCELLED");
  EXPECT_EQ(StatusName(v1::INCORRECT), "INCORRECT");
}

}  // namespace
}  // namespace kbench::api
