// How many clusters of a kernel the current device holds at once: whether a split-K grid whose
// splits form clusters runs in one wave (w4a16's wgmma rung), cached per (device, kernel, block,
// shared memory, cluster size) as ResidentBlocks (occupancy.cuh) is, for the same reason; and the
// shared memory that keeps a block alone on its SM (cached per device).
#pragma once

#include <cuda_runtime.h>

#include <map>
#include <mutex>
#include <tuple>

namespace kbench::kernels::cuda {

// Clusters of `cluster` blocks (along y) of `kernel` with `threads` a block and `dynamic_smem` bytes;
// 0 where the query fails.
inline int ResidentClusters(const void* kernel, int threads, size_t dynamic_smem, int cluster) {
  static std::mutex mu;
  static auto* cache = new std::map<std::tuple<int, const void*, int, size_t, int>, int>();  // never destroyed
  int device = 0;
  cudaGetDevice(&device);
  const auto key = std::make_tuple(device, kernel, threads, dynamic_smem, cluster);
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = cache->find(key); it != cache->end()) return it->second;
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = 1, attr.val.clusterDim.y = static_cast<unsigned>(cluster), attr.val.clusterDim.z = 1;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(1, static_cast<unsigned>(cluster)), cfg.blockDim = dim3(static_cast<unsigned>(threads));
  cfg.dynamicSmemBytes = dynamic_smem, cfg.attrs = &attr, cfg.numAttrs = 1;
  int clusters = 0;
  if (cudaOccupancyMaxActiveClusters(&clusters, kernel, &cfg) != cudaSuccess) {
    (void)cudaGetLastError();  // a refused query is an answer (0), not a sticky error
    clusters = 0;
  }
  cache->emplace(key, clusters);
  return clusters;
}

// Dynamic shared memory a block can ask for so that no second block fits on its SM: half the SM's
// shared memory and 1 KB (with the 1 KB each block reserves, two would need more than the SM has).
// Cached per device: the w4a16 launcher asks on every launch.
inline size_t OneBlockAnSmSmem() {
  static std::mutex mu;
  static auto* cache = new std::map<int, size_t>();  // never destroyed
  int device = 0;
  cudaGetDevice(&device);
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = cache->find(device); it != cache->end()) return it->second;
  int per_sm = 0;
  cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device);
  const size_t bytes = static_cast<size_t>(per_sm) / 2 + 1024;
  cache->emplace(device, bytes);
  return bytes;
}

}  // namespace kbench::kernels::cuda
