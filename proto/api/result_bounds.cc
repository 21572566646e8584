// Size, count, number and enum limits of a worker's reports: results and progress; see
// message_bounds.h.
#include <cmath>

#include "absl/strings/str_cat.h"
#include "api/bounds.h"
#include "api/message_bounds.h"
#include "api/plugin_spec.h"
#include "api/quote.h"

namespace kbench::api {
namespace {

absl::Status CheckTiming(const std::string& f, const v1::Timing& t) {
  KBENCH_RETURN_IF_ERROR(CheckCount(f + ".samples_ns", t.samples_ns_size(), kMaxSamples));
  // Samples feed the regression verdicts: a NaN or a negative time would poison a series' baseline.
  for (int i = 0; i < t.samples_ns_size(); ++i)
    if (!(std::isfinite(t.samples_ns(i)) && t.samples_ns(i) >= 0))
      return Invalid(At(f + ".samples_ns", i), absl::StrCat("must be a finite time >= 0, got ", t.samples_ns(i)));
  // Block sizes split the samples into the A/B verdict's runs: at most one block per sample.
  KBENCH_RETURN_IF_ERROR(CheckCount(f + ".block_sample_counts", t.block_sample_counts_size(), kMaxSamples));
  for (int i = 0; i < t.block_sample_counts_size(); ++i)
    KBENCH_RETURN_IF_ERROR(CheckRange(At(f + ".block_sample_counts", i), t.block_sample_counts(i), 0, kMaxSamples));
  KBENCH_RETURN_IF_ERROR(CheckCount(f + ".sample_throttled", t.sample_throttled_size(), kMaxSamples));
  KBENCH_RETURN_IF_ERROR(CheckFinite(f + ".median_ns", t.median_ns(), 0, 1e18));
  KBENCH_RETURN_IF_ERROR(CheckRange(f + ".count", t.count(), 0, kMaxSamples));
  KBENCH_RETURN_IF_ERROR(CheckEnum(f + ".stop_reason", t.stop_reason(), v1::StopReason_IsValid));
  return CheckEnum(f + ".cache_mode", t.cache_mode(), v1::CacheMode_IsValid);
}

absl::Status CheckCustomInfo(const std::string& f, const v1::CustomKernelInfo& c) {
  KBENCH_RETURN_IF_ERROR(CheckEnum(f + ".kind", c.kind(), v1::CustomSourceKind_IsValid));
  KBENCH_RETURN_IF_ERROR(CheckSize(f + ".source_sha256", c.source_sha256(), 64));
  KBENCH_RETURN_IF_ERROR(CheckSize(f + ".entry", c.entry(), kMaxShortTextBytes));
  KBENCH_RETURN_IF_ERROR(CheckSize(f + ".arch", c.arch(), kMaxNameBytes));
  KBENCH_RETURN_IF_ERROR(CheckSize(f + ".compiler", c.compiler(), kMaxShortTextBytes));
  KBENCH_RETURN_IF_ERROR(CheckCount(f + ".block", c.block_size(), 3));
  return CheckCount(f + ".grid", c.grid_size(), 3);
}

}  // namespace

absl::Status CheckResultBounds(absl::string_view field, const v1::Result& r) {
  const std::string f(field);
  KBENCH_RETURN_IF_ERROR(CheckSize(f + ".job_id", r.job_id(), kMaxIdBytes));
  KBENCH_RETURN_IF_ERROR(CheckRange(f + ".index", r.index(), 0, kMaxResultsPerJob - 1));
  KBENCH_RETURN_IF_ERROR(CheckRequired(f + ".op", r.op(), kMaxNameBytes));
  KBENCH_RETURN_IF_ERROR(CheckRequired(f + ".variant", r.variant(), kMaxNameBytes));
  KBENCH_RETURN_IF_ERROR(CheckProblemBounds(f + ".problem", r.problem()));
  KBENCH_RETURN_IF_ERROR(CheckEnum(f + ".status", r.status(), v1::ResultStatus_IsValid));
  KBENCH_RETURN_IF_ERROR(CheckTiming(f + ".timing", r.timing()));
  KBENCH_RETURN_IF_ERROR(CheckCount(f + ".roofline.ceilings", r.roofline().ceilings_size(), kMaxCeilingsPerResult));
  for (int i = 0; i < r.roofline().ceilings_size(); ++i) {
    const v1::RooflineCeiling& c = r.roofline().ceilings(i);
    const std::string cf = At(f + ".roofline.ceilings", i);
    KBENCH_RETURN_IF_ERROR(CheckSize(cf + ".source", c.source(), kMaxNameBytes));
    KBENCH_RETURN_IF_ERROR(CheckSize(cf + ".bandwidth_ceiling", c.bandwidth_ceiling(), kMaxShortTextBytes));
    KBENCH_RETURN_IF_ERROR(CheckSize(cf + ".peak_ceiling", c.peak_ceiling(), kMaxShortTextBytes));
  }
  KBENCH_RETURN_IF_ERROR(CheckEnum(f + ".roofline.bound_class", r.roofline().bound_class(), v1::BoundClass_IsValid));
  KBENCH_RETURN_IF_ERROR(CheckSize(f + ".roofline.warning", r.roofline().warning(), kMaxShortTextBytes));
  KBENCH_RETURN_IF_ERROR(CheckSize(f + ".correctness.reference", r.correctness().reference(), kMaxShortTextBytes));
  KBENCH_RETURN_IF_ERROR(CheckCount(f + ".resources", r.resources_size(), kMaxResourcesPerResult));
  for (int i = 0; i < r.resources_size(); ++i)
    KBENCH_RETURN_IF_ERROR(CheckSize(At(f + ".resources", i) + ".kernel_name", r.resources(i).kernel_name(),
                                     kMaxShortTextBytes));
  KBENCH_RETURN_IF_ERROR(CheckDeviceBounds(f + ".device", r.device()));
  KBENCH_RETURN_IF_ERROR(CheckSize(f + ".worker_id", r.worker_id(), kMaxIdBytes));
  KBENCH_RETURN_IF_ERROR(CheckLabels(f + ".labels", r.labels()));
  KBENCH_RETURN_IF_ERROR(CheckEnum(f + ".ab_side", r.ab_side(), v1::AbSide_IsValid));
  if (!r.plugin_sha256().empty() && !IsSha256Hex(r.plugin_sha256()))
    return Invalid(f + ".plugin_sha256", absl::StrCat(Quote(r.plugin_sha256()), " is not a SHA-256 (64 lower-case hex digits)"));
  return CheckCustomInfo(f + ".custom", r.custom());
}

void CutResultText(v1::Result* r) {
  if (r->status_message().size() > kMaxLogBytes) r->set_status_message(CutText(r->status_message(), kMaxLogBytes));
  if (r->custom().compile_log().size() > kMaxLogBytes)
    r->mutable_custom()->set_compile_log(CutText(r->custom().compile_log(), kMaxLogBytes));
}

absl::Status CheckProgressBounds(absl::string_view field, const v1::Progress& p) {
  const std::string f(field);
  KBENCH_RETURN_IF_ERROR(CheckRange(f + ".results_total", p.results_total(), 0, kMaxResultsPerJob));
  KBENCH_RETURN_IF_ERROR(CheckRange(f + ".results_done", p.results_done(), 0, kMaxResultsPerJob));
  if (p.results_total() > 0 && p.results_done() > p.results_total())
    return Invalid(f + ".results_done",
                   absl::StrCat(p.results_done(), " is more than results_total (", p.results_total(), ")"));
  return absl::OkStatus();
}

void CutProgressText(v1::Progress* p) {
  if (p->current().size() > kMaxTextBytes) p->set_current(CutText(p->current(), kMaxTextBytes));
}

}  // namespace kbench::api
