// CPU reference of reduce_sum: out[0] = sum_i x[i], in double on the inputs as stored, and the
// tolerance of a float sum of N terms in bounded chains.
#pragma once

#include <span>
#include <vector>

#include "core/op.h"

namespace kbench::kernels {

// inputs: x[N]; outputs: resized to one vector of one value.
void ReduceSumReference(const Problem& p, std::span<const Tensor> inputs, std::vector<std::vector<double>>& outputs);

// The longest float chain the tolerance allows: additions into one float accumulator, one element at
// a time. Longer sums are chains combined (a tree, or a second accumulator over the chains' sums).
inline constexpr int64_t kReduceSumMaxChain = int64_t{1} << 16;

// The tolerance of a float32 accumulation of N inputs in [-1, 1] in chains of at most
// kReduceSumMaxChain elements (see reduce_sum_ref.cc): tight enough that a handful of dropped
// elements fails at 2^28.
Tolerance ReduceSumTolerance(const Problem& p);

}  // namespace kbench::kernels
