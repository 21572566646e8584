// What the coordinator reports about itself, for metrics. The core calls this interface and never
// links Prometheus; metrics.h implements it, tests may record calls.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>

#include "kbench/v1/common.pb.h"
#include "kbench/v1/job.pb.h"

namespace kbench::server {

// The calibrated ceilings of one worker's devices of one GPU model (the lowest over them when it has
// several), and whether any of them is unhealthy.
struct WorkerCeilingsGauge {
  double copy_bytes_per_second = 0;                    // 0: not calibrated.
  std::map<std::string, double> peak_flops_per_second;  // By dtype name ("f32", "bf16", ...).
  bool unhealthy = false;
};

// The latest tracked point of a series.
struct SeriesGauge {
  double median_seconds = 0;
  double utilization = 0;   // 0 when unknown.
  bool regression = false;  // Its verdict was SLOWER.
};

// Labels of a series gauge, all bounded: GPU model, op, variant, preset shape, dtype name.
struct SeriesLabels {
  std::string gpu_model, op, variant, shape, dtype;
  bool operator<(const SeriesLabels& o) const {
    return std::tie(gpu_model, op, variant, shape, dtype) < std::tie(o.gpu_model, o.op, o.variant, o.shape, o.dtype);
  }
};

// A point-in-time count of the queue and the fleet, for gauges.
struct FleetSnapshot {
  int64_t queued = 0;
  int64_t running = 0;
  // (state "idle"/"busy"/"lost", GPU model) -> number of workers.
  std::map<std::pair<std::string, std::string>, int64_t> workers;
  // (worker name, GPU model) -> ceilings, for workers that are not lost.
  std::map<std::pair<std::string, std::string>, WorkerCeilingsGauge> worker_ceilings;
  std::map<SeriesLabels, SeriesGauge> series;
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
