// The one planner: turns any job (the built-in suite, custom kernels, a job's plugin, an A/B pair of
// libraries) into the items of a JobPlan, with the same validation whichever path it came by (the
// agent's lease or the Worker service). It plans against catalogs (v1::OpInfo) that the device's
// runner reported, never against kernel code, which only the runner loads: an ordinary job against
// the runner's own library (api::ResolveAgainstOp with the device's memory, then the op's own problem
// check, which the runner answers; the items are api/job_items.h's, the rule the coordinator counts
// by); a job that names other kernel libraries against the catalogs the runner reports for them
// (PluginLibraries).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kbench/v1/catalog.pb.h"
#include "kbench/v1/job.pb.h"
#include "worker/plan/job_plan.h"

namespace kbench::worker {

// Kernel libraries other than the worker's own, by SHA-256: fetched and described by the runner
// (plugin/plugin_libraries.h); the worker process never loads one.
class PluginLibraries {
 public:
  struct Library {
    std::string path, sha256;
    std::vector<v1::OpInfo> ops;
  };
  virtual ~PluginLibraries() = default;
  // FAILED_PRECONDITION naming `field` when it cannot be fetched or loaded (the runner's message).
  virtual absl::StatusOr<Library> Load(const std::string& sha256, const std::string& field) = 0;
};

// The op's own check of each problem (OpDef::validate, in the runner): one reason per problem, ""
// when the op takes it, and the table the runner now keeps them in (0: none; JobPlan::problem_table);
// an error when it cannot be asked.
struct ProblemVerdicts {
  std::vector<std::string> errors;
  uint64_t table = 0;
};
using ProblemCheck =
    std::function<absl::StatusOr<ProblemVerdicts>(const std::string& op, const std::vector<v1::Problem>&)>;

// What a job is planned against: one device of the worker.
struct PlanTarget {
  const std::vector<v1::OpInfo>& builtin;  // The worker's own suite, as the device's runner reports it.
  ProblemCheck check;              // Null: no op has a check of its own.
  int64_t device_memory_bytes = 0;
  bool runner_child = false;       // Plugin and A/B items run only in a runner child process.
  PluginLibraries* plugins = nullptr;  // Null: a job cannot bring a plugin (no coordinator to fetch it from).
};

// INVALID_ARGUMENT naming the field for a spec this device cannot run; FAILED_PRECONDITION for a
// plugin job where plugins cannot be had, or a plugin that cannot be fetched or loaded.
absl::StatusOr<JobPlan> PlanJob(const v1::JobSpec& spec, const PlanTarget& target);

// The parts, for PlanJob: an ordinary job, and one that names kernel libraries (plugin_plan.cc).
absl::StatusOr<JobPlan> PlanOrdinaryJob(v1::JobSpec spec, const PlanTarget& target);
absl::StatusOr<JobPlan> PlanLibraryJob(const v1::JobSpec& spec, const PlanTarget& target);

}  // namespace kbench::worker
