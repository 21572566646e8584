#include "worker/cuda/resources.h"

#include <cuda_runtime.h>

namespace kbench::worker {

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
