#include "worker/measure/stopping.h"

namespace kbench::worker {

bool NoiseTestDue(const StopState& state, const v1::MeasurementSettings& settings) {
  return state.samples >= settings.min_samples() && state.elapsed_ns >= settings.min_time_ns();
}

std::optional<v1::StopReason> ShouldStop(const StopState& state, const v1::MeasurementSettings& settings) {
  if (NoiseTestDue(state, settings) && state.median_rse < settings.noise_target()) return v1::NOISE_TARGET;
  if (state.samples >= settings.max_samples()) return v1::MAX_SAMPLES;
  if (state.samples >= settings.min_samples() && state.elapsed_ns >= settings.max_time_ns()) return v1::TIME_LIMIT;
  return std::nullopt;
}

}  // namespace kbench::worker
