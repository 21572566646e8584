// The verdict rules on a change of kernel timing, and their defaults, in one place: the coordinator's
// history (server/coordinator/regression.cc, a result against its series' pooled baseline) and the client's
// compare (client/format_compare.cc, a head result against a base result) both judge with them.
//
// Two rules today, with the same words but different order of questions (kept as they are; the
// measurement issue changes the rule):
//   JudgeSignificanceFirst (history): p >= alpha is SAME; then SLOWER / FASTER when the change of the
//     median passes +-threshold, else AMBIGUOUS (significant but too small to count).
//   JudgeEffectFirst (compare): |change| <= threshold is SAME whatever p; SLOWER / FASTER when
//     p < alpha and the test's direction (z) agrees with the change's sign, else AMBIGUOUS.
// Both callers call a pair AMBIGUOUS when either side has fewer than min_samples raw samples
// (EnoughSamples), before any test.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "api/stats/mann_whitney.h"

namespace kbench::api {

enum class ChangeVerdict { kSame, kSlower, kFaster, kAmbiguous };

// "SAME", "SLOWER", "FASTER", "AMBIGUOUS".
const char* ChangeVerdictName(ChangeVerdict v);

// The defaults here are the only ones: the coordinator's flags and the client's compare flags start from them.
struct VerdictRule {
  double threshold = 0.03;  // Least relative change of the median that counts (3%).
  double alpha = 0.01;      // Significance level of the two-sided Mann-Whitney U test.
  int min_samples = 5;      // Fewer raw samples on either side: AMBIGUOUS.
};

// Median of values (mean of the middle two for an even count); 0 for none.
double Median(std::vector<double> values);
// The same for values already sorted ascending.
double SortedMedian(std::span<const double> sorted);

// Whether both sides have the rule's least number of samples.
bool EnoughSamples(size_t a, size_t b, const VerdictRule& rule);

// History's rule (see above). change: median(new) / median(baseline) - 1; p: two-sided p-value.
ChangeVerdict JudgeSignificanceFirst(double change, double p, const VerdictRule& rule);

// Compare's rule (see above). change: (head - base) / base; mw: the test of head against base
// (z > 0: head tends to be slower).
ChangeVerdict JudgeEffectFirst(double change, const MannWhitney& mw, const VerdictRule& rule);

}  // namespace kbench::api
