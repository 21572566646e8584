// CUDA devices as the runtime describes them.
#pragma once

#include "absl/status/statusor.h"
#include "kbench/v1/device.pb.h"

namespace kbench::worker {

// Visible CUDA devices; 0 when there is no driver or no GPU (never an error).
int CudaDeviceCount();

// Name, compute capability, SMs, memory, L2, UUID ("GPU-..." as NVML spells it), driver and runtime.
absl::StatusOr<v1::DeviceInfo> QueryCudaDevice(int ordinal);

}  // namespace kbench::worker
