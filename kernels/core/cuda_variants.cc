// AddCudaVariants: adds each op's CUDA ladder to the op already in the registry (its OpDef and CPU
// variants come first, from registry.cc and AddMemoryBoundOps). Compiled in every build (the source
// glob takes core/*.cc) but empty without CUDA.
#include "core/builtin_ops.h"

#ifdef KBENCH_HAVE_CUDA

#include "core/cuda_variants.h"
#include "core/registry.h"

namespace kbench::kernels {

void AddCudaVariants(Registry& registry) {
  struct Entry {
    const char* op;
    void (*add)(OpDef&);
  };
  static constexpr Entry kEntries[] = {
      {"vector_add", AddVectorAddCudaVariants}, {"silu_mul_bias", AddSiluMulBiasCudaVariants},
      {"reduce_sum", AddReduceSumCudaVariants}, {"rmsnorm", AddRmsnormCudaVariants},
      {"softmax", AddSoftmaxCudaVariants},      {"layernorm", AddLayernormCudaVariants},
      {"add_rmsnorm", AddAddRmsnormCudaVariants}, {"gemm", AddGemmCudaVariants},
  };
  for (const Entry& e : kEntries) {
    // An op missing from the registry (not built into this suite) simply gets no CUDA variants.
    if (OpDef* op = registry.FindMutable(e.op)) e.add(*op);
  }
}

}  // namespace kbench::kernels

#endif  // KBENCH_HAVE_CUDA
