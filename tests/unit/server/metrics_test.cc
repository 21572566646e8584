// Metrics: observer calls show up in the registry with bounded labels, and the exposer serves them
// on a port it picked itself.
#include "server/service/metrics.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "prometheus/text_serializer.h"

namespace kbench::server {
namespace {

std::string Exposition(const Metrics& m) {
  return prometheus::TextSerializer().Serialize(m.registry()->Collect());
}

// Whether the exposition has exactly this line: "x_total 2" must not pass on "x_total 20" or on
// "y_x_total 2".
bool HasLine(const std::string& text, const std::string& line) {
  for (absl::string_view l : absl::StrSplit(text, '\n'))
    if (absl::StripSuffix(l, "\r") == line) return true;
  return false;
}

// Whether the text mentions `part` anywhere (for what must be absent).
bool Mentions(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(Metrics, ObserverCallsUpdateTheFamilies) {
  Metrics m;
  std::string text = Exposition(m);
  // Every final state and status is exported at zero from the start.
  EXPECT_TRUE(HasLine(text, "kbench_jobs_finished_total{state=\"failed\"} 0")) << text;
  EXPECT_TRUE(HasLine(text, "kbench_results_total{status=\"incorrect\"} 0")) << text;

  m.JobSubmitted();
  m.JobSubmitted();
  m.JobLeased(0.3);
  m.JobRequeued();
  m.JobFinished(v1::SUCCEEDED, 12.0);
  m.JobFinished(v1::CANCELLED_JOB, -1);
  m.ResultStored(v1::OK);
  m.ResultStored(v1::OK);
  m.ResultStored(v1::TIMEOUT);
  FleetSnapshot snap;
  snap.queued = 4;
  snap.running = 2;
  snap.workers[{"idle", "NVIDIA H100"}] = 3;
  snap.workers[{"lost", "NVIDIA A100"}] = 1;
  m.Snapshot(snap);
  m.SetLeaseCallsWaiting(7);

  text = Exposition(m);
  EXPECT_TRUE(HasLine(text, "kbench_jobs_submitted_total 2")) << text;
  EXPECT_TRUE(HasLine(text, "kbench_jobs_requeued_total 1")) << text;
  EXPECT_TRUE(HasLine(text, "kbench_jobs_finished_total{state=\"succeeded\"} 1")) << text;
  EXPECT_TRUE(HasLine(text, "kbench_jobs_finished_total{state=\"cancelled\"} 1")) << text;
  EXPECT_TRUE(HasLine(text, "kbench_results_total{status=\"ok\"} 2")) << text;
  EXPECT_TRUE(HasLine(text, "kbench_results_total{status=\"timeout\"} 1")) << text;
  EXPECT_TRUE(HasLine(text, "kbench_queue_depth 4")) << text;
  EXPECT_TRUE(HasLine(text, "kbench_jobs_running 2")) << text;
  EXPECT_TRUE(HasLine(text, "kbench_lease_calls_waiting 7")) << text;
  EXPECT_TRUE(HasLine(text, "kbench_workers{gpu_model=\"NVIDIA H100\",state=\"idle\"} 3")) << text;
  EXPECT_TRUE(HasLine(text, "kbench_job_duration_seconds_count{phase=\"queue\"} 1")) << text;
  EXPECT_TRUE(HasLine(text, "kbench_job_duration_seconds_count{phase=\"run\"} 1")) << text;  // The cancel never ran.
  EXPECT_TRUE(HasLine(text, "kbench_job_duration_seconds_bucket{phase=\"run\",le=\"30\"} 1")) << text;

  // A label set that vanishes from the fleet vanishes from the exposition.
  snap.workers.erase({"lost", "NVIDIA A100"});
  m.Snapshot(snap);
  text = Exposition(m);
  EXPECT_FALSE(Mentions(text, "NVIDIA A100")) << text;
  EXPECT_TRUE(Mentions(text, "NVIDIA H100")) << text;
}

TEST(Metrics, WorkerCeilingsHealthAndSeriesGauges) {
  Metrics m;
  FleetSnapshot snap;
  WorkerCeilingsGauge h1;
  h1.copy_bytes_per_second = 3e12;
  h1.peak_flops_per_second["bf16"] = 7e14;
  snap.worker_ceilings[{"node-1", "NVIDIA H100"}] = h1;
  WorkerCeilingsGauge h2 = h1;
  h2.copy_bytes_per_second = 2e12;
  h2.unhealthy = true;
  snap.worker_ceilings[{"node-2", "NVIDIA H100"}] = h2;
  snap.worker_ceilings[{"node-3", "NVIDIA A100"}] = WorkerCeilingsGauge{};  // Not calibrated.
  snap.series[SeriesLabels{"NVIDIA H100", "rmsnorm", "v3", "8192x4096", "bf16"}] = SeriesGauge{25e-6, 0.8, true};
  snap.series[SeriesLabels{"NVIDIA H100", "rmsnorm", "v2", "8192x4096", "bf16"}] = SeriesGauge{30e-6, 0, false};
  m.Snapshot(snap);

  std::string text = Exposition(m);
  EXPECT_TRUE(HasLine(text, "kbench_worker_copy_bandwidth_bytes_per_second{gpu_model=\"NVIDIA H100\",worker=\"node-2\"} "
                        "2000000000000"))
      << text;
  EXPECT_FALSE(Mentions(text, "kbench_worker_copy_bandwidth_bytes_per_second{gpu_model=\"NVIDIA A100\"")) << text;
  EXPECT_TRUE(HasLine(text, "kbench_worker_peak_flops{dtype=\"bf16\",gpu_model=\"NVIDIA H100\",worker=\"node-1\"} "
                        "700000000000000"))
      << text;
  EXPECT_TRUE(HasLine(text, "kbench_worker_unhealthy{gpu_model=\"NVIDIA H100\",worker=\"node-2\"} 1")) << text;
  EXPECT_TRUE(HasLine(text, "kbench_worker_unhealthy{gpu_model=\"NVIDIA H100\",worker=\"node-1\"} 0")) << text;
  EXPECT_TRUE(HasLine(text, "kbench_worker_unhealthy{gpu_model=\"NVIDIA A100\",worker=\"node-3\"} 0")) << text;
  const std::string v3 = "{dtype=\"bf16\",gpu_model=\"NVIDIA H100\",op=\"rmsnorm\",shape=\"8192x4096\",variant=\"v3\"}";
  EXPECT_TRUE(HasLine(text, "kbench_series_median_seconds" + v3 + " 2.5e-05")) << text;
  EXPECT_TRUE(HasLine(text, "kbench_series_utilization" + v3 + " 0.8")) << text;
  EXPECT_TRUE(HasLine(text, "kbench_series_regression" + v3 + " 1")) << text;
  EXPECT_TRUE(HasLine(text, "kbench_series_regression{dtype=\"bf16\",gpu_model=\"NVIDIA H100\",op=\"rmsnorm\","
                        "shape=\"8192x4096\",variant=\"v2\"} 0"))
      << text;
  EXPECT_FALSE(Mentions(text, "kbench_series_utilization{dtype=\"bf16\",gpu_model=\"NVIDIA H100\",op=\"rmsnorm\","
                         "shape=\"8192x4096\",variant=\"v2\"}"))
      << text;  // Unknown utilization is left out, not exported as 0.

  // A worker that leaves and a regression that clears.
  snap.worker_ceilings.erase({"node-2", "NVIDIA H100"});
  for (auto& [labels, g] : snap.series) g.regression = false;
  m.Snapshot(snap);
  text = Exposition(m);
  EXPECT_FALSE(Mentions(text, "node-2")) << text;
  EXPECT_TRUE(HasLine(text, "kbench_series_regression" + v3 + " 0")) << text;
}

// A plain HTTP GET on loopback; returns the whole response.
std::string HttpGet(int port, const std::string& path) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string out;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    const std::string req = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
    (void)!write(fd, req.data(), req.size());
    char buf[4096];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return out;
}

TEST(MetricsServer, ServesTheRegistryOnAnAutomaticPort) {
  Metrics m;
  m.JobSubmitted();
  auto server = MetricsServer::Start("127.0.0.1:0", m.registry());
  ASSERT_TRUE(server.ok()) << server.status();
  ASSERT_GT((*server)->port(), 0);
  const int port = (*server)->port();
  const std::string body = HttpGet(port, "/metrics");
  EXPECT_TRUE(HasLine(body, "kbench_jobs_submitted_total 1")) << body;
  server->reset();
  EXPECT_EQ(HttpGet(port, "/metrics"), "");  // Stopped: the port is closed.
}

TEST(MetricsServer, BadAddressIsAnError) {
  Metrics m;
  auto server = MetricsServer::Start("256.1.1.1:http", m.registry());
  EXPECT_FALSE(server.ok());
}

}  // namespace
}  // namespace kbench::server
