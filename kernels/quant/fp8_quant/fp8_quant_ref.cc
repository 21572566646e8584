// CPU reference of fp8_quant (see fp8_quant.h): per-token rows by QuantizeRowReference; with
// static_scale every element divided by the given scale (0 for a zero scale) and the scale repeated
// per row.
#include <vector>

#include "quant/common/quant_inputs.h"
#include "quant/fp8_quant/fp8_quant.h"

namespace kbench::kernels {

void Fp8QuantReference(const Problem& p, std::span<const Tensor> inputs, std::vector<std::vector<double>>& outputs) {
  const int64_t rows = p.dim("rows"), cols = p.dim("cols");
  const Tensor& x = inputs[0];
  outputs.resize(2);
  std::vector<double>& q = outputs[0];
  std::vector<double>& scales = outputs[1];
  q.assign(static_cast<size_t>(rows * cols), 0.0);
  scales.assign(static_cast<size_t>(rows), 0.0);
  const bool is_static = p.has_flag(quant::kStaticScaleFlag);
  const double s = LoadAsDouble(inputs[1].data, inputs[1].dtype, 0);
  std::vector<double> row(static_cast<size_t>(cols));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) row[c] = LoadAsDouble(x.data, x.dtype, r * cols + c);
    if (is_static) {
      scales[r] = s;
      for (int64_t c = 0; c < cols; ++c) q[r * cols + c] = s > 0 ? row[c] / s : 0.0;
    } else {
      quant::QuantizeRowReference(row.data(), cols, q.data() + r * cols, &scales[r]);
    }
  }
}

}  // namespace kbench::kernels
