// CPU reference of softmax over cols: out[r,c] = exp(x[r,c] - max_r) / sum_c exp(x[r,c] - max_r), in
// double on the inputs as stored.
#pragma once

#include <span>
#include <vector>

#include "core/op.h"

namespace kbench::kernels {

// inputs: x[rows,cols]; outputs: resized to one vector of rows*cols values.
void SoftmaxReference(const Problem& p, std::span<const Tensor> inputs, std::vector<std::vector<double>>& outputs);

}  // namespace kbench::kernels
