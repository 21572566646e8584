// CPU reference of silu_mul_fp8_quant (see silu_mul_fp8_quant.h).
#include <cmath>
#include <vector>

#include "quant/common/quant_inputs.h"
#include "quant/silu_mul_fp8_quant/silu_mul_fp8_quant.h"

namespace kbench::kernels {

void SiluMulFp8QuantReference(const Problem& p, std::span<const Tensor> inputs,
                              std::vector<std::vector<double>>& outputs) {
  const int64_t rows = p.dim("rows"), d = p.dim("d");
  const Tensor& x = inputs[0];
  outputs.resize(2);
  outputs[0].assign(static_cast<size_t>(rows * d), 0.0);
  outputs[1].assign(static_cast<size_t>(rows), 0.0);
  std::vector<double> h(static_cast<size_t>(d));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < d; ++c) {
      const double g = LoadAsDouble(x.data, x.dtype, r * 2 * d + c);
      h[c] = g / (1.0 + std::exp(-g)) * LoadAsDouble(x.data, x.dtype, r * 2 * d + d + c);
    }
    quant::QuantizeRowReference(h.data(), d, outputs[0].data() + r * d, &outputs[1][r]);
  }
}

}  // namespace kbench::kernels
