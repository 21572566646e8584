// CPU variant of reduce_sum.
//   cpu_naive  one thread, in index order: a float accumulator per block of kReduceSumMaxChain
//              elements (the longest chain the op's tolerance allows), each block's sum added to a
//              second float accumulator. A serial dependency chain (one add per FP-add latency, not
//              vectorizable without reassociation) with the rounding error of a bounded chain.
#include <algorithm>

#include "core/cpu/limits.h"
#include "core/cpu/storage.h"
#include "reduction/reduce_sum/reduce_sum.h"
#include "reduction/reduce_sum/reduce_sum_ref.h"

namespace kbench::kernels {
namespace {

void RunNaive(const Problem& p, std::span<const Tensor> t) {
  cpu::Dispatch(p.dtype, [&]<class T>(T) {
    const auto* x = static_cast<const T*>(t[0].data);
    const int64_t n = p.dim("N");
    float sum = 0.0f;
    for (int64_t begin = 0; begin < n; begin += kReduceSumMaxChain) {
      const int64_t end = std::min(n, begin + kReduceSumMaxChain);
      float chain = 0.0f;
      for (int64_t i = begin; i < end; ++i) chain += cpu::ToFloat(x[i]);
      sum += chain;
    }
    *static_cast<float*>(t[1].data) = sum;
  });
}

}  // namespace

void AddReduceSumCpuVariants(OpDef& op) {
  op.variants.push_back({
      .name = "cpu_naive",
      .description = "One thread in index order: a float accumulator per 2^16 elements, then their sum.",
      .backend = Backend::kCpu,
      .dtypes = {Dtype::kF32, Dtype::kBF16},
      .skip_reason = cpu::DataLimitSkip(op),
      .run_cpu = RunNaive,
      .run_cuda = nullptr,
      .launches = nullptr,
  });
}

}  // namespace kbench::kernels
