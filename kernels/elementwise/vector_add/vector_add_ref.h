// CPU reference of vector_add: out = x + y, in double on the inputs as stored.
#pragma once

#include <span>
#include <vector>

#include "core/op.h"

namespace kbench::kernels {

// inputs: x[N], y[N]; outputs: resized to one vector of N values.
void VectorAddReference(const Problem& p, std::span<const Tensor> inputs, std::vector<std::vector<double>>& outputs);

}  // namespace kbench::kernels
