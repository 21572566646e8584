// Command-line checks: dashed flag names, unknown flags and bad values, help.
#include "server/service/cli_args.h"

#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "gtest/gtest.h"

ABSL_FLAG(int64_t, test_ttl_ms, 5, "A test flag");
ABSL_FLAG(bool, test_switch, false, "A test bool flag");

namespace kbench::server {
namespace {

std::vector<std::string> Normalize(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  return NormalizeFlagNames(static_cast<int>(argv.size()), argv.data());
}

TEST(CliArgs, DashesInFlagNamesBecomeUnderscores) {
  EXPECT_EQ(Normalize({"prog", "--test-ttl-ms=7", "--db", "./my-file.db", "--", "--not-a-flag"}),
            (std::vector<std::string>{"prog", "--test_ttl_ms=7", "--db", "./my-file.db", "--", "--not-a-flag"}));
  EXPECT_EQ(Normalize({"prog", "--metrics-listen=host-a:0"}),
            (std::vector<std::string>{"prog", "--metrics_listen=host-a:0"}));
}

TEST(CliArgs, ChecksFlagsAndValues) {
  EXPECT_TRUE(CheckArgs({"prog", "--test_ttl_ms=9", "--test_switch"}).ok());
  EXPECT_EQ(absl::GetFlag(FLAGS_test_ttl_ms), 9);
  EXPECT_TRUE(CheckArgs({"prog", "--test_ttl_ms", "11", "--notest_switch"}).ok());
  EXPECT_EQ(absl::GetFlag(FLAGS_test_ttl_ms), 11);

  absl::Status s = CheckArgs({"prog", "--no_such_flag=1"});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("unknown flag --no_such_flag"), absl::string_view::npos) << s;
  s = CheckArgs({"prog", "--test_ttl_ms=soon"});
  EXPECT_NE(s.message().find("bad value 'soon' for --test_ttl_ms"), absl::string_view::npos) << s;
  s = CheckArgs({"prog", "--test_ttl_ms"});
  EXPECT_NE(s.message().find("needs a value"), absl::string_view::npos) << s;
  s = CheckArgs({"prog", "stray"});
  EXPECT_NE(s.message().find("unexpected argument 'stray'"), absl::string_view::npos) << s;
}

TEST(CliArgs, HelpListsTheNamedFlagsWithDashes) {
  EXPECT_TRUE(WantsHelp({"prog", "--help"}));
  EXPECT_TRUE(WantsHelp({"prog", "-h"}));
  EXPECT_FALSE(WantsHelp({"prog", "--test_switch"}));
  const std::string usage = Usage("prog", "Does things.", {"test_ttl_ms", "test_switch"});
  EXPECT_NE(usage.find("--test-ttl-ms (default \"5\")"), std::string::npos) << usage;
  EXPECT_NE(usage.find("A test bool flag"), std::string::npos) << usage;
}

}  // namespace
}  // namespace kbench::server
