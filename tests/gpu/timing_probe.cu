#include "timing_probe.h"

namespace kbench::gpu_test {
namespace {

__device__ unsigned long long Now() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void EmptyKernel() {}

__global__ void TimedSpinKernel(uint64_t ns, unsigned long long* out) {
  const unsigned long long start = Now();
  unsigned long long t = start;
  while (t - start < ns) t = Now();
  out[0] = start;
  out[1] = t;
}

// Every block spins `ns`; the grid's first start and last end land in out[0], out[1] (reset first).
__global__ void GridTimedSpinKernel(uint64_t ns, unsigned long long* out) {
  const unsigned long long start = Now();
  unsigned long long t = start;
  while (t - start < ns) t = Now();
  if (threadIdx.x == 0) {
    atomicMin(out, start);
    atomicMax(out + 1, t);
  }
}

__global__ void ResetStamps(unsigned long long* out) {
  out[0] = ~0ull;
  out[1] = 0;
}

__global__ void TimerResolutionKernel(unsigned long long* out) {
  unsigned long long best = ~0ull, last = Now();
  for (int i = 0; i < 200000; ++i) {
    const unsigned long long t = Now();
    if (t != last && t - last < best) best = t - last;
    last = t;
  }
  *out = best;
}

}  // namespace

cudaError_t LaunchEmpty(cudaStream_t stream, int blocks, int threads) {
  EmptyKernel<<<blocks, threads, 0, stream>>>();
  return cudaGetLastError();
}

cudaError_t LaunchTimedSpin(cudaStream_t stream, uint64_t ns, unsigned long long* out) {
  TimedSpinKernel<<<1, 1, 0, stream>>>(ns, out);
  return cudaGetLastError();
}

cudaError_t LaunchResetStamps(cudaStream_t stream, unsigned long long* out) {
  ResetStamps<<<1, 1, 0, stream>>>(out);
  return cudaGetLastError();
}

cudaError_t LaunchGridTimedSpin(cudaStream_t stream, int blocks, int threads, uint64_t ns, unsigned long long* out) {
  GridTimedSpinKernel<<<blocks, threads, 0, stream>>>(ns, out);
  return cudaGetLastError();
}

cudaError_t LaunchTimerResolution(cudaStream_t stream, unsigned long long* out) {
  TimerResolutionKernel<<<1, 1, 0, stream>>>(out);
  return cudaGetLastError();
}

}  // namespace kbench::gpu_test
