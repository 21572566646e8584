// CPU variant of silu_mul_bias.
//   cpu_naive  one thread, one fused loop over rows and columns, in float: the single-core baseline a
//              CPU worker runs (the fusion itself is free on a CPU: there is no temporary to write).
#include <cmath>

#include "core/cpu/limits.h"
#include "core/cpu/storage.h"
#include "elementwise/silu_mul_bias/silu_mul_bias.h"

namespace kbench::kernels {
namespace {

void RunNaive(const Problem& p, std::span<const Tensor> t) {
  cpu::Dispatch(p.dtype, [&]<class T>(T) {
    const auto* x = static_cast<const T*>(t[0].data);
    const auto* y = static_cast<const T*>(t[1].data);
    const auto* b = static_cast<const T*>(t[2].data);
    auto* out = static_cast<T*>(t[3].data);
    const int64_t rows = p.dim("rows"), cols = p.dim("cols");
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) {
        const int64_t i = r * cols + c;
        const float z = cpu::ToFloat(x[i]) + cpu::ToFloat(b[c]);
        out[i] = cpu::FromFloat<T>(z / (1.0f + std::exp(-z)) * cpu::ToFloat(y[i]));
      }
    }
  });
}

}  // namespace

void AddSiluMulBiasCpuVariants(OpDef& op) {
  op.variants.push_back({
      .name = "cpu_naive",
      .description = "One thread, one fused loop.",
      .backend = Backend::kCpu,
      .dtypes = {Dtype::kF32, Dtype::kBF16},
      .skip_reason = cpu::DataLimitSkip(op),
      .run_cpu = RunNaive,
      .run_cuda = nullptr,
      .launches = nullptr,
  });
}

}  // namespace kbench::kernels
