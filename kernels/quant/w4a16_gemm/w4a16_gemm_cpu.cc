// The CPU rung of w4a16_gemm: dequantize each weight row once into f32, then dot it with every row
// of A in f32 (the products are exact in f32: see the scales in w4a16_gemm.h). Slow by design; it
// lets a CPU worker run the small and edge presets.
#include <string>
#include <utility>
#include <vector>

#include "core/cpu/variant.h"
#include "quant/w4a16_gemm/w4a16_gemm.h"

namespace kbench::kernels {
namespace {

void RunCpu(const Problem& p, std::span<const Tensor> t) {
  const int64_t m = p.dim("M"), n = p.dim("N"), k = p.dim("K");
  const auto* a = static_cast<const uint16_t*>(t[0].data);
  const auto* w = static_cast<const uint32_t*>(t[1].data);
  const auto* scales = static_cast<const uint16_t*>(t[2].data);
  const auto* zeros = static_cast<const uint16_t*>(t[3].data);
  auto* c = static_cast<uint16_t*>(t[6].data);
  std::vector<float> row(static_cast<size_t>(k));
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t kk = 0; kk < k; ++kk) row[kk] = static_cast<float>(W4Dequant(w, scales, zeros, k, j, kk));
    for (int64_t i = 0; i < m; ++i) {
      float acc = 0;
      for (int64_t kk = 0; kk < k; ++kk) acc += Bf16ToFloat(a[i * k + kk]) * row[kk];
      c[i * n + j] = FloatToBf16(acc);
    }
  }
}

std::string SkipCpu(const Problem& p) {
  const double flops = 2.0 * p.dim("M") * p.dim("N") * p.dim("K");
  if (flops > 2e10)
    return "the naive CPU rung would take minutes (" + std::to_string(flops / 1e9) + " GFLOP; limit 20)";
  return "";
}

}  // namespace

void AddW4a16GemmCpuVariants(OpDef& op) {
  Variant v = cpu::MakeCpuVariant(
      op, "cpu_naive", "Dequantize a weight row to f32, then f32 dot products with every row of A.", RunCpu, SkipCpu);
  v.dtypes = {Dtype::kBF16};
  op.variants.push_back(std::move(v));
}

}  // namespace kbench::kernels
