#include "worker/custom/driver_api.h"

#include <cuda_runtime.h>

#include "absl/strings/str_cat.h"

namespace kbench::worker {
namespace {

absl::StatusOr<DriverApi> Resolve() {
  DriverApi api;
  absl::Status status = absl::OkStatus();
  auto get = [&](const char* symbol, auto*& fn) {
    if (!status.ok()) return;
    void* p = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    const cudaError_t e = cudaGetDriverEntryPointByVersion(symbol, &p, CUDA_VERSION, cudaEnableDefault, &found);
    if (e != cudaSuccess || found != cudaDriverEntryPointSuccess || p == nullptr) {
      cudaGetLastError();
      status = absl::UnavailableError(absl::StrCat("the CUDA driver has no ", symbol, " (",
                                                   e != cudaSuccess ? cudaGetErrorString(e) : "symbol not found", ")"));
      return;
    }
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
  };
  get("cuCtxGetCurrent", api.ctx_get_current);
  get("cuCtxGetDevice", api.ctx_get_device);
  get("cuDeviceGetAttribute", api.device_get_attribute);
  get("cuModuleLoadDataEx", api.module_load_data_ex);
  get("cuModuleUnload", api.module_unload);
  get("cuModuleGetFunction", api.module_get_function);
  get("cuFuncGetParamInfo", api.func_get_param_info);
  get("cuFuncGetAttribute", api.func_get_attribute);
  get("cuFuncSetAttribute", api.func_set_attribute);
  get("cuOccupancyMaxActiveBlocksPerMultiprocessor", api.occupancy_max_active_blocks);
  get("cuLaunchKernel", api.launch_kernel);
  get("cuGetErrorName", api.get_error_name);
  get("cuGetErrorString", api.get_error_string);
  if (!status.ok()) return status;
  return api;
}

}  // namespace

std::string DriverApi::ErrorText(CUresult r) const {
  const char* name = nullptr;
  const char* text = nullptr;
  if (get_error_name) get_error_name(r, &name);
  if (get_error_string) get_error_string(r, &text);
  return absl::StrCat(name ? name : absl::StrCat("CUresult ", static_cast<int>(r)), ": ", text ? text : "unknown error");
}

absl::StatusOr<const DriverApi*> GetDriverApi() {
  static const absl::StatusOr<DriverApi>* api = new absl::StatusOr<DriverApi>(Resolve());
  if (!api->ok()) return api->status();
  return &**api;
}

}  // namespace kbench::worker
