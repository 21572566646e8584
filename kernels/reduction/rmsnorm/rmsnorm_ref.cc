// CPU reference of rmsnorm (see rmsnorm_ref.h).
#include "reduction/rmsnorm/rmsnorm_ref.h"

#include <cmath>

namespace kbench::kernels {

void RmsnormReference(const Problem& p, std::span<const Tensor> inputs, std::vector<std::vector<double>>& outputs) {
  const int64_t rows = p.dim("rows"), cols = p.dim("cols");
  const Tensor& x = inputs[0];
  const Tensor& w = inputs[1];
  outputs.resize(1);
  std::vector<double>& out = outputs[0];
  out.assign(static_cast<size_t>(rows * cols), 0.0);
  if (cols == 0) return;
  std::vector<double> weight(static_cast<size_t>(cols));
  for (int64_t c = 0; c < cols; ++c) weight[c] = LoadAsDouble(w.data, w.dtype, c);
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t base = r * cols;
    double sum_sq = 0;
    for (int64_t c = 0; c < cols; ++c) {
      const double v = LoadAsDouble(x.data, x.dtype, base + c);
      sum_sq += v * v;
    }
    const double rstd = 1.0 / std::sqrt(sum_sq / static_cast<double>(cols) + kRmsnormEps);
    for (int64_t c = 0; c < cols; ++c) out[base + c] = LoadAsDouble(x.data, x.dtype, base + c) * rstd * weight[c];
  }
}

}  // namespace kbench::kernels
