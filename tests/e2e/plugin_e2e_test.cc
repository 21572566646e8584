// End to end, the pull-request compare: kbench-client uploads two builds of a kernel library (test
// plugins: the head's cpu_copy does several times the work), the coordinator stores them by hash, a
// CPU worker fetches them and runs one A/B job in its runner, and the client prints the Markdown
// table with the summary on top and exits 1 on the regression. A second compare uploads nothing.
// The verdicts hold on a loaded host. The regression is about fifty times the base's time (8
// dependent multiply-adds per element before the copy, +5000% measured) and the compare counts only
// changes beyond 100% (--threshold 1.0): it reads SLOWER in every A/B job. The unchanged pair is
// statistical: load can hit one side's rounds of one job (+4.6% seen with the default 3% threshold,
// +59% once beside four busy loops and two compilers), so it must read SAME in one of at most four
// A/B jobs: a bounded retry, where a pair with a real change would fail every one.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_split.h"
#include "cluster.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kbench::e2e {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// The verdict cell of the Markdown row of `variant` ("" when there is no such row).
std::string VerdictOf(const std::string& md, const std::string& variant) {
  size_t verdict = 0;  // The column named "verdict" in the header row.
  for (absl::string_view line : absl::StrSplit(md, '\n')) {
    std::vector<std::string> cells = absl::StrSplit(line, '|');
    for (auto& cell : cells) cell = std::string(absl::StripAsciiWhitespace(cell));
    // "| op | variant | shape | dtype | base | head | change | p | runs | ±run | verdict | ...": cells[0] is "".
    if (cells.size() > 1 && cells[1] == "op")
      for (size_t i = 0; i < cells.size(); ++i)
        if (cells[i] == "verdict") verdict = i;
    if (verdict > 0 && cells.size() > verdict && cells[1] == "plugin_probe" && cells[2] == variant)
      return cells[verdict];
  }
  return "";
}

TEST(PluginEndToEnd, CompareTwoPluginBuildsFlagsTheRegression) {
  Cluster c;
  c.StartCoordinator();
  c.StartWorker("a");
  const std::vector<std::string> args = {"compare", "--base-plugin", KBENCH_TEST_PLUGIN_BASE, "--head-plugin",
                                         KBENCH_TEST_PLUGIN_HEAD, "--op", "plugin_probe", "--variant",
                                         "cpu_copy,cpu_same", "--backend", "cpu", "--max-time-ms", "400",
                                         "--min-samples", "12", "--rounds", "4", "--threshold", "1.0", "--format", "md"};
  // Each A/B job: exit 1 on the regression, the regression SLOWER. Returns the unchanged pair's verdict.
  std::vector<std::string> outputs;
  auto compare = [&](const CommandResult& r) {
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    EXPECT_THAT(r.out, StartsWith("### kbench compare: 2 pairs\n\n**"));
    EXPECT_EQ(VerdictOf(r.out, "cpu_copy"), "SLOWER") << r.out;
    outputs.push_back(r.out);
    return VerdictOf(r.out, "cpu_same") == "SAME";
  };
  CommandResult r = c.Client(args);
  bool same = compare(r);
  EXPECT_THAT(r.err, HasSubstr("uploaded"));
  EXPECT_THAT(r.err, HasSubstr("submitted A/B job"));

  CommandResult again = c.Client(args);
  same = compare(again) || same;
  EXPECT_THAT(again.err, HasSubstr("already on the coordinator"));
  EXPECT_THAT(again.err, ::testing::Not(HasSubstr("uploaded)")));

  while (!same && outputs.size() < 4) same = compare(c.Client(args));
  ASSERT_TRUE(same) << "the unchanged pair never read SAME in " << outputs.size() << " A/B jobs; the last:\n"
                    << outputs.back();
  const auto with_same = std::find_if(outputs.begin(), outputs.end(),
                                      [](const std::string& out) { return VerdictOf(out, "cpu_same") == "SAME"; });
  EXPECT_THAT(*with_same, StartsWith("### kbench compare: 2 pairs\n\n**1 slower, 0 faster, 1 unchanged, "));

  // A job naming a plugin the coordinator does not hold is refused before it is queued.
  CommandResult missing = c.Client({"compare", "--base-plugin", "/nonexistent.so", "--op", "plugin_probe"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.err, HasSubstr("--base-plugin: /nonexistent.so: cannot read the file"));
}

}  // namespace
}  // namespace kbench::e2e
