// CPU variant of layernorm.
//   cpu_naive  one thread; per row a float sum of the deviations from the row's first value for the
//              mean (a float sum of x itself would carry the row's offset and lose its low bits),
//              a second loop for the squared deviations from the mean, then a normalizing loop:
//              three trips over the row, straight from the formula.
#include <cmath>

#include "core/cpu/limits.h"
#include "core/cpu/storage.h"
#include "reduction/layernorm/layernorm.h"
#include "reduction/layernorm/layernorm_ref.h"

namespace kbench::kernels {
namespace {

constexpr float kEps = static_cast<float>(kLayernormEps);

void RunNaive(const Problem& p, std::span<const Tensor> t) {
  cpu::Dispatch(p.dtype, [&]<class T>(T) {
    const auto* x = static_cast<const T*>(t[0].data);
    const auto* gamma = static_cast<const T*>(t[1].data);
    const auto* beta = static_cast<const T*>(t[2].data);
    auto* out = static_cast<T*>(t[3].data);
    const int64_t rows = p.dim("rows"), cols = p.dim("cols");
    for (int64_t r = 0; r < rows; ++r) {
      const T* xr = x + r * cols;
      const float pivot = cols > 0 ? cpu::ToFloat(xr[0]) : 0.0f;
      float sum = 0;
      for (int64_t c = 0; c < cols; ++c) sum += cpu::ToFloat(xr[c]) - pivot;
      const float mean = pivot + sum / static_cast<float>(cols);
      float sq = 0;
      for (int64_t c = 0; c < cols; ++c) sq += (cpu::ToFloat(xr[c]) - mean) * (cpu::ToFloat(xr[c]) - mean);
      const float rstd = 1.0f / std::sqrt(sq / static_cast<float>(cols) + kEps);
      for (int64_t c = 0; c < cols; ++c)
        out[r * cols + c] =
            cpu::FromFloat<T>((cpu::ToFloat(xr[c]) - mean) * rstd * cpu::ToFloat(gamma[c]) + cpu::ToFloat(beta[c]));
    }
  });
}

}  // namespace

void AddLayernormCpuVariants(OpDef& op) {
  op.variants.push_back({
      .name = "cpu_naive",
      .description = "One thread, three loops per row.",
      .backend = Backend::kCpu,
      .dtypes = {Dtype::kF32, Dtype::kBF16},
      .skip_reason = cpu::DataLimitSkip(op),
      .run_cpu = RunNaive,
      .run_cuda = nullptr,
      .launches = nullptr,
  });
}

}  // namespace kbench::kernels
