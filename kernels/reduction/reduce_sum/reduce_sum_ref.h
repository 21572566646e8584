// CPU reference of reduce_sum: out[0] = sum_i x[i], in double on the inputs as stored, and the
// tolerance of a float sum of N terms.
#pragma once

#include <span>
#include <vector>

#include "core/op.h"

namespace kbench::kernels {

// inputs: x[N]; outputs: resized to one vector of one value.
void ReduceSumReference(const Problem& p, std::span<const Tensor> inputs, std::vector<std::vector<double>>& outputs);

// The tolerance of a float32 accumulation of N inputs in [-1, 1], in any order (see reduce_sum_op.cc).
Tolerance ReduceSumTolerance(const Problem& p);

}  // namespace kbench::kernels
