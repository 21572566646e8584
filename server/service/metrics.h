// Prometheus metrics of the coordinator: the CoordinatorObserver that keeps them, and the HTTP
// exposer that serves /metrics. Families are created once, in the constructor, and referenced after.
// Label values are bounded (states, statuses, GPU models), never job ids.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "prometheus/counter.h"
#include "prometheus/exposer.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"
#include "server/coordinator/observer.h"

namespace kbench::server {

// Keeps a gauge family equal to a wanted set of label sets and values: adds and sets gauges, and
// removes those whose label set is no longer wanted (a worker gone, a series renamed). Not thread-safe.
class GaugeSync {
 public:
  explicit GaugeSync(prometheus::Family<prometheus::Gauge>& family) : family_(family) {}
  void Set(const std::map<prometheus::Labels, double>& wanted);

 private:
  prometheus::Family<prometheus::Gauge>& family_;
  std::map<prometheus::Labels, prometheus::Gauge*> live_;
};

class Metrics final : public CoordinatorObserver {
 public:
  Metrics();

  // For the exposer, and for tests that collect it.
  std::shared_ptr<prometheus::Registry> registry() const { return registry_; }

  void JobSubmitted() override;
  void JobLeased(double queue_wait_seconds) override;
  void JobRequeued() override;
  void JobFinished(v1::JobState state, double run_seconds) override;
  void ResultStored(v1::ResultStatus status) override;
  void Snapshot(const FleetSnapshot& snapshot) override;
  // LeaseJob long polls the service holds now (CoordinatorService::parked_leases), sampled with
  // the snapshot: an idle fleet shows about one per device.
  void SetLeaseCallsWaiting(int64_t calls);

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Counter& submitted_;
  prometheus::Counter& requeued_;
  prometheus::Family<prometheus::Counter>& finished_;
  prometheus::Family<prometheus::Counter>& results_;
  prometheus::Gauge& queue_depth_;
  prometheus::Gauge& running_;
  prometheus::Gauge& lease_calls_waiting_;
  prometheus::Family<prometheus::Gauge>& workers_;
  prometheus::Family<prometheus::Histogram>& durations_;
  prometheus::Histogram& queue_wait_;
  prometheus::Histogram& run_time_;

  // Fleet health and calibrated ceilings per live worker {worker, gpu_model}.
  prometheus::Family<prometheus::Gauge>& worker_copy_bandwidth_;
  prometheus::Family<prometheus::Gauge>& worker_peak_flops_;  // Also {dtype}.
  prometheus::Family<prometheus::Gauge>& worker_unhealthy_;
  // Tracked series {gpu_model, op, variant, shape, dtype}: the latest point on the main branch.
  prometheus::Family<prometheus::Gauge>& series_median_;
  prometheus::Family<prometheus::Gauge>& series_utilization_;
  prometheus::Family<prometheus::Gauge>& series_regression_;

  absl::Mutex mu_;
  // The workers gauges currently exported, by (state, gpu_model); label sets that vanish are removed.
  std::map<std::pair<std::string, std::string>, prometheus::Gauge*> worker_gauges_ ABSL_GUARDED_BY(mu_);
  GaugeSync copy_bandwidth_sync_ ABSL_GUARDED_BY(mu_);
  GaugeSync peak_flops_sync_ ABSL_GUARDED_BY(mu_);
  GaugeSync unhealthy_sync_ ABSL_GUARDED_BY(mu_);
  GaugeSync series_median_sync_ ABSL_GUARDED_BY(mu_);
  GaugeSync series_utilization_sync_ ABSL_GUARDED_BY(mu_);
  GaugeSync series_regression_sync_ ABSL_GUARDED_BY(mu_);
};

// Serves a registry at http://<address>/metrics.
class MetricsServer {
 public:
  // address: "host:port", port 0 for any free port. UNAVAILABLE when it cannot bind.
  static absl::StatusOr<std::unique_ptr<MetricsServer>> Start(const std::string& address,
                                                              std::shared_ptr<prometheus::Registry> registry);
  // Stops serving; returns once the HTTP server's threads are gone.
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // The bound port.
  int port() const { return port_; }

 private:
  MetricsServer(std::unique_ptr<prometheus::Exposer> exposer, std::string host, int port)
      : exposer_(std::move(exposer)), host_(std::move(host)), port_(port) {}

  std::unique_ptr<prometheus::Exposer> exposer_;
  std::string host_;  // As bound; where the stop wake-up connects.
  int port_;
};

}  // namespace kbench::server
