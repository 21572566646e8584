// Tests of the read-only subcommands (status, results, workers, kernels) against an in-process
// coordinator, and of the top-level dispatch and help.
#include "client/commands.h"

#include <stdlib.h>

#include <sstream>

#include "fake_coordinator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kbench::client {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

struct Outcome {
  int rc;
  std::string out, err;
};

Outcome RunRaw(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  Io io{out, err};
  io.now_ms = [] { return int64_t{100'000}; };
  int rc = RunCli(args, io);
  return {rc, out.str(), err.str()};
}

class CommandsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* v : {"KBENCH_COORDINATOR", "KBENCH_TOKEN", "KBENCH_CONFIG"}) unsetenv(v);
    setenv("HOME", ::testing::TempDir().c_str(), 1);
  }
  Outcome Run(std::vector<std::string> args) {
    // The address as a subcommand flag here, to cover that spelling; submit_test uses the global one.
    args.insert(args.begin() + 1, {"--coordinator", server.address()});
    return RunRaw(args);
  }

  testing::FakeServer server;
  testing::FakeCoordinator& fake = server.service;
};

TEST_F(CommandsTest, StatusOfGivenJobs) {
  fake.AddJob("j-7", "softmax");
  auto r = Run({"status", "j-7", "j-missing"});
  EXPECT_EQ(r.rc, 1);  // One id was not found; the other is still shown.
  EXPECT_THAT(r.out, HasSubstr("j-7"));
  EXPECT_THAT(r.out, HasSubstr("softmax"));
  EXPECT_THAT(r.out, HasSubstr("QUEUED"));
  EXPECT_THAT(r.err, HasSubstr("kbench-client: status: j-missing: not found"));
}

