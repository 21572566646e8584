// Runs a JobPlan (plan/job_plan.h) on one device: per item a Progress (the item about to run), then
// its result(s), each stamped with the job's fields, through a callback. Every item, of any kind of
// job, is one request to the device's runner (Backend::runner_channel()) carrying its problem as
// planned: the problem crosses the pipe once and is converted once, in the runner. The job is planned
// against the catalog the runner reported, and the runner answers the op's own problem check: this
// process loads no kernel library. Knows nothing of gRPC: the agent and the Worker service both use
// it, and events cross a stream as they are.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kbench/v1/catalog.pb.h"
#include "kbench/v1/job.pb.h"
#include "kbench/v1/worker.pb.h"
#include "worker/backend.h"
#include "worker/cancel.h"
#include "worker/plan/catalog.h"  // The local form's argument; its code is kbench_worker_lib's.
#include "worker/plan/job_plan.h"
#include "worker/plan/planner.h"
#include "worker/runner/runner_channel.h"

namespace kbench::worker {

// Who runs the job, copied into every result.
struct JobContext {
  std::string job_id;
  std::string worker_id;
  int32_t attempt = 0;
};

using EventSink = std::function<void(const v1::RunJobEvent&)>;

class JobRunner {
 public:
  // `catalog`: the ops of the runner's own kernel library, as it reported them (DESCRIBE). The
  // backend must outlive the runner and have a runner channel.
  JobRunner(std::vector<v1::OpInfo> catalog, Backend& backend);
  // In a process that loads kernels (tests, kbench-bench; runner/local_runner.cc): a backend without
  // a runner child gets a runner in this process (LocalRunner) over `catalog`'s ops. Both must
  // outlive the runner.
  JobRunner(const Catalog& catalog, Backend& backend);
  ~JobRunner();

  // The one planner (plan/planner.h) against this device. plugins: where a job's plugins come from;
  // null: a job that brings one is refused.
  absl::StatusOr<JobPlan> Plan(const v1::JobSpec& spec, PluginLibraries* plugins = nullptr) const;

  // Emits, per item, a Progress and then its result(s) (A/B: base, then head). Once `cancel` is
  // raised, every remaining item is emitted as CANCELLED results without running. A runner that
  // dies or hangs on an A/B pair costs that item a second try, each side alone, so that the failure
  // is pinned on the side that caused it.
  void Run(const JobPlan& plan, const JobContext& context, const CancelFlag& cancel, const EventSink& sink);

  // Plan (no plugins), then Run; the plan's error is returned before any event.
  absl::Status Run(const v1::JobSpec& spec, const JobContext& context, const CancelFlag& cancel,
                   const EventSink& sink);

 private:
  struct Measured {
    v1::Result base, head;       // head: A/B only.
    bool runner_failed = false;  // The runner died or hung: both results say how.
  };
  // One runner MEASURE of the item (as_ab: the pair; else the base, or the head with head_alone, in
  // `base`); a dead or hung runner becomes RUNTIME_ERROR or TIMEOUT.
  Measured MeasureInRunner(const JobPlan& plan, const PlanItem& item, bool as_ab, bool head_alone,
                           const CancelFlag& cancel);
  // CHECK_PROBLEMS: the op's own verdict on each problem, from the runner, which keeps them as
  // table `table` (a fresh random id when 0) for the job's MEASUREs.
  absl::StatusOr<ProblemVerdicts> CheckProblems(const std::string& op, const std::vector<v1::Problem>& problems,
                                                uint64_t table = 0) const;

  const std::vector<v1::OpInfo> catalog_;
  Backend& backend_;
  std::unique_ptr<RunnerChannel> local_;  // A runner in this process, when the backend has no child.
  RunnerChannel* runner_;                 // The backend's runner child, or local_.
};

}  // namespace kbench::worker
