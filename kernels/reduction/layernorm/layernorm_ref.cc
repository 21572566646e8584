// CPU reference of layernorm (see layernorm_ref.h).
#include "reduction/layernorm/layernorm_ref.h"

#include <cmath>

namespace kbench::kernels {

void LayernormReference(const Problem& p, std::span<const Tensor> inputs, std::vector<std::vector<double>>& outputs) {
  const int64_t rows = p.dim("rows"), cols = p.dim("cols");
  const Tensor& x = inputs[0];
  const Tensor& gamma = inputs[1];
  const Tensor& beta = inputs[2];
  outputs.resize(1);
  std::vector<double>& out = outputs[0];
  out.assign(static_cast<size_t>(rows * cols), 0.0);
  if (cols == 0) return;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t base = r * cols;
    double sum = 0;
    for (int64_t c = 0; c < cols; ++c) sum += LoadAsDouble(x.data, x.dtype, base + c);
    const double mean = sum / static_cast<double>(cols);
    double sq = 0;  // two passes: no cancellation
    for (int64_t c = 0; c < cols; ++c) {
      const double d = LoadAsDouble(x.data, x.dtype, base + c) - mean;
      sq += d * d;
    }
    const double rstd = 1.0 / std::sqrt(sq / static_cast<double>(cols) + kLayernormEps);
    for (int64_t c = 0; c < cols; ++c)
      out[base + c] = (LoadAsDouble(x.data, x.dtype, base + c) - mean) * rstd * LoadAsDouble(gamma.data, gamma.dtype, c) +
                      LoadAsDouble(beta.data, beta.dtype, c);
  }
}

}  // namespace kbench::kernels
