// Runs a JobPlan (plan/job_plan.h) on one device: per item a Progress (the item about to run), then
// its result(s), each stamped with the job's fields, through a callback. With a runner child
// (Backend::runner_channel()) every item, of any kind of job, is one runner request carrying its
// problem as planned: the problem crosses the pipe once and is converted once, in the runner. A
// backend in this process (tests, --isolation none) measures built-in items itself. Knows nothing of
// gRPC: the agent and the Worker service both use it, and events cross a stream as they are.
#pragma once

#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "kbench/v1/job.pb.h"
#include "kbench/v1/worker.pb.h"
#include "worker/backend.h"
#include "worker/cancel.h"
#include "worker/plan/catalog.h"
#include "worker/plan/job_plan.h"
#include "worker/plan/planner.h"

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
  // Both must outlive the runner; the catalog is the worker's own suite.
  JobRunner(const Catalog& catalog, Backend& backend) : catalog_(catalog), backend_(backend) {}

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
  Measured MeasureInRunner(RunnerChannel& runner, const JobPlan& plan, const PlanItem& item, bool as_ab,
                           bool head_alone);
  // A built-in or custom item on a backend in this process.
  v1::Result MeasureHere(const JobPlan& plan, const PlanItem& item, const CancelFlag& cancel);

  const Catalog& catalog_;
  Backend& backend_;
};

}  // namespace kbench::worker
