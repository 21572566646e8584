// The coordinator's admin controls of the series: recorded with who and when (the rpc's caller has
// the admin role; server/auth/authorizer.cc), listed per op. How the verdicts use them:
// series_controls.h, regression.h (ForSeries, Alerts) and JudgeResults in coordinator_report.cc.
#include "api/bounds.h"
#include "api/limits.h"
#include "server/coordinator/coordinator.h"
#include "server/coordinator/series_controls.h"
#include "server/coordinator/series_shape.h"

namespace kbench::server {

absl::StatusOr<v1::SeriesControl> Coordinator::SetSeriesControl(v1::SeriesControl control, absl::string_view who) {
  if (absl::Status s = CheckSeriesControl(control); !s.ok()) return s;
  const int64_t now = clock_->NowUnixMs();
  control.set_set_by(std::string(who));
  control.set_set_unix_ms(now);
  if (control.kind() == v1::SERIES_STEP && control.at_unix_ms() == 0) control.set_at_unix_ms(now);
  // The scope's shape as the series are keyed (derived dims filled), so "4x256x512" covers the series
  // a submit of that shape made (4x256x512x64x4).
  control.mutable_scope()->set_shape(SeriesShapeFor(control.scope().op(), control.scope().shape()));
  return store_->InsertSeriesControl(control);
}

std::string Coordinator::SeriesShapeFor(absl::string_view op, absl::string_view shape) {
  if (shape.empty()) return "";
  const absl::StatusOr<std::vector<v1::OpInfo>> ops = ListKernels(op);
  return SeriesShapeOf(ops.ok() && !ops->empty() ? &ops->front() : nullptr, shape);
}

absl::StatusOr<std::vector<v1::SeriesControl>> Coordinator::ListSeriesControls(absl::string_view op) {
  if (absl::Status s = api::CheckSize("op", op, api::kMaxNameBytes); !s.ok()) return s;
  return store_->ListSeriesControls(op);
}

}  // namespace kbench::server
