// The run verdict rule on a timing change; see verdict.h.
#include "api/stats/verdict.h"

#include <algorithm>
#include <cmath>

#include "api/stats/student_t.h"

namespace kbench::api {

const char* ChangeVerdictName(ChangeVerdict v) {
  switch (v) {
    case ChangeVerdict::kSame: return "SAME";
    case ChangeVerdict::kSlower: return "SLOWER";
    case ChangeVerdict::kFaster: return "FASTER";
    case ChangeVerdict::kAmbiguous: return "AMBIGUOUS";
  }
  return "AMBIGUOUS";
}

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  const size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  const double upper = values[mid];
  if (values.size() % 2 == 1) return upper;
  const double lower = *std::max_element(values.begin(), values.begin() + mid);
  return (lower + upper) / 2;
}

double SortedMedian(std::span<const double> v) {
  if (v.empty()) return 0;
  const size_t mid = v.size() / 2;
  return v.size() % 2 == 1 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

double MedianRse(std::span<const double> samples) {
  const size_t n = samples.size();
  if (n < 2) return 0;
  double mean = 0;
  for (double x : samples) mean += x;
  mean /= static_cast<double>(n);
  double ss = 0;
  for (double x : samples) ss += (x - mean) * (x - mean);
  const double median = Median(std::vector<double>(samples.begin(), samples.end()));
  if (!(median > 0)) return 0;
  // The median's standard error under normal noise is sqrt(pi/2) ~ 1.2533 times the mean's.
  return 1.2533 * std::sqrt(ss / static_cast<double>(n - 1)) / std::sqrt(static_cast<double>(n)) / median;
}

bool EnoughSamples(size_t a, size_t b, const VerdictRule& rule) {
  const size_t least = rule.min_samples > 0 ? static_cast<size_t>(rule.min_samples) : 0;
  return a >= least && b >= least;
}

namespace {

struct LogRuns {
  std::vector<double> logs;
  double mean = 0;
  double sum_squares = 0;  // Of deviations from the mean.
  double max_rse = 0;     // Largest within-run RSE of the runs.
  double median_rse = 0;  // Their median.
};

LogRuns LogsOf(std::span<const RunObservation> runs) {
  LogRuns out;
  for (const RunObservation& r : runs) {
    if (!(r.median_ns > 0) || !std::isfinite(r.median_ns)) continue;
    out.logs.push_back(std::log(r.median_ns));
    if (std::isfinite(r.within_rse)) out.max_rse = std::max(out.max_rse, r.within_rse);
  }
  if (out.logs.empty()) return out;
  std::vector<double> rses;
  for (const RunObservation& r : runs)
    if (r.median_ns > 0 && std::isfinite(r.median_ns) && std::isfinite(r.within_rse)) rses.push_back(r.within_rse);
  out.median_rse = Median(std::move(rses));
  for (double x : out.logs) out.mean += x;
  out.mean /= static_cast<double>(out.logs.size());
  for (double x : out.logs) out.sum_squares += (x - out.mean) * (x - out.mean);
  return out;
}

}  // namespace

double RunSpread(std::span<const RunObservation> runs) {
  const LogRuns r = LogsOf(runs);
  return r.logs.size() < 2 ? 0 : std::sqrt(r.sum_squares / static_cast<double>(r.logs.size() - 1));
}

RunJudgment JudgeRuns(std::span<const RunObservation> current, std::span<const RunObservation> baseline,
                      const VerdictRule& rule) {
  RunJudgment j;
  const LogRuns b = LogsOf(baseline), c = LogsOf(current);
  const int n = static_cast<int>(b.logs.size()), m = static_cast<int>(c.logs.size());
  j.baseline_runs = n;
  j.current_runs = m;
  if (n == 0) return j;
  j.baseline_center_ns = std::exp(b.mean);
  if (m == 0) return j;
  const double d = c.mean - b.mean;
  j.change = std::expm1(d);
  // The spread: measured from the runs (both sides' deviations pooled), when there are enough of them.
  const int df = (n - 1) + (m - 1);
  const bool measured = n >= std::max(2, rule.min_runs) || (m >= 2 && df >= std::max(1, rule.min_runs - 1));
  if (df > 0) j.measured_spread = std::sqrt((b.sum_squares + c.sum_squares) / df);
  // The floor: no run-to-run spread below the rule's floor, the baseline's typical within-run
  // error, or the judged runs' worst one (a noisy run cannot be judged finely).
  const double floor = std::max({rule.spread_floor, b.median_rse, c.max_rse});
  j.spread_assumed = !measured;
  j.spread = measured ? std::max(j.measured_spread, floor) : std::max(rule.assumed_spread, floor);
  const double dof = measured ? df : 0;  // 0: the normal distribution.
  const double se = j.spread * std::sqrt(1.0 / n + 1.0 / m);
  const double q = StudentTQuantile((1 + rule.same_confidence) / 2, dof);
  j.low = std::expm1(d - q * se);
  j.high = std::expm1(d + q * se);
  if (se > 0) {
    j.p_value = 2 * StudentTCdf(-std::abs(d) / se, dof);
  } else {
    j.p_value = d == 0 ? 1 : 0;
  }
  if (j.p_value < rule.alpha && j.change > rule.threshold) {
    j.verdict = ChangeVerdict::kSlower;
  } else if (j.p_value < rule.alpha && j.change < -rule.threshold) {
    j.verdict = ChangeVerdict::kFaster;
  } else if (j.low >= -rule.threshold && j.high <= rule.threshold) {
    j.verdict = ChangeVerdict::kSame;
  } else {
    j.verdict = ChangeVerdict::kAmbiguous;
  }
  return j;
}

RunJudgment WithReference(const RunJudgment& recent, const RunJudgment& reference, bool* against_reference) {
  const bool decided = recent.verdict == ChangeVerdict::kSlower || recent.verdict == ChangeVerdict::kFaster;
  // Only a slowdown creeps unnoticed; a speed-up is deliberate, and the recent baseline sees it.
  const bool creep = reference.verdict == ChangeVerdict::kSlower;
  const bool use_reference = !decided && creep && reference.baseline_runs > 0;
  if (against_reference != nullptr) *against_reference = use_reference;
  return use_reference ? reference : recent;
}

}  // namespace kbench::api
