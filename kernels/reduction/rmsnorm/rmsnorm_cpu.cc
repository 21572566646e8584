// CPU variants of rmsnorm.
//   cpu_naive       one thread; per row a scalar sum of squares (one float accumulator, a serial
//                   dependency chain the compiler may not vectorize), then a second loop that scales.
//   cpu_fused_rows  rows split over every hardware thread; each row widened to float once, its sum of
//                   squares in 16 independent lanes (vectorized, smaller rounding error), then scaled
//                   while the row is still in cache: one trip through memory, as a GPU kernel does it.
#include <cmath>
#include <vector>

#include "core/cpu/parallel.h"
#include "core/cpu/rows.h"
#include "core/cpu/storage.h"
#include "core/cpu/variant.h"
#include "reduction/rmsnorm/rmsnorm.h"
#include "reduction/rmsnorm/rmsnorm_ref.h"

namespace kbench::kernels {
namespace {

constexpr float kEps = static_cast<float>(kRmsnormEps);

void RunNaive(const Problem& p, std::span<const Tensor> t) {
  cpu::Dispatch(p.dtype, [&]<class T>(T) {
    const auto* x = static_cast<const T*>(t[0].data);
    const auto* w = static_cast<const T*>(t[1].data);
    auto* out = static_cast<T*>(t[2].data);
    const int64_t rows = p.dim("rows"), cols = p.dim("cols");
    for (int64_t r = 0; r < rows; ++r) {
      const T* xr = x + r * cols;
      float sum_sq = 0;
      for (int64_t c = 0; c < cols; ++c) sum_sq += cpu::ToFloat(xr[c]) * cpu::ToFloat(xr[c]);
      const float rstd = 1.0f / std::sqrt(sum_sq / static_cast<float>(cols) + kEps);
      for (int64_t c = 0; c < cols; ++c)
        out[r * cols + c] = cpu::FromFloat<T>(cpu::ToFloat(xr[c]) * rstd * cpu::ToFloat(w[c]));
    }
  });
}

void RunFusedRows(const Problem& p, std::span<const Tensor> t) {
  cpu::Dispatch(p.dtype, [&]<class T>(T) {
    const auto* x = static_cast<const T*>(t[0].data);
    const auto* w = static_cast<const T*>(t[1].data);
    auto* out = static_cast<T*>(t[2].data);
    const int64_t rows = p.dim("rows"), cols = p.dim("cols");
    if (rows == 0 || cols == 0) return;
    std::vector<float> weight(static_cast<size_t>(cols));
    for (int64_t c = 0; c < cols; ++c) weight[c] = cpu::ToFloat(w[c]);
    // ~32K elements per thread at least, so small problems are not dominated by thread start-up.
    cpu::ParallelFor(rows, std::max<int64_t>(1, 32768 / cols), [&](int64_t begin, int64_t end) {
      std::vector<float> scratch;
      for (int64_t r = begin; r < end; ++r) {
        const float* xr = cpu::RowAsFloat(x + r * cols, cols, scratch);
        const float rstd = 1.0f / std::sqrt(cpu::SumOfSquares(xr, cols) / static_cast<float>(cols) + kEps);
        T* o = out + r * cols;
        for (int64_t c = 0; c < cols; ++c) o[c] = cpu::FromFloat<T>(xr[c] * rstd * weight[c]);
      }
    });
  });
}

}  // namespace

void AddRmsnormCpuVariants(OpDef& op) {
  op.variants.push_back(cpu::MakeCpuVariant(
      op, "cpu_naive", "One thread, a scalar sum of squares then a scaling loop.",
      RunNaive));
  op.variants.push_back(
      cpu::MakeCpuVariant(op, "cpu_fused_rows",
                          "Rows over all threads, 16-lane sums, scaled while in cache.",
                          RunFusedRows));
}

}  // namespace kbench::kernels
