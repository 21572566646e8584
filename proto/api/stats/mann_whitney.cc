// Mann-Whitney U by one merge of the two sorted samples; see mann_whitney.h.
#include "api/stats/mann_whitney.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace kbench::api {
namespace {

bool HasNan(std::span<const double> s) {
  return std::any_of(s.begin(), s.end(), [](double x) { return std::isnan(x); });
}

}  // namespace

MannWhitney MannWhitneyU(std::span<const double> a_in, std::span<const double> b_in) {
  // NaN is unordered: no sort order, no ranks (and the merge below would never pass it).
  if (HasNan(a_in) || HasNan(b_in)) return MannWhitney{};
  std::vector<double> a(a_in.begin(), a_in.end());
  std::vector<double> b(b_in.begin(), b_in.end());
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return MannWhitneyUSorted(a, b);
}

MannWhitney MannWhitneyUSorted(std::span<const double> a, std::span<const double> b) {
  MannWhitney out;
  if (a.empty() || b.empty() || HasNan(a) || HasNan(b)) return out;
  const double n1 = static_cast<double>(a.size());
  const double n2 = static_cast<double>(b.size());
  const double n = n1 + n2;
  double rank_sum_a = 0;
  double tie_term = 0;  // Sum over groups of equal values of t^3 - t.
  double rank = 0;      // Ranks handed out so far.
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    const double v = j == b.size() || (i < a.size() && a[i] <= b[j]) ? a[i] : b[j];
    size_t in_a = 0, in_b = 0;
    while (i < a.size() && a[i] == v) ++i, ++in_a;
    while (j < b.size() && b[j] == v) ++j, ++in_b;
    const double t = static_cast<double>(in_a + in_b);
    rank_sum_a += (rank + (t + 1) / 2) * static_cast<double>(in_a);  // Tied values share their mean rank.
    tie_term += t * t * t - t;
    rank += t;
  }
  out.u = rank_sum_a - n1 * (n1 + 1) / 2;
  const double variance = n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1)));
  if (variance <= 0) return out;  // Every value tied: no evidence either way.
  const double diff = out.u - n1 * n2 / 2;
  // Continuity correction: half a unit towards the mean, never past it.
  const double corrected = diff > 0 ? std::max(0.0, diff - 0.5) : std::min(0.0, diff + 0.5);
  out.z = corrected / std::sqrt(variance);
  out.p_two_sided = std::erfc(std::abs(out.z) / std::sqrt(2.0));
  return out;
}

}  // namespace kbench::api
