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
  v.skip_reason = cpu::NaiveFlopLimitSkip(op);
  v.run_cpu = AttentionPlain;
  op.variants.push_back(std::move(v));
}

}  // namespace kbench::kernels
