// The CPU rung of attention:
//   cpu_naive  the plain same-precision implementation (attention_ref.h): per query row the scores in
//              f32 stored in the dtype, the softmax, then P V, one thread. The CPU backend runs the
//              small and edge presets with it; its error against fp64 is what the tolerance doubles.
#include <string>

#include "attention/attention/attention.h"
#include "attention/attention/attention_ref.h"
#include "core/cpu/limits.h"

namespace kbench::kernels {

void AddAttentionCpuVariants(OpDef& op) {
  Variant v;
  v.name = "cpu_naive";
  v.description = "Plain attention in the dtype on one thread: scores, softmax, P V.";
  v.backend = Backend::kCpu;
  v.dtypes = {Dtype::kBF16, Dtype::kF16};
  // ~1 GFLOP/s on one core: 2e10 FLOPs is ~20 s, past it the canonical shapes would take hours.
  v.skip_reason = cpu::DataLimitSkip(op, [cost = op.cost](const Problem& p) -> std::string {
    const double flops = cost(p).flops;
    if (flops > 2e10) return "too large for one CPU thread (" + std::to_string(static_cast<int64_t>(flops / 1e9)) + " GFLOP; limit 20)";
    return "";
  });
  v.run_cpu = AttentionPlain;
  op.variants.push_back(std::move(v));
}

}  // namespace kbench::kernels
