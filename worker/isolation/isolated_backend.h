// A Backend whose device lives in a runner child process (RunnerProcess). The worker and the job
// runner use it like any backend; a kernel that faults becomes RUNTIME_ERROR and one that hangs
// becomes TIMEOUT, each costing a runner restart and nothing more.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "worker/backend.h"
#include "worker/isolation/runner_process.h"
#include "worker/runner/measure_call.h"
#include "worker/runner/runner_channel.h"

namespace kbench::worker {

class IsolatedBackend : public Backend, public RunnerChannel {
 public:
  // Starts the runner and asks it to describe its device and its own kernel library.
  static absl::StatusOr<std::unique_ptr<IsolatedBackend>> Create(RunnerConfig config, kernels::Backend kind);

  kernels::Backend kind() const override { return kind_; }
  v1::DeviceInfo device() const override { return device_; }
  absl::StatusOr<v1::Calibration> Calibrate() override;
  std::optional<v1::DatasheetPeaks> datasheet() const override { return datasheet_; }
  v1::Result MeasureOne(const kernels::OpDef& op, const kernels::Variant& variant, const kernels::Problem& problem,
                        const v1::MeasurementSettings& settings, const CancelFlag& cancel) override;
  // Sends the custom kernel to the runner, which compiles or loads it there (worker/custom/).
  v1::Result MeasureCustom(const kernels::OpDef& op, const v1::CustomVariant& custom, const kernels::Problem& problem,
                           const v1::MeasurementSettings& settings, const CancelFlag& cancel) override;

  int runner_starts() const { return runner_->starts(); }
  // The runner's own kernel library, as it described it at the start: its ops for this device (the
  // catalog the worker registers and plans against) and what it says of itself (suite_version).
  const std::vector<v1::OpInfo>& catalog() const { return catalog_; }
  const v1::PluginInfo& library() const { return library_; }

  // Any request (the job runner's items, a plugin's DESCRIBE): the runner's reply within `timeout`
  // plus the time a fresh runner needs to start; the runner is killed or restarted as for any request.
  absl::StatusOr<runner::RunnerResponse> CallRunner(const runner::RunnerRequest& request,
                                                    std::chrono::milliseconds timeout) override;
  RunnerChannel* runner_channel() override { return this; }

 private:
  // One MEASURE (runner/measure_call.h); a runner that died or hung names the item in its result.
  v1::Result Measure(const MeasureCall& call);

  IsolatedBackend(RunnerConfig config, kernels::Backend kind)
      : kind_(kind), runner_(std::make_unique<RunnerProcess>(std::move(config))) {}

  kernels::Backend kind_;
  std::unique_ptr<RunnerProcess> runner_;
  v1::DeviceInfo device_;
  std::optional<v1::DatasheetPeaks> datasheet_;
  std::vector<v1::OpInfo> catalog_;
  v1::PluginInfo library_;
};

}  // namespace kbench::worker
