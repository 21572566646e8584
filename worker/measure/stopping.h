// The adaptive stop rule of the measurement loop (measure/harness.h runs it).
//
// Both time bounds count wall time since sampling began, flushes included: a tiny kernel measured
// cold spends most of its time flushing, and counting only its own nanoseconds would force every
// such measurement to the time limit.
#pragma once

#include <cstdint>
#include <optional>

#include "kbench/v1/job.pb.h"
#include "kbench/v1/result.pb.h"

namespace kbench::worker {

struct StopState {
  int64_t samples = 0;
  int64_t elapsed_ns = 0;  // Wall time since the first sample started.
  // RSE of the median; only read once min_samples and min_time are met.
  double median_rse = 0;
};

// True when the noise test may be evaluated (min_samples and min_time both met), so callers can
// skip computing the RSE otherwise.
bool NoiseTestDue(const StopState& state, const v1::MeasurementSettings& settings);

// Why sampling stops now, or nullopt to continue. settings must have its defaults filled.
//   NOISE_TARGET  min_samples and min_time met, and the RSE of the median under noise_target;
//   MAX_SAMPLES   max_samples reached (never below min_samples: settings keep min <= max);
//   TIME_LIMIT    max_time reached, once min_samples are in: min_samples is a floor, so a slow
//                 kernel still gets its minimum (the per-item timeout bounds it; the harness ends
//                 early rather than run into that timeout).
// The noise target wins when several criteria hold at once, then max_samples.
std::optional<v1::StopReason> ShouldStop(const StopState& state, const v1::MeasurementSettings& settings);

}  // namespace kbench::worker
