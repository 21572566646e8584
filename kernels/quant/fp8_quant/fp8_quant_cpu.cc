// CPU variant of fp8_quant.
//   cpu_naive  one thread; per row a max of |x| in float, then each element times 448 / max rounded
//              to E4M3 by the host conversion (nearest even, saturating), as the CUDA rungs do.
#include <cmath>

#include "core/cpu/storage.h"
#include "core/cpu/variant.h"
#include "quant/common/quant_inputs.h"
#include "quant/fp8_quant/fp8_quant.h"

namespace kbench::kernels {
namespace {

void RunNaive(const Problem& p, std::span<const Tensor> t) {
  const auto* x = static_cast<const cpu::Bf16*>(t[0].data);
  const float s = *static_cast<const float*>(t[1].data);
  auto* q = static_cast<uint8_t*>(t[2].data);
  auto* scales = static_cast<float*>(t[3].data);
  const int64_t rows = p.dim("rows"), cols = p.dim("cols");
  const bool is_static = p.has_flag(quant::kStaticScaleFlag);
  const float max = static_cast<float>(quant::kFp8Max);
  for (int64_t r = 0; r < rows; ++r) {
    const cpu::Bf16* xr = x + r * cols;
    float inv = 0;
    if (is_static) {
      scales[r] = s;
      inv = s > 0 ? 1.0f / s : 0.0f;
    } else {
      float absmax = 0;
      for (int64_t c = 0; c < cols; ++c) absmax = std::fmax(absmax, std::fabs(cpu::ToFloat(xr[c])));
      scales[r] = absmax / max;
      inv = absmax > 0 ? max / absmax : 0.0f;
    }
    for (int64_t c = 0; c < cols; ++c) q[r * cols + c] = FloatToFp8E4M3(cpu::ToFloat(xr[c]) * inv);
  }
}

}  // namespace

void AddFp8QuantCpuVariants(OpDef& op) {
  Variant v = cpu::MakeCpuVariant(op, "cpu_naive", "One thread: a row's max, then scale and round.", RunNaive);
  v.dtypes = {Dtype::kBF16};
  op.variants.push_back(std::move(v));
}

}  // namespace kbench::kernels
