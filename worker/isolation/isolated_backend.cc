// A device in a runner child process, as a Backend; see isolated_backend.h.
#include "worker/isolation/isolated_backend.h"

#include "api/custom_spec.h"
#include "worker/runner/convert.h"
#include "worker/runner/measure_call.h"

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
  b->catalog_.assign(resp->catalog().begin(), resp->catalog().end());
  b->library_ = resp->plugin();
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
  (void)cancel;  // a running item is not interrupted; the runner checks its own copy between samples
  return Measure(MakeMeasureCall(op.name, variant.name, "", ToProtoProblem(problem), settings, calibration(), nullptr));
}

v1::Result IsolatedBackend::MeasureCustom(const kernels::OpDef& op, const v1::CustomVariant& custom,
                                          const kernels::Problem& problem, const v1::MeasurementSettings& settings,
                                          const CancelFlag& cancel) {
  (void)cancel;  // as for MeasureOne: a running item is not interrupted
  return Measure(MakeMeasureCall(op.name, api::CustomVariantName(custom), "", ToProtoProblem(problem), settings,
                                 calibration(), &custom));
}

v1::Result IsolatedBackend::Measure(const MeasureCall& call) {
  MeasureReply reply = ReadMeasureReply(CallRunner(call.request, call.limit));
  if (!reply.runner_failed) return std::move(reply.result);
  v1::Result& r = reply.result;  // The runner's failure: name what it was measuring.
  r.set_op(call.request.op());
  r.set_variant(call.request.variant());
  *r.mutable_problem() = call.request.problem();
  *r.mutable_device() = device_;
  return std::move(r);
}

}  // namespace kbench::worker
