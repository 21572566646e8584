// From a job's custom variant to a loadable kernel image, without a GPU: CUDA source is compiled by
// NVRTC for the device's architecture (through the kernel cache), with the contract's header
// pre-included and its signature checks appended; PTX is checked against the contract; cubin passes
// through (its parameters are checked when the driver loads it, custom_kernel.h).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "core/dtype.h"
#include "kbench/v1/custom.pb.h"
#include "worker/custom/kernel_cache.h"

namespace kbench::worker {

struct KernelImage {
  v1::CustomSourceKind kind = v1::CUBIN;  // CUBIN or PTX: what the driver loads.
  std::string bytes;
  std::string entry;       // The name to look up in the module.
  std::string arch;        // "sm_90a", or "compute_90" for PTX compiled for a virtual architecture.
  std::string compiler;    // "nvrtc 13.0" for CUDA source.
  bool cache_hit = false;
  int64_t compile_ns = 0;
  std::string compile_log;
  std::string source_sha256;
};

struct BuildOptions {
  int compute_capability = 0;       // Of the device: 90 for 9.0.
  kernels::Dtype dtype = kernels::Dtype::kF32;
  const KernelCache* cache = nullptr;  // Null: no cache.
  std::string cuda_include_dir;     // Added with -I when it exists (cuda_bf16.h); empty: none.
};

// The NVRTC target for a compute capability: "sm_90a" on 9.0 (the suite's Hopper features), the
// arch-specific "a" target on 10.0 and later, "sm_XY" otherwise; "compute_XY" (PTX, JIT-compiled by
// the driver) of the newest supported architecture below a device this NVRTC does not know.
std::string NvrtcTarget(int compute_capability);

// The CUDA include directory to offer NVRTC: $CUDA_HOME/include or /usr/local/cuda/include, when it
// has cuda_bf16.h; empty otherwise (the contract header then defines bf16 itself).
std::string DefaultCudaIncludeDir();

// INVALID_ARGUMENT for what the job got wrong: a compile error (the message is NVRTC's log), a
// contract violation, a missing entry; DEADLINE_EXCEEDED for the compile time limit; INTERNAL when
// the compiler crashed or could not be started.
absl::StatusOr<KernelImage> BuildKernelImage(const v1::CustomVariant& custom, const v1::LaunchContract& contract,
                                             const BuildOptions& options);

}  // namespace kbench::worker
