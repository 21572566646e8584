// CPU reference of layernorm: out[r,c] = (x[r,c] - mean_r) / sqrt(var_r + eps) * gamma[c] + beta[c],
// var_r the population variance over cols, in double on the inputs as stored.
#pragma once

#include <span>
#include <vector>

#include "core/op.h"

namespace kbench::kernels {

// The epsilon added to the variance, shared by the reference and every variant.
inline constexpr double kLayernormEps = 1e-5;

// inputs: x[rows,cols], gamma[cols], beta[cols]; outputs: resized to one vector of rows*cols values.
void LayernormReference(const Problem& p, std::span<const Tensor> inputs, std::vector<std::vector<double>>& outputs);

}  // namespace kbench::kernels