TEST_F(CommandsTest, StatusListsRecentJobs) {
  {
    std::lock_guard<std::mutex> lock(fake.mu);
    v1::Job j;
    j.set_job_id("j-9");
    j.set_state(v1::FAILED);
    j.set_error("worker lost\nstack...");
    j.set_created_unix_ms(40'000);
    fake.recent_jobs.push_back(j);
  }
  auto r = Run({"status", "--limit", "5", "--state", "failed"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("j-9"));
  EXPECT_THAT(r.out, HasSubstr("FAILED"));
  EXPECT_THAT(r.out, HasSubstr("worker lost..."));
  EXPECT_THAT(r.out, HasSubstr("1m"));  // Age against the injected clock.
  std::lock_guard<std::mutex> lock(fake.mu);
  EXPECT_EQ(fake.last_list_jobs.limit(), 5);
  EXPECT_EQ(fake.last_list_jobs.state(), v1::FAILED);
}

TEST_F(CommandsTest, StatusRejectsBadFlags) {
  EXPECT_EQ(Run({"status", "--state", "sleeping"}).rc, 2);
  auto r = Run({"status", "j-1", "--limit", "3"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_THAT(r.err, HasSubstr("do not apply to given job ids"));
}

TEST_F(CommandsTest, ResultsAsMarkdownWithSamples) {
  {
    std::lock_guard<std::mutex> lock(fake.mu);
    fake.script = {v1::RUNNING};
  }
  fake.AddJob("j-1", "rmsnorm");
  fake.AddJob("j-2", "rmsnorm");
  auto r = Run({"results", "j-1", "j-2", "--format", "md", "--samples"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("| op | variant |"));
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 4);  // Header, separator, a row per job.
  EXPECT_THAT(r.err, HasSubstr("j-1 is RUNNING; results so far"));
  std::lock_guard<std::mutex> lock(fake.mu);
  ASSERT_EQ(fake.results_requests.size(), 2u);
  EXPECT_TRUE(fake.results_requests[0].include_samples());
}

TEST_F(CommandsTest, ResultsErrors) {
  EXPECT_EQ(Run({"results"}).rc, 2);
  auto r = Run({"results", "j-nope"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_THAT(r.err, HasSubstr("kbench-client: results: NOT_FOUND: j-nope: no job j-nope"));
}

TEST_F(CommandsTest, Workers) {
  {
    std::lock_guard<std::mutex> lock(fake.mu);
    auto* w = fake.workers.add_workers();
    w->mutable_info()->set_worker_id("w-1");
    w->mutable_info()->set_name("laptop");
    w->mutable_info()->add_devices()->set_name("Intel Core i7");
    w->set_state("idle");
    w->set_last_heartbeat_unix_ms(98'000);
  }
  auto r = Run({"workers"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("laptop"));
  EXPECT_THAT(r.out, HasSubstr("Intel Core i7"));
  EXPECT_THAT(r.out, HasSubstr("2s"));
}

v1::HistoryPoint HistoryPoint(const std::string& job, const std::string& variant, v1::Verdict verdict) {
  v1::HistoryPoint p;
  p.set_job_id(job);
  p.set_finished_unix_ms(1'700'000'000'000);
  p.set_median_ns(verdict == v1::SLOWER ? 10'600 : 10'000);
  p.set_verdict(verdict);
  p.set_change_fraction(verdict == v1::SLOWER ? 0.06 : 0.0);
  p.set_p_value(verdict == v1::SLOWER ? 0.001 : 0.8);
  p.set_branch("main");
  p.set_git_sha("abc123");
  p.set_variant(variant);
  p.set_shape("8192x4096");
  p.set_dtype(v1::DTYPE_BF16);
  p.set_gpu_model("NVIDIA H200");
  p.set_baseline_median_ns(10'000);
  return p;
}

TEST_F(CommandsTest, HistoryMapsFlagsToTheRequest) {
  auto r = Run({"history", "--op", "rmsnorm", "--variant", "v5_tma", "--gpu", "H200", "--shape", "8192x4096",
                "--dtype", "bf16", "--limit", "20"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("no results match"));
  auto bare = Run({"history", "--op", "softmax", "--format", "csv"});
  ASSERT_EQ(bare.rc, 0) << bare.err;
  EXPECT_THAT(bare.out, HasSubstr("op,variant,shape,dtype,gpu_model,job_id"));
  // submit's shape form with a flag goes as typed: the coordinator resolves it (series_shape.h).
  ASSERT_EQ(Run({"history", "--op", "rope", "--shape", "8192x32x8x128,gptj"}).rc, 0);
  std::lock_guard<std::mutex> lock(fake.mu);
  ASSERT_EQ(fake.history_requests.size(), 3u);
  EXPECT_EQ(fake.history_requests[2].shape(), "8192x32x8x128,gptj");
  const auto& q = fake.history_requests[0];
  EXPECT_EQ(q.op(), "rmsnorm");
  EXPECT_EQ(q.variant(), "v5_tma");
  EXPECT_EQ(q.gpu_model(), "H200");
  EXPECT_EQ(q.shape(), "8192x4096");
  EXPECT_EQ(q.dtype(), v1::DTYPE_BF16);
  EXPECT_EQ(q.limit(), 20);
  // Unset filters stay open for the coordinator's defaults.
  const auto& open = fake.history_requests[1];
  EXPECT_EQ(open.op(), "softmax");
  EXPECT_EQ(open.variant(), "");
  EXPECT_EQ(open.gpu_model(), "");
  EXPECT_EQ(open.shape(), "");
  EXPECT_EQ(open.dtype(), v1::DTYPE_UNSPECIFIED);
  EXPECT_EQ(open.limit(), 0);
}

TEST_F(CommandsTest, HistoryRendersTheSeriesAndSucceedsWithoutARegression) {
  {
    std::lock_guard<std::mutex> lock(fake.mu);
    *fake.history.add_points() = HistoryPoint("j-new", "v5_tma", v1::SAME);
    *fake.history.add_points() = HistoryPoint("j-old", "v5_tma", v1::SLOWER);  // Fixed since: not gated.
    fake.history.set_baseline_median_ns(10'000);
    fake.history.set_baseline_results(3);
  }
  auto r = Run({"history", "--op", "rmsnorm"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("rmsnorm v5_tma 8192x4096 bf16 cold on NVIDIA H200: baseline 10.0 us (3"));
  EXPECT_THAT(r.out, HasSubstr("j-new"));
  EXPECT_THAT(r.out, HasSubstr("2023-11-14T22:13:20Z"));
  EXPECT_THAT(r.out, HasSubstr("SAME"));
  EXPECT_THAT(r.out, HasSubstr("abc123"));
  EXPECT_THAT(r.out, HasSubstr("+6.00%"));
  EXPECT_LT(r.out.find("j-new"), r.out.find("j-old"));  // Newest first.
  EXPECT_THAT(r.err, IsEmpty());
}

TEST_F(CommandsTest, HistoryFiltersOnCacheModeHotBatchAndBackend) {
  auto r = Run({"history", "--op", "rmsnorm", "--cache", "hot", "--hot-batch", "20", "--backend", "cuda"});
  ASSERT_EQ(r.rc, 0) << r.err;
  {
    std::lock_guard<std::mutex> lock(fake.mu);
    ASSERT_EQ(fake.history_requests.size(), 1u);
    EXPECT_EQ(fake.history_requests[0].cache_mode(), v1::HOT);
    EXPECT_EQ(fake.history_requests[0].hot_batch(), 20);
    EXPECT_EQ(fake.history_requests[0].backend(), v1::BACKEND_CUDA);
  }
  EXPECT_EQ(Run({"history", "--op", "rmsnorm", "--cache", "warm"}).rc, 2);
  EXPECT_EQ(Run({"history", "--op", "rmsnorm", "--hot-batch", "0"}).rc, 2);
}

TEST_F(CommandsTest, SeriesControlsAreSentAndListed) {
  auto r = Run({"series", "mute", "--op", "rmsnorm", "--variant", "v5_tma", "--gpu", "NVIDIA H200", "--cache", "hot",
                "--note", "flaky node"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("mute"));
  EXPECT_THAT(r.out, HasSubstr("rmsnorm variant=v5_tma gpu=NVIDIA H200 cache=hot"));
  EXPECT_THAT(r.out, HasSubstr("root"));
  ASSERT_EQ(Run({"series", "threshold", "--op", "gemm", "--value", "5%"}).rc, 0);
  ASSERT_EQ(Run({"series", "step", "--op", "gemm", "--at", "2026-11-30T12:00:00Z"}).rc, 0);
  {
    std::lock_guard<std::mutex> lock(fake.mu);
    ASSERT_EQ(fake.controls.size(), 3u);
    EXPECT_EQ(fake.controls[0].kind(), v1::SERIES_MUTE);
    EXPECT_EQ(fake.controls[0].scope().cache_mode(), v1::HOT);
    EXPECT_EQ(fake.controls[0].note(), "flaky node");
    EXPECT_EQ(fake.controls[1].kind(), v1::SERIES_THRESHOLD);
    EXPECT_DOUBLE_EQ(fake.controls[1].threshold(), 0.05);
    EXPECT_EQ(fake.controls[2].kind(), v1::SERIES_STEP);
    EXPECT_EQ(fake.controls[2].at_unix_ms(), 1'796'040'000'000);  // 2026-11-30T12:00:00Z
  }
  r = Run({"series", "list", "--op", "gemm"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("threshold 5%"));
  EXPECT_THAT(r.out, HasSubstr("step at 2026-11-30T12:00:00Z"));
  EXPECT_THAT(r.out, Not(HasSubstr("rmsnorm")));
  // Usage errors: no action, an unknown one, a threshold without a value, --op missing.
  EXPECT_EQ(Run({"series"}).rc, 2);
  EXPECT_EQ(Run({"series", "silence", "--op", "gemm"}).rc, 2);
  EXPECT_EQ(Run({"series", "threshold", "--op", "gemm"}).rc, 2);
  EXPECT_EQ(Run({"series", "mute"}).rc, 2);
  EXPECT_THAT(Run({"series", "--help"}).out, HasSubstr("admin role"));
}

TEST_F(CommandsTest, SeriesControlRefusedWithoutTheAdminRole) {
  {
    std::lock_guard<std::mutex> lock(fake.mu);
    fake.set_control_status = grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                                           "token 'ci' (role submit) may not call SetSeriesControl: it needs the admin role");
  }
  auto r = Run({"series", "mute", "--op", "rmsnorm"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_THAT(r.err, HasSubstr("needs the admin role"));
}

TEST_F(CommandsTest, HistoryExitsOneWhenTheNewestPointOfASeriesIsSlower) {
  {
    std::lock_guard<std::mutex> lock(fake.mu);
    *fake.history.add_points() = HistoryPoint("j-a", "v5_tma", v1::SAME);
    *fake.history.add_points() = HistoryPoint("j-b", "cpu_naive", v1::SLOWER);
    *fake.history.add_points() = HistoryPoint("j-c", "cpu_naive", v1::SAME);
  }
  for (const char* format : {"table", "md", "json", "csv"}) {
    auto r = Run({"history", "--op", "rmsnorm", "--format", format});
    EXPECT_EQ(r.rc, 1) << format;
    EXPECT_THAT(r.out, HasSubstr("j-b")) << format;  // The series are still printed.
    EXPECT_THAT(r.err, HasSubstr("kbench-client: history: regression: rmsnorm cpu_naive 8192x4096 bf16 cold on NVIDIA H200"));
    EXPECT_THAT(r.err, Not(HasSubstr("v5_tma")));
  }
}

TEST_F(CommandsTest, AMutedSeriesShowsItsVerdictButFailsNothing) {
  {
    std::lock_guard<std::mutex> lock(fake.mu);
    *fake.history.add_points() = HistoryPoint("j-b", "cpu_naive", v1::SLOWER);
    fake.history.mutable_points(0)->set_muted(true);
  }
  auto r = Run({"history", "--op", "rmsnorm"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("SLOWER (muted)"));
  EXPECT_THAT(r.err, Not(HasSubstr("regression")));
}

TEST_F(CommandsTest, HistoryRegressionsListsOnlyWhatChanged) {
  {
    std::lock_guard<std::mutex> lock(fake.mu);
    *fake.history.add_points() = HistoryPoint("j-a", "v5_tma", v1::SAME);
    *fake.history.add_points() = HistoryPoint("j-b", "cpu_naive", v1::SLOWER);
    *fake.history.add_points() = HistoryPoint("j-c", "cpu_naive", v1::SAME);
  }
  auto r = Run({"history", "--op", "rmsnorm", "--regressions"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_THAT(r.out, HasSubstr("j-b"));
  EXPECT_THAT(r.out, Not(HasSubstr("j-a")));
  EXPECT_THAT(r.out, Not(HasSubstr("v5_tma")));
  {
    std::lock_guard<std::mutex> lock(fake.mu);
    fake.history.mutable_points(1)->set_verdict(v1::AMBIGUOUS);
  }
  r = Run({"history", "--op", "rmsnorm", "--regressions"});
  EXPECT_EQ(r.rc, 0);
  EXPECT_THAT(r.out, Not(HasSubstr("j-")));
  EXPECT_THAT(r.err, HasSubstr("no series changed"));
  auto help = RunRaw({"history", "--help"});
  EXPECT_THAT(help.out, HasSubstr("--regressions"));
  EXPECT_THAT(help.out, HasSubstr("run-to-run"));
}

TEST_F(CommandsTest, HistoryRejectsBadFlags) {
  auto no_op = Run({"history"});
  EXPECT_EQ(no_op.rc, 2);
  EXPECT_THAT(no_op.err, HasSubstr("--op is required"));
  EXPECT_EQ(Run({"history", "--op", "x", "--dtype", "f64"}).rc, 2);
  EXPECT_EQ(Run({"history", "--op", "x", "--limit", "5000"}).rc, 2);
  EXPECT_EQ(Run({"history", "--op", "x", "--format", "xml"}).rc, 2);
  std::lock_guard<std::mutex> lock(fake.mu);
  EXPECT_TRUE(fake.history_requests.empty());
  auto help = RunRaw({"history", "--help"});
  EXPECT_EQ(help.rc, 0);
  EXPECT_THAT(help.out, HasSubstr("1 the newest point of some series is SLOWER"));
}

TEST_F(CommandsTest, KernelsFiltersByOp) {
  {
    std::lock_guard<std::mutex> lock(fake.mu);
    fake.kernels.add_ops()->set_name("rmsnorm");
    fake.kernels.add_ops()->set_name("gemm");
  }
  auto r = Run({"kernels", "--op", "gemm", "--format", "csv"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("gemm"));
  EXPECT_THAT(r.out, Not(HasSubstr("rmsnorm")));
  auto missing = Run({"kernels", "--op", "conv"});
  EXPECT_EQ(missing.rc, 1);
  EXPECT_THAT(missing.err, HasSubstr("no op named 'conv'"));
}

TEST_F(CommandsTest, KernelsTemplatePrintsOnlyTheStartingSource) {
  {
    std::lock_guard<std::mutex> lock(fake.mu);
    v1::OpInfo* op = fake.kernels.add_ops();
    op->set_name("rmsnorm");
    op->mutable_contract()->set_entry("kbench_rmsnorm");
    op->mutable_contract()->set_template_source("extern \"C\" __global__ void kbench_rmsnorm() {}\n");
  }
  // --template implies --contract: the output is the .cu file and nothing else.
  auto t = Run({"kernels", "--op", "rmsnorm", "--template"});
  ASSERT_EQ(t.rc, 0) << t.err;
  EXPECT_EQ(t.out, "extern \"C\" __global__ void kbench_rmsnorm() {}\n");
  auto c = Run({"kernels", "--op", "rmsnorm", "--contract"});
  ASSERT_EQ(c.rc, 0) << c.err;
  EXPECT_THAT(c.out, HasSubstr("kbench_rmsnorm"));
  EXPECT_THAT(c.out, HasSubstr("--template > my_rmsnorm.cu"));
  auto no_op = Run({"kernels", "--template"});
  EXPECT_EQ(no_op.rc, 2);
  EXPECT_THAT(no_op.err, HasSubstr("--template: needs --op"));
}

TEST_F(CommandsTest, KernelsPresetsListsEachProblemAsSubmitTakesIt) {
  {
    std::lock_guard<std::mutex> lock(fake.mu);
    v1::OpInfo* op = fake.kernels.add_ops();
    op->set_name("rope");
    for (const char* d : {"tokens", "q_heads", "kv_heads", "head_dim"}) op->add_dims(d);
    v1::PresetInfo* p = op->add_presets();
    p->set_name("canonical");
    for (bool gptj : {false, true}) {
      v1::Problem* problem = p->add_problems();
      for (int v : {8192, 32, 8, 128}) problem->add_dims()->set_value(v);
      if (gptj) problem->add_flags("gptj");
    }
    v1::Problem* fixed = op->add_presets()->add_problems();
    op->mutable_presets(1)->set_name("edge");
    for (int v : {0, 5, 0, 128}) fixed->add_dims()->set_value(v);
    fixed->set_dtype(v1::DTYPE_BF16);
  }
  auto r = Run({"kernels", "--op", "rope", "--presets"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("rope dims: tokens,q_heads,kv_heads,head_dim\n"));
  EXPECT_THAT(r.out, HasSubstr("8192x32x8x128 "));
  EXPECT_THAT(r.out, HasSubstr("8192x32x8x128,gptj"));
  EXPECT_THAT(r.out, HasSubstr("0x5x0x128"));
  EXPECT_THAT(r.out, HasSubstr("bf16"));
  auto csv = Run({"kernels", "--op", "rope", "--presets", "--format", "csv"});
  ASSERT_EQ(csv.rc, 0) << csv.err;
  EXPECT_THAT(csv.out, HasSubstr("preset,shape,dtype\ncanonical,8192x32x8x128,-\ncanonical,\"8192x32x8x128,gptj\",-"));
  EXPECT_EQ(Run({"kernels", "--presets"}).rc, 2);
  EXPECT_EQ(Run({"kernels", "--op", "rope", "--presets", "--contract"}).rc, 2);
}

TEST_F(CommandsTest, UnreachableCoordinatorIsAFailureNotUsage) {
  // A port nobody listens on: bind one and close it again.
  std::string address;
  {
    testing::FakeServer gone;
    address = gone.address();
  }
  auto r = RunRaw({"workers", "--coordinator", address});
  EXPECT_EQ(r.rc, 1);
  EXPECT_THAT(r.err, HasSubstr("kbench-client: workers: UNAVAILABLE"));
}

TEST(Cli, Help) {
  auto top = RunRaw({"--help"});
  EXPECT_EQ(top.rc, 0);
  for (const char* c : {"submit", "status", "results", "workers", "kernels", "help", "--coordinator", "KBENCH_TOKEN"})
    EXPECT_THAT(top.out, HasSubstr(c)) << c;
  EXPECT_EQ(RunRaw({"help"}).out, top.out);

  auto sub = RunRaw({"help", "submit"});
  EXPECT_EQ(sub.rc, 0);
  EXPECT_EQ(RunRaw({"submit", "--help"}).out, sub.out);
  for (const auto& f : SubmitSpec().flags) EXPECT_THAT(sub.out, HasSubstr("--" + f.name)) << f.name;
  EXPECT_THAT(sub.out, HasSubstr("Examples:"));
  for (const auto& c : Commands()) {
    auto h = RunRaw({c.spec().name, "-h"});
    EXPECT_EQ(h.rc, 0);
    EXPECT_THAT(h.out, HasSubstr("Usage: kbench-client " + c.spec().name));
    EXPECT_THAT(h.out, HasSubstr("--coordinator"));
    EXPECT_FALSE(c.spec().examples.empty()) << c.spec().name;
  }
}

TEST(Cli, UsageErrors) {
  auto none = RunRaw({});
  EXPECT_EQ(none.rc, 2);
  EXPECT_THAT(none.err, HasSubstr("Usage:"));
  auto unknown = RunRaw({"sumbit"});
  EXPECT_EQ(unknown.rc, 2);
  EXPECT_THAT(unknown.err, HasSubstr("unknown command 'sumbit'"));
  EXPECT_THAT(unknown.err, HasSubstr("kbench-client --help"));
  EXPECT_EQ(RunRaw({"help", "nope"}).rc, 2);
  auto flag = RunRaw({"--verbose", "status"});
  EXPECT_EQ(flag.rc, 2);
  EXPECT_THAT(flag.err, HasSubstr("unknown flag --verbose"));
  auto sub_flag = RunRaw({"workers", "--verbose"});
  EXPECT_EQ(sub_flag.rc, 2);
  EXPECT_THAT(sub_flag.err, HasSubstr("kbench-client: workers: unknown flag --verbose"));
  EXPECT_THAT(sub_flag.out, IsEmpty());
}

TEST(Cli, BadConfigIsAUsageError) {
  auto r = RunRaw({"--config", "/nonexistent/kbench.conf", "workers"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_THAT(r.err, HasSubstr("/nonexistent/kbench.conf"));
}

}  // namespace
}  // namespace kbench::client
