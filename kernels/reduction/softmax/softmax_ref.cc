// CPU reference of softmax (see softmax_ref.h).
#include "reduction/softmax/softmax_ref.h"

#include <cmath>

namespace kbench::kernels {

void SoftmaxReference(const Problem& p, std::span<const Tensor> inputs, std::vector<std::vector<double>>& outputs) {
  const int64_t rows = p.dim("rows"), cols = p.dim("cols");
  const Tensor& x = inputs[0];
  outputs.resize(1);
  std::vector<double>& out = outputs[0];
  out.assign(static_cast<size_t>(rows * cols), 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    double* o = out.data() + r * cols;
    double max = -INFINITY;
    for (int64_t c = 0; c < cols; ++c) max = std::fmax(max, LoadAsDouble(x.data, x.dtype, r * cols + c));
    double sum = 0;
    for (int64_t c = 0; c < cols; ++c) sum += o[c] = std::exp(LoadAsDouble(x.data, x.dtype, r * cols + c) - max);
    for (int64_t c = 0; c < cols; ++c) o[c] /= sum;
  }
}

}  // namespace kbench::kernels
