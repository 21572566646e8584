// The CUDA backend: one GPU, measured with CUDA events on the job's stream (launch latency kept out
// of the window by a spin kernel queued ahead), cold samples behind an L2 flush and with their
// write-back inside the window, hot samples as a CUDA-graph batch, clocks and power read through
// NVML with throttled samples flagged, kernel resources from the runtime. It runs inside a runner child process, which owns the device context.
#pragma once

#include <cuda_runtime.h>

#include <memory>
#include <optional>

#include "worker/backend.h"
#include "worker/cuda/calibrate.h"

namespace kbench::worker {

class CudaBackend : public Backend {
 public:
  static absl::StatusOr<std::unique_ptr<CudaBackend>> Create(int ordinal, CudaCalibrationOptions calibration_options);
  ~CudaBackend() override;

  kernels::Backend kind() const override { return kernels::Backend::kCuda; }
  v1::DeviceInfo device() const override { return device_; }
  absl::StatusOr<v1::Calibration> Calibrate() override;
  std::optional<v1::DatasheetPeaks> datasheet() const override { return datasheet_; }
  v1::Result MeasureOne(const kernels::OpDef& op, const kernels::Variant& variant, const kernels::Problem& problem,
                        const v1::MeasurementSettings& settings, const CancelFlag& cancel) override;
  // True after a sticky CUDA error (illegal address, launch failure): the context is unusable.
  bool context_lost() const override { return context_lost_; }

 private:
  friend class CudaMeasureDevice;  // the pipeline's device (cuda_measure.h) uses the stream and events
  CudaBackend() = default;
  // Records a CUDA error; returns its text and marks the context lost when the error is sticky.
  std::string Fail(cudaError_t e, const char* what);

  int ordinal_ = 0;
  CudaCalibrationOptions calibration_options_;
  v1::DeviceInfo device_;
  std::optional<v1::DatasheetPeaks> datasheet_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr, mid_ = nullptr, stop_ = nullptr;
  void* flush_buffer_ = nullptr;
  size_t flush_bytes_ = 0;
  void* write_back_buffer_ = nullptr;
  size_t write_back_bytes_ = 0;
  bool context_lost_ = false;
};

}  // namespace kbench::worker
