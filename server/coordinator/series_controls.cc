// Admin controls applied to a series: scope matching, the latest control of each kind, and the
// check of a control an admin sends. See series_controls.h.
#include "server/coordinator/series_controls.h"

#include <tuple>

#include "absl/strings/str_cat.h"
#include "api/bounds.h"
#include "api/limits.h"

namespace kbench::server {

bool ScopeCovers(const v1::SeriesScope& s, const SeriesKey& k) {
  return s.op() == k.op && (s.variant().empty() || s.variant() == k.variant) &&
         (s.shape().empty() || s.shape() == k.shape) && (s.dtype() == v1::DTYPE_UNSPECIFIED || s.dtype() == k.dtype) &&
         (s.gpu_model().empty() || s.gpu_model() == k.gpu_model) &&
         (s.cache_mode() == v1::CACHE_MODE_UNSPECIFIED || s.cache_mode() == k.cache_mode) &&
         (s.hot_batch() == 0 || s.hot_batch() == k.hot_batch) &&
         (s.backend() == v1::BACKEND_UNSPECIFIED || s.backend() == k.backend);
}

EffectiveControls ControlsFor(std::span<const v1::SeriesControl> controls, const SeriesKey& series) {
  EffectiveControls out;
  for (const v1::SeriesControl& c : controls) {
    if (!ScopeCovers(c.scope(), series)) continue;
    // Ids grow with time; a list out of order still lets the latest decide.
    switch (c.kind()) {
      case v1::SERIES_THRESHOLD:
        if (c.id() < out.threshold_id) break;
        out.threshold_id = c.id();
        out.threshold = c.threshold() > 0 ? std::optional<double>(c.threshold()) : std::nullopt;
        break;
      case v1::SERIES_MUTE:
      case v1::SERIES_UNMUTE:
        if (c.id() < out.mute_id) break;
        out.mute_id = c.id();
        out.muted = c.kind() == v1::SERIES_MUTE;
        break;
      case v1::SERIES_STEP:
        if (c.id() < out.step_id) break;
        out.step_id = c.id();
        out.step_after_ms = c.at_unix_ms();
        break;
      default:
        break;
    }
  }
  return out;
}

absl::Status CheckSeriesControl(const v1::SeriesControl& c) {
  const v1::SeriesScope& s = c.scope();
  if (absl::Status st = api::CheckRequired("scope.op", s.op(), api::kMaxNameBytes); !st.ok()) return st;
  for (auto [field, value, limit] : {std::tuple{"scope.variant", &s.variant(), api::kMaxNameBytes},
                                     {"scope.shape", &s.shape(), api::kMaxShortTextBytes},
                                     {"scope.gpu_model", &s.gpu_model(), api::kMaxShortTextBytes},
                                     {"note", &c.note(), api::kMaxTextBytes}})
    if (absl::Status st = api::CheckSize(field, *value, limit); !st.ok()) return st;
  if (!v1::Dtype_IsValid(s.dtype())) return absl::InvalidArgumentError(absl::StrCat("scope.dtype: unknown value ", s.dtype()));
  if (!v1::CacheMode_IsValid(s.cache_mode()))
    return absl::InvalidArgumentError(absl::StrCat("scope.cache_mode: unknown value ", s.cache_mode()));
  if (!v1::Backend_IsValid(s.backend()))
    return absl::InvalidArgumentError(absl::StrCat("scope.backend: unknown value ", s.backend()));
  if (s.hot_batch() < 0 || s.hot_batch() > api::kMaxHotBatch)
    return absl::InvalidArgumentError(
        absl::StrCat("scope.hot_batch: ", s.hot_batch(), " is outside [0, ", api::kMaxHotBatch, "]"));
  switch (c.kind()) {
    case v1::SERIES_THRESHOLD:
      if (!(c.threshold() >= 0 && c.threshold() < 1))
        return absl::InvalidArgumentError(
            absl::StrCat("threshold: ", c.threshold(), " is outside [0, 1) (a fraction: 0.05 is 5%; 0 clears)"));
      return absl::OkStatus();
    case v1::SERIES_MUTE:
    case v1::SERIES_UNMUTE:
      return absl::OkStatus();
    case v1::SERIES_STEP:
      if (c.at_unix_ms() < 0) return absl::InvalidArgumentError(absl::StrCat("at_unix_ms: ", c.at_unix_ms(), " is negative"));
      return absl::OkStatus();
    default:
      return absl::InvalidArgumentError(absl::StrCat("kind: unknown value ", c.kind(),
                                                     " (SERIES_THRESHOLD, SERIES_MUTE, SERIES_UNMUTE or SERIES_STEP)"));
  }
}

}  // namespace kbench::server
