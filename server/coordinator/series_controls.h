// Admin controls of the performance series, recorded in the store (Store::InsertSeriesControl) and
// applied by the coordinator's verdicts without changing code: a threshold override, muting (the
// verdict is still stored and shown, marked muted, but raises no alert and asks for no confirming
// re-run), and a known step (a driver upgrade: the series' baseline and pinned reference restart after
// it). A control covers the series its scope matches: op always, every other field when set (an empty
// string, 0 or UNSPECIFIED matches anything), so a scope of op alone is a per-op control. Among the
// controls covering a series, the latest (by id) of each kind decides: the latest threshold (0
// clears it), the latest mute or unmute, the latest step.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "absl/status/status.h"
#include "kbench/v1/coordinator.pb.h"
#include "server/store/store.h"

namespace kbench::server {

// What the controls say about one series.
struct EffectiveControls {
  std::optional<double> threshold;  // The override of RegressionConfig::threshold.
  bool muted = false;
  int64_t step_after_ms = 0;        // Baseline and reference hold results finished after it; 0: no step.
  int64_t threshold_id = 0, mute_id = 0, step_id = 0;  // The deciding controls (0: none).
};

// Whether scope covers the series.
bool ScopeCovers(const v1::SeriesScope& scope, const SeriesKey& series);

// The controls (in id order, any scope) applied to one series.
EffectiveControls ControlsFor(std::span<const v1::SeriesControl> controls, const SeriesKey& series);

// A control as an admin sends it: op required and each field within its limits, a declared kind and
// enum values, a THRESHOLD in [0, 1) (0 clears the override), a step time not negative.
// INVALID_ARGUMENT naming the field.
absl::Status CheckSeriesControl(const v1::SeriesControl& control);

}  // namespace kbench::server
