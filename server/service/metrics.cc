// Metrics: family definitions, observer updates, and the exposer.
#include "server/service/metrics.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <exception>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "api/names.h"

namespace kbench::server {
namespace {

// Seconds: from sub-second queue waits to hour-long jobs.
const prometheus::Histogram::BucketBoundaries& DurationBuckets() {
  static const auto* b = new prometheus::Histogram::BucketBoundaries{
      0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600};
  return *b;
}

std::string Lower(const std::string& s) { return absl::AsciiStrToLower(s); }

// Opens and closes a TCP connection to host:port (IPv4 literal; a wildcard means loopback).
void Poke(const std::string& host, int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  const std::string target = (host.empty() || host == "0.0.0.0" || host == "localhost") ? "127.0.0.1" : host;
  if (inet_pton(AF_INET, target.c_str(), &addr.sin_addr) != 1) return;
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return;
  (void)connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
  close(fd);
}

}  // namespace

Metrics::Metrics()
    : registry_(std::make_shared<prometheus::Registry>()),
      submitted_(prometheus::BuildCounter()
                     .Name("kbench_jobs_submitted_total")
                     .Help("Jobs accepted by Submit (deduplicated submissions excluded)")
                     .Register(*registry_)
                     .Add({})),
      requeued_(prometheus::BuildCounter()
                    .Name("kbench_jobs_requeued_total")
                    .Help("Leases that expired and sent their job back to the queue")
                    .Register(*registry_)
                    .Add({})),
      finished_(prometheus::BuildCounter()
                    .Name("kbench_jobs_finished_total")
                    .Help("Jobs that reached a final state, by state")
                    .Register(*registry_)),
      results_(prometheus::BuildCounter()
                   .Name("kbench_results_total")
                   .Help("Results stored, by status")
                   .Register(*registry_)),
      queue_depth_(prometheus::BuildGauge()
                       .Name("kbench_queue_depth")
                       .Help("Jobs waiting in the queue")
                       .Register(*registry_)
                       .Add({})),
      running_(prometheus::BuildGauge()
                   .Name("kbench_jobs_running")
                   .Help("Jobs leased to a worker")
                   .Register(*registry_)
                   .Add({})),
      lease_calls_waiting_(prometheus::BuildGauge()
                               .Name("kbench_lease_calls_waiting")
                               .Help("Workers' LeaseJob long polls the coordinator holds, waiting for a job")
                               .Register(*registry_)
                               .Add({})),
      workers_(prometheus::BuildGauge()
                   .Name("kbench_workers")
                   .Help("Registered workers by state (idle, busy, lost) and GPU model")
                   .Register(*registry_)),
      durations_(prometheus::BuildHistogram()
                     .Name("kbench_job_duration_seconds")
                     .Help("Job latency: phase=queue from submission to first lease, phase=run from lease to end")
                     .Register(*registry_)),
      queue_wait_(durations_.Add({{"phase", "queue"}}, DurationBuckets())),
      run_time_(durations_.Add({{"phase", "run"}}, DurationBuckets())),
      worker_copy_bandwidth_(prometheus::BuildGauge()
                                 .Name("kbench_worker_copy_bandwidth_bytes_per_second")
                                 .Help("Calibrated device-to-device copy bandwidth (read + write) of a live "
                                       "worker's devices of a GPU model; the lowest when it has several")
                                 .Register(*registry_)),
      worker_peak_flops_(prometheus::BuildGauge()
                             .Name("kbench_worker_peak_flops")
                             .Help("Calibrated peak FLOP/s of a live worker's devices of a GPU model, by dtype; "
                                   "the lowest when it has several")
                             .Register(*registry_)),
      worker_unhealthy_(prometheus::BuildGauge()
                            .Name("kbench_worker_unhealthy")
                            .Help("1 when a live worker's calibrated copy bandwidth or f32/bf16 peak is below its "
                                  "GPU model's fleet median by more than --health-margin")
                            .Register(*registry_)),
      series_median_(prometheus::BuildGauge()
                         .Name("kbench_series_median_seconds")
                         .Help("Median time of the latest main-branch result of a tracked series")
                         .Register(*registry_)),
      series_utilization_(prometheus::BuildGauge()
                              .Name("kbench_series_utilization")
                              .Help("Roofline utilization (calibrated) of the latest main-branch result of a "
                                    "tracked series")
                              .Register(*registry_)),
      series_regression_(prometheus::BuildGauge()
                             .Name("kbench_series_regression")
                             .Help("1 when the latest main-branch result of a tracked series was SLOWER than "
                                   "its baseline")
                             .Register(*registry_)),
      copy_bandwidth_sync_(worker_copy_bandwidth_),
      peak_flops_sync_(worker_peak_flops_),
      unhealthy_sync_(worker_unhealthy_),
      series_median_sync_(series_median_),
      series_utilization_sync_(series_utilization_),
      series_regression_sync_(series_regression_) {
  // Every final state and result status exists from the start, so rates work before the first event.
  for (v1::JobState s : {v1::SUCCEEDED, v1::FAILED, v1::CANCELLED_JOB})
    finished_.Add({{"state", Lower(api::JobStateName(s))}});
  for (int s = v1::ResultStatus_MIN + 1; s <= v1::ResultStatus_MAX; ++s)
    results_.Add({{"status", Lower(api::StatusName(static_cast<v1::ResultStatus>(s)))}});
}

void Metrics::JobSubmitted() { submitted_.Increment(); }

void Metrics::JobLeased(double queue_wait_seconds) { queue_wait_.Observe(queue_wait_seconds); }

void Metrics::JobRequeued() { requeued_.Increment(); }

void Metrics::JobFinished(v1::JobState state, double run_seconds) {
  finished_.Add({{"state", Lower(api::JobStateName(state))}}).Increment();
  if (run_seconds >= 0) run_time_.Observe(run_seconds);
}

void Metrics::ResultStored(v1::ResultStatus status) {
  results_.Add({{"status", Lower(api::StatusName(status))}}).Increment();
}

void Metrics::SetLeaseCallsWaiting(int64_t calls) { lease_calls_waiting_.Set(static_cast<double>(calls)); }

void Metrics::Snapshot(const FleetSnapshot& snapshot) {
  queue_depth_.Set(static_cast<double>(snapshot.queued));
  running_.Set(static_cast<double>(snapshot.running));
  absl::MutexLock lock(&mu_);
  for (auto it = worker_gauges_.begin(); it != worker_gauges_.end();) {
    if (snapshot.workers.count(it->first) == 0) {
      workers_.Remove(it->second);
      it = worker_gauges_.erase(it);
    } else {
      ++it;
    }
  }
  for (const auto& [key, count] : snapshot.workers) {
    prometheus::Gauge*& g = worker_gauges_[key];
    if (g == nullptr) g = &workers_.Add({{"state", key.first}, {"gpu_model", key.second}});
    g->Set(static_cast<double>(count));
  }

  std::map<prometheus::Labels, double> copy, peak, unhealthy;
  for (const auto& [key, c] : snapshot.worker_ceilings) {
    const prometheus::Labels labels{{"worker", key.first}, {"gpu_model", key.second}};
    if (c.copy_bytes_per_second > 0) copy[labels] = c.copy_bytes_per_second;
    for (const auto& [dtype, flops] : c.peak_flops_per_second) {
      prometheus::Labels with_dtype = labels;
      with_dtype["dtype"] = dtype;
      peak[with_dtype] = flops;
    }
    unhealthy[labels] = c.unhealthy ? 1 : 0;
  }
  copy_bandwidth_sync_.Set(copy);
  peak_flops_sync_.Set(peak);
  unhealthy_sync_.Set(unhealthy);

  std::map<prometheus::Labels, double> median, utilization, regression;
  for (const auto& [key, g] : snapshot.series) {
    const prometheus::Labels labels{{"gpu_model", key.gpu_model}, {"op", key.op},      {"variant", key.variant},
                                    {"shape", key.shape},         {"dtype", key.dtype}};
    median[labels] = g.median_seconds;
    if (g.utilization > 0) utilization[labels] = g.utilization;
    regression[labels] = g.regression ? 1 : 0;
  }
  series_median_sync_.Set(median);
  series_utilization_sync_.Set(utilization);
  series_regression_sync_.Set(regression);
}

void GaugeSync::Set(const std::map<prometheus::Labels, double>& wanted) {
  for (auto it = live_.begin(); it != live_.end();) {
    if (wanted.count(it->first) == 0) {
      family_.Remove(it->second);
      it = live_.erase(it);
    } else {
      ++it;
    }
  }
  for (const auto& [labels, value] : wanted) {
    prometheus::Gauge*& g = live_[labels];
    if (g == nullptr) g = &family_.Add(labels);
    g->Set(value);
  }
}

absl::StatusOr<std::unique_ptr<MetricsServer>> MetricsServer::Start(const std::string& address,
                                                                    std::shared_ptr<prometheus::Registry> registry) {
  std::unique_ptr<prometheus::Exposer> exposer;
  try {
    exposer = std::make_unique<prometheus::Exposer>(address);
  } catch (const std::exception& e) {
    return absl::UnavailableError(absl::StrCat("metrics: cannot listen on ", address, ": ", e.what()));
  }
  exposer->RegisterCollectable(registry);
  const std::vector<int> ports = exposer->GetListeningPorts();
  if (ports.empty()) return absl::UnavailableError(absl::StrCat("metrics: no listening port for ", address));
  return std::unique_ptr<MetricsServer>(
      new MetricsServer(std::move(exposer), address.substr(0, address.rfind(':')), ports.front()));
}

MetricsServer::~MetricsServer() {
  // The HTTP server (civetweb) stops only when its accept loop's poll() returns, which it does every
  // 2 s or on a new connection. Connecting to ourselves until it is gone keeps shutdown prompt.
  absl::Notification stopped;
  std::thread waker([&] {
    while (!stopped.WaitForNotificationWithTimeout(absl::Milliseconds(50))) Poke(host_, port_);
  });
  exposer_.reset();
  stopped.Notify();
  waker.join();
}

}  // namespace kbench::server
