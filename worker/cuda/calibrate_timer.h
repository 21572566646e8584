// What the calibration's measurements share: a device buffer freed on scope exit, the CUDA/cuBLAS
// error macros, and the median of timed repetitions on a stream.
#pragma once

#include <cuda_runtime.h>

#include <functional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

#define KB_CUDA(expr)                                                                                    \
  do {                                                                                                   \
    if (cudaError_t e_ = (expr); e_ != cudaSuccess)                                                      \
      return absl::InternalError(absl::StrCat(#expr, ": ", cudaGetErrorString(e_)));                     \
  } while (0)
#define KB_BLAS(expr)                                                                                    \
  do {                                                                                                   \
    if (auto s_ = (expr); s_ != 0) return absl::InternalError(absl::StrCat(#expr, ": cuBLAS status ", int(s_))); \
  } while (0)

namespace kbench::worker {

// A device buffer freed on scope exit.
struct DeviceBuffer {
  void* p = nullptr;
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (p) cudaFree(p);
  }
};

// Median time in ms of `reps` runs of `fn` on `stream`, after `warmup` untimed runs; their spread
// ((max - min) / median) in *spread when given.
absl::StatusOr<double> MedianMs(cudaStream_t stream, int warmup, int reps, const std::function<absl::Status()>& fn,
                                double* spread = nullptr);

}  // namespace kbench::worker
