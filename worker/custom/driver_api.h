// The few CUDA driver functions custom kernels need (module loading, launch, attributes), looked up
// through the runtime (cudaGetDriverEntryPointByVersion) rather than linked: binaries that never load a
// custom kernel keep running on hosts without a GPU driver (the CI machine, the coordinator's).
#pragma once

#include <cuda.h>

#include <string>

#include "absl/status/statusor.h"

namespace kbench::worker {

struct DriverApi {
  decltype(&::cuCtxGetCurrent) ctx_get_current = nullptr;
  decltype(&::cuCtxGetDevice) ctx_get_device = nullptr;
  decltype(&::cuDeviceGetAttribute) device_get_attribute = nullptr;
  decltype(&::cuModuleLoadDataEx) module_load_data_ex = nullptr;
  decltype(&::cuModuleUnload) module_unload = nullptr;
  decltype(&::cuModuleGetFunction) module_get_function = nullptr;
  decltype(&::cuFuncGetParamInfo) func_get_param_info = nullptr;
  decltype(&::cuFuncGetAttribute) func_get_attribute = nullptr;
  decltype(&::cuFuncSetAttribute) func_set_attribute = nullptr;
  decltype(&::cuOccupancyMaxActiveBlocksPerMultiprocessor) occupancy_max_active_blocks = nullptr;
  decltype(&::cuLaunchKernel) launch_kernel = nullptr;
  decltype(&::cuGetErrorName) get_error_name = nullptr;
  decltype(&::cuGetErrorString) get_error_string = nullptr;

  // "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered"
  std::string ErrorText(CUresult r) const;
};

// Resolved once; UNAVAILABLE naming the function the driver lacks.
absl::StatusOr<const DriverApi*> GetDriverApi();

}  // namespace kbench::worker
