// CPU reference of tiny_scale (see tiny_scale_ref.h).
#include "tiny_scale/tiny_scale_ref.h"

namespace kbench::kernels {

void TinyScaleReference(const Problem& p, std::span<const Tensor> inputs, std::vector<std::vector<double>>& outputs) {
  const int64_t n = p.dim("N");
  outputs.assign(1, std::vector<double>(static_cast<size_t>(n)));
  for (int64_t i = 0; i < n; ++i) outputs[0][i] = 2 * LoadAsDouble(inputs[0].data, inputs[0].dtype, i);
}

}  // namespace kbench::kernels
