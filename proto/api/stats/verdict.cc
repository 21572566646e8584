// The verdict rules on a timing change; see verdict.h.
#include "api/stats/verdict.h"

#include <algorithm>
#include <cmath>

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

bool EnoughSamples(size_t a, size_t b, const VerdictRule& rule) {
  const size_t least = rule.min_samples > 0 ? static_cast<size_t>(rule.min_samples) : 0;
  return a >= least && b >= least;
}

ChangeVerdict JudgeSignificanceFirst(double change, double p, const VerdictRule& rule) {
  if (p >= rule.alpha) return ChangeVerdict::kSame;
  if (change > rule.threshold) return ChangeVerdict::kSlower;
  if (change < -rule.threshold) return ChangeVerdict::kFaster;
  return ChangeVerdict::kAmbiguous;  // Significant, but under the least change that counts.
}

ChangeVerdict JudgeEffectFirst(double change, const MannWhitney& mw, const VerdictRule& rule) {
  // Significant or not, a change under the least effect that counts is no change.
  if (std::abs(change) <= rule.threshold) return ChangeVerdict::kSame;
  if (mw.p_two_sided < rule.alpha && change > 0 && mw.z > 0) return ChangeVerdict::kSlower;
  if (mw.p_two_sided < rule.alpha && change < 0 && mw.z < 0) return ChangeVerdict::kFaster;
  return ChangeVerdict::kAmbiguous;  // The noise does not allow a verdict.
}

}  // namespace kbench::api
