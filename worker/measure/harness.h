// The generic measurement loop shared by every backend: time-based warm-up, then samples until the
// stop rule fires. The backend supplies how one sample is timed (steady clock around CPU calls,
// CUDA events on a stream) and how the cache is flushed; the loop owns everything else.
#pragma once

#include <cstdint>
#include <functional>

#include "absl/status/statusor.h"
#include "kbench/v1/job.pb.h"
#include "kbench/v1/result.pb.h"
#include "worker/cancel.h"

namespace kbench::worker {

// Nanoseconds on a monotonic clock.
using ClockFn = std::function<int64_t()>;
int64_t SteadyNowNs();

// One sample as the device timed it.
struct SampleTime {
  double ns = 0;             // The `launches` launches together (COLD: write-back included).
  bool throttled = false;    // Clocks were pulled down during it: kept, flagged, left out of the statistics.
  double write_back_ns = 0;  // COLD: what the write-back of the kernel's dirty lines added to ns.
};

struct HarnessHooks {
  // Runs `launches` back-to-back launches and returns the time they took together.
  std::function<absl::StatusOr<SampleTime>(int launches)> sample;
  // Evicts the cache before a COLD sample, outside the timed window. May be empty.
  std::function<void()> flush;
  ClockFn now_ns = SteadyNowNs;  // Replaced by a fake clock in tests.
  const CancelFlag* cancel = nullptr;
  // On now_ns's clock; 0: none. Sampling ends (TIME_LIMIT) when one more sample would cross it;
  // crossed anyway (warm-up, a sample slower than the last), it is DEADLINE_EXCEEDED.
  int64_t deadline_ns = 0;
};

// Measures with settings (defaults filled). COLD: a sample is one launch after a flush. HOT: a
// sample is the mean per launch of hot_batch back-to-back launches, without flushes. Every sample
// is kept; throttled ones are flagged (Timing.sample_throttled) and the statistics and the stop
// rule use the others (all of them when none is unthrottled). write_back_ns is the median of the
// statistics' samples' write-back.
// Errors: CANCELLED when the flag is raised, DEADLINE_EXCEEDED past the deadline, or the sampler's.
absl::StatusOr<v1::Timing> Measure(const v1::MeasurementSettings& settings, const HarnessHooks& hooks);

}  // namespace kbench::worker
