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
  v.skip_reason = cpu::NaiveFlopLimitSkip(op);
  v.run_cpu = AttentionVarlenPlain;
  op.variants.push_back(std::move(v));
}

}  // namespace kbench::kernels
