// Tests of `kbench-client compare` on two small result files written to a temp dir: verdicts from
// synthetic samples, the Markdown report, exit statuses and usage errors.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "client/commands.h"
#include "client/format.h"
#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"

namespace kbench::client {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

v1::Result MakeResult(const std::string& variant, int64_t cols, const std::vector<double>& samples,
                      v1::ResultStatus status = v1::OK, double utilization = 0.5) {
  v1::Result r;
  r.set_op("rmsnorm");
  r.set_variant(variant);
  auto* d = r.mutable_problem()->add_dims();
  d->set_name("rows");
  d->set_value(256);
  d = r.mutable_problem()->add_dims();
  d->set_name("cols");
  d->set_value(cols);
  r.mutable_problem()->set_dtype(v1::DTYPE_BF16);
  r.set_status(status);
  for (double s : samples) r.mutable_timing()->add_samples_ns(s);
  auto* c = r.mutable_roofline()->add_ceilings();
  c->set_source("calibrated");
  c->set_utilization(utilization);
  r.mutable_correctness()->set_passed(status == v1::OK);
  return r;
}

// `n` samples around `center`, spread over +-`spread` (deterministic, interleaved order).
std::vector<double> Samples(double center, double spread, int n = 20) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(center + spread * (2.0 * ((i * 7) % n) / (n - 1) - 1.0));
  return v;
}

std::string WriteJson(const std::string& name, const std::vector<v1::Result>& results) {
  const std::string path = (std::filesystem::path(::testing::TempDir()) / name).string();
  std::vector<const google::protobuf::Message*> messages;
  for (const auto& r : results) messages.push_back(&r);
  std::ofstream(path) << ToJsonArray(messages);
  return path;
}

struct Outcome {
  int exit;
  std::string out, err;
};

Outcome Compare(std::vector<std::string> args) {
  std::ostringstream out, err;
  Io io{out, err};
  args.insert(args.begin(), "compare");
  const int exit = RunCli(args, io);
  return {exit, out.str(), err.str()};
}

class CompareTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = WriteJson("compare_base.json", {
                                               MakeResult("slow", 1024, Samples(1000, 5)),
                                               MakeResult("same", 1024, Samples(2000, 20)),
                                               MakeResult("noisy", 1024, Samples(3000, 900)),
                                               MakeResult("broken", 1024, Samples(500, 5)),
                                               MakeResult("gone", 1024, Samples(500, 5)),
                                           });
    head_ = WriteJson("compare_head.json", {
                                               MakeResult("slow", 1024, Samples(1100, 5), v1::OK, 0.45),
                                               MakeResult("same", 1024, Samples(2000, 20)),
                                               MakeResult("noisy", 1024, Samples(3150, 900)),
                                               MakeResult("broken", 1024, Samples(500, 5), v1::INCORRECT),
                                               MakeResult("new", 1024, Samples(500, 5)),
                                           });
  }
  std::string base_, head_;
};

TEST_F(CompareTest, MarkdownHasSummaryAndARowPerPairAndExits1) {
  const Outcome r = Compare({"--base", base_, "--head", head_, "--format", "md"});
  EXPECT_EQ(r.exit, 1) << r.err;
  EXPECT_THAT(r.out, HasSubstr("kbench compare"));
  EXPECT_THAT(r.out, HasSubstr("1 slower, 0 faster, 1 unchanged, 1 ambiguous, 1 newly incorrect"));
  std::vector<std::string> rows;
  for (absl::string_view line : absl::StrSplit(r.out, '\n'))
    if (absl::StartsWith(line, "| rmsnorm")) rows.emplace_back(line);
  ASSERT_EQ(rows.size(), 4u) << r.out;
  EXPECT_THAT(rows[0], HasSubstr("| slow |"));
  EXPECT_THAT(rows[0], HasSubstr("SLOWER"));
  EXPECT_THAT(rows[0], HasSubstr("+10.0%"));
  EXPECT_THAT(rows[0], HasSubstr("50.0%"));  // Utilization before ...
  EXPECT_THAT(rows[0], HasSubstr("45.0%"));  // ... and after.
  EXPECT_THAT(rows[1], HasSubstr("SAME"));
  EXPECT_THAT(rows[2], HasSubstr("AMBIGUOUS"));
  EXPECT_THAT(rows[2], HasSubstr("+5.00%"));
  EXPECT_THAT(rows[3], HasSubstr("| ok | INCORRECT |"));
  EXPECT_THAT(r.out, HasSubstr("Only in base:\n- rmsnorm gone 256x1024 bf16"));
  EXPECT_THAT(r.out, HasSubstr("Only in head:\n- rmsnorm new 256x1024 bf16"));
}

