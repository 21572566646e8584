// End to end, one worker with two devices (kbench-worker --cpu-devices 2: two CPU "devices", one
// runner child each): two jobs run at once, one per device; each result names the device it ran
// on; a fault or a hang on one device's runner leaves the other device's job whole. The overlap of
// the fault with the other job is made by the test, not hoped for: the other job's runner is paused
// (SIGSTOP) until the fault job has finished, so no host speed or load can order them otherwise.
#include <dirent.h>
#include <signal.h>
#include <stdlib.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
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

// The pid of `parent`'s kbench-runner child for CPU device `index` (started with --cpu_device
// INDEX), from /proc; -1 when there is none.
pid_t RunnerOfCpuDevice(pid_t parent, int index) {
  const std::string want = std::string("--cpu_device") + '\0' + std::to_string(index) + '\0';
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return -1;
  pid_t found = -1;
  while (const dirent* e = readdir(proc)) {
    int pid = 0;
    if (!absl::SimpleAtoi(e->d_name, &pid)) continue;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    std::getline(stat, line);
    // "pid (comm) state ppid ...": comm may hold spaces, so read after its closing parenthesis.
    const size_t close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::vector<std::string> fields = absl::StrSplit(line.substr(close + 2), ' ');
    int ppid = 0;
    if (fields.size() < 2 || !absl::SimpleAtoi(fields[1], &ppid) || ppid != parent) continue;
    std::ifstream cmd("/proc/" + std::to_string(pid) + "/cmdline");
    const std::string cmdline((std::istreambuf_iterator<char>(cmd)), std::istreambuf_iterator<char>());
    if (absl::StrContains(cmdline, want)) found = pid;
  }
  closedir(proc);
  return found;
}

// The CPU device index in a device uuid ("<host uuid>-cpu1" -> 1); -1 when it has none.
int CpuDeviceIndex(const std::string& uuid) {
  const size_t at = uuid.rfind("-cpu");
  int index = -1;
  if (at == std::string::npos || !absl::SimpleAtoi(uuid.substr(at + 4), &index)) return -1;
  return index;
}

// Resumes a runner paused by PauseRunnerOf when it goes out of scope, whatever the assertions did.
struct PausedRunner {
  pid_t pid = -1;
  void Resume() {
    if (pid > 0) kill(pid, SIGCONT);
    pid = -1;
  }
  ~PausedRunner() { Resume(); }
};

