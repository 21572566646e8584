// Runs a JobPlan on one device; see job_runner.h.
#include "worker/runner/job_runner.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "api/custom_spec.h"
#include "worker/runner/convert.h"
#include "worker/runner/measure_call.h"
#include "worker/runner/runner_channel.h"

namespace kbench::worker {
namespace {

int64_t NowUnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

v1::Result Failed(v1::ResultStatus status, std::string message) {
  v1::Result r;
  r.set_status(status);
  r.set_status_message(std::move(message));
  return r;
}

}  // namespace

absl::StatusOr<JobPlan> JobRunner::Plan(const v1::JobSpec& spec, PluginLibraries* plugins) const {
  return PlanJob(spec, {.builtin = catalog_,
                        .device_memory_bytes = backend_.device().memory_bytes(),
                        .runner_child = backend_.runner_channel() != nullptr,
                        .plugins = plugins});
}

JobRunner::Measured JobRunner::MeasureInRunner(RunnerChannel& runner, const JobPlan& plan, const PlanItem& item,
                                               bool as_ab, bool head_alone) {
  const ItemSide& side = head_alone ? item.head : item.base;
  MeasureCall call = MakeMeasureCall(item.op, side.variant, side.path, item.problem, plan.settings,
                                     backend_.calibration(),
                                     item.custom_index >= 0 ? &plan.spec.custom_variants(item.custom_index) : nullptr);
  if (as_ab) {
    call.request.mutable_ab()->set_head_plugin_path(item.head.path);
    call.request.mutable_ab()->set_head_variant(item.head.variant);
    call.request.mutable_ab()->set_rounds(plan.rounds);
    call.limit *= 2;  // Each side's own budget.
  }
  MeasureReply reply = ReadMeasureReply(runner.CallRunner(call.request, call.limit));
  return {std::move(reply.result), std::move(reply.head), reply.runner_failed};
}

v1::Result JobRunner::MeasureHere(const JobPlan& plan, const PlanItem& item, const CancelFlag& cancel) {
  if (item.ab || !item.base.path.empty())
    return Failed(v1::RUNTIME_ERROR, "plugin and A/B items run only in a runner child process");
  const kernels::OpDef* op = catalog_.FindOp(item.op);
  if (op == nullptr) return Failed(v1::RUNTIME_ERROR, absl::StrCat("this worker has no op '", item.op, "'"));
  const kernels::Problem problem = ToKernelProblem(item.problem);
  if (item.custom_index >= 0)
    return backend_.MeasureCustom(*op, plan.spec.custom_variants(item.custom_index), problem, plan.settings, cancel);
  const kernels::Variant* variant = op->find_variant(item.base.variant);
  if (variant == nullptr)
    return Failed(v1::RUNTIME_ERROR, absl::StrCat("this worker has no variant '", item.base.variant, "' of op '",
                                                  item.op, "'"));
  return backend_.MeasureOne(*op, *variant, problem, plan.settings, cancel);
}

void JobRunner::Run(const JobPlan& plan, const JobContext& context, const CancelFlag& cancel, const EventSink& sink) {
  const v1::DeviceInfo device = backend_.device();
  RunnerChannel* runner = backend_.runner_channel();
  auto emit = [&](v1::Result r, const PlanItem& item, int32_t index, const ItemSide& side, v1::AbSide ab_side) {
    r.set_op(item.op);
    r.set_variant(side.variant);
    if (!r.has_device()) *r.mutable_device() = device;
    r.set_job_id(context.job_id);
    r.set_index(index);
    *r.mutable_problem() = item.problem;
    r.set_worker_id(context.worker_id);
    r.set_finished_unix_ms(NowUnixMs());
    r.mutable_labels()->insert(plan.spec.labels().begin(), plan.spec.labels().end());
    r.set_attempt(context.attempt);
    r.set_plugin_sha256(side.sha256);
    r.set_ab_side(ab_side);
    if (item.ab) r.set_ab_pair(item.pair);
    v1::RunJobEvent event;
    *event.mutable_result() = std::move(r);
    sink(event);
  };
  for (const PlanItem& item : plan.items) {
    v1::Result base, head;
    if (cancel.cancelled()) {
      base = Failed(v1::CANCELLED, "the job was cancelled before this item ran");
      head = base;
    } else {
      v1::RunJobEvent progress;
      progress.mutable_progress()->set_results_done(item.first_index);
      progress.mutable_progress()->set_results_total(plan.results_total);
      const std::string label = ToKernelProblem(item.problem).label();
      progress.mutable_progress()->set_current(
          item.ab ? absl::StrCat(item.op, " A/B ", item.base.variant, " vs ", item.head.variant, " ", label)
                  : absl::StrCat(item.op, " ", item.base.variant, " ", label));
      sink(progress);
      if (runner == nullptr) {
        base = MeasureHere(plan, item, cancel);
      } else {
        Measured m = MeasureInRunner(*runner, plan, item, item.ab, false);
        if (item.ab && m.runner_failed) {
          // The pair died together: measure each side alone to find out which one it was.
          m.base = MeasureInRunner(*runner, plan, item, false, false).base;
          m.head = MeasureInRunner(*runner, plan, item, false, true).base;
        }
        base = std::move(m.base);
        head = std::move(m.head);
      }
    }
    emit(std::move(base), item, item.first_index, item.base, item.ab ? v1::AB_BASE : v1::AB_SIDE_UNSPECIFIED);
    if (item.ab) emit(std::move(head), item, item.first_index + 1, item.head, v1::AB_HEAD);
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
