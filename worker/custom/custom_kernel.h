// A custom kernel loaded into the runner's device context with the driver API (driver_api.h) (PTX through the JIT,
// cubin as is), its parameters checked against the contract, and launched as a kernels::Variant, so
// that the CUDA backend checks and times it exactly as it does a built-in variant. CUDA builds only.
#pragma once

#include <cuda.h>

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/op.h"
#include "kbench/v1/custom.pb.h"
#include "kbench/v1/result.pb.h"
#include "worker/custom/driver_api.h"
#include "worker/custom/kernel_image.h"

namespace kbench::worker {

// What the driver says of a loaded function at a launch's block size: registers, static shared and
// local memory, theoretical occupancy (custom kernels here, Triton kernels in worker/triton/).
v1::KernelResources FunctionResources(const DriverApi& api, CUfunction function, const std::string& name,
                                      int block_threads, int64_t dynamic_shared_bytes);

class LoadedKernel {
 public:
  // INVALID_ARGUMENT (a COMPILE_ERROR result) when the JIT refuses the PTX (its log is in the
  // message), the entry is missing, or its parameters differ from the contract; UNAVAILABLE when the
  // driver has no current context.
  static absl::StatusOr<std::unique_ptr<LoadedKernel>> Load(const KernelImage& image,
                                                            const v1::LaunchContract& contract);
  ~LoadedKernel();
  LoadedKernel(const LoadedKernel&) = delete;
  LoadedKernel& operator=(const LoadedKernel&) = delete;

  CUfunction function() const { return function_; }
  const DriverApi* api() const { return api_; }
  // Registers, shared and local memory and theoretical occupancy at this block size.
  v1::KernelResources Resources(int block_threads, int64_t dynamic_shared_bytes) const;
  // Lets the kernel use more than 48 KiB of dynamic shared memory.
  absl::Status AllowDynamicShared(int64_t bytes) const;

 private:
  LoadedKernel() = default;
  const DriverApi* api_ = nullptr;
  CUmodule module_ = nullptr;
  CUfunction function_ = nullptr;
  std::string entry_;
};

struct LaunchConfig {
  std::array<uint32_t, 3> block{1, 1, 1};
  std::array<int64_t, 3> grid{1, 1, 1};
  int64_t dynamic_shared_bytes = 0;
};

// The block (the job's, else the contract's) and the grid evaluated for the problem. INVALID_ARGUMENT
// when an expression fails or a dimension is negative or beyond CUDA's limits.
absl::StatusOr<LaunchConfig> ResolveLaunch(const v1::CustomVariant& custom, const v1::LaunchContract& contract,
                                           const kernels::Problem& problem);

// A variant that launches `kernel` with the contract's arguments: the tensors' device pointers, then
// the problem's dims. `kernel` must outlive it.
kernels::Variant MakeCustomVariant(const std::string& name, const LoadedKernel& kernel, const LaunchConfig& launch,
                                   kernels::Dtype dtype);

}  // namespace kbench::worker
