#include "worker/isolation/isolated_backend.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "api/custom_spec.h"
#include "worker/runner/convert.h"

namespace kbench::worker {
namespace {

// Time for a fresh runner to start and create its context, on top of the job's own timeout.
constexpr std::chrono::milliseconds kStartGrace{10'000};
constexpr std::chrono::milliseconds kCalibrationLimit{15 * 60'000};

}  // namespace

absl::StatusOr<std::unique_ptr<IsolatedBackend>> IsolatedBackend::Create(RunnerConfig config, kernels::Backend kind) {
  std::unique_ptr<IsolatedBackend> b(new IsolatedBackend(std::move(config), kind));
  runner::RunnerRequest req;
  req.set_kind(runner::RunnerRequest::DESCRIBE);
  auto resp = b->runner_->Call(req, kStartGrace * 4);
  if (!resp.ok()) return resp.status();
  if (!resp->error().empty()) return absl::UnavailableError(resp->error());
  b->device_ = resp->device();
  if (resp->has_datasheet()) b->datasheet_ = resp->datasheet();
  return b;
}

absl::StatusOr<runner::RunnerResponse> IsolatedBackend::CallRunner(const runner::RunnerRequest& request,
                                                               std::chrono::milliseconds timeout) {
  return runner_->Call(request, timeout + kStartGrace);
}

absl::StatusOr<v1::Calibration> IsolatedBackend::Calibrate() {
  runner::RunnerRequest req;
  req.set_kind(runner::RunnerRequest::CALIBRATE);
  auto resp = runner_->Call(req, kCalibrationLimit);
  if (!resp.ok()) return resp.status();
  if (!resp->error().empty()) return absl::InternalError(resp->error());
  return resp->calibration();
}

v1::Result IsolatedBackend::MeasureOne(const kernels::OpDef& op, const kernels::Variant& variant,
                                       const kernels::Problem& problem, const v1::MeasurementSettings& settings,
                                       const CancelFlag& cancel) {
  runner::RunnerRequest req;
  req.set_kind(runner::RunnerRequest::MEASURE);
  req.set_op(op.name);
  req.set_variant(variant.name);
  *req.mutable_problem() = ToProtoProblem(problem);
  *req.mutable_settings() = settings;
  if (calibration()) *req.mutable_calibration() = *calibration();
  // The watchdog: the job's per-item timeout, plus the time a fresh runner needs to start.
  const auto limit = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::nanoseconds(settings.timeout_ns())) +
                     kStartGrace;
  auto resp = runner_->Call(req, limit);
  if (resp.ok()) return resp->result();
  (void)cancel;  // a running item is not interrupted; the runner checks its own copy between samples
  v1::Result r;
  r.set_op(op.name);
  r.set_variant(variant.name);
  *r.mutable_problem() = ToProtoProblem(problem);
  *r.mutable_device() = device_;
  r.set_status(absl::IsDeadlineExceeded(resp.status()) ? v1::TIMEOUT : v1::RUNTIME_ERROR);
  r.set_status_message(std::string(resp.status().message()));
  return r;
}

v1::Result IsolatedBackend::MeasureCustom(const kernels::OpDef& op, const v1::CustomVariant& custom,
                                          const kernels::Problem& problem, const v1::MeasurementSettings& settings,
                                          const CancelFlag& cancel) {
  (void)cancel;  // as for MeasureOne: a running item is not interrupted
  runner::RunnerRequest req;
  req.set_kind(runner::RunnerRequest::MEASURE);
  req.set_op(op.name);
  req.set_variant(api::CustomVariantName(custom));
  *req.mutable_custom() = custom;
  *req.mutable_problem() = ToProtoProblem(problem);
  *req.mutable_settings() = settings;
  if (calibration()) *req.mutable_calibration() = *calibration();
  // The watchdog: the item's timeout, plus NVRTC's own time limit (the compile runs first), plus the
  // time a fresh runner needs to start.
  const int64_t compile_ns = custom.compile_timeout_ns() > 0 ? custom.compile_timeout_ns() : api::kDefaultCompileTimeoutNs;
  const auto limit = std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::nanoseconds(settings.timeout_ns() + compile_ns)) +
                     kStartGrace;
  auto resp = runner_->Call(req, limit);
  if (resp.ok()) return resp->result();
  v1::Result r;
  r.set_op(op.name);
  r.set_variant(api::CustomVariantName(custom));
  *r.mutable_problem() = ToProtoProblem(problem);
  *r.mutable_device() = device_;
  r.set_status(absl::IsDeadlineExceeded(resp.status()) ? v1::TIMEOUT : v1::RUNTIME_ERROR);
  r.set_status_message(std::string(resp.status().message()));
  return r;
}

}  // namespace kbench::worker
