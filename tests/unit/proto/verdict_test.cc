// Tests of the one verdict rule shared by the coordinator's history and the client's compare
// (api/stats/verdict.h): runs as observations, the spread (measured, assumed, floored), the SLOWER /
// SAME / AMBIGUOUS boundaries, and the pinned reference. And of the t distribution behind it.
#include "api/stats/verdict.h"

#include <cmath>
#include <vector>

#include "api/stats/student_t.h"
#include "gtest/gtest.h"

namespace kbench::api {
namespace {

std::vector<RunObservation> Runs(const std::vector<double>& medians, double rse = 0) {
  std::vector<RunObservation> out;
  for (double m : medians) out.push_back(RunObservation{m, rse});
  return out;
}

// A baseline of 10 runs around 1000 ns spreading by about `spread` (relative sd), deterministic.
std::vector<RunObservation> Baseline(double spread, int n = 10) {
  std::vector<double> m;
  for (int i = 0; i < n; ++i) m.push_back(1000 * std::exp(spread * 1.5 * (2.0 * i / (n - 1) - 1)));
  return Runs(m);
}

TEST(StudentT, MatchesTables) {
  EXPECT_NEAR(StudentTQuantile(0.975, 1), 12.706, 1e-3);
  EXPECT_NEAR(StudentTQuantile(0.975, 2), 4.303, 1e-3);
  EXPECT_NEAR(StudentTQuantile(0.995, 3), 5.841, 1e-3);
  EXPECT_NEAR(StudentTQuantile(0.995, 9), 3.250, 1e-3);
  EXPECT_NEAR(StudentTQuantile(0.90, 19), 1.328, 1e-3);
  EXPECT_NEAR(StudentTQuantile(0.975, 0), 1.960, 1e-3);  // df 0: normal.
  EXPECT_NEAR(StudentTCdf(2.262, 9), 0.975, 1e-4);
  EXPECT_NEAR(StudentTCdf(-2.262, 9), 0.025, 1e-4);
  EXPECT_NEAR(NormalQuantile(0.9), 1.2816, 1e-4);
  for (double df : {1.0, 3.0, 7.0, 30.0})
    for (double p : {0.01, 0.2, 0.5, 0.9, 0.999}) EXPECT_NEAR(StudentTCdf(StudentTQuantile(p, df), df), p, 1e-9);
}

TEST(VerdictRuleTest, Defaults) {
  const VerdictRule rule;
  EXPECT_DOUBLE_EQ(rule.threshold, 0.03);
  EXPECT_DOUBLE_EQ(rule.alpha, 0.01);
  EXPECT_DOUBLE_EQ(rule.same_confidence, 0.80);
  EXPECT_EQ(rule.min_runs, 3);
  EXPECT_EQ(rule.min_samples, 5);
}

TEST(VerdictRuleTest, Medians) {
  EXPECT_DOUBLE_EQ(Median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(Median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(Median({}), 0);
  const std::vector<double> sorted = {1, 2, 3, 10};
  EXPECT_DOUBLE_EQ(SortedMedian(sorted), 2.5);
  EXPECT_DOUBLE_EQ(SortedMedian(std::vector<double>{}), 0);
  EXPECT_DOUBLE_EQ(MedianRse(std::vector<double>{5}), 0);
  EXPECT_NEAR(MedianRse(std::vector<double>{99, 101, 99, 101}), 1.2533 * 1.1547 / 2 / 100, 1e-6);
}

TEST(VerdictRuleTest, EnoughSamples) {
  const VerdictRule rule;
  EXPECT_TRUE(EnoughSamples(5, 5, rule));
  EXPECT_FALSE(EnoughSamples(4, 50, rule));
  EXPECT_FALSE(EnoughSamples(50, 4, rule));
}

TEST(JudgeRuns, NoBaselineOrNoCurrentRun) {
  const VerdictRule rule;
  RunJudgment j = JudgeRuns(Runs({1000}), {}, rule);
  EXPECT_EQ(j.baseline_runs, 0);
  EXPECT_EQ(j.verdict, ChangeVerdict::kAmbiguous);
  j = JudgeRuns({}, Baseline(0.01), rule);
  EXPECT_EQ(j.current_runs, 0);
  EXPECT_EQ(j.verdict, ChangeVerdict::kAmbiguous);
  // Runs without a usable median are left out.
  j = JudgeRuns(Runs({1000}), Runs({0, NAN, 1000}), rule);
  EXPECT_EQ(j.baseline_runs, 1);
}

TEST(JudgeRuns, EachRunCountsOnceWhateverItsSamples) {
  // The change is of geometric means of run medians; the center is the baseline runs' geometric mean.
  const VerdictRule rule;
  const RunJudgment j = JudgeRuns(Runs({1100}), Runs({1000, 1000, 1000, 1000}), rule);
  EXPECT_NEAR(j.change, 0.10, 1e-12);
  EXPECT_NEAR(j.baseline_center_ns, 1000, 1e-9);
  EXPECT_EQ(j.baseline_runs, 4);
  EXPECT_EQ(j.current_runs, 1);
}

TEST(JudgeRuns, SlowerNeedsSignificanceAndSize) {
  const VerdictRule rule;
  // 1% spread over 10 runs: 10% slower is both significant and beyond 3%.
  RunJudgment j = JudgeRuns(Runs({1100}), Baseline(0.01), rule);
  EXPECT_EQ(j.verdict, ChangeVerdict::kSlower) << j.p_value;
  EXPECT_LT(j.p_value, rule.alpha);
  EXPECT_EQ(JudgeRuns(Runs({900}), Baseline(0.01), rule).verdict, ChangeVerdict::kFaster);
  // 5% slower but runs spread by 3%: not significant, and not SAME either.
  j = JudgeRuns(Runs({1050}), Baseline(0.03), rule);
  EXPECT_GT(j.p_value, rule.alpha);
  EXPECT_EQ(j.verdict, ChangeVerdict::kAmbiguous);
  // 2.5% slower on a tight series: significant, but under the threshold: never SLOWER.
  j = JudgeRuns(Runs({1025}), Baseline(0.002), rule);
  EXPECT_LT(j.p_value, rule.alpha);
  EXPECT_NE(j.verdict, ChangeVerdict::kSlower);
}

TEST(JudgeRuns, SameOnlyWhenTheIntervalLiesWithinTheThreshold) {
  const VerdictRule rule;
  RunJudgment j = JudgeRuns(Runs({1002}), Baseline(0.005), rule);
  EXPECT_EQ(j.verdict, ChangeVerdict::kSame);
  EXPECT_GE(j.low, -rule.threshold);
  EXPECT_LE(j.high, rule.threshold);
  EXPECT_LT(j.low, j.change);
  EXPECT_GT(j.high, j.change);
  // Unchanged, but the runs spread by 3%: the interval passes the threshold: AMBIGUOUS, not SAME.
  j = JudgeRuns(Runs({1000}), Baseline(0.03), rule);
  EXPECT_EQ(j.verdict, ChangeVerdict::kAmbiguous);
  EXPECT_GT(j.high, rule.threshold);
  // A 10% change with a huge spread is never SAME (the old rule called p >= alpha SAME).
  EXPECT_EQ(JudgeRuns(Runs({1100}), Baseline(0.08), rule).verdict, ChangeVerdict::kAmbiguous);
}

TEST(JudgeRuns, TheSpreadIsMeasuredFlooredOrAssumed) {
  const VerdictRule rule;
  // Identical baseline runs: measured 0, the floor stands in.
  RunJudgment j = JudgeRuns(Runs({1000}), Runs({1000, 1000, 1000, 1000}), rule);
  EXPECT_DOUBLE_EQ(j.measured_spread, 0);
  EXPECT_DOUBLE_EQ(j.spread, rule.spread_floor);
  EXPECT_FALSE(j.spread_assumed);
  // A noisy current run (within-run RSE 4%) widens the spread: no fine verdict on it.
  j = JudgeRuns(Runs({1100}, 0.04), Runs({1000, 1000, 1000, 1000}), rule);
  EXPECT_DOUBLE_EQ(j.spread, 0.04);
  EXPECT_EQ(j.verdict, ChangeVerdict::kAmbiguous);
  // Too few runs to measure: the assumed spread, normal quantiles.
  j = JudgeRuns(Runs({1000}), Runs({1000, 1000}), rule);
  EXPECT_TRUE(j.spread_assumed);
  EXPECT_DOUBLE_EQ(j.spread, rule.assumed_spread);
  EXPECT_EQ(j.verdict, ChangeVerdict::kSame);
  EXPECT_EQ(JudgeRuns(Runs({1200}), Runs({1000}), rule).verdict, ChangeVerdict::kSlower);
  // Several runs on both sides (A/B blocks): the spread is measured from both, pooled.
  j = JudgeRuns(Runs({1010, 990, 1000, 1005}), Runs({1000, 1000}), rule);
  EXPECT_FALSE(j.spread_assumed);
  EXPECT_GT(j.measured_spread, 0.005);
}

TEST(JudgeRuns, MoreRunsNarrowTheInterval) {
  const VerdictRule rule;
  const RunJudgment one = JudgeRuns(Runs({1040}), Baseline(0.01), rule);
  const RunJudgment two = JudgeRuns(Runs({1040, 1040}), Baseline(0.01), rule);
  EXPECT_LT(two.high - two.low, one.high - one.low);
  EXPECT_LT(two.p_value, one.p_value);
}

TEST(JudgeRuns, TheReferenceCatchesCreep) {
  const VerdictRule rule;
  // The recent baseline crept along with the kernel; the pinned reference did not.
  const RunJudgment recent = JudgeRuns(Runs({1080}), Runs({1060, 1065, 1070, 1075, 1070, 1068}), rule);
  const RunJudgment reference = JudgeRuns(Runs({1080}), Runs({1000, 1002, 998, 1001, 999}), rule);
  ASSERT_NE(recent.verdict, ChangeVerdict::kSlower);
  ASSERT_EQ(reference.verdict, ChangeVerdict::kSlower);
  bool against = false;
  EXPECT_EQ(WithReference(recent, reference, &against).verdict, ChangeVerdict::kSlower);
  EXPECT_TRUE(against);
  // A decided recent verdict stands.
  const RunJudgment faster = JudgeRuns(Runs({900}), Baseline(0.005), rule);
  EXPECT_EQ(WithReference(faster, reference, &against).verdict, ChangeVerdict::kFaster);
  EXPECT_FALSE(against);
  // No reference: the recent verdict.
  EXPECT_EQ(WithReference(recent, RunJudgment{}, &against).verdict, recent.verdict);
}

TEST(JudgeRuns, CustomRule) {
  VerdictRule rule;
  rule.threshold = 0.10;
  EXPECT_NE(JudgeRuns(Runs({1080}), Baseline(0.005), rule).verdict, ChangeVerdict::kSlower);
  EXPECT_EQ(JudgeRuns(Runs({1200}), Baseline(0.005), rule).verdict, ChangeVerdict::kSlower);
  EXPECT_EQ(ChangeVerdictName(ChangeVerdict::kSlower), std::string("SLOWER"));
}

}  // namespace
}  // namespace kbench::api