TEST_F(CompareTest, NoRegressionExits0) {
  const std::string base = WriteJson("compare_ok_base.json", {MakeResult("same", 1024, Samples(2000, 20)),
                                                              MakeResult("fast", 1024, Samples(1000, 5))});
  const std::string head = WriteJson("compare_ok_head.json", {MakeResult("same", 1024, Samples(2000, 20)),
                                                              MakeResult("fast", 1024, Samples(800, 5))});
  const Outcome r = Compare({"--base", base, "--head", head});
  EXPECT_EQ(r.exit, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("0 slower, 1 faster, 1 unchanged, 0 ambiguous\n"));
  EXPECT_THAT(r.out, Not(HasSubstr("newly")));
}

TEST_F(CompareTest, ThresholdDecidesBetweenSameAndSlower) {
  // A 10% change under a 15% threshold is SAME even though significant: its interval lies within.
  // The noisy pair (+5%, within-run RSE ~5%) is not: its interval reaches past +15%.
  const Outcome r = Compare({"--base", base_, "--head", head_, "--threshold", "0.15"});
  EXPECT_THAT(r.out, HasSubstr("0 slower, 0 faster, 2 unchanged, 1 ambiguous, 1 newly incorrect"));
  EXPECT_THAT(Compare({"--base", base_, "--head", head_, "--threshold", "0.25"}).out,
              HasSubstr("0 slower, 0 faster, 3 unchanged, 0 ambiguous, 1 newly incorrect"));
  EXPECT_EQ(r.exit, 1);  // Still newly incorrect.
}

TEST_F(CompareTest, TooFewSamplesIsAmbiguous) {
  const std::string base = WriteJson("compare_few_base.json", {MakeResult("k", 64, {100, 101, 102, 103})});
  const std::string head = WriteJson("compare_few_head.json", {MakeResult("k", 64, {200, 201, 202, 203})});
  const Outcome r = Compare({"--base", base, "--head", head});
  EXPECT_EQ(r.exit, 0);
  EXPECT_THAT(r.out, HasSubstr("0 slower, 0 faster, 0 unchanged, 1 ambiguous"));
}

TEST_F(CompareTest, JsonIsParsableWithVerdicts) {
  const Outcome r = Compare({"--base", base_, "--head", head_, "--format", "json"});
  EXPECT_EQ(r.exit, 1);
  google::protobuf::Struct s;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &s).ok()) << r.out;
  const auto& pairs = s.fields().at("pairs").list_value().values();
  ASSERT_EQ(pairs.size(), 4);
  EXPECT_EQ(pairs[0].struct_value().fields().at("verdict").string_value(), "SLOWER");
  EXPECT_NEAR(pairs[0].struct_value().fields().at("change_fraction").number_value(), 0.10, 1e-9);
  EXPECT_EQ(s.fields().at("summary").struct_value().fields().at("newly_incorrect").number_value(), 1);
  EXPECT_EQ(s.fields().at("only_in_head").list_value().values(0).string_value(), "rmsnorm new 256x1024 bf16");
}

TEST_F(CompareTest, RepeatedResultsOfAKeyAreRunsOfOnePair) {
  // Three jobs' results per side, concatenated: one pair with three runs a side, the spread measured.
  std::vector<v1::Result> base, head;
  for (double m : {1000.0, 1010.0, 990.0}) base.push_back(MakeResult("k", 64, Samples(m, 0.5)));
  for (double m : {1060.0, 1070.0, 1050.0}) head.push_back(MakeResult("k", 64, Samples(m, 0.5)));
  const Outcome r = Compare({"--base", WriteJson("compare_runs_base.json", base), "--head",
                             WriteJson("compare_runs_head.json", head), "--format", "json"});
  google::protobuf::Struct s;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &s).ok()) << r.out;
  const auto& pairs = s.fields().at("pairs").list_value().values();
  ASSERT_EQ(pairs.size(), 1);
  const auto& f = pairs[0].struct_value().fields();
  EXPECT_EQ(f.at("base_runs").number_value(), 3);
  EXPECT_EQ(f.at("head_runs").number_value(), 3);
  EXPECT_NEAR(f.at("run_spread").number_value(), 0.01, 0.002);  // The runs' spread, not the samples'.
  EXPECT_EQ(f.at("verdict").string_value(), "SLOWER");
  EXPECT_EQ(r.exit, 1);
}

