// CPU reference of rmsnorm_fp8_quant (see rmsnorm_fp8_quant.h).
#include <cmath>
#include <vector>

#include "quant/common/quant_inputs.h"
#include "quant/rmsnorm_fp8_quant/rmsnorm_fp8_quant.h"
#include "reduction/rmsnorm/rmsnorm_ref.h"

namespace kbench::kernels {

void RmsnormFp8QuantReference(const Problem& p, std::span<const Tensor> inputs,
                              std::vector<std::vector<double>>& outputs) {
  const int64_t rows = p.dim("rows"), cols = p.dim("cols");
  const Tensor& x = inputs[0];
  const Tensor& w = inputs[1];
  outputs.resize(2);
  outputs[0].assign(static_cast<size_t>(rows * cols), 0.0);
  outputs[1].assign(static_cast<size_t>(rows), 0.0);
  std::vector<double> y(static_cast<size_t>(cols));
  for (int64_t r = 0; r < rows; ++r) {
    double sum_sq = 0;
    for (int64_t c = 0; c < cols; ++c) {
      y[c] = LoadAsDouble(x.data, x.dtype, r * cols + c);
      sum_sq += y[c] * y[c];
    }
    const double rstd = cols > 0 ? 1.0 / std::sqrt(sum_sq / static_cast<double>(cols) + kRmsnormEps) : 0.0;
    for (int64_t c = 0; c < cols; ++c) y[c] *= rstd * LoadAsDouble(w.data, w.dtype, c);
    quant::QuantizeRowReference(y.data(), cols, outputs[0].data() + r * cols, &outputs[1][r]);
  }
}

}  // namespace kbench::kernels
