// Statistics over timing samples: order statistics, moments, and the relative standard error of
// the median that drives adaptive stopping.
#pragma once

#include <span>

namespace kbench::worker {

struct SampleStats {
  int count = 0;
  double median = 0, mean = 0, stddev = 0, min = 0, max = 0, p10 = 0, p90 = 0;
  double median_rse = 0;  // Relative standard error of the median (see MedianRelativeStandardError).
};

// Quantile q in [0, 1] of sorted samples, linear interpolation between order statistics
// (Hyndman-Fan type 7, numpy's default). 0 for an empty span.
double Quantile(std::span<const double> sorted, double q);

// Relative standard error of the median, from sorted samples.
//
// Method: the asymptotic variance of the sample median, SE = 1 / (2 f(m) sqrt(n)), with the
// density at the median f(m) estimated by a difference quotient of the empirical quantile function
// (Siddiqui-Bloch-Gastwirth) over the half-width h = z / (2 sqrt n), z = 1.96. It reduces to
//   SE = (Q(1/2 + h) - Q(1/2 - h)) / (2 z),
// the width of the distribution-free 95% confidence interval of the median divided by 2z. It is
// deterministic, needs no resampling, and shrinks like 1/sqrt(n) for a fixed distribution.
// Returns SE / |median|; +inf with fewer than 2 samples or a zero median with a non-zero spread;
// 0 when the samples are all equal.
double MedianRelativeStandardError(std::span<const double> sorted);

// Every statistic; sorts a copy, so samples keep their order.
SampleStats ComputeStats(std::span<const double> samples);

}  // namespace kbench::worker
