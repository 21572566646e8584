#include "api/shape.h"

#include "api/names.h"
#include "gtest/gtest.h"

namespace kbench::api {
namespace {

TEST(ParseShape, Named) {
  auto p = ParseShape("M=1, N=4096,K=14336");
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->dims_size(), 3);
  EXPECT_EQ(p->dims(0).name(), "M");
  EXPECT_EQ(p->dims(0).value(), 1);
  EXPECT_EQ(p->dims(2).name(), "K");
  EXPECT_EQ(p->dims(2).value(), 14336);
}

TEST(ParseShape, Positional) {
  auto p = ParseShape("8192x4096");
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->dims_size(), 2);
  EXPECT_TRUE(p->dims(0).name().empty());
  EXPECT_EQ(p->dims(0).value(), 8192);
  EXPECT_EQ(p->dims(1).value(), 4096);
}

// The op's flags follow the dims as bare names, in either form.
TEST(ParseShape, FlagsFollowTheDims) {
  auto p = ParseShape("8192x32x8x128, gptj");
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->dims_size(), 4);
  EXPECT_TRUE(p->dims(3).name().empty());
  ASSERT_EQ(p->flags_size(), 1);
  EXPECT_EQ(p->flags(0), "gptj");
  p = ParseShape("B=1,N_q=4096,causal,d=128");
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->dims_size(), 3);
  EXPECT_EQ(p->dims(2).name(), "d");
  ASSERT_EQ(p->flags_size(), 1);
  EXPECT_EQ(p->flags(0), "causal");
  p = ParseShape("8192,zero_rows,outliers");  // one positional dim, two flags
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->dims_size(), 1);
  EXPECT_EQ(p->flags_size(), 2);
}

TEST(ParseShape, ShapeArgumentReadsBackAsTheSameProblem) {
  for (const char* text : {"8192x32x8x128,gptj", "4x4", "7,zero_rows,outliers"}) {
    auto p = ParseShape(text);
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_EQ(ShapeArgument(*p), text);
  }
}

TEST(ParseShape, RejectsMalformed) {
  for (const char* bad : {"", "abc", "8192x", "x4096", "M=", "=4", "M=4,M=5", "M=4;N=5", "4096x99999999999999999999",
                          "1M=4", "M=4.5", "causal", "causal,M=4", "8x16,M=4", "M=4,8x16", "8x16,2", "8x16,gptj,gptj",
                          "M=4,1flag", "M=4,"}) {
    auto p = ParseShape(bad);
    EXPECT_FALSE(p.ok()) << bad;
    if (!p.ok()) {
      EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument) << bad;
      EXPECT_NE(p.status().message().find("malformed shape"), absl::string_view::npos) << p.status();
    }
  }
}

// kbench-bench --shape: ';' separates shapes, ',' the dims of one: a named 3-dim shape is one shape.
TEST(ParseShapeList, CommasStayInsideOneShape) {
  auto one = ParseShapeList("M=4096,N=4096,K=4096");
  ASSERT_TRUE(one.ok()) << one.status();
  ASSERT_EQ(one->size(), 1u);
  ASSERT_EQ((*one)[0].dims_size(), 3);
  EXPECT_EQ((*one)[0].dims(2).name(), "K");

  auto two = ParseShapeList("rows=8192,cols=4096; 8x16;");
  ASSERT_TRUE(two.ok()) << two.status();
  ASSERT_EQ(two->size(), 2u);
  EXPECT_EQ((*two)[0].dims(1).value(), 4096);
  EXPECT_EQ((*two)[1].dims(0).value(), 8);
  EXPECT_TRUE((*two)[1].dims(0).name().empty());

  for (const char* bad : {"", " ; ", "M=4096;N=", "8x16;abc"}) EXPECT_FALSE(ParseShapeList(bad).ok()) << bad;
}

TEST(ParseShape, NegativeParsesButValidationRejects) {
  auto p = ParseShape("M=-3,N=2");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->dims(0).value(), -3);
}

}  // namespace
}  // namespace kbench::api
