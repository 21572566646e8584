// A runner in this process; see local_runner.h. Also the JobRunner form that makes one.
#include "worker/runner/local_runner.h"

#include "absl/strings/str_cat.h"
#include "worker/runner/convert.h"
#include "worker/runner/job_runner.h"

namespace kbench::worker {
namespace {

v1::Result Failed(v1::ResultStatus status, std::string message) {
  v1::Result r;
  r.set_status(status);
  r.set_status_message(std::move(message));
  return r;
}

}  // namespace

absl::StatusOr<runner::RunnerResponse> LocalRunner::CallRunner(const runner::RunnerRequest& request,
                                                               std::chrono::milliseconds timeout) {
  const CancelFlag never;
  return CallRunnerWithCancel(request, timeout, never);
}

absl::StatusOr<runner::RunnerResponse> LocalRunner::CallRunnerWithCancel(const runner::RunnerRequest& req,
                                                                         std::chrono::milliseconds timeout,
                                                                         const CancelFlag& cancel) {
  (void)timeout;  // Nothing here can be killed: the item runs to its end or to `cancel`.
  runner::RunnerResponse resp;
  runner::RunnerRequest resolved;  // A MEASURE that names its problem in a table gets it here.
  if (req.kind() == runner::RunnerRequest::MEASURE && req.problem_table() != 0) {
    resolved = req;
    if (!problems_.Resolve(resolved, &resp)) return resp;
  }
  switch (req.kind()) {
    case runner::RunnerRequest::DESCRIBE:
      if (!req.plugin_path().empty()) {
        resp.set_error("plugins load only in a runner child process");
        break;
      }
      *resp.mutable_device() = backend_.device();
      if (auto ds = backend_.datasheet()) *resp.mutable_datasheet() = *ds;
      for (const v1::OpInfo& op : catalog_.ops()) *resp.add_catalog() = op;
      break;
    case runner::RunnerRequest::CALIBRATE: {
      absl::StatusOr<v1::Calibration> c = backend_.Calibrate();
      if (c.ok()) *resp.mutable_calibration() = *c;
      else resp.set_error(std::string(c.status().message()));
      break;
    }
    case runner::RunnerRequest::CHECK_PROBLEMS: {
      const kernels::OpDef* op = catalog_.FindOp(req.op());
      if (op == nullptr) {
        resp.set_error(absl::StrCat("this worker has no op '", req.op(), "'"));
        break;
      }
      for (const v1::Problem& p : req.problems())
        resp.add_problem_errors(op->validate ? op->validate(ToKernelProblem(p)) : std::string());
      problems_.Keep(req);
      break;
    }
    case runner::RunnerRequest::MEASURE:
      *resp.mutable_result() = Measure(req.problem_table() != 0 ? resolved : req, cancel);
      break;
    default:
      resp.set_error("unknown request kind");
  }
  return resp;
}

v1::Result LocalRunner::Measure(const runner::RunnerRequest& req, const CancelFlag& cancel) {
  if (req.has_ab() || !req.plugin_path().empty())
    return Failed(v1::RUNTIME_ERROR, "plugin and A/B items run only in a runner child process");
  const kernels::OpDef* op = catalog_.FindOp(req.op());
  if (op == nullptr) return Failed(v1::RUNTIME_ERROR, absl::StrCat("this worker has no op '", req.op(), "'"));
  // As a child does: the calibration the worker holds is the one the roofline uses.
  if (req.has_calibration()) backend_.set_calibration(req.calibration());
  const kernels::Problem problem = ToKernelProblem(req.problem());
  if (req.has_custom()) return backend_.MeasureCustom(*op, req.custom(), problem, req.settings(), cancel);
  const kernels::Variant* variant = op->find_variant(req.variant());
  if (variant == nullptr)
    return Failed(v1::RUNTIME_ERROR,
                  absl::StrCat("this worker has no variant '", req.variant(), "' of op '", req.op(), "'"));
  return backend_.MeasureOne(*op, *variant, problem, req.settings(), cancel);
}

LocalDevice::LocalDevice(std::unique_ptr<Backend> backend, const kernels::Registry& registry)
    : inner_(std::move(backend)), catalog_(registry, {inner_->kind()}), runner_(catalog_, *inner_) {
  if (inner_->calibration()) set_calibration(*inner_->calibration());
}

JobRunner::JobRunner(const Catalog& catalog, Backend& backend)
    : catalog_(catalog.ops()), backend_(backend), runner_(backend.runner_channel()) {
  if (runner_ == nullptr) {
    local_ = std::make_unique<LocalRunner>(catalog, backend);
    runner_ = local_.get();
  }
}

}  // namespace kbench::worker
