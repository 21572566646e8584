#include "worker/cuda/device_query.h"

#include <cuda_runtime.h>

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "worker/cuda/nvml.h"

namespace kbench::worker {
namespace {

std::string FormatUuid(const cudaUUID_t& u) {
  const auto* b = reinterpret_cast<const unsigned char*>(u.bytes);
  char buf[64];
  std::snprintf(buf, sizeof buf, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
                b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  return buf;
}

std::string VersionString(int v) { return absl::StrCat(v / 1000, ".", (v % 1000) / 10); }

}  // namespace

int CudaDeviceCount() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" error
    return 0;
  }
  return n;
}

absl::StatusOr<v1::DeviceInfo> QueryCudaDevice(int ordinal) {
  cudaDeviceProp prop{};
  if (cudaError_t e = cudaGetDeviceProperties(&prop, ordinal); e != cudaSuccess)
    return absl::UnavailableError(absl::StrCat("cudaGetDeviceProperties(", ordinal, "): ", cudaGetErrorString(e)));
  v1::DeviceInfo d;
  d.set_backend(v1::BACKEND_CUDA);
  d.set_name(prop.name);
  d.set_uuid(FormatUuid(prop.uuid));
  d.set_index(ordinal);
  d.set_compute_capability_major(prop.major);
  d.set_compute_capability_minor(prop.minor);
  d.set_multiprocessor_count(prop.multiProcessorCount);
  d.set_memory_bytes(static_cast<int64_t>(prop.totalGlobalMem));
  d.set_l2_cache_bytes(prop.l2CacheSize);
  int clock_khz = 0;
  cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, ordinal);
  d.set_clock_khz(clock_khz);
  int memory_clock_khz = 0;
  cudaDeviceGetAttribute(&memory_clock_khz, cudaDevAttrMemoryClockRate, ordinal);
  d.set_memory_clock_khz(memory_clock_khz);
  // The calibration cache's key needs the driver release and the clocks the device is set to.
  if (Nvml* nvml = Nvml::Get(); nvml != nullptr) {
    d.set_driver_release(nvml->DriverRelease());
    const auto [sm_mhz, mem_mhz] = nvml->ApplicationClocksMhz(d.uuid());
    d.set_application_sm_clock_mhz(static_cast<int32_t>(sm_mhz));
    d.set_application_memory_clock_mhz(static_cast<int32_t>(mem_mhz));
  }
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  d.set_driver_version(VersionString(driver));
  d.set_runtime_version(VersionString(runtime));
  return d;
}

}  // namespace kbench::worker
