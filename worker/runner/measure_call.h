// One MEASURE request to a runner child and its reply read as results: written once, for the job
// runner's items (runner/job_runner.h) and for IsolatedBackend's MeasureOne / MeasureCustom.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "kbench/runner/runner.pb.h"
#include "kbench/v1/custom.pb.h"
#include "kbench/v1/job.pb.h"
#include "kbench/v1/result.pb.h"

namespace kbench::worker {

struct MeasureCall {
  runner::RunnerRequest request;
  // The watchdog: the item's timeout, plus NVRTC's own time limit for a custom kernel (the compile
  // runs first); the caller adds the time a fresh runner needs to start, and doubles it for an A/B pair.
  std::chrono::milliseconds limit{0};
};

// `plugin_path` empty: the runner's own suite; `custom` non-null: that kernel instead of `variant`.
MeasureCall MakeMeasureCall(const std::string& op, const std::string& variant, const std::string& plugin_path,
                            const v1::Problem& problem, const v1::MeasurementSettings& settings,
                            const std::optional<v1::Calibration>& calibration, const v1::CustomVariant* custom);

struct MeasureReply {
  v1::Result result, head;     // head: an A/B pair's.
  bool runner_failed = false;  // The runner died, hung or answered an error: both results say how.
};

// A dead or hung runner becomes RUNTIME_ERROR or TIMEOUT (with only status and message set).
MeasureReply ReadMeasureReply(const absl::StatusOr<runner::RunnerResponse>& response);

}  // namespace kbench::worker
