// CUDA variants of the fault-injection op: one correct, one writing far out of bounds (an illegal
// address: a sticky error that poisons the context), one spinning forever (the watchdog's case).
#include <cuda_runtime.h>

#include "testing/fault_injection.h"

namespace kbench::kernels {
namespace {

__global__ void CopyKernel(const float* x, float* out, int64_t n) {
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = x[i];
}

__global__ void OutOfBoundsKernel(float* out) {
  // Far past any allocation: the MMU faults instead of silently corrupting a neighbour.
  out[(int64_t{1} << 40) + threadIdx.x] = 1.0f;
}

__global__ void HangKernel(volatile int* flag) {
  while (*flag == 0) {
  }
}

Variant Cuda(std::string name, std::string description,
             std::function<int(const Problem&, std::span<const Tensor>, void*)> run) {
  Variant v;
  v.name = std::move(name);
  v.description = std::move(description);
  v.backend = Backend::kCuda;
  v.dtypes = {Dtype::kF32};
  v.run_cuda = std::move(run);
  return v;
}

}  // namespace

void AddFaultInjectionCudaVariants(OpDef& op) {
  op.variants.push_back(Cuda("cuda_oob_write", "writes 4 TiB past its output",
                             [](const Problem&, std::span<const Tensor> t, void* s) {
                               OutOfBoundsKernel<<<1, 32, 0, static_cast<cudaStream_t>(s)>>>(static_cast<float*>(t[1].data));
                               return static_cast<int>(cudaGetLastError());
                             }));
  op.variants.push_back(Cuda("cuda_hang", "spins on a flag nothing sets", [](const Problem&, std::span<const Tensor> t, void* s) {
    // The output buffer was poisoned with 0xFF bytes... so spin on a zeroed word instead.
    cudaMemsetAsync(t[1].data, 0, sizeof(int), static_cast<cudaStream_t>(s));
    HangKernel<<<1, 1, 0, static_cast<cudaStream_t>(s)>>>(static_cast<volatile int*>(t[1].data));
    return static_cast<int>(cudaGetLastError());
  }));
  op.variants.push_back(Cuda("cuda_ok", "copies correctly", [](const Problem& p, std::span<const Tensor> t, void* s) {
    const int64_t n = p.dim("N");
    if (n > 0)
      CopyKernel<<<(n + 255) / 256, 256, 0, static_cast<cudaStream_t>(s)>>>(static_cast<const float*>(t[0].data),
                                                                            static_cast<float*>(t[1].data), n);
    return static_cast<int>(cudaGetLastError());
  }));
}

}  // namespace kbench::kernels
