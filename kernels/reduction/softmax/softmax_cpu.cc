// CPU variants of softmax.
//   cpu_naive       one thread, three loops per row straight from the formula: the max, the sum of
//                   exp(x - max), then exp(x - max) again divided by the sum. exp is evaluated twice
//                   per element and the row is read three times.
//   cpu_fused_rows  rows split over every hardware thread; each row widened to float once, the max in
//                   16 lanes, exp(x - max) evaluated once per element by a vectorizable exp
//                   (core/cpu/rows.h: branch-free, within 1 ulp; libm's is a scalar call and dominates
//                   otherwise) into a scratch row summed in lanes, then scaled by 1/sum: one trip
//                   through memory and one exp per element.
#include <cmath>
#include <vector>

#include "core/cpu/parallel.h"
#include "core/cpu/rows.h"
#include "core/cpu/storage.h"
#include "core/cpu/variant.h"
#include "reduction/softmax/softmax.h"

namespace kbench::kernels {
namespace {

void RunNaive(const Problem& p, std::span<const Tensor> t) {
  cpu::Dispatch(p.dtype, [&]<class T>(T) {
    const auto* x = static_cast<const T*>(t[0].data);
    auto* out = static_cast<T*>(t[1].data);
    const int64_t rows = p.dim("rows"), cols = p.dim("cols");
    for (int64_t r = 0; r < rows; ++r) {
      const T* xr = x + r * cols;
      float max = -INFINITY;
      for (int64_t c = 0; c < cols; ++c) max = std::fmax(max, cpu::ToFloat(xr[c]));
      float sum = 0;
      for (int64_t c = 0; c < cols; ++c) sum += std::exp(cpu::ToFloat(xr[c]) - max);
      for (int64_t c = 0; c < cols; ++c)
        out[r * cols + c] = cpu::FromFloat<T>(std::exp(cpu::ToFloat(xr[c]) - max) / sum);
    }
  });
}

void RunFusedRows(const Problem& p, std::span<const Tensor> t) {
  cpu::Dispatch(p.dtype, [&]<class T>(T) {
    const auto* x = static_cast<const T*>(t[0].data);
    auto* out = static_cast<T*>(t[1].data);
    const int64_t rows = p.dim("rows"), cols = p.dim("cols");
    if (rows == 0 || cols == 0) return;
    cpu::ParallelFor(rows, std::max<int64_t>(1, 32768 / cols), [&](int64_t begin, int64_t end) {
      std::vector<float> widened, e(static_cast<size_t>(cols));
      for (int64_t r = begin; r < end; ++r) {
        const float* xr = cpu::RowAsFloat(x + r * cols, cols, widened);
        const float max = cpu::Max(xr, cols);
        for (int64_t c = 0; c < cols; ++c) e[c] = cpu::ExpF(xr[c] - max);
        const float inv_sum = 1.0f / cpu::Sum(e.data(), cols);
        T* o = out + r * cols;
        for (int64_t c = 0; c < cols; ++c) o[c] = cpu::FromFloat<T>(e[c] * inv_sum);
      }
    });
  });
}

}  // namespace

void AddSoftmaxCpuVariants(OpDef& op) {
  op.variants.push_back(cpu::MakeCpuVariant(
      op, "cpu_naive", "One thread, the formula as written (three passes).", RunNaive));
  op.variants.push_back(
      cpu::MakeCpuVariant(op, "cpu_fused_rows",
                          "Rows over all threads, lane reductions, one vectorized exp per element.",
                          RunFusedRows));
}

}  // namespace kbench::kernels
