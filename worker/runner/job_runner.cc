#include "worker/job_runner.h"

#include <algorithm>
#include <chrono>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/custom_spec.h"
#include "api/names.h"
#include "api/plugin_spec.h"
#include "api/validate.h"
#include "worker/convert.h"
#include "worker/settings.h"

namespace kbench::worker {
namespace {

int64_t NowUnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

absl::StatusOr<JobPlan> JobRunner::Plan(v1::JobSpec spec) const {
  if (absl::Status s = api::ValidateSpecStructure(spec); !s.ok()) return s;
  if (api::NeedsPluginPlanning(spec))  // worker/plugin/plugin_job.h plans those, in the agent.
    return absl::InvalidArgumentError("spec.ab, spec.plugin_sha256: plugin and A/B jobs run through a coordinator");
  const v1::OpInfo* info = catalog_.FindInfo(spec.op());
  if (info == nullptr)
    return absl::InvalidArgumentError(
        absl::StrCat("spec.op: unknown op '", spec.op(), "' on this worker (known: ",
                     absl::StrJoin(catalog_.ops(), ", ", [](std::string* o, const v1::OpInfo& i) { o->append(i.name()); }),
                     ")"));
  if (absl::Status s = api::ResolveAgainstOp(*info, backend_.device().memory_bytes(), &spec); !s.ok()) return s;

  JobPlan plan;
  plan.op = catalog_.FindOp(spec.op());
  plan.settings = WithDefaults(spec.settings());
  const std::vector<v1::Problem> problems = api::ExpandProblems(*info, spec);
  if (problems.empty())
    return absl::InvalidArgumentError("spec.problems: no problem left after applying spec.dtypes");
  const std::vector<const v1::VariantInfo*> variants = api::SelectVariants(*info, spec);
  for (const v1::Problem& p : problems) {
    if (plan.op->validate) {
      if (std::string why = plan.op->validate(ToKernelProblem(p)); !why.empty())
        return absl::InvalidArgumentError(absl::StrCat("spec.problems: ", api::ProblemLabel(p), ": ", why));
    }
    for (const v1::VariantInfo* v : variants)
      plan.items.push_back({.index = static_cast<int32_t>(plan.items.size()),
                            .problem = p,
                            .variant = plan.op->find_variant(v->name())});
    // Custom kernels after the built-in ladder: every one, or those spec.variants names.
    for (int c = 0; c < spec.custom_variants_size(); ++c) {
      const std::string name = api::CustomVariantName(spec.custom_variants(c));
      if (spec.variants().empty() || std::find(spec.variants().begin(), spec.variants().end(), name) != spec.variants().end())
        plan.items.push_back({.index = static_cast<int32_t>(plan.items.size()), .problem = p, .custom_index = c});
    }
  }
  plan.spec = std::move(spec);
  return plan;
}

void JobRunner::Run(const JobPlan& plan, const JobContext& context, const CancelFlag& cancel, const EventSink& sink) {
  const int32_t total = static_cast<int32_t>(plan.items.size());
  const v1::DeviceInfo device = backend_.device();
  for (const WorkItem& item : plan.items) {
    const kernels::Problem problem = ToKernelProblem(item.problem);
    const v1::CustomVariant* custom = item.custom_index >= 0 ? &plan.spec.custom_variants(item.custom_index) : nullptr;
    const std::string variant_name = custom ? api::CustomVariantName(*custom) : item.variant->name;
    v1::Result result;
    if (cancel.cancelled()) {
      result.set_op(plan.op->name);
      result.set_variant(variant_name);
      *result.mutable_device() = device;
      result.set_status(v1::CANCELLED);
      result.set_status_message("the job was cancelled before this item ran");
    } else {
      v1::RunJobEvent progress;
      progress.mutable_progress()->set_results_done(item.index);
      progress.mutable_progress()->set_results_total(total);
      progress.mutable_progress()->set_current(absl::StrCat(plan.op->name, " ", variant_name, " ", problem.label()));
      sink(progress);
      result = custom ? backend_.MeasureCustom(*plan.op, *custom, problem, plan.settings, cancel)
                      : backend_.MeasureOne(*plan.op, *item.variant, problem, plan.settings, cancel);
    }
    result.set_job_id(context.job_id);
    result.set_index(item.index);
    *result.mutable_problem() = item.problem;
    result.set_worker_id(context.worker_id);
    result.set_finished_unix_ms(NowUnixMs());
    result.mutable_labels()->insert(plan.spec.labels().begin(), plan.spec.labels().end());
    result.set_attempt(context.attempt);
    v1::RunJobEvent event;
    *event.mutable_result() = std::move(result);
    sink(event);
  }
}

absl::Status JobRunner::Run(const v1::JobSpec& spec, const JobContext& context, const CancelFlag& cancel,
                            const EventSink& sink) {
  absl::StatusOr<JobPlan> plan = Plan(spec);
  if (!plan.ok()) return plan.status();
  Run(*plan, context, cancel, sink);
  return absl::OkStatus();
}

}  // namespace kbench::worker
