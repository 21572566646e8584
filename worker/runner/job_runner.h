// Runs one JobSpec on one backend: validation against the catalog, the expansion into (problem,
// variant) items, and the measurement of each in order, reported through a callback. Knows nothing
// of gRPC or of where it runs: the Worker service, the agent, or later a runner child process
// (events are plain messages that cross a pipe as well as a stream).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/op.h"
#include "kbench/v1/job.pb.h"
#include "kbench/v1/worker.pb.h"
#include "worker/backend.h"
#include "worker/cancel.h"
#include "worker/catalog.h"

namespace kbench::worker {

// Who runs the job, copied into every result.
struct JobContext {
  std::string job_id;
  std::string worker_id;
  int32_t attempt = 0;
};

struct WorkItem {
  int32_t index = 0;
  v1::Problem problem;  // Named dims in the op's order, a dtype, and the preset it came from.
  const kernels::Variant* variant = nullptr;
  // >= 0: the item is spec.custom_variants[custom_index] (worker/custom/), and variant is null.
  int custom_index = -1;
};

// A validated job: the resolved spec, its op, its settings with defaults, and its items in order.
struct JobPlan {
  v1::JobSpec spec;
  const kernels::OpDef* op = nullptr;
  v1::MeasurementSettings settings;
  std::vector<WorkItem> items;
};

using EventSink = std::function<void(const v1::RunJobEvent&)>;

class JobRunner {
 public:
  // Both must outlive the runner.
  JobRunner(const Catalog& catalog, Backend& backend) : catalog_(catalog), backend_(backend) {}

  // Validates (api::ValidateSpecStructure, api::ResolveAgainstOp with the device's memory, the op's
  // own problem check) and expands: for each problem in api::ExpandProblems order, each selected
  // variant in catalog order. INVALID_ARGUMENT naming the field otherwise.
  absl::StatusOr<JobPlan> Plan(v1::JobSpec spec) const;

  // Emits, per item, a Progress (the item about to run) and then its Result. Once `cancel` is
  // raised, every remaining item is emitted as a CANCELLED result without running.
  void Run(const JobPlan& plan, const JobContext& context, const CancelFlag& cancel, const EventSink& sink);

  // Plan, then Run; the plan's error is returned before any event.
  absl::Status Run(const v1::JobSpec& spec, const JobContext& context, const CancelFlag& cancel,
                   const EventSink& sink);

 private:
  const Catalog& catalog_;
  Backend& backend_;
};

}  // namespace kbench::worker
