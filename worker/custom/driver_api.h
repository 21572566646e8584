// The few CUDA driver functions custom kernels need (module loading, launch, attributes), looked up
// through the runtime (cudaGetDriverEntryPointByVersion) rather than linked: binaries that never load a
// custom kernel keep running on hosts without a GPU driver (the CI machine, the coordinator's).
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>

#include <string>

#include "absl/status/statusor.h"

namespace kbench::worker {

// Each function is typed by the ABI version it is looked up with (cudaTypedefs.h): asking for a
// name at the toolkit's own version can return a newer ABI than cuda.h's plain declaration (in CUDA
// 13.0, cuCtxGetDevice at 13000 takes a context argument too), and a mismatch is a crash, not an error.
// X(member, driver symbol, ABI version): one list declares the members and drives the lookups, so a
// member's type and the version it is looked up with cannot drift apart.
#define KBENCH_DRIVER_FUNCTIONS(X)                                                  \
  X(ctx_get_current, cuCtxGetCurrent, 4000)                                         \
  X(module_load_data_ex, cuModuleLoadDataEx, 2010)                                  \
  X(module_unload, cuModuleUnload, 2000)                                            \
  X(module_get_function, cuModuleGetFunction, 2000)                                 \
  X(func_get_param_info, cuFuncGetParamInfo, 12040)                                 \
  X(func_get_attribute, cuFuncGetAttribute, 2020)                                   \
  X(func_set_attribute, cuFuncSetAttribute, 9000)                                   \
  X(occupancy_max_active_blocks, cuOccupancyMaxActiveBlocksPerMultiprocessor, 6050) \
  X(launch_kernel, cuLaunchKernel, 4000) /* the legacy-stream ABI; we pass a stream */ \
  X(get_error_name, cuGetErrorName, 6000)                                           \
  X(get_error_string, cuGetErrorString, 6000)

struct DriverApi {
#define KBENCH_DRIVER_MEMBER(member, symbol, version) PFN_##symbol##_v##version member = nullptr;
  KBENCH_DRIVER_FUNCTIONS(KBENCH_DRIVER_MEMBER)
#undef KBENCH_DRIVER_MEMBER

  // "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered"
  std::string ErrorText(CUresult r) const;
};

// Resolved once; UNAVAILABLE naming the function the driver lacks.
absl::StatusOr<const DriverApi*> GetDriverApi();

}  // namespace kbench::worker
