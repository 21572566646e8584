// Mann-Whitney U and the verdict rules.
#include "server/regression.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>

namespace kbench::server {

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  const size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  const double upper = values[mid];
  if (values.size() % 2 == 1) return upper;
  const double lower = *std::max_element(values.begin(), values.begin() + mid);
  return (lower + upper) / 2;
}

namespace {

// Mann-Whitney U of two sorted samples: ranks come from one merge of the two.
MannWhitneyResult MannWhitneySorted(const std::vector<double>& a, const std::vector<double>& b) {
  MannWhitneyResult out;
  if (a.empty() || b.empty()) return out;
  const double n1 = static_cast<double>(a.size());
  const double n2 = static_cast<double>(b.size());
  const double n = n1 + n2;
  double rank_sum_a = 0;
  double tie_term = 0;  // Sum over groups of equal values of t^3 - t.
  size_t i = 0, j = 0;
  double rank = 0;      // Ranks handed out so far.
  while (i < a.size() || j < b.size()) {
    // The next group of equal values, from both samples.
    const double v = j == b.size() || (i < a.size() && a[i] <= b[j]) ? a[i] : b[j];
    size_t in_a = 0, in_b = 0;
    while (i < a.size() && a[i] == v) ++i, ++in_a;
    while (j < b.size() && b[j] == v) ++j, ++in_b;
    const double t = static_cast<double>(in_a + in_b);
    const double avg_rank = rank + (t + 1) / 2;  // 1-based ranks rank+1 .. rank+t share their mean.
    rank_sum_a += avg_rank * static_cast<double>(in_a);
    tie_term += t * t * t - t;
    rank += t;
  }
  out.u = rank_sum_a - n1 * (n1 + 1) / 2;
  const double mean = n1 * n2 / 2;
  const double variance = n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1)));
  if (variance <= 0) return out;  // Every value tied: no evidence either way.
  const double diff = out.u - mean;
  // Continuity correction: move half a unit towards the mean, never past it.
  const double corrected = diff > 0 ? std::max(0.0, diff - 0.5) : std::min(0.0, diff + 0.5);
  out.z = corrected / std::sqrt(variance);
  out.p_value = std::erfc(std::abs(out.z) / std::sqrt(2.0));
  return out;
}

double SortedMedian(const std::vector<double>& v) {
  if (v.empty()) return 0;
  const size_t mid = v.size() / 2;
  return v.size() % 2 == 1 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

// The runs pooled in ascending order: runs that come sorted (as the stores keep them) are merged
// pairwise, log2(runs) passes over the pool; others are sorted first.
std::vector<double> MergeRuns(const std::vector<std::vector<double>>& runs) {
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

MannWhitneyResult MannWhitneyU(std::vector<double> a, std::vector<double> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return MannWhitneySorted(a, b);
}

RegressionAnalysis AnalyzeRegression(std::vector<double> current, double current_median_ns,
                                     const std::vector<std::vector<double>>& baseline,
                                     const RegressionConfig& config) {
  RegressionAnalysis out;
  if (baseline.empty()) return out;  // NO_BASELINE.
  out.baseline_results = static_cast<int>(baseline.size());
  std::vector<double> pooled = MergeRuns(baseline);
  std::sort(current.begin(), current.end());
  out.baseline_samples = static_cast<int>(pooled.size());
  out.baseline_median_ns = SortedMedian(pooled);
  const double median = current.empty() ? current_median_ns : SortedMedian(current);
  if (out.baseline_median_ns > 0 && median > 0) out.change_fraction = median / out.baseline_median_ns - 1;
  if (static_cast<int>(current.size()) < config.min_samples || static_cast<int>(pooled.size()) < config.min_samples ||
      out.baseline_median_ns <= 0) {
    out.verdict = v1::AMBIGUOUS;
    return out;
  }
  out.p_value = MannWhitneySorted(current, pooled).p_value;
  if (out.p_value >= config.alpha) out.verdict = v1::SAME;
  else if (out.change_fraction > config.threshold) out.verdict = v1::SLOWER;
  else if (out.change_fraction < -config.threshold) out.verdict = v1::FASTER;
  else out.verdict = v1::AMBIGUOUS;
  return out;
}

}  // namespace kbench::server
