// The Backend seam: one device a worker measures on (the host CPU or a CUDA GPU). The job runner
// talks only to this interface; a device normally lives in a runner child process
// (isolation/isolated_backend.h), which measures with the CPU or CUDA backend itself.
#pragma once

#include <optional>

#include "absl/status/statusor.h"
#include "core/op.h"
#include "kbench/v1/custom.pb.h"
#include "kbench/v1/device.pb.h"
#include "kbench/v1/job.pb.h"
#include "kbench/v1/result.pb.h"
#include "worker/cancel.h"

namespace kbench::worker {

class RunnerChannel;  // runner/runner_channel.h

class Backend {
 public:
  virtual ~Backend() = default;

  virtual kernels::Backend kind() const = 0;
  virtual v1::DeviceInfo device() const = 0;
  // Measures the device's ceilings (copy bandwidth, peak FLOP/s per dtype). Slow: seconds.
  virtual absl::StatusOr<v1::Calibration> Calibrate() = 0;
  // Vendor peaks for a known device model; none for the CPU backend.
  virtual std::optional<v1::DatasheetPeaks> datasheet() const = 0;

  // Checks and times one variant on one problem. settings has its defaults filled (settings.h).
  // Never throws: an exception becomes RUNTIME_ERROR with its text. Fills op, variant, problem,
  // status (+ message), correctness, timing, roofline and device; the job fields are the runner's.
  virtual v1::Result MeasureOne(const kernels::OpDef& op, const kernels::Variant& variant,
                                const kernels::Problem& problem, const v1::MeasurementSettings& settings,
                                const CancelFlag& cancel) = 0;

  // Checks and times a job's custom kernel (worker/custom/README.md) as variant "custom:<name>".
  // Custom code runs only in a runner child process (IsolatedBackend); any other backend answers
  // SKIPPED.
  virtual v1::Result MeasureCustom(const kernels::OpDef& op, const v1::CustomVariant& custom,
                                   const kernels::Problem& problem, const v1::MeasurementSettings& settings,
                                   const CancelFlag& cancel) {
    (void)problem, (void)settings, (void)cancel;
    v1::Result r;
    r.set_op(op.name);
    r.set_variant("custom:" + custom.name());
    *r.mutable_device() = device();
    r.set_status(v1::SKIPPED);
    r.set_status_message("custom kernels run only in a CUDA runner child process (kbench-worker's, not an in-process backend)");
    return r;
  }

  // The pipe to the runner child that owns this device, when it lives in one (IsolatedBackend): the
  // job runner then sends it every item as one request. Null for a backend in this process.
  virtual RunnerChannel* runner_channel() { return nullptr; }

  // True once the device context is unusable (a sticky CUDA error): the runner process that owns
  // it must exit, and the worker starts a fresh one.
  virtual bool context_lost() const { return false; }

  // The ceilings used for the roofline of every result (from Calibrate() or a cache).
  void set_calibration(const v1::Calibration& c) { calibration_ = c; }
  const std::optional<v1::Calibration>& calibration() const { return calibration_; }

 private:
  std::optional<v1::Calibration> calibration_;
};

}  // namespace kbench::worker
