// The CUDA backend as the measuring pipeline's device (measure/device.h): tensors in device memory,
// the check's launches through a stream, samples timed with CUDA events behind a spin kernel (COLD:
// the write-back of the launch's dirty lines inside the window), hot batches as CUDA graphs,
// throttled samples flagged and clocks recorded through NVML, an L2 flush, and the device fp64
// reference for problems too large for the CPU one.
#pragma once

#include <memory>
#include <string>

#include "worker/cuda/cuda_backend.h"
#include "worker/measure/device.h"

namespace kbench::worker {

class CudaMeasureDevice final : public MeasureDevice {
 public:
  explicit CudaMeasureDevice(CudaBackend& backend) : backend_(backend) {}

  std::string SkipReason(const kernels::OpDef& op, const kernels::Variant& variant,
                         const kernels::Problem& problem) override;
  void AddResources(const kernels::Variant& variant, const kernels::Problem& problem, v1::Result* r) override;
  absl::StatusOr<std::unique_ptr<DeviceRun>> Allocate(const kernels::OpDef& op, const kernels::Variant& variant,
                                                      const kernels::Problem& problem,
                                                      const HostTensors& host) override;

 private:
  CudaBackend& backend_;
};

}  // namespace kbench::worker