// Waits for the job's first result, which names its device, and pauses (SIGSTOP) the worker's runner
// for that device: the job then stays RUNNING, mid-result, until Resume(). Test failures say why
// when it cannot (then pid stays -1).
void PauseRunnerOf(Cluster& c, const std::string& job_id, PausedRunner* paused) {
  const v1::Job first = c.WaitForJob(
      job_id, [](const v1::Job& j) { return j.progress().results_done() >= 1 || JobFinished(j); }, seconds(120));
  ASSERT_EQ(first.state(), v1::RUNNING) << first.DebugString();
  const std::string uuid = DeviceOf(c.Results(job_id));
  const int device = CpuDeviceIndex(uuid);
  ASSERT_GE(device, 0) << "no CPU device index in '" << uuid << "'";
  const pid_t runner = RunnerOfCpuDevice(c.worker(0).pid(), device);
  ASSERT_GT(runner, 0) << "no runner child of the worker for --cpu_device " << device;
  ASSERT_EQ(kill(runner, SIGSTOP), 0);
  paused->pid = runner;
  const v1::Job now = GetJob(c, job_id);
  ASSERT_EQ(now.state(), v1::RUNNING) << "job " << job_id << " finished before its runner was paused";
  ASSERT_LT(now.progress().results_done(), now.progress().results_total());
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

  // Both RUNNING at one moment: a is held mid-result (its runner paused) until b has started.
  std::vector<std::string> a_args = LongGemm(48, 1500);
  a_args.insert(a_args.end(), {"--timeout-ms", "600000"});  // far beyond the pause
  const std::string a = c.Submit(a_args);
  PausedRunner paused;
  ASSERT_NO_FATAL_FAILURE(PauseRunnerOf(c, a, &paused));
  const std::string b = c.Submit(LongGemm(40, 1500));
  const v1::Job jb = c.WaitForJob(b, [](const v1::Job& j) { return JobRunning(j) || JobFinished(j); }, seconds(120));
  EXPECT_TRUE(JobRunning(jb) || JobFinished(jb)) << "b never started while a was held: " << jb.DebugString();
  EXPECT_TRUE(JobRunning(GetJob(c, a)));
  paused.Resume();

  std::set<std::string> used;
  for (const std::string& id : {a, b}) {
    v1::Job job = c.WaitForJob(id, JobFinished, seconds(180));
    ASSERT_EQ(job.state(), v1::SUCCEEDED) << job.DebugString();
    EXPECT_EQ(job.worker_id(), c.worker_id(0));
    auto res = c.Results(id);
    ASSERT_EQ(res.results_size(), 4);  // gemm's two CPU variants x two dtypes, each exactly once
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
  c.StartWorker("two", {"--cpu-devices", "2"});

  // The normal job: 4 results of 1.5 s, with a timeout far beyond the pause below.
  std::vector<std::string> normal_args = LongGemm(48, 1500);
  normal_args.insert(normal_args.end(), {"--timeout-ms", "600000"});
  const std::string normal = c.Submit(normal_args);
  // Held mid-result (its runner paused) for as long as the fault job takes.
  PausedRunner paused;
  ASSERT_NO_FATAL_FAILURE(PauseRunnerOf(c, normal, &paused));

  // Hot cache: a cold sample first rewrites twice the host's last-level cache (520 MB on a 260 MB L3),
  // which is not what this test is about. A 10 s timeout (the watchdog adds the runner's 10 s start
  // grace): the hang costs 20 s, and cpu_ok, a fresh runner and 200 ms of samples, has a hundred
  // times what it needs on a starved host (2 s was once too little beside four busy loops). The
  // test-only op comes with the job, from the test kernel library (kernels/testing/) as a plugin.
  const std::string faulty =
      c.Submit({"--op", "fault_injection", "--plugin", KBENCH_TEST_KERNELS, "--variant", "cpu_segfault", "--variant",
                "cpu_hang", "--variant", "cpu_ok", "--preset", "small", "--timeout-ms", "10000", "--max-time-ms", "200",
                "--cache", "hot"});
  v1::Job f = c.WaitForJob(faulty, JobFinished, seconds(180));
  ASSERT_EQ(f.state(), v1::SUCCEEDED) << f.DebugString();
  auto fres = c.Results(faulty);
  std::map<std::string, v1::Result> by_variant;
  for (const auto& r : fres.results()) by_variant[r.variant()] = r;
  ASSERT_EQ(fres.results_size(), 3);
  ASSERT_EQ(by_variant.size(), 3u);
  EXPECT_EQ(by_variant["cpu_segfault"].status(), v1::RUNTIME_ERROR) << by_variant["cpu_segfault"].status_message();
  EXPECT_EQ(by_variant["cpu_hang"].status(), v1::TIMEOUT) << by_variant["cpu_hang"].status_message();
  EXPECT_EQ(by_variant["cpu_ok"].status(), v1::OK) << by_variant["cpu_ok"].status_message();
  // The crash and the hang happened while the normal job was in the middle of a result.
  EXPECT_EQ(GetJob(c, normal).state(), v1::RUNNING);
  paused.Resume();

  v1::Job n = c.WaitForJob(normal, JobFinished, seconds(180));
  ASSERT_EQ(n.state(), v1::SUCCEEDED) << n.DebugString();
  // Recorded times agree: the crash and the hang ended within the normal job's run.
  for (const char* v : {"cpu_segfault", "cpu_hang"}) {
    EXPECT_GE(by_variant[v].finished_unix_ms(), n.started_unix_ms()) << v;
    EXPECT_LE(by_variant[v].finished_unix_ms(), n.finished_unix_ms()) << v << " ended after the normal job";
  }
  EXPECT_EQ(n.attempts(), 1);
  auto nres = c.Results(normal);
  ASSERT_EQ(nres.results_size(), n.progress().results_total());
  ASSERT_EQ(nres.results_size(), 4);  // gemm's two CPU variants x two dtypes, each exactly once
  for (const auto& r : nres.results())
    EXPECT_EQ(r.status(), v1::OK) << r.variant() << ": " << r.status_message();
  EXPECT_FALSE(DeviceOf(nres).empty());
  EXPECT_NE(DeviceOf(nres), DeviceOf(fres)) << "the fault job and the normal job shared a device";
  EXPECT_TRUE(c.worker(0).Running());
}

}  // namespace
}  // namespace kbench::e2e
