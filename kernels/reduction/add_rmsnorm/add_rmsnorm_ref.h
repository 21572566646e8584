// CPU reference of add_rmsnorm (residual add fused with RMSNorm), in double on the inputs as stored:
//   h = x + residual, rounded to the dtype (it is stored as residual_out, and the norm is of what is
//   stored); residual_out = h; out = h / sqrt(mean_c(h^2) + eps) * weight.
#pragma once

#include <span>
#include <vector>

#include "core/op.h"

namespace kbench::kernels {

// The epsilon inside the square root, shared by the reference and every variant (rmsnorm's).
inline constexpr double kAddRmsnormEps = 1e-6;

// inputs: x[rows,cols], residual[rows,cols], weight[cols]; outputs: resized to two vectors of
// rows*cols values (out, residual_out).
void AddRmsnormReference(const Problem& p, std::span<const Tensor> inputs, std::vector<std::vector<double>>& outputs);

}  // namespace kbench::kernels
