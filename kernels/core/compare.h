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

CompareResult Compare(std::span<const double> out, std::span<const double> ref, Tolerance tol);

// Folds b into a: worst errors, summed counts, first mismatch of the earliest.
void Merge(CompareResult& a, const CompareResult& b);

}  // namespace kbench::kernels
