// CPU variant of silu_and_mul.
//   cpu_naive  one thread, one loop over rows and columns, in float.
#include <cmath>

#include "core/cpu/storage.h"
#include "core/cpu/variant.h"
#include "elementwise/silu_and_mul/silu_and_mul.h"

namespace kbench::kernels {
namespace {

void RunNaive(const Problem& p, std::span<const Tensor> t) {
  const auto* x = static_cast<const cpu::Bf16*>(t[0].data);
  auto* out = static_cast<cpu::Bf16*>(t[1].data);
  const int64_t rows = p.dim("rows"), d = p.dim("d");
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < d; ++c) {
      const float g = cpu::ToFloat(x[r * 2 * d + c]), u = cpu::ToFloat(x[r * 2 * d + d + c]);
      out[r * d + c] = cpu::FromFloat<cpu::Bf16>(g / (1.0f + std::exp(-g)) * u);
    }
  }
}

}  // namespace

void AddSiluAndMulCpuVariants(OpDef& op) {
  Variant v = cpu::MakeCpuVariant(op, "cpu_naive", "One thread, one loop.", RunNaive);
  v.dtypes = {Dtype::kBF16};
  op.variants.push_back(std::move(v));
}

}  // namespace kbench::kernels
