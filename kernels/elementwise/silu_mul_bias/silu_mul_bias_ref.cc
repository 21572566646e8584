// CPU reference of silu_mul_bias (see silu_mul_bias_ref.h).
#include "elementwise/silu_mul_bias/silu_mul_bias_ref.h"

#include <cmath>

namespace kbench::kernels {

void SiluMulBiasReference(const Problem& p, std::span<const Tensor> inputs, std::vector<std::vector<double>>& outputs) {
  const int64_t rows = p.dim("rows"), cols = p.dim("cols");
  const Tensor& x = inputs[0];
  const Tensor& y = inputs[1];
  const Tensor& b = inputs[2];
  outputs.resize(1);
  std::vector<double>& out = outputs[0];
  out.assign(static_cast<size_t>(rows * cols), 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      const int64_t i = r * cols + c;
      const double z = LoadAsDouble(x.data, x.dtype, i) + LoadAsDouble(b.data, b.dtype, c);
      out[i] = z / (1.0 + std::exp(-z)) * LoadAsDouble(y.data, y.dtype, i);
    }
  }
}

}  // namespace kbench::kernels
