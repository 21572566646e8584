// Error checks and launch-geometry helpers shared by the CUDA variants. A launcher returns the first
// CUDA error it meets as an int (a cudaError_t, 0 on success): every runtime call goes through
// KB_CUDA_TRY, and every kernel launch is followed by KB_LAUNCH_CHECK (cudaGetLastError).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>

// Returns the error of a CUDA runtime call from the enclosing function (which returns int).
#define KB_CUDA_TRY(expr)                                          \
  do {                                                             \
    const cudaError_t kb_err_ = (expr);                            \
    if (kb_err_ != cudaSuccess) return static_cast<int>(kb_err_);  \
  } while (0)

// After a <<<>>> launch: a bad configuration is reported here, not at the next synchronization.
#define KB_LAUNCH_CHECK() KB_CUDA_TRY(cudaGetLastError())

namespace kbench::kernels::cuda {

inline cudaStream_t AsStream(void* stream) { return static_cast<cudaStream_t>(stream); }

inline int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

inline int RoundUp(int64_t a, int64_t b) { return static_cast<int>(CeilDiv(a, b) * b); }

// Vectorized paths need every pointer 16-byte aligned; cudaMalloc gives 256, an offset view may not.
inline bool Aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

// Multiprocessors of the current device, queried once per device: grid-stride kernels size their grid
// to one wave of resident blocks, and a launcher may run inside a timed loop.
inline cudaError_t SmCount(int* count) {
  constexpr int kMaxDevices = 64;
  static std::atomic<int> cache[kMaxDevices] = {};
  int device = 0;
  if (const cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return e;
  if (device >= 0 && device < kMaxDevices) {
    if (const int cached = cache[device].load(std::memory_order_relaxed); cached > 0) {
      *count = cached;
      return cudaSuccess;
    }
  }
  int sms = 0;
  if (const cudaError_t e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device); e != cudaSuccess)
    return e;
  if (device >= 0 && device < kMaxDevices) cache[device].store(sms, std::memory_order_relaxed);
  *count = std::max(sms, 1);
  return cudaSuccess;
}

// Grid of a grid-stride kernel: one wave of `blocks_per_sm` resident blocks on every SM, but no more
// blocks than there is work for.
inline cudaError_t WaveGrid(int64_t work_items, int block_threads, int blocks_per_sm, unsigned* grid) {
  int sms = 0;
  if (const cudaError_t e = SmCount(&sms); e != cudaSuccess) return e;
  const int64_t needed = std::max<int64_t>(1, CeilDiv(work_items, block_threads));
  *grid = static_cast<unsigned>(std::min<int64_t>(needed, int64_t{sms} * blocks_per_sm));
  return cudaSuccess;
}

}  // namespace kbench::kernels::cuda
