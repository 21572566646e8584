// Size, count, number and enum limits of a JobSpec and a Problem; see message_bounds.h. The
// checks of meaning (duplicates, dims >= 1, the catalog) stay in validate.cc, custom_spec.cc and
// plugin_spec.cc, which also hold the limits of the custom and A/B fields.
#include <cmath>

#include "absl/strings/str_cat.h"
#include "api/bounds.h"
#include "api/message_bounds.h"

namespace kbench::api {

absl::Status CheckProblemBounds(absl::string_view field, const v1::Problem& problem, bool check_dim_values) {
  const std::string f(field);
  KBENCH_RETURN_IF_ERROR(CheckCount(f + ".dims", problem.dims_size(), kMaxDimsPerProblem));
  for (int j = 0; j < problem.dims_size(); ++j) {
    const std::string df = At(f + ".dims", j);
    KBENCH_RETURN_IF_ERROR(CheckSize(df + ".name", problem.dims(j).name(), kMaxNameBytes));
    if (check_dim_values && problem.dims(j).value() < 0)
      return Invalid(df + ".value", absl::StrCat("must be >= 0, got ", problem.dims(j).value()));
  }
  KBENCH_RETURN_IF_ERROR(CheckEnum(f + ".dtype", problem.dtype(), v1::Dtype_IsValid));
  KBENCH_RETURN_IF_ERROR(CheckStrings(f + ".flags", problem.flags(), kMaxFlagsPerProblem, kMaxNameBytes, true));
  return CheckSize(f + ".preset", problem.preset(), kMaxNameBytes);
}

namespace {

absl::Status CheckSettings(const v1::MeasurementSettings& s) {
  KBENCH_RETURN_IF_ERROR(CheckEnum("spec.settings.cache_mode", s.cache_mode(), v1::CacheMode_IsValid));
  // NaN compares false with everything: it must be refused by name, not slip through a range test.
  if (!std::isfinite(s.noise_target()) || s.noise_target() < 0 || s.noise_target() >= 1)
    return Invalid("spec.settings.noise_target", absl::StrCat("must be a number in [0, 1), got ", s.noise_target()));
  KBENCH_RETURN_IF_ERROR(CheckRange("spec.settings.min_samples", s.min_samples(), 0, kMaxSamples));
  KBENCH_RETURN_IF_ERROR(CheckRange("spec.settings.max_samples", s.max_samples(), 0, kMaxSamples));
  for (auto [name, v] : {std::pair{"warmup_ns", s.warmup_ns()}, {"min_time_ns", s.min_time_ns()},
                         {"max_time_ns", s.max_time_ns()}, {"timeout_ns", s.timeout_ns()}}) {
    if (v < 0 || v > kMaxTimePerProblemNs)
      return Invalid(absl::StrCat("spec.settings.", name), absl::StrCat("must be in [0, 1 h], got ", v));
  }
  KBENCH_RETURN_IF_ERROR(CheckRange("spec.settings.correctness_trials", s.correctness_trials(), 0, kMaxCorrectnessTrials));
  return CheckRange("spec.settings.hot_batch", s.hot_batch(), 0, kMaxHotBatch);
}

absl::Status CheckSelector(const v1::GpuSelector& s) {
  KBENCH_RETURN_IF_ERROR(CheckEnum("spec.selector.backend", s.backend(), v1::Backend_IsValid));
  KBENCH_RETURN_IF_ERROR(CheckSize("spec.selector.model", s.model(), kMaxNameBytes));
  KBENCH_RETURN_IF_ERROR(CheckRange("spec.selector.min_compute_capability", s.min_compute_capability(), 0, 1000));
  return CheckLabels("spec.selector.labels", s.labels());
}

}  // namespace

absl::Status CheckSpecBounds(const v1::JobSpec& spec) {
  KBENCH_RETURN_IF_ERROR(CheckSize("spec.op", spec.op(), kMaxNameBytes));
  KBENCH_RETURN_IF_ERROR(CheckStrings("spec.variants", spec.variants(), kMaxVariantsPerJob, kMaxNameBytes, false));
  KBENCH_RETURN_IF_ERROR(CheckCount("spec.problems", spec.problems_size(), kMaxProblemsPerJob));
  for (int i = 0; i < spec.problems_size(); ++i) {
    const v1::ProblemSpec& ps = spec.problems(i);
    const std::string f = At("spec.problems", i);
    if (ps.has_preset()) KBENCH_RETURN_IF_ERROR(CheckSize(f + ".preset", ps.preset(), kMaxNameBytes));
    if (ps.has_shape()) KBENCH_RETURN_IF_ERROR(CheckProblemBounds(f + ".shape", ps.shape(), false));
  }
  KBENCH_RETURN_IF_ERROR(CheckEnums("spec.dtypes", spec.dtypes(), kMaxDtypesPerJob, v1::Dtype_IsValid, false));
  KBENCH_RETURN_IF_ERROR(CheckSettings(spec.settings()));
  KBENCH_RETURN_IF_ERROR(CheckSelector(spec.selector()));
  return CheckLabels("spec.labels", spec.labels());
}

}  // namespace kbench::api
