#include "worker/custom/driver_api.h"

#include <cuda_runtime.h>

#include "absl/strings/str_cat.h"

namespace kbench::worker {
namespace {

absl::StatusOr<DriverApi> Resolve() {
  DriverApi api;
  absl::Status status = absl::OkStatus();
  auto get = [&](const char* symbol, int abi_version, auto& fn) {
    if (!status.ok()) return;
    void* p = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    const cudaError_t e = cudaGetDriverEntryPointByVersion(symbol, &p, abi_version, cudaEnableLegacyStream, &found);
    if (e != cudaSuccess || found != cudaDriverEntryPointSuccess || p == nullptr) {
      cudaGetLastError();
      status = absl::UnavailableError(absl::StrCat("the CUDA driver has no ", symbol, " (",
                                                   e != cudaSuccess ? cudaGetErrorString(e) : "symbol not found", ")"));
      return;
    }
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
  };
#define KBENCH_DRIVER_LOOKUP(member, symbol, version) get(#symbol, version, api.member);
  KBENCH_DRIVER_FUNCTIONS(KBENCH_DRIVER_LOOKUP)
#undef KBENCH_DRIVER_LOOKUP
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
