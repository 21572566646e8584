#include "api/grid_expr.h"

#include <map>

#include "gtest/gtest.h"

namespace kbench::api {
namespace {

int64_t Eval(const std::string& text, std::map<std::string, int64_t> vars = {}) {
  auto e = GridExpr::Parse(text);
  EXPECT_TRUE(e.ok()) << text << ": " << e.status();
  if (!e.ok()) return -999;
  auto v = e->Evaluate([&](absl::string_view n) -> std::optional<int64_t> {
    auto it = vars.find(std::string(n));
    if (it == vars.end()) return std::nullopt;
    return it->second;
  });
  EXPECT_TRUE(v.ok()) << text << ": " << v.status();
  return v.ok() ? *v : -999;
}

TEST(GridExpr, ArithmeticPrecedenceAndFunctions) {
  EXPECT_EQ(Eval("1 + 2 * 3"), 7);
  EXPECT_EQ(Eval("(1 + 2) * 3"), 9);
  EXPECT_EQ(Eval("17 / 5"), 3);
  EXPECT_EQ(Eval("17 % 5"), 2);
  EXPECT_EQ(Eval("-3 + 10"), 7);
  EXPECT_EQ(Eval("cdiv(N, block_x)", {{"N", 1000}, {"block_x", 256}}), 4);
  EXPECT_EQ(Eval("cdiv(N, block_x)", {{"N", 1024}, {"block_x", 256}}), 4);
  EXPECT_EQ(Eval("cdiv(0, 256)"), 0);
  EXPECT_EQ(Eval("min(rows, 65535)", {{"rows", 100000}}), 65535);
  EXPECT_EQ(Eval("max(1, cdiv(rows * cols, 4 * block_x))", {{"rows", 3}, {"cols", 7}, {"block_x", 128}}), 1);
}

TEST(GridExpr, NamesAreReported) {
  auto e = GridExpr::Parse("cdiv(N, block_x) + N * rows");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->Names(), (std::vector<std::string>{"N", "block_x", "rows"}));
}

TEST(GridExpr, SyntaxErrorsSayWhere) {
  for (const char* bad : {"", "1 +", "(1", "cdiv(1)", "foo(1, 2)", "1 $ 2", "N N", "99999999999999999999"}) {
    auto e = GridExpr::Parse(bad);
    EXPECT_FALSE(e.ok()) << bad;
    EXPECT_EQ(e.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_NE(GridExpr::Parse("foo(1, 2)").status().message().find("unknown function 'foo'"), absl::string_view::npos);
  EXPECT_NE(GridExpr::Parse("(1").status().message().find("expected ')'"), absl::string_view::npos);
  EXPECT_FALSE(GridExpr::Parse(std::string(300, '1')).ok());
}

TEST(GridExpr, EvaluationErrorsAreErrorsNotWrappedValues) {
  auto lookup = [](absl::string_view n) -> std::optional<int64_t> {
    if (n == "big") return int64_t{1} << 62;
    if (n == "zero") return 0;
    return std::nullopt;
  };
  EXPECT_NE(GridExpr::Parse("1 / zero")->Evaluate(lookup).status().message().find("division by zero"), std::string::npos);
  EXPECT_NE(GridExpr::Parse("cdiv(1, zero)")->Evaluate(lookup).status().message().find("division by zero"), std::string::npos);
  EXPECT_NE(GridExpr::Parse("big * 4")->Evaluate(lookup).status().message().find("overflow"), std::string::npos);
  EXPECT_NE(GridExpr::Parse("M + 1")->Evaluate(lookup).status().message().find("unknown name 'M'"), std::string::npos);
}

TEST(GridExpr, SplitsOnTopLevelCommasOnly) {
  EXPECT_EQ(SplitTopLevelCommas("cdiv(N, 256), 1"), (std::vector<std::string>{"cdiv(N, 256)", "1"}));
  EXPECT_EQ(SplitTopLevelCommas("rows"), (std::vector<std::string>{"rows"}));
  EXPECT_EQ(SplitTopLevelCommas("a, min(b, c), d"), (std::vector<std::string>{"a", "min(b, c)", "d"}));
}

}  // namespace
}  // namespace kbench::api
