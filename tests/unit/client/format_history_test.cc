// Tests of the history tables on hand-built messages: one table per series with its baseline and
// run-to-run spread, hot and cold apart, the regressed and changed selections.
#include "client/format.h"

#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "csv_parse.h"

namespace kbench::client {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::ParseCsv;

v1::HistoryPoint Point(const std::string& job, const std::string& variant, v1::Verdict verdict, double median_ns,
                       double change) {
  v1::HistoryPoint p;
  p.set_job_id(job);
  p.set_finished_unix_ms(1'700'000'000'123);  // 2023-11-14T22:13:20Z
  p.set_median_ns(median_ns);
  p.set_utilization(0.873);
  p.set_verdict(verdict);
  p.set_change_fraction(change);
  p.set_p_value(0.0123);
  p.set_branch("main");
  p.set_git_sha("0123456789abcdef0123");
  p.set_variant(variant);
  p.set_shape("8192x4096");
  p.set_dtype(v1::DTYPE_BF16);
  p.set_gpu_model("NVIDIA H200");
  p.set_baseline_median_ns(verdict == v1::NO_BASELINE ? 0 : 10'000);
  p.set_series_run_spread(variant == "v5_tma" ? 0.0084 : 0);
  p.set_series_baseline_runs(variant == "v5_tma" ? 4 : 1);
  p.set_cache_mode(v1::COLD);
  p.set_hot_batch(1);
  p.set_backend(v1::BACKEND_CUDA);
  return p;
}

v1::GetHistoryResponse TwoSeries() {
  v1::GetHistoryResponse h;
  *h.add_points() = Point("j-3", "v5_tma", v1::SLOWER, 10'520, 0.052);
  *h.add_points() = Point("j-2", "cpu_naive", v1::FASTER, 9'000, -0.1);
  *h.add_points() = Point("j-1", "v5_tma", v1::NO_BASELINE, 10'000, 0);
  h.set_baseline_median_ns(10'010);
  h.set_baseline_results(4);
  return h;
}

TEST(FormatHistory, HotAndColdOfOneShapeAreTwoSeries) {
  v1::GetHistoryResponse h;
  *h.add_points() = Point("j-hot", "v5_tma", v1::SAME, 5'000, 0);
  h.mutable_points(0)->set_cache_mode(v1::HOT);
  h.mutable_points(0)->set_hot_batch(20);
  *h.add_points() = Point("j-cold", "v5_tma", v1::SAME, 10'000, 0);
  const std::string out = FormatHistory("rmsnorm", h, Format::kTable);
  EXPECT_THAT(out, HasSubstr("rmsnorm v5_tma 8192x4096 bf16 hot batch 20 on NVIDIA H200 (cuda): baseline"));
  EXPECT_THAT(out, HasSubstr("rmsnorm v5_tma 8192x4096 bf16 cold on NVIDIA H200 (cuda): baseline"));
  auto csv = ParseCsv(FormatHistory("rmsnorm", h, Format::kCsv));
  ASSERT_EQ(csv.size(), 3u);
  const std::vector<std::string>& header = csv[0];
  ASSERT_GE(header.size(), 3u);
  EXPECT_EQ(header[header.size() - 3], "cache_mode");
  EXPECT_EQ(csv[1][header.size() - 3], "hot");
  EXPECT_EQ(csv[1][header.size() - 2], "20");
  EXPECT_EQ(csv[1][header.size() - 1], "cuda");
  EXPECT_EQ(csv[2][header.size() - 3], "cold");
}

TEST(FormatHistory, OneTablePerSeriesWithItsBaseline) {
  std::string out = FormatHistory("rmsnorm", TwoSeries(), Format::kTable);
  std::vector<std::string> lines = absl::StrSplit(out, '\n', absl::SkipEmpty());
  // Series in order of their newest point; the newest series carries the response's current baseline.
  ASSERT_EQ(lines.size(), 9u) << out;
  // The series' run-to-run spread beside its medians: in its header and on each point.
  EXPECT_EQ(lines[0],
            "rmsnorm v5_tma 8192x4096 bf16 cold on NVIDIA H200 (cuda): baseline 10.0 us (4 main-branch runs), run-to-run ±0.84% "
            "over 4 runs");
  EXPECT_THAT(lines[1], HasSubstr("finished (UTC)"));
  EXPECT_THAT(lines[1], HasSubstr("±run"));
  EXPECT_THAT(lines[3], HasSubstr("±0.84%"));
  EXPECT_THAT(lines[1], HasSubstr("p-value"));
  EXPECT_THAT(lines[3], HasSubstr("j-3"));
  EXPECT_THAT(lines[3], HasSubstr("2023-11-14T22:13:20Z"));
  EXPECT_THAT(lines[3], HasSubstr("10.5 us"));
  EXPECT_THAT(lines[3], HasSubstr("87.3%"));
  EXPECT_THAT(lines[3], HasSubstr("SLOWER"));
  EXPECT_THAT(lines[3], HasSubstr("+5.20%"));
  EXPECT_THAT(lines[3], HasSubstr("0.012"));
  EXPECT_THAT(lines[3], HasSubstr("main"));
  EXPECT_THAT(lines[3], HasSubstr("0123456789ab"));
  EXPECT_THAT(lines[3], Not(HasSubstr("0123456789abc")));  // The sha is shortened in a table.
  EXPECT_THAT(lines[4], HasSubstr("j-1"));
  EXPECT_THAT(lines[4], HasSubstr("NO_BASELINE"));
  EXPECT_EQ(lines[5],
            "rmsnorm cpu_naive 8192x4096 bf16 cold on NVIDIA H200 (cuda): baseline 10.0 us, run-to-run spread unknown "
            "(fewer than "
            "2 runs)");
  EXPECT_THAT(lines[8], HasSubstr("j-2"));
  EXPECT_THAT(lines[8], HasSubstr("-10.0%"));

  std::string md = FormatHistory("rmsnorm", TwoSeries(), Format::kMarkdown);
  EXPECT_THAT(md, HasSubstr("**rmsnorm v5_tma 8192x4096 bf16 cold on NVIDIA H200 (cuda): baseline"));
  EXPECT_THAT(md, HasSubstr("| verdict |"));

  auto csv = ParseCsv(FormatHistory("rmsnorm", TwoSeries(), Format::kCsv));
  ASSERT_EQ(csv.size(), 4u);
  EXPECT_EQ(csv[0][0], "op");
  EXPECT_EQ(csv[1][0], "rmsnorm");
  EXPECT_EQ(csv[1][1], "v5_tma");
  EXPECT_EQ(csv[1][5], "j-3");
  EXPECT_EQ(csv[1][6], "1700000000123");
  EXPECT_EQ(csv[1][7], "10520");
  EXPECT_EQ(csv[1][9], "SLOWER");
  EXPECT_EQ(csv[1][13], "0123456789abcdef0123");
  EXPECT_EQ(csv[0][15], "series_run_spread");
  EXPECT_EQ(csv[1][15], "0.0084");
  EXPECT_EQ(csv[1][16], "4");
  EXPECT_EQ(csv[2][5], "j-1");  // Grouped by series: the older v5_tma point before cpu_naive.
  EXPECT_EQ(csv[3][5], "j-2");

  std::string json = FormatHistory("rmsnorm", TwoSeries(), Format::kJson);
  v1::GetHistoryResponse back;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(json, &back).ok()) << json;
  EXPECT_EQ(back.points_size(), 3);
  EXPECT_EQ(back.baseline_results(), 4);
}

TEST(FormatHistory, RegressedSeriesAreThoseWhoseNewestPointIsSlower) {
  EXPECT_EQ(RegressedSeries("rmsnorm", TwoSeries()),
            std::vector<std::string>{"rmsnorm v5_tma 8192x4096 bf16 cold on NVIDIA H200 (cuda)"});
  v1::GetHistoryResponse fixed = TwoSeries();
  // An older SLOWER point does not count once a newer one is not.
  *fixed.mutable_points(2) = fixed.points(0);
  fixed.mutable_points(0)->set_verdict(v1::SAME);
  EXPECT_TRUE(RegressedSeries("rmsnorm", fixed).empty());
  EXPECT_TRUE(RegressedSeries("rmsnorm", {}).empty());
}

TEST(FormatHistory, OnlyChangedKeepsTheSeriesWhoseNewestPointChanged) {
  v1::GetHistoryResponse h = TwoSeries();
  v1::GetHistoryResponse changed = OnlyChanged(h);
  EXPECT_EQ(changed.points_size(), 3);  // v5_tma (newest SLOWER, with its older point) and cpu_naive (FASTER).
  EXPECT_EQ(changed.baseline_results(), 4);
  h.mutable_points(0)->set_verdict(v1::SAME);
  h.mutable_points(1)->set_verdict(v1::AMBIGUOUS);
  EXPECT_EQ(OnlyChanged(h).points_size(), 0);
  h.mutable_points(1)->set_verdict(v1::FASTER);
  changed = OnlyChanged(h);
  ASSERT_EQ(changed.points_size(), 1);
  EXPECT_EQ(changed.points(0).job_id(), "j-2");
  EXPECT_EQ(changed.baseline_results(), 0);  // The response's baseline was the dropped series'.
}

}  // namespace
}  // namespace kbench::client
