// CPU reference of silu_mul_bias: out[r,c] = silu(x[r,c] + b[c]) * y[r,c], silu(z) = z / (1 + e^-z),
// in double on the inputs as stored.
#pragma once

#include <span>
#include <vector>

#include "core/op.h"

namespace kbench::kernels {

// inputs: x[rows,cols], y[rows,cols], b[cols]; outputs: resized to one vector of rows*cols values.
void SiluMulBiasReference(const Problem& p, std::span<const Tensor> inputs, std::vector<std::vector<double>>& outputs);

}  // namespace kbench::kernels
