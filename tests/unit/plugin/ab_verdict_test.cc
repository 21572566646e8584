// The A/B verdict on synthetic sample sets (the one verdict of every compare), and the report of an
// A/B job's results paired by ab_pair, with its exit status.
#include <random>

#include "client/commands.h"
#include "client/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kbench::client {
namespace {

using ::testing::HasSubstr;

v1::Result Side(const std::vector<double>& samples, v1::AbSide side, int pair, const std::string& variant = "v") {
  v1::Result r;
  r.set_op("rmsnorm");
  r.set_variant(variant);
  r.mutable_problem()->set_dtype(v1::DTYPE_F32);
  auto* d = r.mutable_problem()->add_dims();
  d->set_name("rows");
  d->set_value(64);
  r.set_status(v1::OK);
  r.set_ab_side(side);
  r.set_ab_pair(pair);
  std::vector<double> sorted = samples;
  std::sort(sorted.begin(), sorted.end());
  r.mutable_timing()->set_median_ns(sorted[sorted.size() / 2]);
  for (double x : samples) r.mutable_timing()->add_samples_ns(x);
  return r;
}

std::vector<double> Noisy(double center, double spread, int n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-spread, spread);
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(center + u(rng));
  return v;
}

TEST(AbVerdict, ClearSlowdownIsSlowerAndSpeedupFaster) {
  const auto base = Side(Noisy(100, 1, 40, 1), v1::AB_BASE, 0);
  const auto head = Side(Noisy(120, 1, 40, 2), v1::AB_HEAD, 0);
  EXPECT_STREQ(JudgePair(base, head, {}), "SLOWER");
  EXPECT_STREQ(JudgePair(head, base, {}), "FASTER");
}

TEST(AbVerdict, IdenticalDistributionsAreSame) {
  EXPECT_STREQ(JudgePair(Side(Noisy(100, 1, 40, 3), v1::AB_BASE, 0), Side(Noisy(100, 1, 40, 4), v1::AB_HEAD, 0), {}),
               "SAME");
}

TEST(AbVerdict, OverlappingNoiseBeyondTheThresholdIsAmbiguous) {
  // Medians 10% apart, but the spread swamps it on 6 samples a side: no verdict, never a coin flip.
  const auto base = Side({60, 140, 90, 130, 70, 110}, v1::AB_BASE, 0);
  const auto head = Side({150, 66, 99, 143, 77, 121}, v1::AB_HEAD, 0);
  EXPECT_STREQ(JudgePair(base, head, {}), "AMBIGUOUS");
  // Too few samples to test at all: ambiguous too, however large the change.
  EXPECT_STREQ(JudgePair(Side({100, 100}, v1::AB_BASE, 0), Side({200, 200}, v1::AB_HEAD, 0), {}), "AMBIGUOUS");
}

TEST(AbReport, PairsByAbPairWithSummaryOnTopAndExitStatus) {
  std::vector<v1::Result> results = {
      Side(Noisy(100, 1, 30, 5), v1::AB_BASE, 0, "cpu_naive"), Side(Noisy(130, 1, 30, 6), v1::AB_HEAD, 0, "cpu_fast"),
      Side(Noisy(50, 1, 30, 7), v1::AB_BASE, 1, "cpu_b"),      Side(Noisy(50, 1, 30, 8), v1::AB_HEAD, 1, "cpu_b"),
  };
  CompareReport md = CompareAbResults(results, {}, Format::kMarkdown);
  EXPECT_EQ(md.exit_status, kExitFailure);
  const std::string summary = "**1 slower, 0 faster, 1 unchanged, 0 ambiguous**";
  EXPECT_THAT(md.text, HasSubstr(summary));
  EXPECT_LT(md.text.find(summary), md.text.find("| op"));  // The summary comes before the table.
  EXPECT_THAT(md.text, HasSubstr("cpu_naive vs cpu_fast"));
  EXPECT_THAT(md.text, HasSubstr("SLOWER"));

  // The head incorrect where the base was correct fails the compare even without any slowdown.
  results = {Side(Noisy(50, 1, 30, 9), v1::AB_BASE, 0), Side(Noisy(50, 1, 30, 10), v1::AB_HEAD, 0)};
  results[1].set_status(v1::INCORRECT);
  CompareReport incorrect = CompareAbResults(results, {}, Format::kTable);
  EXPECT_EQ(incorrect.exit_status, kExitFailure);
  EXPECT_THAT(incorrect.text, HasSubstr("1 newly incorrect"));

  // A base side alone (a job cut short) is listed, not paired.
  results = {Side(Noisy(50, 1, 30, 11), v1::AB_BASE, 3)};
  CompareReport alone = CompareAbResults(results, {}, Format::kTable);
  EXPECT_EQ(alone.exit_status, kExitOk);
  EXPECT_THAT(alone.text, HasSubstr("Only in base"));
}

}  // namespace
}  // namespace kbench::client
