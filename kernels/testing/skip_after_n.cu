// The CUDA variants of testing/skip_after_n.h: one that stops launching its copy after
// kSkipAfterCalls calls, one that copies when launched but captures a do-nothing kernel into a graph.
#include <cuda_runtime.h>

#include <atomic>
#include <memory>

#include "testing/skip_after_n.h"

namespace kbench::kernels {
namespace {

__global__ void SkipCopyKernel(const float* x, float* out, int64_t n) {
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = x[i];
}

// What a skipping kernel costs: a launch that touches nothing.
__global__ void SkipNothingKernel() {}

int LaunchCopy(std::span<const Tensor> t, cudaStream_t s) {
  const int64_t n = t[0].numel;
  if (n > 0)
    SkipCopyKernel<<<(n + 255) / 256, 256, 0, s>>>(static_cast<const float*>(t[0].data), static_cast<float*>(t[1].data), n);
  return static_cast<int>(cudaGetLastError());
}

int LaunchNothing(cudaStream_t s) {
  SkipNothingKernel<<<1, 32, 0, s>>>();
  return static_cast<int>(cudaGetLastError());
}

Variant Cuda(std::string name, std::string description, std::function<int(const Problem&, std::span<const Tensor>, void*)> run) {
  Variant v;
  v.name = std::move(name);
  v.description = std::move(description);
  v.backend = Backend::kCuda;
  v.dtypes = {Dtype::kF32};
  v.run_cuda = std::move(run);
  return v;
}

}  // namespace

void AddSkipAfterNCudaVariants(OpDef& op) {
  auto calls = std::make_shared<std::atomic<int>>(0);
  op.variants.push_back(Cuda("cuda_quits_after_n", "Test-only: copies for its first 3 calls in the process, then launches an empty kernel",
                             [calls](const Problem&, std::span<const Tensor> t, void* stream) {
                               auto s = static_cast<cudaStream_t>(stream);
                               return calls->fetch_add(1) < kSkipAfterCalls ? LaunchCopy(t, s) : LaunchNothing(s);
                             }));
  op.variants.push_back(Cuda("cuda_quits_in_graph", "Test-only: copies when launched, captures an empty kernel into a graph",
                             [](const Problem&, std::span<const Tensor> t, void* stream) {
                               auto s = static_cast<cudaStream_t>(stream);
                               cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
                               if (cudaError_t e = cudaStreamIsCapturing(s, &capture); e != cudaSuccess) return static_cast<int>(e);
                               return capture == cudaStreamCaptureStatusActive ? LaunchNothing(s) : LaunchCopy(t, s);
                             }));
}

}  // namespace kbench::kernels
