// Size, count, number and enum checks of every message a client or a worker sends (the limits of
// api/limits.h, as the .proto comments state them). Each returns INVALID_ARGUMENT naming the field
// path under the given prefix ("spec.labels[\"k\"]: ...") and quoting at most a short prefix of a bad
// value. They check what a message may hold, not what it means against the catalog or a job:
// api/validate.h and the coordinator do that.
#pragma once

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "kbench/v1/catalog.pb.h"
#include "kbench/v1/common.pb.h"
#include "kbench/v1/device.pb.h"
#include "kbench/v1/job.pb.h"
#include "kbench/v1/result.pb.h"
#include "kbench/v1/worker.pb.h"

namespace kbench::api {

// spec_bounds.cc
// A problem's dims (named or not), dtype, flags and preset name; with check_dim_values, dims >= 0
// (a request's shape has its own, stricter check of values in ValidateSpecStructure).
absl::Status CheckProblemBounds(absl::string_view field, const v1::Problem& problem, bool check_dim_values = true);
// A JobSpec: op and variant names, problems, dtypes, settings (finite, in range, known cache mode),
// selector, labels, the custom variants' and A/B fields' sizes. Called by ValidateSpecStructure.
absl::Status CheckSpecBounds(const v1::JobSpec& spec);

// worker_bounds.cc
absl::Status CheckDeviceBounds(absl::string_view field, const v1::DeviceInfo& device);
absl::Status CheckOpInfoBounds(absl::string_view field, const v1::OpInfo& op);
// A worker's registration: identity, devices (at least one), calibrations, catalog, labels, and the
// whole message at most kMaxWorkerInfoBytes.
absl::Status CheckWorkerInfoBounds(absl::string_view field, const v1::WorkerInfo& info);

// result_bounds.cc
// A reported result's fields. Free text (status_message, custom.compile_log) is not refused for its
// size: CutResultText cuts it to kMaxLogBytes before it is stored.
absl::Status CheckResultBounds(absl::string_view field, const v1::Result& result);
void CutResultText(v1::Result* result);
// A progress report: counts >= 0, results_done <= results_total once the total is known, total at
// most kMaxResultsPerJob. current is cut by the coordinator (CutProgressText), not refused.
absl::Status CheckProgressBounds(absl::string_view field, const v1::Progress& progress);
void CutProgressText(v1::Progress* progress);

}  // namespace kbench::api
