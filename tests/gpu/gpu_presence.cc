// Whether a GPU test runs, skips or fails (see gpu_presence.h).
#include "gpu_presence.h"

#include <cuda_runtime.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace kbench::gpu_test {

GpuState ClassifyGpu(int cuda_error, int device_count, bool driver_visible) {
  if (cuda_error == cudaSuccess && device_count > 0) return GpuState::kUsable;
  // What CUDA says on a host without a GPU: no device, or no driver library at all.
  const bool says_none = (cuda_error == cudaSuccess && device_count == 0) || cuda_error == cudaErrorNoDevice ||
                         cuda_error == cudaErrorInsufficientDriver;
  // A driver device node means a GPU is there: then any of these is a broken setup, not an absence.
  return says_none && !driver_visible ? GpuState::kAbsent : GpuState::kBroken;
}

GpuState ProbeGpu(std::string* why) {
  static const auto probe = [] {
    std::pair<GpuState, std::string> r;
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) cudaGetLastError();  // not sticky; clear it
    const bool driver_visible = access("/dev/nvidiactl", F_OK) == 0 || access("/dev/nvidia0", F_OK) == 0;
    r.first = ClassifyGpu(e, e == cudaSuccess ? count : 0, driver_visible);
    r.second = e != cudaSuccess ? std::string("cudaGetDeviceCount: ") + cudaGetErrorName(e) + " (" +
                                      cudaGetErrorString(e) + ")"
                                : std::to_string(count) + " CUDA device(s)";
    if (driver_visible) r.second += "; the NVIDIA driver shows a device node";
    return r;
  }();
  if (why) *why = probe.second;
  return probe.first;
}

bool GpuRequired() {
  const char* v = std::getenv("KBENCH_REQUIRE_GPU");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

std::string GpuVerdict(bool* skip) {
  std::string why;
  *skip = false;
  switch (ProbeGpu(&why)) {
    case GpuState::kUsable:
      return "";
    case GpuState::kAbsent:
      if (GpuRequired()) return "KBENCH_REQUIRE_GPU=1 but no GPU is visible: " + why;
      *skip = true;
      return "no GPU visible: " + why;
    case GpuState::kBroken:
      break;
  }
  return "a GPU is visible but CUDA cannot use it: " + why;
}

}  // namespace kbench::gpu_test
