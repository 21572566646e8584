// Calibration of a GPU at worker start: the ceilings results are held against. A large
// device-to-device copy (bytes read + written) and the vendor GEMM per dtype (cuBLAS for f32, tf32,
// bf16, f16; cuBLASLt for fp8 e4m3 on sm_89+), each the median of timed repetitions on random data.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "kbench/v1/device.pb.h"

namespace kbench::worker {

struct CudaCalibrationOptions {
  bool quick = false;  // Smaller streams and fewer repetitions (tests); still measured.
};

// Side of the square GEMMs that time the compute ceilings, quick or not: 8192, halved while its three
// fp32 matrices would take more than a quarter of the device's memory. A smaller GEMM is no ceiling
// on a large GPU: at 2048^3 cuBLASLt's FP8 reads ~756 TFLOP/s on an H200 against ~1240 at 8192^3, so
// every FP8 rung read 100-160% of a quick calibration's ceiling.
inline int CeilingGemmSize(uint64_t memory_bytes) {
  int n = 8192;
  while (n > 1024 && 3 * uint64_t(n) * n * 4 > memory_bytes / 4) n /= 2;
  return n;
}

absl::StatusOr<v1::Calibration> CalibrateCuda(const v1::DeviceInfo& device, const CudaCalibrationOptions& options);

}  // namespace kbench::worker
