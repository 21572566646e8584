// The one verdict rule on a change of kernel timing, used by the coordinator's history
// (server/coordinator/regression.cc: a result, or a result and its confirming re-run, against its series'
// baseline) and by the client's compare (client/format_compare.cc: head runs against base runs,
// offline or A/B).
//
// Runs, not samples, are the observations. Within a run samples agree to ~0.05%, but runs differ by
// 0.3-2% (fresh allocations, clock states, nodes): pooling raw samples as independent makes every
// difference "significant". So each run counts once, by its median, and the baseline is its runs'
// medians equally weighted. In log space (changes are ratios):
//   d      = mean(log current medians) - mean(log baseline medians); change = exp(d) - 1
//   spread = max(s, spread_floor, within-run RSE of the runs judged), where s is the sample standard
//            deviation of the log run medians (pooled over both sides when each has several runs),
//            with df = runs - sides degrees of freedom. With fewer than min_runs baseline runs (and no
//            repeated runs on the current side) s cannot be measured: spread = max(assumed_spread,
//            floor), df infinite (normal quantiles).
//   se     = spread * sqrt(1/n_baseline + 1/n_current)    (the prediction interval of a new run)
//   p      = two-sided p of t = d / se on df degrees of freedom
//   interval = d +- t_{df, (1+same_confidence)/2} * se, as relative changes
// Verdicts:
//   SLOWER / FASTER  p < alpha and change beyond +-threshold (both significance and size)
//   SAME             the whole interval lies within +-threshold
//   AMBIGUOUS        everything else (too noisy, too few runs, or a significant change under the threshold)
// A pinned long-horizon reference (the series' first runs after its last known step) is judged with
// the same rule; WithReference lets it turn a SAME or AMBIGUOUS into SLOWER when a slow creep has
// moved the recent baseline along with the kernel (a speed-up is deliberate: the recent baseline's).
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace kbench::api {

enum class ChangeVerdict { kSame, kSlower, kFaster, kAmbiguous };

// "SAME", "SLOWER", "FASTER", "AMBIGUOUS".
const char* ChangeVerdictName(ChangeVerdict v);

// The defaults here are the only ones: the coordinator's flags and the client's compare flags start from them.
struct VerdictRule {
  double threshold = 0.03;        // Least relative change that counts (3%).
  double alpha = 0.01;            // Two-sided significance level for SLOWER / FASTER.
  double same_confidence = 0.80;  // Confidence of the change's interval that SAME needs within +-threshold.
  double spread_floor = 0.003;    // Least run-to-run spread (relative sd) ever assumed: 0.3%.
  double assumed_spread = 0.01;   // Run-to-run spread when too few runs measure it: 1%.
  int min_runs = 3;               // Baseline runs needed to measure the spread.
  int min_samples = 5;            // A run with fewer raw samples (when it has any) makes the pair AMBIGUOUS.
};

// One run: its median, and how well that median is known within the run.
struct RunObservation {
  double median_ns = 0;
  double within_rse = 0;  // Relative standard error of the median within the run; 0 when unknown.
};

struct RunJudgment {
  ChangeVerdict verdict = ChangeVerdict::kAmbiguous;
  double change = 0;          // exp(d) - 1: the current runs' geometric mean over the baseline's, minus 1.
  double low = 0, high = 0;   // The change's same_confidence interval, relative.
  double p_value = 1;         // Two-sided; 1 when untested.
  double spread = 0;          // The run-to-run spread used (relative sd).
  double measured_spread = 0; // s of the log run medians; 0 when it could not be measured.
  bool spread_assumed = false;  // Too few runs: assumed_spread stood in for s.
  double baseline_center_ns = 0;  // Geometric mean of the baseline run medians.
  int baseline_runs = 0;
  int current_runs = 0;
};

// Median of values (mean of the middle two for an even count); 0 for none.
double Median(std::vector<double> values);
// The same for values already sorted ascending.
double SortedMedian(std::span<const double> sorted);
// The within-run relative standard error of the median of samples (1.2533 * sd / sqrt(n) / median);
// 0 for fewer than two samples.
double MedianRse(std::span<const double> samples);

// Whether both sides have the rule's least number of samples.
bool EnoughSamples(size_t a, size_t b, const VerdictRule& rule);

// The run-to-run spread of runs: the sample standard deviation of their log medians (about the
// relative sd); 0 with fewer than two usable runs.
double RunSpread(std::span<const RunObservation> runs);

// Judges current runs against baseline runs (see above). Runs with a median <= 0 or not finite are
// left out; with no baseline run left the judgment is AMBIGUOUS with baseline_runs 0 (callers say
// NO_BASELINE), and with no current run AMBIGUOUS.
RunJudgment JudgeRuns(std::span<const RunObservation> current, std::span<const RunObservation> baseline,
                      const VerdictRule& rule);

// The recent baseline's judgment, turned into the reference's SLOWER when the recent one found no
// significant change beyond the threshold but the pinned reference finds a slowdown (slow creep).
// against_reference (when not null) tells whether the reference decided.
RunJudgment WithReference(const RunJudgment& recent, const RunJudgment& reference, bool* against_reference);

}  // namespace kbench::api
