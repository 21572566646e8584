// The kernel libraries of a runner child: its own copy of libkbench_kernels.so and the plugins its
// requests name, each loaded once through the plugin ABI (kernels/plugin/plugin_loader.h), and the
// handling of the requests that use them (describe a library, check problems, measure, measure an
// A/B pair).
// Only the runner loads these: a plugin that crashes takes the runner down, never the worker.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "kbench/runner/runner.pb.h"
#include "plugin/plugin_loader.h"
#include "worker/backend.h"

namespace kbench::worker {

class RunnerKernels {
 public:
  // The library at `path` ("" is the runner's own copy), loaded on first use.
  absl::StatusOr<const kernels::plugin::LoadedPlugin*> Library(const std::string& path);

  // DESCRIBE: the device, and the catalog of req.plugin_path's library (the runner's own without
  // one) for this backend.
  void Describe(Backend& backend, const runner::RunnerRequest& req, runner::RunnerResponse* resp);
  // CHECK_PROBLEMS: the own library's op's check (OpDef::validate) of each of req.problems.
  void CheckProblems(const runner::RunnerRequest& req, runner::RunnerResponse* resp);
  // MEASURE: one variant, or with req.ab an A/B pair (the head's result in resp->head_result).
  void Measure(Backend& backend, const runner::RunnerRequest& req, runner::RunnerResponse* resp);

 private:
  std::map<std::string, std::unique_ptr<kernels::plugin::LoadedPlugin>> loaded_;
};

}  // namespace kbench::worker
