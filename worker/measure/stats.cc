#include "worker/measure/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

namespace kbench::worker {

double Quantile(std::span<const double> sorted, double q) {
  if (sorted.empty()) return 0;
  q = std::clamp(q, 0.0, 1.0);
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

double MedianRelativeStandardError(std::span<const double> sorted) {
  constexpr double kZ = 1.96;
  const size_t n = sorted.size();
  if (n < 2) return std::numeric_limits<double>::infinity();
  const double h = kZ / (2.0 * std::sqrt(static_cast<double>(n)));
  const double se = (Quantile(sorted, 0.5 + h) - Quantile(sorted, 0.5 - h)) / (2.0 * kZ);
  const double median = std::fabs(Quantile(sorted, 0.5));
  if (se == 0) return 0;
  if (median == 0) return std::numeric_limits<double>::infinity();
  return se / median;
}

SampleStats ComputeStats(std::span<const double> samples) {
  SampleStats s;
  s.count = static_cast<int>(samples.size());
  if (samples.empty()) return s;
  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());
  s.min = sorted.front();
  s.max = sorted.back();
  s.median = Quantile(sorted, 0.5);
  s.p10 = Quantile(sorted, 0.1);
  s.p90 = Quantile(sorted, 0.9);
  s.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(sorted.size());
  if (sorted.size() > 1) {
    double ss = 0;
    for (double x : sorted) ss += (x - s.mean) * (x - s.mean);
    s.stddev = std::sqrt(ss / static_cast<double>(sorted.size() - 1));  // sample (n - 1) stddev
  }
  s.median_rse = MedianRelativeStandardError(sorted);
  return s;
}

}  // namespace kbench::worker
