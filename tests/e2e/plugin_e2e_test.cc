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
  // Each A/B job: the regression (head ~90x slower) never reads SAME or FASTER, the unchanged pair
  // never SLOWER or FASTER, and the exit code follows the regression's verdict (1 when SLOWER). On
  // a loaded 2-core host one job's run-to-run spread can swamp even 90x (AMBIGUOUS), so the
  // statistical properties are asked of at most four jobs: one where the regression reads SLOWER and
  // one where the unchanged pair reads SAME. A rule that cannot flag the regression, or that flags
  // the unchanged pair, fails here whatever the machine's load.
  std::vector<std::string> outputs;
  bool slower = false, same = false;
  auto compare = [&](const CommandResult& r) {
    EXPECT_THAT(r.out, StartsWith("### kbench compare: 2 pairs\n\n**"));
    const std::string copy = VerdictOf(r.out, "cpu_copy"), unchanged = VerdictOf(r.out, "cpu_same");
    EXPECT_TRUE(copy == "SLOWER" || copy == "AMBIGUOUS") << r.out;
    EXPECT_TRUE(unchanged == "SAME" || unchanged == "AMBIGUOUS") << r.out;
    EXPECT_EQ(r.exit_code, copy == "SLOWER" ? 1 : 0) << r.out << r.err;
    if (copy == "SLOWER" && unchanged == "SAME")
      EXPECT_THAT(r.out, StartsWith("### kbench compare: 2 pairs\n\n**1 slower, 0 faster, 1 unchanged, "));
    slower = slower || copy == "SLOWER";
    same = same || unchanged == "SAME";
    outputs.push_back(r.out);
  };
  CommandResult r = c.Client(args);
  compare(r);
  EXPECT_THAT(r.err, HasSubstr("uploaded"));
  EXPECT_THAT(r.err, HasSubstr("submitted A/B job"));

  CommandResult again = c.Client(args);
  compare(again);
  EXPECT_THAT(again.err, HasSubstr("already on the coordinator"));
  EXPECT_THAT(again.err, ::testing::Not(HasSubstr("uploaded)")));

  while (!(slower && same) && outputs.size() < 4) compare(c.Client(args));
  EXPECT_TRUE(slower) << "the regression never read SLOWER in " << outputs.size() << " A/B jobs; the last:\n"
                      << outputs.back();
  EXPECT_TRUE(same) << "the unchanged pair never read SAME in " << outputs.size() << " A/B jobs; the last:\n"
                    << outputs.back();

  // A job naming a plugin the coordinator does not hold is refused before it is queued.
  CommandResult missing = c.Client({"compare", "--base-plugin", "/nonexistent.so", "--op", "plugin_probe"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.err, HasSubstr("--base-plugin: /nonexistent.so: cannot read the file"));
}

}  // namespace
}  // namespace kbench::e2e
