// End to end, one worker with two devices (kbench-worker --cpu-devices 2: two CPU "devices", one
// runner child each): two jobs run at once, one per device; each result names the device it ran
// on; a fault or a hang on one device's runner leaves the other device's job whole.
#include <stdlib.h>

#include <chrono>
#include <map>
#include <set>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "api/channel.h"
#include "cluster.h"
#include "gtest/gtest.h"

namespace kbench::e2e {
namespace {

using std::chrono::seconds;

v1::Job GetJob(Cluster& c, const std::string& id) {
  v1::GetJobRequest req;
  req.set_job_id(id);
  v1::Job job;
  auto ctx = api::MakeContext({c.address(), ""}, seconds(5));
  EXPECT_TRUE(c.stub().GetJob(ctx.get(), req, &job).ok());
  return job;
}

// The device uuids the worker registered, in order.
std::vector<std::string> RegisteredDevices(Cluster& c) {
  v1::ListWorkersResponse resp;
  auto ctx = api::MakeContext({c.address(), ""}, seconds(5));
  EXPECT_TRUE(c.stub().ListWorkers(ctx.get(), v1::ListWorkersRequest(), &resp).ok());
  std::vector<std::string> uuids;
  if (resp.workers_size() == 1)
    for (const auto& d : resp.workers(0).info().devices()) uuids.push_back(d.uuid());
  return uuids;
}

// The one device uuid every result of the job names ("" when they disagree or there are none).
std::string DeviceOf(const v1::GetResultsResponse& res) {
  std::set<std::string> uuids;
  for (const auto& r : res.results()) uuids.insert(r.device().uuid());
  return uuids.size() == 1 ? *uuids.begin() : "";
}

// A job of 4 results of at least `ms` each (gemm, two variants x two dtypes on the CPU).
std::vector<std::string> LongGemm(int n, int ms) {
  const std::string t = std::to_string(ms);
  return {"--op", "gemm", "--shape", "M=" + std::to_string(n) + ",N=48,K=48", "--dtype", "f32,bf16",
          "--min-time-ms", t, "--max-time-ms", t};
}

TEST(MultiDevice, TwoJobsRunAtOnceOnePerDeviceAndEachResultNamesItsDevice) {
  Cluster c;
  c.StartCoordinator();
  c.StartWorker("two", {"--cpu-devices", "2"});
  const std::vector<std::string> devices = RegisteredDevices(c);
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_NE(devices[0], devices[1]);
  // kbench-client workers lists one row per device of the worker.
  auto listed = c.Client({"workers", "--format", "csv"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  int rows = 0;
  for (absl::string_view line : absl::StrSplit(listed.out, '\n')) rows += absl::StartsWith(line, c.worker_id(0));
  EXPECT_EQ(rows, 2) << listed.out;

  const std::string a = c.Submit(LongGemm(48, 1500));
  const std::string b = c.Submit(LongGemm(40, 1500));
  // Both RUNNING at one moment, before either finishes.
  bool both_running = false;
  const auto deadline = std::chrono::steady_clock::now() + seconds(90);
  while (!both_running && std::chrono::steady_clock::now() < deadline) {
    const v1::Job ja = GetJob(c, a), jb = GetJob(c, b);
    if (JobFinished(ja) || JobFinished(jb)) break;
    both_running = JobRunning(ja) && JobRunning(jb);
    if (!both_running) std::this_thread::sleep_for(std::chrono::milliseconds(50));  // polling remote state
  }
  EXPECT_TRUE(both_running) << "the two jobs never ran at the same time";

  std::set<std::string> used;
  for (const std::string& id : {a, b}) {
    v1::Job job = c.WaitForJob(id, JobFinished, seconds(180));
    ASSERT_EQ(job.state(), v1::SUCCEEDED) << job.DebugString();
    EXPECT_EQ(job.worker_id(), c.worker_id(0));
    auto res = c.Results(id);
    ASSERT_GE(res.results_size(), 4);
    for (const auto& r : res.results()) EXPECT_EQ(r.status(), v1::OK) << r.variant() << ": " << r.status_message();
    const std::string device = DeviceOf(res);
    ASSERT_FALSE(device.empty()) << "the results of one job name more than one device";
    EXPECT_TRUE(device == devices[0] || device == devices[1]) << device;
    used.insert(device);
  }
  EXPECT_EQ(used.size(), 2u) << "both jobs ran on one device";
}

TEST(MultiDevice, AFaultOrHangOnOneDeviceLeavesTheOtherDevicesJobWhole) {
  Cluster c;
  c.StartCoordinator();
  setenv("KBENCH_FAULT_INJECTION", "1", 1);  // the test-only op, for this worker's runners alone
  c.StartWorker("two", {"--cpu-devices", "2"});
  unsetenv("KBENCH_FAULT_INJECTION");

  // About 20 s: longer than the hang's watchdog (its 2 s timeout plus the runner's 10 s start grace).
  const std::string normal = c.Submit(LongGemm(48, 5000));
  ASSERT_EQ(c.WaitForJob(normal, JobRunning, seconds(60)).state(), v1::RUNNING);
  // Hot cache: a cold sample first rewrites twice the host's last-level cache (520 MB on a 260 MB L3),
  // which beside the GEMM on a 2-core host once took cpu_ok past its 2 s timeout.
  const std::string faulty =
      c.Submit({"--op", "fault_injection", "--variant", "cpu_segfault", "--variant", "cpu_hang", "--variant", "cpu_ok",
                "--preset", "small", "--timeout-ms", "2000", "--max-time-ms", "200", "--cache", "hot"});
  v1::Job f = c.WaitForJob(faulty, JobFinished, seconds(120));
  ASSERT_EQ(f.state(), v1::SUCCEEDED) << f.DebugString();
  auto fres = c.Results(faulty);
  std::map<std::string, v1::Result> by_variant;
  for (const auto& r : fres.results()) by_variant[r.variant()] = r;
  ASSERT_EQ(by_variant.size(), 3u);
  EXPECT_EQ(by_variant["cpu_segfault"].status(), v1::RUNTIME_ERROR) << by_variant["cpu_segfault"].status_message();
  EXPECT_EQ(by_variant["cpu_hang"].status(), v1::TIMEOUT) << by_variant["cpu_hang"].status_message();
  EXPECT_EQ(by_variant["cpu_ok"].status(), v1::OK) << by_variant["cpu_ok"].status_message();

  v1::Job n = c.WaitForJob(normal, JobFinished, seconds(180));
  ASSERT_EQ(n.state(), v1::SUCCEEDED) << n.DebugString();
  // The crash and the hang happened while the normal job ran, beside it rather than after it.
  for (const char* v : {"cpu_segfault", "cpu_hang"}) {
    EXPECT_GE(by_variant[v].finished_unix_ms(), n.started_unix_ms()) << v;
    EXPECT_LE(by_variant[v].finished_unix_ms(), n.finished_unix_ms()) << v << " ended after the normal job";
  }
  EXPECT_EQ(n.attempts(), 1);
  auto nres = c.Results(normal);
  ASSERT_EQ(nres.results_size(), n.progress().results_total());
  ASSERT_GE(nres.results_size(), 4);
  for (const auto& r : nres.results())
    EXPECT_EQ(r.status(), v1::OK) << r.variant() << ": " << r.status_message();
  EXPECT_FALSE(DeviceOf(nres).empty());
  EXPECT_NE(DeviceOf(nres), DeviceOf(fres)) << "the fault job and the normal job shared a device";
  EXPECT_TRUE(c.worker(0).Running());
}

}  // namespace
}  // namespace kbench::e2e
