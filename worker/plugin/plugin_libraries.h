// Jobs that need a kernel library other than the worker's own: a job on an uploaded plugin
// (JobSpec.plugin_sha256) and the A/B job (JobSpec.ab). The worker fetches the plugins into its
// cache, asks its runner for each library's catalog (the worker process never loads a plugin),
// plans the job against those catalogs with the same validation as any job, and has the runner
// measure each item, an A/B item being one runner request that alternates base and head blocks.
// A runner that dies or hangs on an A/B item costs that item a second try, each side alone, so that
// the failure is pinned on the side that caused it.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kbench/v1/job.pb.h"
#include "worker/catalog.h"
#include "worker/isolation/isolated_backend.h"
#include "worker/job_runner.h"
#include "worker/plugin/plugin_cache.h"

namespace kbench::worker {

// One side of an item: a variant of a kernel library.
struct PluginSide {
  std::string variant;
  std::string path;    // The plugin file in the cache; empty: the runner's own library.
  std::string sha256;  // Empty: the worker's own suite.
};

struct PluginWorkItem {
  int32_t first_index = 0;  // Result index of the base (A/B: the head's is first_index + 1).
  std::string op;
  v1::Problem problem;
  PluginSide base;          // The only side of a plugin job.
  bool ab = false;
  PluginSide head;
  int32_t pair = 0;         // A/B: the pair number both results carry.
};

struct PluginJobPlan {
  v1::JobSpec spec;
  v1::MeasurementSettings settings;  // Defaults filled.
  int rounds = 0;                    // A/B blocks per side.
  std::vector<PluginWorkItem> items;
  int32_t results_total = 0;
};

class PluginJobRunner {
 public:
  // builtin: the worker's own catalog (for a side without plugin). backend: null when the worker
  // runs kernels in its own process (--isolation none); plugin jobs are then refused.
  PluginJobRunner(const Catalog& builtin, IsolatedBackend* backend, PluginCache* cache, PluginFetcher fetch)
      : builtin_(builtin), backend_(backend), cache_(cache), fetch_(std::move(fetch)) {}

  // INVALID_ARGUMENT naming the field for a spec the libraries cannot run; FAILED_PRECONDITION for a
  // plugin that cannot be fetched or loaded (the runner's message, e.g. an ABI mismatch).
  absl::StatusOr<PluginJobPlan> Plan(const v1::JobSpec& spec);

  // Emits a Progress per item, then its result(s), like JobRunner::Run.
  void Run(const PluginJobPlan& plan, const JobContext& context, const CancelFlag& cancel, const EventSink& sink);

 private:
  struct Library {
    std::string path, sha256;
    std::vector<v1::OpInfo> ops;
  };
  absl::StatusOr<Library> LoadLibrary(const std::string& sha256, const std::string& field);
  struct Measured {
    v1::Result base, head;  // head: A/B only.
    bool runner_failed = false;  // The runner died or hung: both results say how.
  };
  // One runner MEASURE of the item (as_ab: the pair; else the base, or the head with head_alone, in
  // `base`); a dead or hung runner becomes RUNTIME_ERROR or TIMEOUT.
  Measured Measure(const PluginJobPlan& plan, const PluginWorkItem& item, bool as_ab, bool head_alone);

  const Catalog& builtin_;
  IsolatedBackend* backend_;
  PluginCache* cache_;
  PluginFetcher fetch_;
};

}  // namespace kbench::worker
