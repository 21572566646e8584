// Regression detection, pure: a new result's raw samples against the pooled raw samples of its
// series' baseline (the last OK results on the main branch).
//
// The verdict needs both a practical and a statistical difference (api::JudgeSignificanceFirst):
//   change = median(new samples) / median(pooled baseline samples) - 1
//   p      = two-sided Mann-Whitney U test of new vs pooled baseline samples (normal approximation
//            with tie correction and continuity correction)
//   SLOWER      p < alpha and change >  threshold
//   FASTER      p < alpha and change < -threshold
//   AMBIGUOUS   p < alpha and |change| <= threshold, or fewer than min_samples on either side
//   SAME        p >= alpha
//   NO_BASELINE no baseline result at all
// Mann-Whitney U makes no assumption about the noise's distribution (kernel timings are skewed, with
// a long right tail), and the threshold keeps tiny but real shifts (or run-to-run drift that pooled
// samples make look significant) from being called regressions.
#pragma once

#include <span>
#include <vector>

#include "api/stats/verdict.h"
#include "kbench/v1/coordinator.pb.h"

namespace kbench::server {

// threshold, alpha and min_samples with their defaults: api::VerdictRule (api/stats/verdict.h).
struct RegressionConfig : api::VerdictRule {
  int baseline_results = 10; // Results of the series' history that form the baseline (the store's query).
};

using api::Median;

struct RegressionAnalysis {
  v1::Verdict verdict = v1::NO_BASELINE;
  double change_fraction = 0;     // median(current) / baseline_median_ns - 1.
  double p_value = 1;
  double baseline_median_ns = 0;  // Median of the pooled baseline samples.
  int baseline_results = 0;       // Baseline results pooled.
  int baseline_samples = 0;       // Samples pooled.
};

// A series' baseline ready to judge against: every baseline result's samples pooled in ascending
// order. It depends only on the baseline, so the coordinator keeps it across results (baseline_cache.h).
struct PooledBaseline {
  int results = 0;                 // Baseline results pooled; 0: no baseline.
  std::vector<double> samples_ns;  // Ascending.
};

// Pools runs (each baseline result's raw samples; a result without samples adds none), cheapest when
// each comes sorted ascending.
PooledBaseline PoolBaseline(const std::vector<std::span<const double>>& runs);

// current: the new result's raw samples. When it has none, current_median_ns stands in for its median
// (the verdict is then AMBIGUOUS at best).
RegressionAnalysis AnalyzeAgainstPooled(std::vector<double> current, double current_median_ns,
                                        const PooledBaseline& baseline, const RegressionConfig& config);

// The two above in one: AnalyzeAgainstPooled(current, ..., PoolBaseline(baseline), config).
RegressionAnalysis AnalyzeRegression(std::vector<double> current, double current_median_ns,
                                     const std::vector<std::vector<double>>& baseline,
                                     const RegressionConfig& config);

}  // namespace kbench::server
