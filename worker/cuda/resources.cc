#include "worker/cuda/resources.h"

#include <cuda_runtime.h>

namespace kbench::worker {
namespace {

// Lets `func` take `dynamic` bytes of dynamic shared memory, as its launcher does before launching
// (cudaFuncAttributeMaxDynamicSharedMemorySize), when that is over the function's current limit (48 KiB
// until a launcher opts in) and within the device's opt-in limit. Resources are read before the first
// launch: without this the occupancy query sees a launch that cannot happen and answers 0 blocks.
void OptInDynamicSmem(const void* func, const cudaFuncAttributes& attr, int64_t dynamic, const cudaDeviceProp& prop) {
  if (dynamic <= attr.maxDynamicSharedSizeBytes) return;
  if (static_cast<size_t>(dynamic) + attr.sharedSizeBytes > prop.sharedMemPerBlockOptin) return;  // cannot run
  cudaFuncSetAttribute(func, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(dynamic));
}

}  // namespace

std::vector<v1::KernelResources> KernelResourcesOf(const std::vector<kernels::LaunchInfo>& launches, int device) {
  std::vector<v1::KernelResources> out;
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) return out;
  for (const auto& l : launches) {
    v1::KernelResources r;
    r.set_kernel_name(l.kernel_name);
    r.set_block_threads(l.block_threads);
    r.set_dynamic_shared_bytes(l.dynamic_shared_bytes);
    cudaFuncAttributes attr{};
    if (l.func && cudaFuncGetAttributes(&attr, l.func) == cudaSuccess) {
      r.set_registers_per_thread(attr.numRegs);
      r.set_static_shared_bytes(static_cast<int64_t>(attr.sharedSizeBytes));
      r.set_local_bytes_per_thread(static_cast<int64_t>(attr.localSizeBytes));
      OptInDynamicSmem(l.func, attr, l.dynamic_shared_bytes, prop);
      int blocks = 0;
      if (l.block_threads > 0 &&
          cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, l.func, l.block_threads,
                                                        static_cast<size_t>(l.dynamic_shared_bytes)) == cudaSuccess) {
        const double warps = blocks * ((l.block_threads + 31) / 32);
        r.set_theoretical_occupancy(warps / (prop.maxThreadsPerMultiProcessor / 32));
      }
    }
    cudaGetLastError();
    out.push_back(r);
  }
  return out;
}

}  // namespace kbench::worker
