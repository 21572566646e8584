#include "worker/cuda/calibrate_timer.h"

#include <algorithm>
#include <vector>

#include "worker/calibration_check.h"

namespace kbench::worker {

absl::StatusOr<double> MedianMs(cudaStream_t stream, int warmup, int reps, const std::function<absl::Status()>& fn,
                                double* spread) {
  for (int i = 0; i < warmup; ++i)
    if (auto s = fn(); !s.ok()) return s;
  cudaEvent_t a, b;
  KB_CUDA(cudaEventCreate(&a));
  KB_CUDA(cudaEventCreate(&b));
  std::vector<float> ms;
  absl::Status failed;
  for (int i = 0; i < reps && failed.ok(); ++i) {
    cudaEventRecord(a, stream);
    failed = fn();
    cudaEventRecord(b, stream);
    if (cudaError_t e = cudaEventSynchronize(b); e != cudaSuccess && failed.ok())
      failed = absl::InternalError(absl::StrCat("cudaEventSynchronize: ", cudaGetErrorString(e)));
    float t = 0;
    cudaEventElapsedTime(&t, a, b);
    ms.push_back(t);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  if (!failed.ok()) return failed;
  std::sort(ms.begin(), ms.end());
  if (spread) *spread = SpreadFraction(std::vector<double>(ms.begin(), ms.end()));
  return static_cast<double>(ms[ms.size() / 2]);
}

}  // namespace kbench::worker
