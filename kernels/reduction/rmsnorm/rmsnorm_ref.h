// CPU reference of rmsnorm: out[r,c] = x[r,c] / sqrt(mean_c(x[r,c]^2) + eps) * weight[c], in double on
// the inputs as stored.
#pragma once

#include <span>
#include <vector>

#include "core/op.h"

namespace kbench::kernels {

// The epsilon inside the square root, shared by the reference and every variant.
inline constexpr double kRmsnormEps = 1e-6;

// inputs: x[rows,cols], weight[cols]; outputs: resized to one vector of rows*cols values.
void RmsnormReference(const Problem& p, std::span<const Tensor> inputs, std::vector<std::vector<double>>& outputs);

}  // namespace kbench::kernels
