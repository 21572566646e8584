// tiny_scale on CUDA: out[i] = 2 * x[i], f32 only.
//   cuda_v1_naive  one element per thread.
// Registered beside its kernel, as the suite's CUDA rungs are; the unit test only registers it (it
// needs no GPU for that) and never launches it.
#include "core/cuda/cuda_check.cuh"
#include "tiny_scale/tiny_scale.h"

namespace kbench::kernels {
namespace {

constexpr int kBlock = 256;

__global__ void TinyScaleV1(const float* __restrict__ x, float* __restrict__ out, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 2 * x[i];
}

int RunV1(const Problem& p, std::span<const Tensor> t, void* stream) {
  const int64_t n = p.dim("N");
  if (n == 0) return 0;
  TinyScaleV1<<<static_cast<unsigned>(cuda::CeilDiv(n, kBlock)), kBlock, 0, cuda::AsStream(stream)>>>(
      static_cast<const float*>(t[0].data), static_cast<float*>(t[1].data), n);
  KB_LAUNCH_CHECK();
  return 0;
}

}  // namespace

void AddTinyScaleCudaVariants(OpDef& op) {
  op.variants.push_back({
      .name = "cuda_v1_naive",
      .description = "One element per thread.",
      .backend = Backend::kCuda,
      .dtypes = {Dtype::kF32},
      .skip_reason = [](const Problem&) { return std::string(); },
      .run_cuda = RunV1,
      .launches = [](const Problem&) {
        return std::vector<LaunchInfo>{{"TinyScaleV1", reinterpret_cast<const void*>(&TinyScaleV1), kBlock, 0}};
      },
  });
}

}  // namespace kbench::kernels
