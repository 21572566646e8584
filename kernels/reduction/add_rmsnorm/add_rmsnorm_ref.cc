// CPU reference of add_rmsnorm (see add_rmsnorm_ref.h).
#include "reduction/add_rmsnorm/add_rmsnorm_ref.h"

#include <cmath>

namespace kbench::kernels {

void AddRmsnormReference(const Problem& p, std::span<const Tensor> inputs, std::vector<std::vector<double>>& outputs) {
  const int64_t rows = p.dim("rows"), cols = p.dim("cols");
  const Tensor& x = inputs[0];
  const Tensor& residual = inputs[1];
  const Tensor& w = inputs[2];
  outputs.resize(2);
  std::vector<double>& out = outputs[0];
  std::vector<double>& h = outputs[1];  // residual_out
  out.assign(static_cast<size_t>(rows * cols), 0.0);
  h.assign(static_cast<size_t>(rows * cols), 0.0);
  for (int64_t i = 0; i < rows * cols; ++i) {
    // The stored sum: the exact sum of two stored values, rounded once to the dtype.
    float sum = static_cast<float>(LoadAsDouble(x.data, x.dtype, i) + LoadAsDouble(residual.data, residual.dtype, i));
    if (x.dtype == Dtype::kBF16) sum = RoundBf16(sum);
    h[i] = sum;
  }
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t base = r * cols;
    double sum_sq = 0;
    for (int64_t c = 0; c < cols; ++c) sum_sq += h[base + c] * h[base + c];
    const double rstd = 1.0 / std::sqrt(sum_sq / static_cast<double>(cols) + kAddRmsnormEps);
    for (int64_t c = 0; c < cols; ++c) out[base + c] = h[base + c] * rstd * LoadAsDouble(w.data, w.dtype, c);
  }
}

}  // namespace kbench::kernels
