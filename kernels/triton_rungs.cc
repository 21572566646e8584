// The Triton rungs' registration; see triton_rungs.h. Adding one is its <op>_triton.py and a line
// in kTritonRungs (and in kernels/CMakeLists.txt's list of embedded files).
#include "triton_rungs.h"

#ifdef KBENCH_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace kbench::kernels {
#ifdef KBENCH_HAVE_CUDA
namespace embedded {
// Generated from the *_triton.py files (kernels/CMakeLists.txt).
extern const char kVectorAddTriton[], kRmsnormTriton[], kSoftmaxTriton[], kLayernormTriton[], kGemmTriton[];
}  // namespace embedded

namespace {

struct TritonRung {
  const char* op;
  const char* variant;
  const char* description;
  const char* source;
  std::vector<Dtype> dtypes;
};

const TritonRung kTritonRungs[] = {
    {"vector_add", "triton_vector_add", "Triton: one program per 4096 elements, masked tail, float sum",
     embedded::kVectorAddTriton, {Dtype::kF32, Dtype::kBF16}},
    {"rmsnorm", "triton_rmsnorm", "Triton: one program per row, the row in registers, float statistics",
     embedded::kRmsnormTriton, {Dtype::kF32, Dtype::kBF16}},
    {"softmax", "triton_softmax", "Triton: one program per row, the row in registers, float max/exp/sum",
     embedded::kSoftmaxTriton, {Dtype::kF32, Dtype::kBF16}},
    {"layernorm", "triton_layernorm", "Triton: one program per row, the row in registers, float mean/variance",
     embedded::kLayernormTriton, {Dtype::kF32, Dtype::kBF16}},
    {"gemm", "triton_gemm", "Triton: tiled tl.dot on the tensor cores, grouped tile order, autotuned configs",
     embedded::kGemmTriton, {Dtype::kBF16}},
};

}  // namespace

void AddTritonRungs(Registry& registry) {
  for (const TritonRung& rung : kTritonRungs) {
    OpDef* op = registry.FindMutable(rung.op);
    if (op == nullptr) continue;
    Variant v;
    v.name = rung.variant;
    v.description = rung.description;
    v.backend = Backend::kCuda;
    v.dtypes = rung.dtypes;
    v.min_compute_capability = 80;
    v.skip_reason = [](const Problem&) { return std::string(); };
    v.triton_source = rung.source;
    // The CUDA backend measures a Triton rung through worker/triton/; a path that calls run_cuda
    // directly gets "not supported" rather than a silent no-op.
    v.run_cuda = [](const Problem&, std::span<const Tensor>, void*) { return static_cast<int>(cudaErrorNotSupported); };
    op->variants.push_back(std::move(v));
  }
}
#else
void AddTritonRungs(Registry&) {}
#endif

}  // namespace kbench::kernels
