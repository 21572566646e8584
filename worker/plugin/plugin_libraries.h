// The kernel libraries a job brings (JobSpec.plugin_sha256, JobSpec.ab): fetched into the worker's
// cache, then described by the device's runner (the worker process never loads a plugin), so that
// the planner (plan/planner.h) plans the job against their catalogs.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "worker/plan/planner.h"
#include "worker/plugin/plugin_cache.h"
#include "worker/runner/runner_channel.h"

namespace kbench::worker {

class RunnerPluginLibraries : public PluginLibraries {
 public:
  // All must outlive this object; `runner` is the device's runner child.
  RunnerPluginLibraries(RunnerChannel& runner, PluginCache& cache, PluginFetcher fetch)
      : runner_(runner), cache_(cache), fetch_(std::move(fetch)) {}

  absl::StatusOr<Library> Load(const std::string& sha256, const std::string& field) override;

 private:
  RunnerChannel& runner_;
  PluginCache& cache_;
  PluginFetcher fetch_;
};

}  // namespace kbench::worker
