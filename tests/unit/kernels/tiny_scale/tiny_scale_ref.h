// CPU reference of tiny_scale: out = 2 * x, in double on the inputs as stored.
#pragma once

#include <span>
#include <vector>

#include "core/op.h"

namespace kbench::kernels {

// inputs: x[N]; outputs: resized to one vector of N values.
void TinyScaleReference(const Problem& p, std::span<const Tensor> inputs, std::vector<std::vector<double>>& outputs);

}  // namespace kbench::kernels
