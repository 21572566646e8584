// A result's run against its baseline's runs; the rule is api/stats/verdict.h.
#include "server/coordinator/regression.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <utility>

#include "api/stats/verdict.h"

namespace kbench::server {

namespace {

// The runs pooled in ascending order: runs that come sorted (as the stores keep them) are merged
// pairwise, log2(runs) passes over the pool; others are sorted first.
std::vector<double> MergeRuns(const std::vector<std::span<const double>>& runs) {
  std::vector<double> pooled;
  std::vector<size_t> bounds = {0};  // Run i is [bounds[i], bounds[i + 1]).
  for (const auto& run : runs) {
    pooled.insert(pooled.end(), run.begin(), run.end());
    if (!std::is_sorted(pooled.begin() + bounds.back(), pooled.end()))
      std::sort(pooled.begin() + bounds.back(), pooled.end());
    bounds.push_back(pooled.size());
  }
  std::vector<double> buffer(pooled.size());
  while (bounds.size() > 2) {
    std::vector<size_t> merged = {0};
    for (size_t i = 0; i + 1 < bounds.size(); i += 2) {
      const size_t end = i + 2 < bounds.size() ? bounds[i + 2] : bounds[i + 1];
      std::merge(pooled.begin() + bounds[i], pooled.begin() + bounds[i + 1], pooled.begin() + bounds[i + 1],
                 pooled.begin() + end, buffer.begin() + bounds[i]);
      merged.push_back(end);
    }
    pooled.swap(buffer);
    bounds = std::move(merged);
  }
  return pooled;
}

}  // namespace

api::RunObservation RunOf(std::span<const double> samples, double median_ns) {
  api::RunObservation run;
  run.median_ns = median_ns > 0 ? median_ns : api::Median(std::vector<double>(samples.begin(), samples.end()));
  run.within_rse = api::MedianRse(samples);
  return run;
}

api::RunObservation RunOf(const v1::Result& result) {
  const auto& t = result.timing();
  api::RunObservation run = RunOf(std::span<const double>(t.samples_ns().data(), t.samples_ns().size()), t.median_ns());
  if (t.median_relative_standard_error() > 0) run.within_rse = t.median_relative_standard_error();
  return run;
}

PooledBaseline PoolBaseline(const std::vector<std::span<const double>>& runs) {
  PooledBaseline out{static_cast<int>(runs.size()), {}, MergeRuns(runs)};
  for (const auto& run : runs) out.runs.push_back(RunOf(run, 0));
  return out;
}

RegressionAnalysis AnalyzeRuns(std::span<const api::RunObservation> current, int current_samples,
                               const PooledBaseline& baseline, const PooledBaseline* reference,
                               const RegressionConfig& config) {
  RegressionAnalysis out;
  if (baseline.results == 0) return out;  // NO_BASELINE.
  out.baseline_results = baseline.results;
  out.baseline_samples = static_cast<int>(baseline.samples_ns.size());
  api::RunJudgment j = api::JudgeRuns(current, baseline.runs, config);
  out.baseline_median_ns = j.baseline_center_ns;
  if (j.baseline_runs == 0 || j.current_runs == 0 ||
      (current_samples >= 0 && current_samples < config.min_samples)) {
    out.verdict = v1::AMBIGUOUS;
    out.change_fraction = j.current_runs > 0 ? j.change : 0;
    return out;
  }
  if (reference != nullptr && reference->results > 0) {
    // A second test of the same run: alpha split between the two (Bonferroni).
    api::VerdictRule strict = config;
    strict.alpha = config.alpha / 2;
    j = api::WithReference(j, api::JudgeRuns(current, reference->runs, strict), &out.against_reference);
  }
  out.change_fraction = j.change;
  out.p_value = j.p_value;
  out.run_spread = j.spread;
  out.measured_spread = j.measured_spread;
  out.change_low = j.low;
  out.change_high = j.high;
  if (out.against_reference) out.baseline_median_ns = j.baseline_center_ns;
  switch (j.verdict) {
    case api::ChangeVerdict::kSame: out.verdict = v1::SAME; break;
    case api::ChangeVerdict::kSlower: out.verdict = v1::SLOWER; break;
    case api::ChangeVerdict::kFaster: out.verdict = v1::FASTER; break;
    case api::ChangeVerdict::kAmbiguous: out.verdict = v1::AMBIGUOUS; break;
  }
  return out;
}

bool NeedsConfirmation(const RegressionAnalysis& first, const RegressionConfig& config) {
  return first.verdict == v1::SLOWER || (first.verdict == v1::AMBIGUOUS && first.change_fraction > config.threshold &&
                                         first.p_value < 1);
}

RegressionAnalysis ConfirmRuns(const api::RunObservation& first, const api::RunObservation& rerun, int samples,
                               const PooledBaseline& baseline, const PooledBaseline* reference,
                               const RegressionConfig& config) {
  const api::RunObservation both[] = {first, rerun};
  return AnalyzeRuns(both, samples, baseline, reference, config);
}

RegressionAnalysis AnalyzeAgainstPooled(std::vector<double> current, double current_median_ns,
                                        const PooledBaseline& baseline, const RegressionConfig& config) {
  const api::RunObservation run = RunOf(current, current_median_ns);
  return AnalyzeRuns(std::span<const api::RunObservation>(&run, 1),
                     current.empty() ? -1 : static_cast<int>(current.size()), baseline, nullptr, config);
}

RegressionAnalysis AnalyzeRegression(std::vector<double> current, double current_median_ns,
                                     const std::vector<std::vector<double>>& baseline,
                                     const RegressionConfig& config) {
  const std::vector<std::span<const double>> runs(baseline.begin(), baseline.end());
  return AnalyzeAgainstPooled(std::move(current), current_median_ns, PoolBaseline(runs), config);
}

RegressionConfig ForSeries(const RegressionConfig& config, const EffectiveControls& controls) {
  RegressionConfig out = config;
  if (controls.threshold) out.threshold = *controls.threshold;
  return out;
}

bool Alerts(v1::Verdict verdict, const EffectiveControls& controls) { return verdict == v1::SLOWER && !controls.muted; }

}  // namespace kbench::server
