// Two-sided Mann-Whitney U test of two samples (raw kernel timings), for offline comparisons in the
// client and the coordinator. Normal approximation with tie and continuity corrections; no exact small-sample tables,
// so callers should require a handful of samples on each side before trusting p.
#pragma once

#include <span>

namespace kbench::api {

struct MannWhitney {
  double u = 0;            // U of `a`: pairs (x in a, y in b) with x > y, ties counting one half.
  double z = 0;            // Standardized U; positive when `a` tends to be larger than `b`.
  double p_two_sided = 1;  // 1 when either sample is empty, holds a NaN, or every value is tied.
};

// Mann-Whitney U test of `a` against `b`; O((n + m) log(n + m)).
MannWhitney MannWhitneyU(std::span<const double> a, std::span<const double> b);

// The same for samples already sorted ascending: one merge, O(n + m). For hot paths that keep
// their samples sorted (the coordinator's baselines).
MannWhitney MannWhitneyUSorted(std::span<const double> a, std::span<const double> b);

}  // namespace kbench::api
