// Tests of the subcommand flag parser: value forms, repeats, comma lists, errors and help text.
#include "client/args.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kbench::client {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

CommandSpec Spec() {
  CommandSpec s;
  s.name = "submit";
  s.positional = "[ID...]";
  s.summary = "Submit things.";
  s.flags = {
      {"op", "NAME", "Op to run"},   {"variant", "V", "Variant", false, true},
      {"shape", "S", "Shape", true}, {"wait", "", "Wait"},
      {"seed", "N", "Seed"},         {"noise", "RSE", "Noise"},
  };
  s.examples = {"kbench-client submit --op rmsnorm"};
  return s;
}

TEST(Args, BothValueForms) {
  auto a = ParseArgs(Spec(), {"--op", "rmsnorm", "--seed=7"});
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->Get("op"), "rmsnorm");
  EXPECT_EQ(*a->GetInt("seed", 0), 7);
  EXPECT_FALSE(a->Has("wait"));
  EXPECT_EQ(a->Get("noise", "0.005"), "0.005");
}

TEST(Args, RepeatableAndCommaLists) {
  auto a = ParseArgs(Spec(), {"--variant", "a,b", "--variant=c", "--shape", "M=1,N=2", "--shape", "3x4"});
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_THAT(a->GetAll("variant"), ElementsAre("a", "b", "c"));
  // --shape is repeatable but not a comma list: a named shape contains commas.
  EXPECT_THAT(a->GetAll("shape"), ElementsAre("M=1,N=2", "3x4"));
  EXPECT_TRUE(a->GetAll("op").empty());
}

TEST(Args, BooleansAndPositionals) {
  auto a = ParseArgs(Spec(), {"j-1", "--wait", "j-2", "--", "--not-a-flag"});
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_TRUE(a->GetBool("wait"));
  EXPECT_THAT(a->positional, ElementsAre("j-1", "j-2", "--not-a-flag"));
  auto off = ParseArgs(Spec(), {"--wait=false"});
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE(off->GetBool("wait"));
  EXPECT_FALSE(ParseArgs(Spec(), {"--wait=maybe"}).ok());
}

TEST(Args, Help) {
  auto a = ParseArgs(Spec(), {"--op", "x", "-h"});
  ASSERT_TRUE(a.ok());
  EXPECT_TRUE(a->help);
}

TEST(Args, Errors) {
  auto unknown = ParseArgs(Spec(), {"--varaint", "x"});
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(std::string(unknown.status().message()), HasSubstr("unknown flag --varaint"));
  EXPECT_THAT(std::string(unknown.status().message()), HasSubstr("did you mean --variant?"));
  EXPECT_THAT(std::string(ParseArgs(Spec(), {"--bogus"}).status().message()), Not(HasSubstr("did you mean")));

  auto missing = ParseArgs(Spec(), {"--op"});
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("--op: missing value NAME"));

  auto twice = ParseArgs(Spec(), {"--op", "a", "--op", "b"});
  ASSERT_FALSE(twice.ok());
  EXPECT_THAT(std::string(twice.status().message()), HasSubstr("--op: given more than once"));

  EXPECT_FALSE(ParseArgs(Spec(), {"-x"}).ok());
  EXPECT_FALSE(ParseArgs(Spec(), {"--variant", "a,,b"}).ok());

  CommandSpec no_positional = Spec();
  no_positional.positional.clear();
  auto extra = ParseArgs(no_positional, {"stray"});
  ASSERT_FALSE(extra.ok());
  EXPECT_THAT(std::string(extra.status().message()), HasSubstr("unexpected argument 'stray'"));
}

TEST(Args, NumericAccessorsNameTheFlag) {
  auto a = ParseArgs(Spec(), {"--seed", "12x", "--noise", "abc"});
  ASSERT_TRUE(a.ok());
  EXPECT_THAT(std::string(a->GetInt("seed", 0).status().message()), HasSubstr("--seed"));
  EXPECT_THAT(std::string(a->GetDouble("noise", 0).status().message()), HasSubstr("--noise"));
  auto b = ParseArgs(Spec(), {"--noise", "0.25"});
  EXPECT_DOUBLE_EQ(*b->GetDouble("noise", 0), 0.25);
}

TEST(Args, UsageListsEveryFlagAndExample) {
  std::string u = Usage("kbench-client", Spec());
  EXPECT_THAT(u, HasSubstr("Usage: kbench-client submit [flags] [ID...]"));
  for (const auto& f : Spec().flags) EXPECT_THAT(u, HasSubstr("--" + f.name)) << f.name;
  EXPECT_THAT(u, HasSubstr("--variant V"));
  EXPECT_THAT(u, HasSubstr("comma-separated"));
  EXPECT_THAT(u, HasSubstr("--help"));
  EXPECT_THAT(u, HasSubstr("kbench-client submit --op rmsnorm"));
}

}  // namespace
}  // namespace kbench::client
