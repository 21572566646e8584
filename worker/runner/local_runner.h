// A runner in this process: the requests a kbench-runner child answers (runner.proto), answered by a
// backend and a catalog of this process, for tests and kbench-bench, which link the kernel library.
// kbench-worker never has one: there the runner child is the only process that loads kernels and
// measures. Plugins and A/B pairs load only in a child, so they are refused here; a custom kernel goes
// to the backend's MeasureCustom (SKIPPED on a backend in this process).
#pragma once

#include <memory>

#include "worker/backend.h"
#include "worker/plan/catalog.h"
#include "worker/runner/problem_table.h"
#include "worker/runner/runner_channel.h"

namespace kbench::worker {

class LocalRunner : public RunnerChannel {
 public:
  // Both must outlive the runner.
  LocalRunner(const Catalog& catalog, Backend& backend) : catalog_(catalog), backend_(backend) {}

  absl::StatusOr<runner::RunnerResponse> CallRunner(const runner::RunnerRequest& request,
                                                    std::chrono::milliseconds timeout) override;
  // A MEASURE here stops between samples once `cancel` is raised.
  absl::StatusOr<runner::RunnerResponse> CallRunnerWithCancel(const runner::RunnerRequest& request,
                                                              std::chrono::milliseconds timeout,
                                                              const CancelFlag& cancel) override;
  bool child_process() const override { return false; }

 private:
  v1::Result Measure(const runner::RunnerRequest& req, const CancelFlag& cancel);

  const Catalog& catalog_;
  Backend& backend_;
  ProblemTable problems_;
};

// A device whose runner is in this process: a backend, its kind's catalog of a registry and a
// LocalRunner over both, as one Backend with a runner channel (WorkerNode's form for tests).
class LocalDevice : public Backend {
 public:
  // The registry must outlive the device. Keeps the backend's calibration.
  LocalDevice(std::unique_ptr<Backend> backend, const kernels::Registry& registry);

  const Catalog& catalog() const { return catalog_; }
  Backend& inner() { return *inner_; }

  kernels::Backend kind() const override { return inner_->kind(); }
  v1::DeviceInfo device() const override { return inner_->device(); }
  absl::StatusOr<v1::Calibration> Calibrate() override { return inner_->Calibrate(); }
  std::optional<v1::DatasheetPeaks> datasheet() const override { return inner_->datasheet(); }
  v1::Result MeasureOne(const kernels::OpDef& op, const kernels::Variant& variant, const kernels::Problem& problem,
                        const v1::MeasurementSettings& settings, const CancelFlag& cancel) override {
    return inner_->MeasureOne(op, variant, problem, settings, cancel);
  }
  v1::Result MeasureCustom(const kernels::OpDef& op, const v1::CustomVariant& custom, const kernels::Problem& problem,
                           const v1::MeasurementSettings& settings, const CancelFlag& cancel) override {
    return inner_->MeasureCustom(op, custom, problem, settings, cancel);
  }
  RunnerChannel* runner_channel() override { return &runner_; }
  bool context_lost() const override { return inner_->context_lost(); }

 private:
  std::unique_ptr<Backend> inner_;
  const Catalog catalog_;
  LocalRunner runner_;
};

}  // namespace kbench::worker
