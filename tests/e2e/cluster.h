// A coordinator, workers and the client on loopback, for end-to-end tests: real binaries, port 0,
// SQLite in a temporary folder.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "kbench/v1/coordinator.grpc.pb.h"
#include "process.h"

namespace kbench::e2e {

class Cluster {
 public:
  Cluster();
  ~Cluster();

  // Starts (or restarts, on the same database) the coordinator; returns its address.
  std::string StartCoordinator(std::vector<std::string> extra_flags = {});
  Process& coordinator() { return *coordinator_; }
  // Starts a CPU worker registered with the coordinator, with kbench-worker's extra flags (e.g.
  // {"--cpu-devices", "2"}); returns its index.
  int StartWorker(const std::string& name, std::vector<std::string> extra_flags = {});
  Process& worker(int i) { return *workers_.at(i); }
  std::string worker_id(int i) const { return worker_ids_.at(i); }

  // Runs kbench-client against the coordinator.
  CommandResult Client(std::vector<std::string> args);
  // `kbench-client submit ARGS` without waiting: the job id (a test failure when the client fails).
  std::string Submit(std::vector<std::string> args);

  // Direct stub for polling state the way a dashboard would.
  v1::Coordinator::Stub& stub();
  // Polls GetJob until `done(job)` or the timeout; returns the last job seen.
  v1::Job WaitForJob(const std::string& job_id, bool (*done)(const v1::Job&), std::chrono::seconds timeout);
  v1::GetResultsResponse Results(const std::string& job_id);

  const std::string& dir() const { return dir_; }
  const std::string& address() const { return address_; }

 private:
  std::string dir_;
  std::string address_;
  int coordinator_starts_ = 0;
  std::unique_ptr<Process> coordinator_;
  std::vector<std::unique_ptr<Process>> workers_;
  std::vector<std::string> worker_ids_;
  std::unique_ptr<v1::Coordinator::Stub> stub_;
};

// Predicates for WaitForJob.
inline bool JobFinished(const v1::Job& j) {
  return j.state() == v1::SUCCEEDED || j.state() == v1::FAILED || j.state() == v1::CANCELLED_JOB;
}
inline bool JobRunning(const v1::Job& j) { return j.state() == v1::RUNNING; }

}  // namespace kbench::e2e
