// Regression detection, pure: a new result (one run) against its series' baseline of run medians
// (the last OK results on the main branch), and against the series' pinned reference (its first OK
// results after its last known step), with the one rule of api/stats/verdict.h:
//   SLOWER / FASTER  significant against the run-to-run spread, and beyond +-threshold
//   SAME             the change's interval lies within +-threshold
//   AMBIGUOUS        anything else, or a run with fewer than min_samples samples
//   NO_BASELINE      no baseline result at all
// A confirming re-run is judged the same way, with both runs (the first and the re-run) as the
// current side.
#pragma once

#include <span>
#include <vector>

#include "api/stats/verdict.h"
#include "server/coordinator/series_controls.h"
#include "kbench/v1/coordinator.pb.h"
#include "kbench/v1/result.pb.h"

namespace kbench::server {

// The rule with its defaults: api::VerdictRule (api/stats/verdict.h).
struct RegressionConfig : api::VerdictRule {
  int baseline_results = 20;   // Recent results of the series' history that form the baseline.
  int reference_results = 10;  // The pinned reference: the series' first results after its last step.
};

using api::Median;

struct RegressionAnalysis {
  v1::Verdict verdict = v1::NO_BASELINE;
  double change_fraction = 0;     // The run's median / baseline_median_ns - 1.
  double p_value = 1;
  double baseline_median_ns = 0;  // The baseline's center: geometric mean of its run medians.
  int baseline_results = 0;       // Baseline runs.
  int baseline_samples = 0;       // Raw samples of the baseline runs (for the record only).
  double run_spread = 0;          // Run-to-run spread (relative sd) the verdict allowed for.
  double measured_spread = 0;     // The baseline's measured run-to-run spread; 0 when too few runs.
  double change_low = 0, change_high = 0;  // The change's interval.
  bool against_reference = false;  // The pinned reference decided (slow creep).
};

// A series' baseline ready to judge against: one observation per result (run), and every baseline
// result's samples pooled in ascending order (kept for the cache; the verdict uses the runs).
struct PooledBaseline {
  int results = 0;                 // Baseline results; 0: no baseline.
  std::vector<api::RunObservation> runs;
  std::vector<double> samples_ns;  // Ascending.
};

// One run of raw samples (any order): its median (median_ns when > 0, else the samples') and the
// within-run RSE of that median.
api::RunObservation RunOf(std::span<const double> samples, double median_ns);
// The run of a result: its timing's median and median RSE, else from its samples.
api::RunObservation RunOf(const v1::Result& result);

// Pools runs (each baseline result's raw samples; a result without samples adds none), cheapest when
// each comes sorted ascending. Each run becomes one observation (its median).
PooledBaseline PoolBaseline(const std::vector<std::span<const double>>& runs);

// current: the runs judged (one result, or a result and its re-run); current_samples: the fewest raw
// samples of those runs that carried any (-1: none carried samples). reference: the pinned reference
// (null or empty: none), judged at alpha / 2 since it is a second test of the same run.
RegressionAnalysis AnalyzeRuns(std::span<const api::RunObservation> current, int current_samples,
                               const PooledBaseline& baseline, const PooledBaseline* reference,
                               const RegressionConfig& config);

// The confirming re-run. A SLOWER is not alerted on at once: the coordinator enqueues one re-run of the
// result's problem, and alerts only when the first run and the re-run, judged together as two runs
// against the same baseline (ConfirmRuns), read SLOWER too. Two runs halve the run-to-run variance of
// the mean, so a real slowdown confirms while a clock state or an unlucky run does not. A run that
// is AMBIGUOUS but beyond the threshold (a slowdown one run's spread cannot show) gets the re-run too.
bool NeedsConfirmation(const RegressionAnalysis& first, const RegressionConfig& config);
RegressionAnalysis ConfirmRuns(const api::RunObservation& first, const api::RunObservation& rerun, int samples,
                               const PooledBaseline& baseline, const PooledBaseline* reference,
                               const RegressionConfig& config);

// A series' admin controls applied to the rule: its threshold override, if any. (Its step restarts the
// baseline and reference the store lists; see Coordinator::Baseline.)
RegressionConfig ForSeries(const RegressionConfig& config, const EffectiveControls& controls);
// Whether a stored verdict raises the alert (its series' regression gauge): SLOWER, unless muted.
bool Alerts(v1::Verdict verdict, const EffectiveControls& controls);

// One run of raw samples against the pooled baseline: AnalyzeRuns({RunOf(current, current_median_ns)}, ...).
RegressionAnalysis AnalyzeAgainstPooled(std::vector<double> current, double current_median_ns,
                                        const PooledBaseline& baseline, const RegressionConfig& config);

// The two above in one: AnalyzeAgainstPooled(current, ..., PoolBaseline(baseline), config).
RegressionAnalysis AnalyzeRegression(std::vector<double> current, double current_median_ns,
                                     const std::vector<std::vector<double>>& baseline,
                                     const RegressionConfig& config);

}  // namespace kbench::server
