#include "worker/measure/harness.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "worker/measure/stats.h"
#include "worker/measure/stopping.h"

namespace kbench::worker {
namespace {

absl::Status Interrupted(const HarnessHooks& hooks) {
  if (hooks.cancel != nullptr && hooks.cancel->cancelled()) return absl::CancelledError("cancelled");
  if (hooks.deadline_ns > 0 && hooks.now_ns() >= hooks.deadline_ns)
    return absl::DeadlineExceededError("timeout reached while measuring");
  return absl::OkStatus();
}

}  // namespace

int64_t SteadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

absl::StatusOr<v1::Timing> Measure(const v1::MeasurementSettings& settings, const HarnessHooks& hooks) {
  const bool hot = settings.cache_mode() == v1::HOT;
  const int launches = hot ? std::max(1, settings.hot_batch()) : 1;
  v1::Timing timing;
  timing.set_cache_mode(hot ? v1::HOT : v1::COLD);
  timing.set_launches_per_sample(launches);

  // Warm-up: single launches until warmup_ns has passed, at least one (first-touch, lazy init).
  const int64_t warm_start = hooks.now_ns();
  int warm_launches = 0;
  do {
    if (absl::Status s = Interrupted(hooks); !s.ok()) return s;
    if (!hot && hooks.flush) hooks.flush();
    absl::StatusOr<SampleTime> t = hooks.sample(1);
    if (!t.ok()) return t.status();
    ++warm_launches;
  } while (hooks.now_ns() - warm_start < settings.warmup_ns());
  timing.set_warmup_ns(hooks.now_ns() - warm_start);
  timing.set_warmup_launches(warm_launches);

  std::vector<double> samples, kept, write_backs;  // kept: the unthrottled ones, for the statistics
  std::vector<bool> throttled;
  samples.reserve(static_cast<size_t>(std::min(settings.max_samples(), 100000)));
  std::vector<double> sorted;
  // The RSE needs a sort; past 64 samples it is re-evaluated only every ~3% more samples, so a run
  // to max_samples stays O(n log^2 n) instead of O(n^2 log n).
  int64_t next_noise_check = 0;
  const int64_t start = hooks.now_ns();
  v1::StopReason reason = v1::STOP_REASON_UNSPECIFIED;
  while (true) {
    if (absl::Status s = Interrupted(hooks); !s.ok()) return s;
    const int64_t cycle_start = hooks.now_ns();
    if (!hot && hooks.flush) hooks.flush();
    absl::StatusOr<SampleTime> t = hooks.sample(launches);
    if (!t.ok()) return t.status();
    samples.push_back(t->ns / launches);
    throttled.push_back(t->throttled);
    if (!t->throttled) {
      kept.push_back(t->ns / launches);
      write_backs.push_back(t->write_back_ns / launches);
    }
    const int64_t now = hooks.now_ns();

    StopState state{.samples = static_cast<int64_t>(kept.size()), .elapsed_ns = now - start,
                    .median_rse = std::numeric_limits<double>::infinity()};
    if (NoiseTestDue(state, settings) && state.samples >= next_noise_check) {
      sorted.assign(kept.begin(), kept.end());
      std::sort(sorted.begin(), sorted.end());
      state.median_rse = MedianRelativeStandardError(sorted);
      next_noise_check = state.samples + (state.samples < 64 ? 1 : state.samples / 32);
    }
    if (auto r = ShouldStop(state, settings)) {
      reason = *r;
      break;
    }
    // Throttled samples count against max_samples and min_samples for the time limit too: a device
    // throttled throughout still stops.
    if (static_cast<int64_t>(samples.size()) >= settings.max_samples()) {
      reason = v1::MAX_SAMPLES;
      break;
    }
    if (static_cast<int64_t>(samples.size()) >= settings.min_samples() && now - start >= settings.max_time_ns()) {
      reason = v1::TIME_LIMIT;
      break;
    }
    // Another sample like the last one would cross the deadline: keep what there is rather than
    // lose it all to the watchdog (a slow kernel short of min_samples).
    if (hooks.deadline_ns > 0 && now + (now - cycle_start) >= hooks.deadline_ns) {
      reason = v1::TIME_LIMIT;
      break;
    }
  }

  const int flagged = static_cast<int>(samples.size() - kept.size());
  if (kept.empty()) kept = samples;  // every sample throttled: the statistics say so (throttled)
  const SampleStats st = ComputeStats(kept);
  timing.mutable_samples_ns()->Assign(samples.begin(), samples.end());
  if (flagged > 0) timing.mutable_sample_throttled()->Assign(throttled.begin(), throttled.end());
  timing.set_discarded_throttled(flagged);
  timing.set_throttled(flagged > 0);
  if (!write_backs.empty()) timing.set_write_back_ns(ComputeStats(write_backs).median);
  timing.set_median_ns(st.median);
  timing.set_mean_ns(st.mean);
  timing.set_stddev_ns(st.stddev);
  timing.set_min_ns(st.min);
  timing.set_max_ns(st.max);
  timing.set_p10_ns(st.p10);
  timing.set_p90_ns(st.p90);
  timing.set_count(st.count);
  timing.set_median_relative_standard_error(st.median_rse);
  timing.set_stop_reason(reason);
  return timing;
}

}  // namespace kbench::worker
