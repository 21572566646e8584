#include "worker/plan/settings.h"

#include <algorithm>

namespace kbench::worker {

v1::MeasurementSettings WithDefaults(const v1::MeasurementSettings& in) {
  v1::MeasurementSettings s = in;
  if (s.cache_mode() == v1::CACHE_MODE_UNSPECIFIED) s.set_cache_mode(v1::COLD);
  if (s.warmup_ns() == 0) s.set_warmup_ns(kDefaultWarmupNs);
  if (s.max_samples() == 0) s.set_max_samples(kDefaultMaxSamples);
  if (s.min_samples() == 0) s.set_min_samples(std::min(kDefaultMinSamples, s.max_samples()));
  if (s.min_time_ns() == 0) s.set_min_time_ns(kDefaultMinTimeNs);
  if (s.max_time_ns() == 0) s.set_max_time_ns(kDefaultMaxTimeNs);
  if (s.noise_target() == 0) s.set_noise_target(kDefaultNoiseTarget);
  if (s.correctness_trials() == 0) s.set_correctness_trials(kDefaultCorrectnessTrials);
  if (s.seed() == 0) s.set_seed(kDefaultSeed);
  if (s.timeout_ns() == 0) s.set_timeout_ns(kDefaultTimeoutNs);
  if (s.hot_batch() == 0) s.set_hot_batch(kDefaultHotBatch);
  return s;
}

}  // namespace kbench::worker
