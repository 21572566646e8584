// The processes of the chaos test, each of which the test kills and brings back: a coordinator that
// restarts on its database and on the port it first bound (workers keep the address they were given),
// CPU workers that restart under their name, and their runner children (kbench-runner), which the
// worker itself replaces. The store is SQLite in the test's folder, or a PostgreSQL URI.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "kbench/v1/coordinator.grpc.pb.h"
#include "process.h"

namespace kbench::e2e {

class ChaosCluster {
 public:
  // db: a postgresql:// URI, or empty for SQLite in dir. coordinator_flags: added to every start.
  ChaosCluster(std::string dir, std::string db, std::vector<std::string> coordinator_flags);
  ~ChaosCluster();

  // First start: port 0, read back; later starts: that port again. Throws when it does not come up.
  void StartCoordinator();
  void KillCoordinator();  // SIGKILL, then reaped.
  bool coordinator_running() const { return coordinator_ != nullptr; }

  // Worker i (name "chaos-<i>"), started or restarted; waits until it has registered.
  void StartWorker(int i);
  void KillWorker(int i);
  int workers() const { return static_cast<int>(workers_.size()); }
  // The index of the worker running under this id now; -1 for an id of an earlier start.
  int WorkerIndex(const std::string& worker_id) const;
  // SIGKILLs one kbench-runner child of worker i; false when it has none at this moment.
  bool KillRunnerOf(int i);

  const std::string& address() const { return address_; }
  v1::Coordinator::Stub& stub() { return *stub_; }
  // Every log of this run, for a failure message (the tail of each).
  std::string Logs() const;

 private:
  std::string dir_;
  std::string db_;
  std::vector<std::string> coordinator_flags_;
  int port_ = 0;
  std::string address_;
  int starts_ = 0;
  std::unique_ptr<Process> coordinator_;
  std::vector<std::unique_ptr<Process>> workers_;
  std::vector<std::string> worker_ids_;  // As each worker's latest start registered.
  std::vector<std::string> logs_;
  std::unique_ptr<v1::Coordinator::Stub> stub_;
};

// The children of pid whose command name is comm (from /proc/<pid>/stat).
std::vector<pid_t> ChildrenNamed(pid_t parent, const std::string& comm);

}  // namespace kbench::e2e
