// The worker's side of the pipe to a runner child (isolation/isolated_backend.h implements it): one
// request, its reply within `timeout` plus the time a fresh runner needs to start; a runner that dies
// or hangs is restarted, and the call says so (UNAVAILABLE, DEADLINE_EXCEEDED). Tests and kbench-bench
// answer the same requests in their own process (runner/local_runner.h).
#pragma once

#include <chrono>

#include "absl/status/statusor.h"
#include "kbench/runner/runner.pb.h"
#include "worker/cancel.h"

namespace kbench::worker {

class RunnerChannel {
 public:
  virtual ~RunnerChannel() = default;
  virtual absl::StatusOr<runner::RunnerResponse> CallRunner(const runner::RunnerRequest& request,
                                                            std::chrono::milliseconds timeout) = 0;
  // The same, for a MEASURE that `cancel` may stop between samples; a child process cannot be
  // interrupted in the middle of an item (it checks nothing of ours), so by default this ignores it.
  virtual absl::StatusOr<runner::RunnerResponse> CallRunnerWithCancel(const runner::RunnerRequest& request,
                                                                      std::chrono::milliseconds timeout,
                                                                      const CancelFlag& cancel) {
    (void)cancel;
    return CallRunner(request, timeout);
  }
  // True for a runner child process: plugins and A/B pairs are loaded only there, never in a worker.
  virtual bool child_process() const { return true; }
};

}  // namespace kbench::worker
