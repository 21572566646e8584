// Registers the rest of the memory-bound suite (silu_mul_bias, reduce_sum, layernorm, add_rmsnorm),
// each with its CPU variants; CUDA variants come later, from AddCudaVariants.
#include "reduction/memory_bound_ops.h"

#include <utility>

#include "core/builtin_ops.h"
#include "core/registry.h"

namespace kbench::kernels {

void AddMemoryBoundOps(Registry& registry) {
  struct Entry {
    OpDef (*make)();
    void (*add_cpu)(OpDef&);
  };
  static constexpr Entry kEntries[] = {
      {MakeSiluMulBiasOp, AddSiluMulBiasCpuVariants},
      {MakeReduceSumOp, AddReduceSumCpuVariants},
      {MakeLayernormOp, AddLayernormCpuVariants},
      {MakeAddRmsnormOp, AddAddRmsnormCpuVariants},
  };
  for (const Entry& e : kEntries) {
    OpDef op = e.make();
    e.add_cpu(op);
    registry.Add(std::move(op));
  }
}

}  // namespace kbench::kernels
