// What the quant family's ops share on the host: the FP8 E4M3 limit, the per-token quantization rule
// in double (the references), the static scale the per-tensor problems use, and the fills of the
// edge problems (flags zero_rows and outliers), so every op's edge preset holds all-zero rows and
// values past 448.
#pragma once

#include <cstdint>

#include "core/op.h"

namespace kbench::kernels::quant {

inline constexpr double kFp8Max = 448.0;  // largest finite E4M3 value
// The per-tensor scale of static_scale problems: inputs in [-1, 1] cover +-128 of the grid, the
// outliers (+-512) saturate.
inline constexpr float kStaticScale = 1.0f / 128;

inline constexpr char kStaticScaleFlag[] = "static_scale";  // per-tensor scale given as an input
inline constexpr char kZeroRowsFlag[] = "zero_rows";        // rows r with r % 4 == 1 are all zeros
inline constexpr char kOutliersFlag[] = "outliers";         // elements i with i % 16 == 5 are x512

// Uniform in [lo, hi] (the spec's range), then the edge flags of the problem applied, for a tensor
// whose rows are row_len elements long. Deterministic in (problem, seed, stream).
void FillQuantInput(const Problem& p, const Tensor& t, uint64_t seed, uint64_t stream, int64_t row_len, double lo,
                    double hi);

// The static scale input (one f32): kStaticScale, whatever the seed.
void FillStaticScale(const Problem& p, const Tensor& t, uint64_t seed, uint64_t stream);

// Per-token dynamic quantization of one row y[0..n) in double: *scale = max|y| / 448 and
// v[i] = y[i] / *scale, unrounded (the FP8 comparison rounds, core/compare.h); an all-zero row gets
// scale 0 and v = 0 (its inverse scale is taken as 0, never 0 * inf).
void QuantizeRowReference(const double* y, int64_t n, double* v, double* scale);

}  // namespace kbench::kernels::quant
