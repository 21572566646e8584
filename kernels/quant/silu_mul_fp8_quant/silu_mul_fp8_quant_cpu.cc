// CPU variant of silu_mul_fp8_quant.
//   cpu_naive  one thread; per row h = silu(gate) * up kept in float (fused: never rounded to bf16),
//              its max, then h * 448 / max rounded to E4M3 by the host conversion.
#include <cmath>
#include <vector>

#include "core/cpu/storage.h"
#include "core/cpu/variant.h"
#include "quant/common/quant_inputs.h"
#include "quant/silu_mul_fp8_quant/silu_mul_fp8_quant.h"

namespace kbench::kernels {
namespace {

void RunNaive(const Problem& p, std::span<const Tensor> t) {
  const auto* x = static_cast<const cpu::Bf16*>(t[0].data);
  auto* q = static_cast<uint8_t*>(t[1].data);
  auto* scales = static_cast<float*>(t[2].data);
  const int64_t rows = p.dim("rows"), d = p.dim("d");
  const float max = static_cast<float>(quant::kFp8Max);
  std::vector<float> h(static_cast<size_t>(d));
  for (int64_t r = 0; r < rows; ++r) {
    float absmax = 0;
    for (int64_t c = 0; c < d; ++c) {
      const float g = cpu::ToFloat(x[r * 2 * d + c]), u = cpu::ToFloat(x[r * 2 * d + d + c]);
      h[c] = g / (1.0f + std::exp(-g)) * u;
      absmax = std::fmax(absmax, std::fabs(h[c]));
    }
    scales[r] = absmax / max;
    const float inv = absmax > 0 ? max / absmax : 0.0f;
    for (int64_t c = 0; c < d; ++c) q[r * d + c] = FloatToFp8E4M3(h[c] * inv);
  }
}

}  // namespace

void AddSiluMulFp8QuantCpuVariants(OpDef& op) {
  Variant v = cpu::MakeCpuVariant(op, "cpu_naive", "One thread: gate, max, then scale and round, h kept in float.",
                                  RunNaive);
  v.dtypes = {Dtype::kBF16};
  op.variants.push_back(std::move(v));
}

}  // namespace kbench::kernels
