// The one planner; see planner.h. The plan of an ordinary job; plugin and A/B jobs are in
// plugin_plan.cc.
#include "worker/plan/planner.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/job_items.h"
#include "api/names.h"
#include "api/plugin_spec.h"
#include "api/validate.h"
#include "worker/plan/settings.h"

namespace kbench::worker {

absl::StatusOr<JobPlan> PlanJob(const v1::JobSpec& spec, const PlanTarget& target) {
  if (absl::Status s = api::ValidateSpecStructure(spec); !s.ok()) return s;
  return api::NeedsPluginPlanning(spec) ? PlanLibraryJob(spec, target) : PlanOrdinaryJob(spec, target);
}

absl::StatusOr<JobPlan> PlanOrdinaryJob(v1::JobSpec spec, const PlanTarget& target) {
  const std::vector<v1::OpInfo>& catalog = target.builtin;
  const v1::OpInfo* info = nullptr;
  for (const v1::OpInfo& op : catalog)
    if (op.name() == spec.op()) info = &op;
  if (info == nullptr)
    return absl::InvalidArgumentError(
        absl::StrCat("spec.op: unknown op '", spec.op(), "' on this worker (known: ",
                     absl::StrJoin(catalog, ", ", [](std::string* o, const v1::OpInfo& i) { o->append(i.name()); }),
                     ")"));
  if (absl::Status s = api::ResolveAgainstOp(*info, target.device_memory_bytes, &spec); !s.ok()) return s;

  JobPlan plan;
  plan.settings = WithDefaults(spec.settings());
  const std::vector<v1::Problem> problems = api::ExpandProblems(*info, spec);
  if (problems.empty())
    return absl::InvalidArgumentError("spec.problems: no problem left after applying spec.dtypes");
  // The coordinator counts the results it expects by the same rule (api/job_items.h).
  const std::vector<api::PlannedVariant> variants = api::PlannedVariants(*info, spec);
  if (target.check) {
    // The op's own rule for its problems lives in its code, which only the runner loads; the runner
    // keeps them, and each item names its problem there instead of sending it again.
    absl::StatusOr<ProblemVerdicts> why = target.check(spec.op(), problems);
    if (!why.ok()) return why.status();
    for (size_t i = 0; i < problems.size() && i < why->errors.size(); ++i)
      if (!why->errors[i].empty())
        return absl::InvalidArgumentError(
            absl::StrCat("spec.problems: ", api::ProblemLabel(problems[i]), ": ", why->errors[i]));
    plan.problem_table = why->table;
  }
  for (size_t i = 0; i < problems.size(); ++i) {
    const v1::Problem& p = problems[i];
    for (const api::PlannedVariant& v : variants) {
      PlanItem item;
      item.first_index = static_cast<int32_t>(plan.items.size());
      item.op = spec.op();
      item.problem = p;
      if (plan.problem_table != 0) item.problem_index = static_cast<int32_t>(i);
      item.base.variant = v.name;
      item.custom_index = v.custom_index;
      plan.items.push_back(std::move(item));
    }
  }
  plan.results_total = static_cast<int32_t>(plan.items.size());
  if (plan.problem_table != 0) plan.problems = problems;
  plan.spec = std::move(spec);
  return plan;
}

}  // namespace kbench::worker
