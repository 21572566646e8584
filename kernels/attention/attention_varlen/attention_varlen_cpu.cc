// The CPU rung of attention_varlen:
//   cpu_naive  the plain same-precision implementation, one sequence at a time (the attention op's
//              AttentionPlain on each sequence gathered into a batch of one), one thread. The CPU
//              backend runs the small and edge presets with it.
#include <string>

#include "attention/attention_varlen/attention_varlen.h"
#include "core/cpu/limits.h"

namespace kbench::kernels {

void AddAttentionVarlenCpuVariants(OpDef& op) {
  Variant v;
  v.name = "cpu_naive";
  v.description = "Plain attention in the dtype on one thread, sequence by sequence: scores, softmax, P V.";
  v.backend = Backend::kCpu;
  v.dtypes = {Dtype::kBF16, Dtype::kF16};
  // ~1 GFLOP/s on one core, as the attention op's cpu_naive.
  v.skip_reason = cpu::DataLimitSkip(op, [cost = op.cost](const Problem& p) -> std::string {
    const double flops = cost(p).flops;
    if (flops > 2e10) return "too large for one CPU thread (" + std::to_string(static_cast<int64_t>(flops / 1e9)) + " GFLOP; limit 20)";
    return "";
  });
  v.run_cpu = AttentionVarlenPlain;
  op.variants.push_back(std::move(v));
}

}  // namespace kbench::kernels
