#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "worker/cuda/cuda_util.cuh"

namespace kbench::worker {
namespace {

__device__ uint64_t GlobalTimerNs() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void SpinKernel(uint64_t ns) {
  const uint64_t start = GlobalTimerNs();
  while (GlobalTimerNs() - start < ns) {
  }
}

__device__ float Uniform(uint64_t seed, size_t i) {
  uint64_t x = seed * 0x9e3779b97f4a7c15ull + i;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  x ^= x >> 31;
  return static_cast<float>(x >> 40) * (2.0f / 16777216.0f) - 1.0f;
}

__global__ void FillKernel(void* data, size_t n, int kind, uint64_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    const float v = Uniform(seed, i);
    switch (kind) {
      case 0: static_cast<float*>(data)[i] = v; break;
      case 1: static_cast<__nv_bfloat16*>(data)[i] = __float2bfloat16(v); break;
      case 2: static_cast<__half*>(data)[i] = __float2half(v); break;
      default: static_cast<__nv_fp8_e4m3*>(data)[i] = __nv_fp8_e4m3(v); break;
    }
  }
}

// Reads every 16 bytes of the buffer; the impossible store keeps the loads from being removed.
__global__ void FlushReadKernel(const int4* __restrict__ data, size_t n, int* sink) {
  int acc = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    const int4 v = __ldcg(data + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x7f3a5c1d && threadIdx.x == 1023) *sink = acc;
}

}  // namespace

cudaError_t LaunchSpin(cudaStream_t stream, uint64_t ns) {
  SpinKernel<<<1, 1, 0, stream>>>(ns);
  return cudaGetLastError();
}

cudaError_t FlushL2(cudaStream_t stream, void* buffer, size_t bytes) {
  // Reading, not writing: a memset would leave L2 full of dirty lines whose write-back then lands
  // inside the next timed kernel (seen as a few percent against ncu's own cache flush).
  FlushReadKernel<<<1024, 256, 0, stream>>>(static_cast<const int4*>(buffer), bytes / sizeof(int4),
                                            static_cast<int*>(buffer));
  return cudaGetLastError();
}

cudaError_t FillRandom(cudaStream_t stream, void* data, size_t count, int kind, uint64_t seed) {
  FillKernel<<<1024, 256, 0, stream>>>(data, count, kind, seed);
  return cudaGetLastError();
}

}  // namespace kbench::worker
