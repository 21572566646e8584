// The CPU backend: the host as a device. Runs CPU variants on host tensors, times them with the
// steady clock, flushes the caches by writing a buffer twice the LLC's size (COLD), and
// classifies results against the host's calibrated copy bandwidth and FMA peak.
#pragma once

#include <memory>
#include <optional>

#include "worker/backend.h"
#include "worker/cpu/cache_flusher.h"
#include "worker/cpu/cpu_info.h"

namespace kbench::worker {

struct CpuBackendOptions {
  bool quick_calibration = false;
  // >= 0: CPU "device" i of a multi-device test worker (MakeCpuDeviceInfo); -1: the host.
  int device_index = -1;
};

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(CpuBackendOptions options = {});
  // With a given host description (tests).
  CpuBackend(CpuBackendOptions options, CpuHostInfo host);

  kernels::Backend kind() const override { return kernels::Backend::kCpu; }
  v1::DeviceInfo device() const override { return device_; }
  absl::StatusOr<v1::Calibration> Calibrate() override;
  std::optional<v1::DatasheetPeaks> datasheet() const override { return std::nullopt; }
  v1::Result MeasureOne(const kernels::OpDef& op, const kernels::Variant& variant, const kernels::Problem& problem,
                        const v1::MeasurementSettings& settings, const CancelFlag& cancel) override;

 private:
  CpuBackendOptions options_;
  CpuHostInfo host_;
  v1::DeviceInfo device_;
  std::unique_ptr<CacheFlusher> flusher_;  // 2 x LLC, made on the first COLD measurement.
};

}  // namespace kbench::worker
