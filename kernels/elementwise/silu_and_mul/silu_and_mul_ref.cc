// CPU reference of silu_and_mul (see silu_and_mul.h).
#include <cmath>
#include <vector>

#include "elementwise/silu_and_mul/silu_and_mul.h"

namespace kbench::kernels {

void SiluAndMulReference(const Problem& p, std::span<const Tensor> inputs, std::vector<std::vector<double>>& outputs) {
  const int64_t rows = p.dim("rows"), d = p.dim("d");
  const Tensor& x = inputs[0];
  outputs.resize(1);
  std::vector<double>& out = outputs[0];
  out.assign(static_cast<size_t>(rows * d), 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < d; ++c) {
      const double g = LoadAsDouble(x.data, x.dtype, r * 2 * d + c);
      const double u = LoadAsDouble(x.data, x.dtype, r * 2 * d + d + c);
      out[r * d + c] = g / (1.0 + std::exp(-g)) * u;
    }
  }
}

}  // namespace kbench::kernels
