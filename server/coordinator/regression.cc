// A result against its pooled baseline; the test and the rule are api/stats (mann_whitney.h, verdict.h).
#include "server/coordinator/regression.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <utility>

#include "api/stats/mann_whitney.h"
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

PooledBaseline PoolBaseline(const std::vector<std::span<const double>>& runs) {
  return PooledBaseline{static_cast<int>(runs.size()), MergeRuns(runs)};
}

RegressionAnalysis AnalyzeAgainstPooled(std::vector<double> current, double current_median_ns,
                                        const PooledBaseline& baseline, const RegressionConfig& config) {
  RegressionAnalysis out;
  if (baseline.results == 0) return out;  // NO_BASELINE.
  out.baseline_results = baseline.results;
  const std::vector<double>& pooled = baseline.samples_ns;
  std::sort(current.begin(), current.end());
  out.baseline_samples = static_cast<int>(pooled.size());
  out.baseline_median_ns = api::SortedMedian(pooled);
  const double median = current.empty() ? current_median_ns : api::SortedMedian(current);
  if (out.baseline_median_ns > 0 && median > 0) out.change_fraction = median / out.baseline_median_ns - 1;
  if (!api::EnoughSamples(current.size(), pooled.size(), config) || out.baseline_median_ns <= 0) {
    out.verdict = v1::AMBIGUOUS;
    return out;
  }
  out.p_value = api::MannWhitneyUSorted(current, pooled).p_two_sided;
  switch (api::JudgeSignificanceFirst(out.change_fraction, out.p_value, config)) {
    case api::ChangeVerdict::kSame: out.verdict = v1::SAME; break;
    case api::ChangeVerdict::kSlower: out.verdict = v1::SLOWER; break;
    case api::ChangeVerdict::kFaster: out.verdict = v1::FASTER; break;
    case api::ChangeVerdict::kAmbiguous: out.verdict = v1::AMBIGUOUS; break;
  }
  return out;
}

RegressionAnalysis AnalyzeRegression(std::vector<double> current, double current_median_ns,
                                     const std::vector<std::vector<double>>& baseline,
                                     const RegressionConfig& config) {
  const std::vector<std::span<const double>> runs(baseline.begin(), baseline.end());
  return AnalyzeAgainstPooled(std::move(current), current_median_ns, PoolBaseline(runs), config);
}

}  // namespace kbench::server
