// What the coordinator reports about itself, for metrics. The core calls this interface and never
// links Prometheus; metrics.h implements it, tests may record calls.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "kbench/v1/common.pb.h"
#include "kbench/v1/job.pb.h"

namespace kbench::server {

// A point-in-time count of the queue and the fleet, for gauges.
struct FleetSnapshot {
  int64_t queued = 0;
  int64_t running = 0;
  // (state "idle"/"busy"/"lost", GPU model) -> number of workers.
  std::map<std::pair<std::string, std::string>, int64_t> workers;
};

class CoordinatorObserver {
 public:
  virtual ~CoordinatorObserver() = default;
  virtual void JobSubmitted() {}
  // A worker leased a job that had waited queue_wait_seconds since it was created or requeued.
  virtual void JobLeased(double queue_wait_seconds) { (void)queue_wait_seconds; }
  // A lease expired and the job went back to the queue.
  virtual void JobRequeued() {}
  // A job reached a final state (SUCCEEDED, FAILED, CANCELLED_JOB). run_seconds < 0 when it never ran.
  virtual void JobFinished(v1::JobState state, double run_seconds) {
    (void)state;
    (void)run_seconds;
  }
  // Results newly stored, one call per result.
  virtual void ResultStored(v1::ResultStatus status) { (void)status; }
  virtual void Snapshot(const FleetSnapshot& snapshot) { (void)snapshot; }
};

}  // namespace kbench::server
