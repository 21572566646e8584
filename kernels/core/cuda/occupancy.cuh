// How many blocks of a kernel the current device holds at once, for kernels whose grid is one
// resident wave (the pipelined row kernels, the split-K GEMV). Cached per (device, kernel, block,
// shared memory): the launch path runs inside the timed window whenever the host is slower than the
// spin in front of it, and an occupancy query costs microseconds.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <utility>
#include <tuple>

namespace kbench::kernels::cuda {

// SMs x resident blocks per SM (at least 1 each).
inline int ResidentBlocks(const void* kernel, int threads, size_t dynamic_smem) {
  static std::mutex mu;
  static auto* cache = new std::map<std::tuple<int, const void*, int, size_t>, int>();  // never destroyed
  int device = 0;
  cudaGetDevice(&device);
  const auto key = std::make_tuple(device, kernel, threads, dynamic_smem);
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = cache->find(key); it != cache->end()) return it->second;
  int sms = 1, per_sm = 1;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, dynamic_smem);
  const int blocks = std::max(sms, 1) * std::max(per_sm, 1);
  cache->emplace(key, blocks);
  return blocks;
}

// Lets `kernel` launch with `bytes` of dynamic shared memory. Past 48 KB, its static shared memory
// counted, a kernel must opt in (cudaFuncAttributeMaxDynamicSharedMemorySize; a 48 KB ring plus a
// few hundred static bytes fails with cudaErrorInvalidValue otherwise). The attribute is a maximum
// per kernel, so it is only ever raised, once per (device, kernel) and new largest size: like
// ResidentBlocks, this runs on the launch path, and one kernel can be launched with several ring
// sizes (the any-geometry instantiations, whose block size follows the row).
inline cudaError_t AllowDynamicSmem(const void* kernel, size_t bytes) {
  static std::mutex mu;
  static auto* allowed = new std::map<std::pair<int, const void*>, size_t>();  // never destroyed
  int device = 0;
  cudaGetDevice(&device);
  std::lock_guard<std::mutex> lock(mu);
  size_t& max_bytes = (*allowed)[{device, kernel}];
  if (bytes <= max_bytes) return cudaSuccess;
  if (const cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                 static_cast<int>(bytes));
      e != cudaSuccess)
    return e;
  max_bytes = bytes;
  return cudaSuccess;
}

}  // namespace kbench::kernels::cuda
