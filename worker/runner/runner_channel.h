// The worker's side of the pipe to a runner child (isolation/isolated_backend.h implements it): one
// request, its reply within `timeout` plus the time a fresh runner needs to start; a runner that dies
// or hangs is restarted, and the call says so (UNAVAILABLE, DEADLINE_EXCEEDED).
#pragma once

#include <chrono>

#include "absl/status/statusor.h"
#include "kbench/runner/runner.pb.h"

namespace kbench::worker {

class RunnerChannel {
 public:
  virtual ~RunnerChannel() = default;
  virtual absl::StatusOr<runner::RunnerResponse> CallRunner(const runner::RunnerRequest& request,
                                                            std::chrono::milliseconds timeout) = 0;
};

}  // namespace kbench::worker
