// One MEASURE request and its reply; see measure_call.h.
#include "worker/runner/measure_call.h"

#include "absl/strings/match.h"
#include "api/limits.h"

namespace kbench::worker {

MeasureCall MakeMeasureCall(const std::string& op, const std::string& variant, const std::string& plugin_path,
                            const v1::Problem& problem, const v1::MeasurementSettings& settings,
                            const std::optional<v1::Calibration>& calibration, const v1::CustomVariant* custom) {
  MeasureCall call;
  runner::RunnerRequest& req = call.request;
  req.set_kind(runner::RunnerRequest::MEASURE);
  req.set_op(op);
  req.set_variant(variant);
  req.set_plugin_path(plugin_path);
  *req.mutable_problem() = problem;
  *req.mutable_settings() = settings;
  if (calibration) *req.mutable_calibration() = *calibration;
  int64_t limit_ns = settings.timeout_ns();
  if (custom != nullptr) {
    *req.mutable_custom() = *custom;
    limit_ns += custom->compile_timeout_ns() > 0 ? custom->compile_timeout_ns() : api::kDefaultCompileTimeoutNs;
  } else if (absl::StartsWith(variant, "triton_")) {
    limit_ns += api::kDefaultCompileTimeoutNs;  // a Triton rung may compile first (worker/triton/)
  }
  call.limit = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::nanoseconds(limit_ns));
  return call;
}

MeasureReply ReadMeasureReply(const absl::StatusOr<runner::RunnerResponse>& response) {
  if (response.ok() && response->error().empty()) return {response->result(), response->head_result(), false};
  v1::Result failed;
  failed.set_status(!response.ok() && absl::IsDeadlineExceeded(response.status()) ? v1::TIMEOUT : v1::RUNTIME_ERROR);
  failed.set_status_message(response.ok() ? response->error() : std::string(response.status().message()));
  return {failed, failed, true};
}

}  // namespace kbench::worker
