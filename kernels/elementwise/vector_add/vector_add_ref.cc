// CPU reference of vector_add (see vector_add_ref.h).
#include "elementwise/vector_add/vector_add_ref.h"

namespace kbench::kernels {

void VectorAddReference(const Problem& p, std::span<const Tensor> inputs, std::vector<std::vector<double>>& outputs) {
  const int64_t n = p.dim("N");
  const Tensor& x = inputs[0];
  const Tensor& y = inputs[1];
  outputs.resize(1);
  std::vector<double>& out = outputs[0];
  out.assign(static_cast<size_t>(n), 0.0);
  for (int64_t i = 0; i < n; ++i) out[i] = LoadAsDouble(x.data, x.dtype, i) + LoadAsDouble(y.data, y.dtype, i);
}

}  // namespace kbench::kernels
