// Calibration of a GPU at worker start: the ceilings results are held against. A large
// device-to-device copy (bytes read + written) and the vendor GEMM per dtype (cuBLAS for f32, tf32,
// bf16, f16; cuBLASLt for fp8 e4m3 on sm_89+), each the median of timed repetitions on random data.
#pragma once

#include "absl/status/statusor.h"
#include "kbench/v1/device.pb.h"

namespace kbench::worker {

struct CudaCalibrationOptions {
  bool quick = false;  // Smaller problems and fewer repetitions (tests); still measured.
};

absl::StatusOr<v1::Calibration> CalibrateCuda(const v1::DeviceInfo& device, const CudaCalibrationOptions& options);

}  // namespace kbench::worker
