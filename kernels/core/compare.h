// Comparison of a variant's output with the reference: element by element, within the op's
// tolerance (atol + rtol*|ref|).
#pragma once

#include <cstdint>
#include <span>

#include "core/op.h"

namespace kbench::kernels {

struct CompareResult {
  bool passed = true;
  double max_abs_error = 0;
  double max_rel_error = 0;
  double rel_l2_error = 0;       // ||out - ref|| / ||ref||
  int64_t mismatches = 0;        // outside atol + rtol*|ref|
  int64_t first_mismatch = -1;
  int64_t non_finite = 0;        // NaN/inf where the reference is finite
};

// out_dtype: the output's storage dtype. An FP8 E4M3 output is held to the quantization rule instead
// of |out - ref| <= atol + rtol*|ref|: ref is the unrounded scaled value (a quantizing op's reference
// does not round), out must be ref rounded to nearest even on the E4M3 grid (saturating at +-448),
// except where ref lies closer than atol + rtol*|ref| to a rounding midpoint, where either grid neighbour
// of ref passes (the kernel's float scale, or a bf16 intermediate, may move it across the midpoint).
// So out is never more than one E4M3 step from ref, and exact away from rounding boundaries.
CompareResult Compare(std::span<const double> out, std::span<const double> ref, Tolerance tol,
                      Dtype out_dtype = Dtype::kUnspecified);

// The E4M3 rule for one element: true when out passes against the unrounded ref (see Compare).
bool Fp8E4M3Matches(double out, double ref, Tolerance tol);

// Folds b into a: worst errors, summed counts, first mismatch of the earliest.
void Merge(CompareResult& a, const CompareResult& b);

}  // namespace kbench::kernels
