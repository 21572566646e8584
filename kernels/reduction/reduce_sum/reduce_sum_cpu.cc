// CPU variant of reduce_sum.
//   cpu_naive  one thread, one float accumulator, in index order: a serial dependency chain (one add
//              per FP-add latency, not vectorizable without reassociation) and the sequential
//              rounding error that the op's tolerance is sized for.
#include "core/cpu/limits.h"
#include "core/cpu/storage.h"
#include "reduction/reduce_sum/reduce_sum.h"

namespace kbench::kernels {
namespace {

void RunNaive(const Problem& p, std::span<const Tensor> t) {
  cpu::Dispatch(p.dtype, [&]<class T>(T) {
    const auto* x = static_cast<const T*>(t[0].data);
    const int64_t n = p.dim("N");
    float sum = 0.0f;
    for (int64_t i = 0; i < n; ++i) sum += cpu::ToFloat(x[i]);
    *static_cast<float*>(t[1].data) = sum;
  });
}

}  // namespace

void AddReduceSumCpuVariants(OpDef& op) {
  op.variants.push_back({
      .name = "cpu_naive",
      .description = "One thread, one float accumulator in index order.",
      .backend = Backend::kCpu,
      .dtypes = {Dtype::kF32, Dtype::kBF16},
      .skip_reason = cpu::DataLimitSkip(op),
      .run_cpu = RunNaive,
      .run_cuda = nullptr,
      .launches = nullptr,
  });
}

}  // namespace kbench::kernels
