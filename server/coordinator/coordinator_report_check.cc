// Reports checked against their job; see coordinator_report_check.h.
#include "server/coordinator/coordinator_report_check.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "api/job_items.h"
#include "api/limits.h"
#include "api/plugin_spec.h"
#include "api/quote.h"
#include "api/validate.h"

namespace kbench::server {
namespace {

absl::Status Invalid(const std::string& field, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", what));
}

// The results an ordinary job plans on a worker with this op (api/job_items.h, as the worker plans it).
void PlanOrdinary(const v1::JobSpec& spec, const v1::OpInfo& op, JobResultShape* shape) {
  for (const api::PlannedVariant& v : api::PlannedVariants(op, spec)) shape->variants.insert(v.name);
  shape->planned = static_cast<int32_t>(std::min<int64_t>(api::PlannedResultCount(op, spec), api::kMaxResultsPerJob));
}

}  // namespace

JobResultShape ResultShapeOf(const v1::JobSpec& spec, const v1::WorkerInfo* worker) {
  JobResultShape shape;
  shape.op = spec.op();
  if (api::NeedsPluginPlanning(spec)) {
    for (const v1::VariantPair& p : spec.ab().pairs()) shape.variants.insert({p.base_variant(), p.head_variant()});
    if (spec.ab().pairs().empty()) shape.variants.insert(spec.variants().begin(), spec.variants().end());
    return shape;
  }
  const v1::OpInfo* op = nullptr;
  if (worker != nullptr)
    for (const v1::OpInfo& o : worker->catalog())
      if (o.name() == spec.op()) op = &o;
  if (op != nullptr) {
    PlanOrdinary(spec, *op, &shape);
  } else {
    // The worker is gone from the registry (or changed): the spec alone names the variants, if it does.
    shape.variants.insert(spec.variants().begin(), spec.variants().end());
  }
  return shape;
}

absl::Status CheckReportAgainstJob(const v1::Job& job, const JobResultShape& shape, const v1::Progress* progress,
                                   const std::vector<v1::Result>& results) {
  // The bound on indexes: the plan when known, else the total this report (or an earlier one) gave.
  int32_t total = shape.planned;
  if (progress != nullptr && progress->results_total() > 0) {
    if (shape.planned >= 0 && progress->results_total() != shape.planned)
      return Invalid("progress.results_total", absl::StrCat(progress->results_total(), ", but job ", job.job_id(),
                                                            " plans ", shape.planned, " results on this worker"));
    if (progress->results_done() > progress->results_total())
      return Invalid("progress.results_done", absl::StrCat(progress->results_done(), " is more than results_total (",
                                                           progress->results_total(), ")"));
    total = progress->results_total();
  }
  if (progress != nullptr && shape.planned >= 0 && progress->results_done() > shape.planned)
    return Invalid("progress.results_done", absl::StrCat(progress->results_done(), ", but job ", job.job_id(),
                                                         " plans ", shape.planned, " results on this worker"));
  if (total < 0 && job.progress().results_total() > 0) total = job.progress().results_total();
  for (size_t i = 0; i < results.size(); ++i) {
    const v1::Result& r = results[i];
    const std::string f = absl::StrCat("results[", i, "]");
    if (!r.job_id().empty() && r.job_id() != job.job_id())
      return Invalid(f + ".job_id", absl::StrCat(api::Quote(r.job_id()), " is not the leased job ", job.job_id()));
    if (total >= 0 && r.index() >= total)
      return Invalid(f + ".index", absl::StrCat(r.index(), " is beyond job ", job.job_id(), "'s ", total,
                                                " planned results (indexes 0 to ", total - 1, ")"));
    if (!shape.op.empty() && r.op() != shape.op)
      return Invalid(f + ".op", absl::StrCat(api::Quote(r.op()), " is not the job's op '", shape.op, "'"));
    if (!shape.variants.empty() && !shape.variants.contains(r.variant()))
      return Invalid(f + ".variant",
                     absl::StrCat(api::Quote(r.variant()), " is not a variant job ", job.job_id(), " runs"));
  }
  return absl::OkStatus();
}

}  // namespace kbench::server
