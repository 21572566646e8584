// CPU variant of add_rmsnorm.
//   cpu_naive  one thread; per row the add (stored to residual_out, rounded as the dtype stores it)
//              with the sum of squares in float, then the scaling loop reading residual_out back.
#include <cmath>

#include "core/cpu/limits.h"
#include "core/cpu/storage.h"
#include "reduction/add_rmsnorm/add_rmsnorm.h"
#include "reduction/add_rmsnorm/add_rmsnorm_ref.h"

namespace kbench::kernels {
namespace {

constexpr float kEps = static_cast<float>(kAddRmsnormEps);

void RunNaive(const Problem& p, std::span<const Tensor> t) {
  cpu::Dispatch(p.dtype, [&]<class T>(T) {
    const auto* x = static_cast<const T*>(t[0].data);
    const auto* residual = static_cast<const T*>(t[1].data);
    const auto* w = static_cast<const T*>(t[2].data);
    auto* out = static_cast<T*>(t[3].data);
    auto* h = static_cast<T*>(t[4].data);
    const int64_t rows = p.dim("rows"), cols = p.dim("cols");
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t base = r * cols;
      float sum_sq = 0;
      for (int64_t c = 0; c < cols; ++c) {
        h[base + c] = cpu::FromFloat<T>(cpu::ToFloat(x[base + c]) + cpu::ToFloat(residual[base + c]));
        const float v = cpu::ToFloat(h[base + c]);
        sum_sq += v * v;
      }
      const float rstd = 1.0f / std::sqrt(sum_sq / static_cast<float>(cols) + kEps);
      for (int64_t c = 0; c < cols; ++c)
        out[base + c] = cpu::FromFloat<T>(cpu::ToFloat(h[base + c]) * rstd * cpu::ToFloat(w[c]));
    }
  });
}

}  // namespace

void AddAddRmsnormCpuVariants(OpDef& op) {
  op.variants.push_back({
      .name = "cpu_naive",
      .description = "One thread, the add with the sum of squares, then scaling.",
      .backend = Backend::kCpu,
      .dtypes = {Dtype::kF32, Dtype::kBF16},
      .skip_reason = cpu::DataLimitSkip(op),
      .run_cpu = RunNaive,
      .run_cuda = nullptr,
      .launches = nullptr,
  });
}

}  // namespace kbench::kernels
