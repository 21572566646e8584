// Plausibility of a calibration: a ceiling measured on a busy device, or one beyond what the
// datasheet allows, would make every later utilization wrong. LoadOrCalibrate refuses such a
// calibration and measures again (calibration_cache.cc).
#pragma once

#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "kbench/v1/device.pb.h"

namespace kbench::worker {

// Limits of the checks, named so the messages and the tests say the same thing.
inline constexpr double kMaxOtherLoad = 0.20;        // others' share of the device while calibrating
inline constexpr double kMaxCopySpread = 0.10;       // (slowest - fastest) / median of the copy rounds
inline constexpr double kMaxOverDatasheet = 1.05;    // measured / datasheet, bandwidth and peaks
inline constexpr double kMinCopyOfDatasheet = 0.40;  // below: busy, throttled or misconfigured
inline constexpr double kMinSpreadAllowance = 0.01;  // a result may exceed its ceiling by this much

// (max - min) / median of `times` (any unit); 0 for fewer than two values.
double SpreadFraction(std::vector<double> times);

// OK, or FailedPrecondition saying which check failed and by how much.
absl::Status CheckCalibration(const v1::Calibration& calibration, const std::optional<v1::DatasheetPeaks>& datasheet);

}  // namespace kbench::worker
