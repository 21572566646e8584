// A runner child process that owns one device's context. The worker sends it requests over pipes;
// a reply that does not come within the watchdog time gets the runner killed, and a runner that
// dies (a fault, an abort) is restarted on the next request. The worker itself never crashes.
// The runner runs job code, so it starts with the allow-listed environment of child_env.h (none of
// the worker's secrets) in a private working directory (also its HOME), removed when it ends.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kbench/runner/runner.pb.h"

namespace kbench::worker {

struct RunnerConfig {
  std::string runner_path;  // The kbench-runner executable.
  std::string backend;      // "cpu" or "cuda".
  int device = 0;
  std::string log_path;     // The runner's stdout and stderr (appended).
  bool quick_calibration = false;
  std::vector<std::string> extra_args;
};

class RunnerProcess {
 public:
  explicit RunnerProcess(RunnerConfig config);
  ~RunnerProcess();
  RunnerProcess(const RunnerProcess&) = delete;
  RunnerProcess& operator=(const RunnerProcess&) = delete;

  // Sends a request and waits for the reply, starting the runner first when none runs.
  // DEADLINE_EXCEEDED: no reply within `timeout`; the runner was killed.
  // UNAVAILABLE: the runner died; the message says how (signal, exit code) and ends with its log tail.
  absl::StatusOr<runner::RunnerResponse> Call(const runner::RunnerRequest& request, std::chrono::milliseconds timeout);

  int starts() const { return starts_; }
  pid_t pid() const { return pid_; }
  // The running runner's private working directory; empty when none runs.
  const std::string& work_dir() const { return work_dir_; }

 private:
  absl::Status Start();
  // Kills (if needed) and reaps the runner; returns how it ended, for messages.
  std::string Stop(bool kill_it);
  std::string LogTail() const;

  RunnerConfig config_;
  pid_t pid_ = -1;
  int to_runner_ = -1;
  int from_runner_ = -1;
  int starts_ = 0;
  std::string work_dir_;
};

}  // namespace kbench::worker
