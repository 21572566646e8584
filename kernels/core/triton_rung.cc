// AddTritonRung; see triton_rung.h.
#include "core/triton_rung.h"

#ifdef KBENCH_HAVE_CUDA
#include <cuda_runtime_api.h>

namespace kbench::kernels {

void AddTritonRung(OpDef& op, TritonRungSpec spec) {
  Variant v;
  v.name = std::move(spec.name);
  v.description = std::move(spec.description);
  v.backend = Backend::kCuda;
  v.dtypes = std::move(spec.dtypes);
  v.min_compute_capability = 80;
  v.skip_reason = [](const Problem&) { return std::string(); };
  v.triton_source = spec.source;
  v.run_cuda = [](const Problem&, std::span<const Tensor>, void*) { return static_cast<int>(cudaErrorNotSupported); };
  op.variants.push_back(std::move(v));
}

}  // namespace kbench::kernels
#endif
