// Runs a JobPlan on one device; see job_runner.h.
#include "worker/runner/job_runner.h"

#include <chrono>
#include <stdexcept>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "api/custom_spec.h"
#include "api/names.h"
#include "worker/runner/measure_call.h"

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

// "4096x128 bf16 flag": the problem as the progress line names it.
std::string ItemLabel(const v1::Problem& p) {
  std::string s = absl::StrCat(api::ShapeLabel(p), " ", api::DtypeName(p.dtype()));
  for (const auto& f : p.flags()) absl::StrAppend(&s, " ", f);
  return s;
}

// Long enough for an op's check of a few hundred problems on a runner that has to start first.
constexpr std::chrono::milliseconds kCheckLimit{30'000};
constexpr int kCheckRetries = 2;

uint64_t NewTableId() {
  thread_local absl::BitGen gen;
  uint64_t id = 0;
  while (id == 0) id = absl::Uniform<uint64_t>(gen);
  return id;
}

}  // namespace

JobRunner::JobRunner(std::vector<v1::OpInfo> catalog, Backend& backend)
    : catalog_(std::move(catalog)), backend_(backend), runner_(backend.runner_channel()) {
  // A programming error, not bad input: kbench-worker's devices are runner children.
  if (runner_ == nullptr) throw std::invalid_argument("JobRunner: the backend has no runner");
}

JobRunner::~JobRunner() = default;

absl::StatusOr<ProblemVerdicts> JobRunner::CheckProblems(const std::string& op, const std::vector<v1::Problem>& problems,
                                                         uint64_t table) const {
  runner::RunnerRequest req;
  req.set_kind(runner::RunnerRequest::CHECK_PROBLEMS);
  req.set_op(op);
  for (const v1::Problem& p : problems) *req.add_problems() = p;
  // Random, not counted: a runner outlives the JobRunner that made its tables, and a counter that
  // started again would name another job's problems.
  req.set_problem_table(table != 0 ? table : NewTableId());
  // A runner that died since the last request (a fault in the previous job's kernel, a kill) is
  // noticed by this call and restarted by the next: the check runs no job code, so it goes again.
  absl::StatusOr<runner::RunnerResponse> resp = runner_->CallRunner(req, kCheckLimit);
  for (int retry = 0; retry < kCheckRetries && absl::IsUnavailable(resp.status()); ++retry)
    resp = runner_->CallRunner(req, kCheckLimit);
  if (!resp.ok())
    return absl::UnavailableError(absl::StrCat("the device's runner could not check the problems: ", resp.status().message()));
  if (!resp->error().empty())
    return absl::UnavailableError(absl::StrCat("the device's runner could not check the problems: ", resp->error()));
  return ProblemVerdicts{.errors = std::vector<std::string>(resp->problem_errors().begin(), resp->problem_errors().end()),
                         .table = req.problem_table()};
}

absl::StatusOr<JobPlan> JobRunner::Plan(const v1::JobSpec& spec, PluginLibraries* plugins) const {
  return PlanJob(spec, {.builtin = catalog_,
                        .check = [this](const std::string& op, const std::vector<v1::Problem>& problems) {
                          return CheckProblems(op, problems);
                        },
                        .device_memory_bytes = backend_.device().memory_bytes(),
                        .runner_child = runner_->child_process(),
                        .plugins = plugins});
}

JobRunner::Measured JobRunner::MeasureInRunner(const JobPlan& plan, const PlanItem& item, bool as_ab,
                                               bool head_alone, const CancelFlag& cancel) {
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
  if (plan.problem_table != 0 && item.problem_index >= 0) {
    // The runner has the problem since the check: name it (runner/problem_table.h).
    call.request.clear_problem();
    call.request.set_problem_table(plan.problem_table);
    call.request.set_problem_index(item.problem_index);
  }
  absl::StatusOr<runner::RunnerResponse> resp = runner_->CallRunnerWithCancel(call.request, call.limit, cancel);
  if (resp.ok() && resp->problem_table_unknown()) {
    // A runner started since the check (the last item faulted): it gets the job's problems again.
    absl::StatusOr<ProblemVerdicts> again = CheckProblems(item.op, plan.problems, plan.problem_table);
    if (!again.ok()) resp = again.status();
    else resp = runner_->CallRunnerWithCancel(call.request, call.limit, cancel);
  }
  MeasureReply reply = ReadMeasureReply(resp);
  return {std::move(reply.result), std::move(reply.head), reply.runner_failed};
}

void JobRunner::Run(const JobPlan& plan, const JobContext& context, const CancelFlag& cancel, const EventSink& sink) {
  const v1::DeviceInfo device = backend_.device();
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
      const std::string label = ItemLabel(item.problem);
      progress.mutable_progress()->set_current(
          item.ab ? absl::StrCat(item.op, " A/B ", item.base.variant, " vs ", item.head.variant, " ", label)
                  : absl::StrCat(item.op, " ", item.base.variant, " ", label));
      sink(progress);
      Measured m = MeasureInRunner(plan, item, item.ab, false, cancel);
      if (item.ab && m.runner_failed) {
        // The pair died together: measure each side alone to find out which one it was.
        m.base = MeasureInRunner(plan, item, false, false, cancel).base;
        m.head = MeasureInRunner(plan, item, false, true, cancel).base;
      }
      base = std::move(m.base);
      head = std::move(m.head);
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
