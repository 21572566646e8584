// Defaults of MeasurementSettings, as documented in job.proto: a zero field takes its default.
#pragma once

#include "kbench/v1/job.pb.h"

namespace kbench::worker {

inline constexpr int64_t kDefaultWarmupNs = 50'000'000;       // 50 ms
inline constexpr int32_t kDefaultMinSamples = 10;
inline constexpr int32_t kDefaultMaxSamples = 1000;
inline constexpr int64_t kDefaultMinTimeNs = 100'000'000;     // 100 ms
inline constexpr int64_t kDefaultMaxTimeNs = 2'000'000'000;   // 2 s
inline constexpr double kDefaultNoiseTarget = 0.005;
inline constexpr int32_t kDefaultCorrectnessTrials = 3;
inline constexpr uint64_t kDefaultSeed = 1;
inline constexpr int64_t kDefaultTimeoutNs = 60'000'000'000;  // 60 s
inline constexpr int32_t kDefaultHotBatch = 20;

// Fills every zero field with its default; CACHE_MODE_UNSPECIFIED becomes COLD. When only
// max_samples is given and it is below the default minimum, the minimum follows it down.
v1::MeasurementSettings WithDefaults(const v1::MeasurementSettings& in);

}  // namespace kbench::worker
