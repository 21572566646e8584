// CPU variant of rmsnorm_fp8_quant.
//   cpu_naive  one thread; per row the sum of squares in float, y = x * rstd * weight kept in float
//              (fused: never rounded to bf16), its max, then y * 448 / max rounded to E4M3 by the host
//              conversion (nearest even, saturating).
#include <cmath>
#include <vector>

#include "core/cpu/storage.h"
#include "core/cpu/variant.h"
#include "quant/common/quant_inputs.h"
#include "quant/rmsnorm_fp8_quant/rmsnorm_fp8_quant.h"
#include "reduction/rmsnorm/rmsnorm_ref.h"

namespace kbench::kernels {
namespace {

void RunNaive(const Problem& p, std::span<const Tensor> t) {
  const auto* x = static_cast<const cpu::Bf16*>(t[0].data);
  const auto* w = static_cast<const cpu::Bf16*>(t[1].data);
  auto* q = static_cast<uint8_t*>(t[2].data);
  auto* scales = static_cast<float*>(t[3].data);
  const int64_t rows = p.dim("rows"), cols = p.dim("cols");
  const float max = static_cast<float>(quant::kFp8Max);
  std::vector<float> y(static_cast<size_t>(cols));
  for (int64_t r = 0; r < rows; ++r) {
    float sum_sq = 0;
    for (int64_t c = 0; c < cols; ++c) sum_sq += cpu::ToFloat(x[r * cols + c]) * cpu::ToFloat(x[r * cols + c]);
    const float rstd = 1.0f / std::sqrt(sum_sq / static_cast<float>(cols) + static_cast<float>(kRmsnormEps));
    float absmax = 0;
    for (int64_t c = 0; c < cols; ++c) {
      y[c] = cpu::ToFloat(x[r * cols + c]) * rstd * cpu::ToFloat(w[c]);
      absmax = std::fmax(absmax, std::fabs(y[c]));
    }
    scales[r] = absmax / max;
    const float inv = absmax > 0 ? max / absmax : 0.0f;
    for (int64_t c = 0; c < cols; ++c) q[r * cols + c] = FloatToFp8E4M3(y[c] * inv);
  }
}

}  // namespace

void AddRmsnormFp8QuantCpuVariants(OpDef& op) {
  Variant v = cpu::MakeCpuVariant(op, "cpu_naive", "One thread: norm, max, then scale and round, y kept in float.",
                                  RunNaive);
  v.dtypes = {Dtype::kBF16};
  op.variants.push_back(std::move(v));
}

}  // namespace kbench::kernels