v1::Result Blocks(const std::vector<double>& block_medians, v1::AbSide side) {
  std::vector<double> samples;
  for (double m : block_medians)
    for (double x : Samples(m, 0.5, 10)) samples.push_back(x);
  v1::Result r = MakeResult("k", 64, samples);
  r.set_ab_side(side);
  for (size_t i = 0; i < block_medians.size(); ++i) r.mutable_timing()->add_block_sample_counts(10);
  return r;
}

TEST(AbBlocks, EachBlockIsARun) {
  // Head blocks alternate 1000 / 1100 ns: as one pooled run it would look 5% slower for sure; as four
  // runs their spread says the A/B cannot tell.
  const v1::Result base = Blocks({1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000}, v1::AB_BASE);
  v1::Result head = Blocks({1000, 1100, 1000, 1100}, v1::AB_HEAD);
  EXPECT_STREQ(JudgePair(base, head, {}), "AMBIGUOUS");
  head.mutable_timing()->clear_block_sample_counts();
  EXPECT_STREQ(JudgePair(base, head, {}), "SLOWER");
  // Consistent blocks 10% slower: SLOWER.
  EXPECT_STREQ(JudgePair(base, Blocks({1100, 1098, 1102, 1100}, v1::AB_HEAD), {}), "SLOWER");
  // Blocks of 3 samples (the least a block takes) are runs too: the side's 12 samples count.
  std::vector<double> small;
  for (double m : {1100.0, 1099.0, 1101.0, 1100.0})
    for (double d : {-0.5, 0.0, 0.5}) small.push_back(m + d);
  v1::Result three = MakeResult("k", 64, small);
  for (int i = 0; i < 4; ++i) three.mutable_timing()->add_block_sample_counts(3);
  EXPECT_STREQ(JudgePair(base, three, {}), "SLOWER");
  // Block counts that do not add up to the samples: the result is one run.
  v1::Result odd = Blocks({1000, 1100, 1000, 1100}, v1::AB_HEAD);
  odd.mutable_timing()->add_block_sample_counts(3);
  EXPECT_STREQ(JudgePair(base, odd, {}), "SLOWER");
}

TEST_F(CompareTest, UsageErrorsExit2) {
  EXPECT_EQ(Compare({"--base", base_}).exit, 2);
  const Outcome missing = Compare({"--base", base_, "--head", "/nonexistent/head.json"});
  EXPECT_EQ(missing.exit, 2);
  EXPECT_THAT(missing.err, HasSubstr("/nonexistent/head.json"));
  const std::string bad = (std::filesystem::path(::testing::TempDir()) / "compare_bad.json").string();
  std::ofstream(bad) << "[{\"op\": 3,";
  const Outcome unparsable = Compare({"--base", bad, "--head", head_});
  EXPECT_EQ(unparsable.exit, 2);
  EXPECT_THAT(unparsable.err, HasSubstr("compare_bad.json"));
  EXPECT_EQ(Compare({"--base", base_, "--head", head_, "--alpha", "2"}).exit, 2);
}

// A CI gate must not pass when nothing was measured: a side without results exits 2, saying why.
TEST_F(CompareTest, ASideWithoutResultsExits2) {
  const auto dir = std::filesystem::path(::testing::TempDir());
  int k = 0;
  for (const char* text : {"[]", "[null]", "[{}]", "  [ ]\n"}) {
    const std::string empty = (dir / absl::StrCat("compare_empty", k++, ".json")).string();
    std::ofstream(empty) << text;
    for (bool empty_is_head : {true, false}) {
      const Outcome o = empty_is_head ? Compare({"--base", base_, "--head", empty})
                                      : Compare({"--base", empty, "--head", head_});
      EXPECT_EQ(o.exit, 2) << text << (empty_is_head ? " as head" : " as base");
      EXPECT_THAT(o.err, HasSubstr("nothing to compare")) << text;
      EXPECT_THAT(o.err, HasSubstr(empty)) << text;
      EXPECT_EQ(o.out, "") << text;
    }
  }
}

}  // namespace
}  // namespace kbench::client
