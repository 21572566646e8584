// A Triton cubin loaded into the runner's device context with the driver API (custom/driver_api.h)
// and launched as a kernels::Variant, so the CUDA backend checks and times it like any rung. The
// arguments are the launch contract's (the tensors' pointers, then the dims as int64) followed by
// the pointer parameters recent Triton versions append (global scratch, profile scratch), read from
// the compiled metadata: null when the kernel needs none, else a buffer of size * programs bytes.
// CUDA builds only.
#pragma once

#include <cuda.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "core/op.h"
#include "kbench/v1/result.pb.h"
#include "worker/custom/driver_api.h"
#include "worker/triton/launch_description.h"
#include "worker/triton/triton_compiler.h"

namespace kbench::worker {

class TritonKernel {
 public:
  // INVALID_ARGUMENT when the driver refuses the cubin or the kernel's parameter count is not the
  // contract's plus Triton's own; UNAVAILABLE without a driver or context.
  static absl::StatusOr<std::unique_ptr<TritonKernel>> Load(const TritonKernelImage& image, int contract_params);
  ~TritonKernel();
  TritonKernel(const TritonKernel&) = delete;
  TritonKernel& operator=(const TritonKernel&) = delete;

  int block_threads() const { return threads_; }
  int64_t shared_bytes() const { return shared_; }
  v1::KernelResources Resources() const;

 private:
  friend kernels::Variant MakeTritonVariant(const std::string&, const TritonKernel&, const ResolvedTritonLaunch&,
                                            kernels::Dtype);
  TritonKernel() = default;
  const DriverApi* api_ = nullptr;
  CUmodule module_ = nullptr;
  CUfunction function_ = nullptr;
  std::string name_;
  int threads_ = 128;
  int64_t shared_ = 0;
  int extra_params_ = 0;  // Triton's own pointer parameters after the contract's.
  int64_t scratch_size_[2] = {0, 0}, scratch_align_[2] = {1, 1};
};

// A variant launching `kernel` on `launch.grid` (0 in any dimension: nothing, an empty problem).
// Scratch buffers, when the kernel needs them, are allocated here for that grid and freed with the
// variant. `kernel` must outlive it.
kernels::Variant MakeTritonVariant(const std::string& name, const TritonKernel& kernel, const ResolvedTritonLaunch& launch,
                                   kernels::Dtype dtype);

}  // namespace kbench::worker
