// Tests of `submit` against an in-process coordinator: flags map to JobSpec fields, --wait follows
// the jobs and sets the exit status, errors are reported with the right code.
#include <stdlib.h>

#include <atomic>
#include <sstream>

#include "client/commands.h"
#include "fake_coordinator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kbench::client {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

struct Outcome {
  int rc;
  std::string out, err;
};

class SubmitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Nothing from the user's environment or config file may leak into what is sent.
    for (const char* v : {"KBENCH_COORDINATOR", "KBENCH_TOKEN", "KBENCH_CONFIG"}) unsetenv(v);
    setenv("HOME", ::testing::TempDir().c_str(), 1);
  }

  Outcome Run(std::vector<std::string> args, std::atomic<bool>* interrupted = nullptr) {
    std::ostringstream out, err;
    Io io{out, err};
    io.poll_interval = std::chrono::milliseconds(1);
    io.interrupted = interrupted;
    io.catch_interrupts = &catching;
    args.insert(args.begin(), {"--coordinator", server.address()});
    int rc = RunCli(args, io);
    return {rc, out.str(), err.str()};
  }

  testing::FakeServer server;
  testing::FakeCoordinator& fake = server.service;
  std::atomic<bool> catching{false};
};

TEST_F(SubmitTest, FlagsMapToJobSpec) {
  auto r = Run({"submit",
                "--op",
                "gemm",
                "--variant",
                "v1_naive,cublas",
                "--variant=v3_tiled",
                "--preset",
                "edge",
                "--shape",
                "M=1,N=4096,K=4096",
                "--shape",
                "8192x4096",
                "--dtype",
                "bf16,f32",
                "--cache",
                "hot",
                "--noise",
                "0.002",
                "--min-samples",
                "20",
                "--max-samples",
                "500",
                "--min-time-ms",
                "50",
                "--max-time-ms",
                "1500.5",
                "--warmup-ms",
                "25",
                "--trials",
                "5",
                "--seed",
                "42",
                "--timeout-ms",
                "9000",
                "--hot-batch",
                "8",
                "--backend",
                "cuda",
                "--gpu",
                "H100",
                "--min-cc",
                "9.0",
                "--selector-label",
                "rack=a",
                "--label",
                "git_sha=abc123",
                "--label",
                "pr=42",
                "--idempotency-key",
                "k1",
                "--token",
                "t0k"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "j-1\n");
  std::lock_guard<std::mutex> lock(fake.mu);
  ASSERT_EQ(fake.submits.size(), 1u);
  const auto& req = fake.submits[0];
  const auto& spec = req.spec();
  EXPECT_EQ(req.idempotency_key(), "k1");
  EXPECT_EQ(spec.op(), "gemm");
  EXPECT_THAT(spec.variants(), ElementsAre("v1_naive", "cublas", "v3_tiled"));
  ASSERT_EQ(spec.problems_size(), 3);
  EXPECT_EQ(spec.problems(0).preset(), "edge");
  ASSERT_EQ(spec.problems(1).shape().dims_size(), 3);
  EXPECT_EQ(spec.problems(1).shape().dims(0).name(), "M");
  EXPECT_EQ(spec.problems(1).shape().dims(2).value(), 4096);
  ASSERT_EQ(spec.problems(2).shape().dims_size(), 2);
  EXPECT_EQ(spec.problems(2).shape().dims(0).value(), 8192);
  EXPECT_THAT(spec.dtypes(), ElementsAre(v1::DTYPE_BF16, v1::DTYPE_F32));
  const auto& s = spec.settings();
  EXPECT_EQ(s.cache_mode(), v1::HOT);
  EXPECT_DOUBLE_EQ(s.noise_target(), 0.002);
  EXPECT_EQ(s.min_samples(), 20);
  EXPECT_EQ(s.max_samples(), 500);
  EXPECT_EQ(s.min_time_ns(), 50'000'000);
  EXPECT_EQ(s.max_time_ns(), 1'500'500'000);
  EXPECT_EQ(s.warmup_ns(), 25'000'000);
  EXPECT_EQ(s.correctness_trials(), 5);
  EXPECT_EQ(s.seed(), 42u);
  EXPECT_EQ(s.timeout_ns(), 9'000'000'000);
  EXPECT_EQ(s.hot_batch(), 8);
  EXPECT_EQ(spec.selector().backend(), v1::BACKEND_CUDA);
  EXPECT_EQ(spec.selector().model(), "H100");
  EXPECT_EQ(spec.selector().min_compute_capability(), 90);
  EXPECT_EQ(spec.selector().labels().at("rack"), "a");
  EXPECT_EQ(spec.labels().at("git_sha"), "abc123");
  EXPECT_EQ(spec.labels().at("pr"), "42");
  EXPECT_EQ(fake.tokens.back(), "Bearer t0k");
}

TEST_F(SubmitTest, DefaultsLeaveSettingsZero) {
  auto r = Run({"submit", "--op", "rmsnorm"});
  ASSERT_EQ(r.rc, 0) << r.err;
  std::lock_guard<std::mutex> lock(fake.mu);
  const auto& spec = fake.submits.at(0).spec();
  EXPECT_THAT(spec.variants(), IsEmpty());
  EXPECT_THAT(spec.problems(), IsEmpty());
  EXPECT_EQ(spec.settings().SerializeAsString(), "");  // The coordinator's defaults apply.
  EXPECT_EQ(fake.tokens.back(), "");
}

TEST_F(SubmitTest, InputErrorsNameTheFlagAndSendNothing) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  for (const auto& c : std::vector<Case>{
           {{"submit"}, "--op: required"},
           {{"submit", "--op", "x", "--dtype", "int7"}, "--dtype: unknown dtype 'int7'"},
           {{"submit", "--op", "x", "--shape", "8192x"}, "--shape: malformed shape"},
           {{"submit", "--op", "x", "--shape", "-1x5"}, "--shape: '-1x5': every dimension must be >= 0"},
           {{"submit", "--op", "x", "--cache", "warm"}, "--cache: unknown cache mode"},
           {{"submit", "--op", "x", "--noise", "2"}, "--noise: must be in (0, 1)"},
           {{"submit", "--op", "x", "--min-samples", "50", "--max-samples", "10"}, "--min-samples"},
           {{"submit", "--op", "x", "--backend", "tpu"}, "--backend: unknown backend"},
           {{"submit", "--op", "x", "--min-cc", "nine"}, "--min-cc"},
           {{"submit", "--op", "x", "--label", "novalue"}, "--label: expected KEY=VALUE"},
           {{"submit", "--op", "x", "--variant", "a,a"}, "--variant: 'a' given twice"},
           {{"submit", "--op", "x", "--format", "xml"}, "--format: unknown format"},
           {{"submit", "--op", "x", "--format", "md"}, "--format: only with --wait"},
           {{"submit", "--op", "x", "--suite", "default"}, "--op: cannot be combined with --suite"},
           {{"submit", "--suite", "nightly"}, "--suite: unknown suite 'nightly'"},
           {{"submit", "--op", "x", "--wiat"}, "unknown flag --wiat (did you mean --wait?)"},
       }) {
    auto r = Run(c.args);
    EXPECT_EQ(r.rc, 2) << c.message;
    EXPECT_THAT(r.err, HasSubstr("kbench-client: submit: " + c.message));
    EXPECT_THAT(r.err, HasSubstr("kbench-client submit --help"));
  }
  std::lock_guard<std::mutex> lock(fake.mu);
  EXPECT_THAT(fake.submits, IsEmpty());
}

TEST_F(SubmitTest, ServerErrorsKeepTheirCode) {
  {
    std::lock_guard<std::mutex> lock(fake.mu);
    fake.submit_status = grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "spec.variants[0]: unknown variant 'v9'");
  }
  auto r = Run({"submit", "--op", "rmsnorm", "--variant", "v9"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err, "kbench-client: submit: INVALID_ARGUMENT: spec.variants[0]: unknown variant 'v9'\n");
  {
    std::lock_guard<std::mutex> lock(fake.mu);
    fake.submit_status = grpc::Status(grpc::StatusCode::UNAVAILABLE, "draining");
  }
  r = Run({"submit", "--op", "rmsnorm"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_THAT(r.err, ::testing::StartsWith("kbench-client: submit: UNAVAILABLE: draining\n"));
  EXPECT_THAT(r.err, HasSubstr("is a coordinator running at " + server.address()));
}

TEST_F(SubmitTest, WaitShowsProgressAndPrintsResults) {
  auto r = Run({"submit", "--op", "rmsnorm", "--wait"});
  ASSERT_EQ(r.rc, 0) << r.err;
  // Not a terminal: one line per change.
  EXPECT_THAT(r.err, HasSubstr("j-1 QUEUED 0/2 rmsnorm\n"));
  EXPECT_THAT(r.err, HasSubstr("j-1 RUNNING 1/2 rmsnorm cpu_naive 256 bf16\n"));
  EXPECT_THAT(r.err, HasSubstr("j-1 SUCCEEDED 2/2 rmsnorm\n"));
  EXPECT_THAT(r.out, HasSubstr("cpu_naive"));
  EXPECT_THAT(r.out, HasSubstr("5.00 us"));
  EXPECT_THAT(r.out, Not(HasSubstr("j-1\n")));  // With --wait stdout is the results table only.
  EXPECT_FALSE(catching.load());                // Ctrl-C is back to its default once the wait is over.
}

TEST_F(SubmitTest, WaitOnATerminalRedrawsOneLine) {
  std::ostringstream out, err;
  Io io{out, err};
  io.poll_interval = std::chrono::milliseconds(1);
  io.err_is_tty = true;
  io.err_columns = 20;
  int rc = RunCli({"--coordinator", server.address(), "submit", "--op", "rmsnorm", "--wait"}, io);
  ASSERT_EQ(rc, 0) << err.str();
  EXPECT_THAT(err.str(), HasSubstr("\r\033[Kj-1 RUNNING 1/2 rms"));  // Cut to the terminal width.
  EXPECT_EQ(err.str().find('\n'), std::string::npos);
  EXPECT_EQ(err.str().substr(err.str().size() - 4), "\r\033[K");  // Cleared before the table.
}

TEST_F(SubmitTest, WaitExitsOneOnIncorrectResults) {
  {
    std::lock_guard<std::mutex> lock(fake.mu);
    fake.results["j-1"] = {testing::FakeCoordinator::OkResult("j-1"),
                           testing::FakeCoordinator::OkResult("j-1", v1::INCORRECT)};
  }
  auto r = Run({"submit", "--op", "rmsnorm", "--wait", "--format", "csv"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_THAT(r.out, HasSubstr("INCORRECT"));
}

TEST_F(SubmitTest, WaitExitsZeroWhenOnlySkipped) {
  {
    std::lock_guard<std::mutex> lock(fake.mu);
    fake.results["j-1"] = {testing::FakeCoordinator::OkResult("j-1", v1::SKIPPED)};
  }
  EXPECT_EQ(Run({"submit", "--op", "rmsnorm", "--wait"}).rc, 0);
}

TEST_F(SubmitTest, WaitExitsOneOnFailedJob) {
  {
    std::lock_guard<std::mutex> lock(fake.mu);
    fake.script = {v1::RUNNING, v1::FAILED};
    fake.job_error = "retries exhausted";
  }
  auto r = Run({"submit", "--op", "rmsnorm", "--wait"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_THAT(r.err, HasSubstr("kbench-client: submit: job j-1 FAILED: retries exhausted"));
}

TEST_F(SubmitTest, InterruptLeavesTheJobRunning) {
  {
    std::lock_guard<std::mutex> lock(fake.mu);
    fake.script = {v1::RUNNING};
  }
  std::atomic<bool> interrupted{true};
  auto r = Run({"submit", "--op", "rmsnorm", "--wait"}, &interrupted);
  EXPECT_EQ(r.rc, 130);
  EXPECT_EQ(r.out, "j-1\n");
  EXPECT_THAT(r.err, HasSubstr("keeps running: kbench-client status j-1"));
  std::lock_guard<std::mutex> lock(fake.mu);
  EXPECT_THAT(fake.results_requests, IsEmpty());
}

TEST_F(SubmitTest, SuiteSubmitsOneJobPerEligibleOp) {
  {
    std::lock_guard<std::mutex> lock(fake.mu);
    auto add_op = [&](const std::string& name, std::vector<v1::Dtype> dtypes, v1::Backend backend) {
      auto* op = fake.kernels.add_ops();
      op->set_name(name);
      for (auto d : dtypes) op->add_dtypes(d);
      auto* v = op->add_variants();
      v->set_name(name + "_v");
      v->set_backend(backend);
    };
    add_op("rmsnorm", {v1::DTYPE_F32, v1::DTYPE_BF16}, v1::BACKEND_CPU);
    add_op("fp8_quant", {v1::DTYPE_FP8_E4M3}, v1::BACKEND_CPU);  // None of the dtypes.
    add_op("attention", {v1::DTYPE_BF16}, v1::BACKEND_CUDA);     // No cpu variant.
    add_op("softmax", {v1::DTYPE_BF16}, v1::BACKEND_CPU);
  }
  auto r = Run({"submit", "--suite", "default", "--dtype", "bf16,f32", "--backend", "cpu", "--noise", "0.01",
                "--idempotency-key", "nightly-7"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "j-1\nj-2\n");
  EXPECT_THAT(r.err, HasSubstr("skipping fp8_quant"));
  EXPECT_THAT(r.err, HasSubstr("skipping attention"));
  std::lock_guard<std::mutex> lock(fake.mu);
  ASSERT_EQ(fake.submits.size(), 2u);
  EXPECT_EQ(fake.submits[0].spec().op(), "rmsnorm");
  EXPECT_THAT(fake.submits[0].spec().dtypes(), ElementsAre(v1::DTYPE_BF16, v1::DTYPE_F32));
  EXPECT_EQ(fake.submits[1].spec().op(), "softmax");
  EXPECT_THAT(fake.submits[1].spec().dtypes(), ElementsAre(v1::DTYPE_BF16));
  for (const auto& s : fake.submits) {
    EXPECT_THAT(s.spec().problems(), IsEmpty());  // The worker runs the small preset.
    EXPECT_THAT(s.spec().variants(), IsEmpty());  // Every variant.
    EXPECT_DOUBLE_EQ(s.spec().settings().noise_target(), 0.01);
    EXPECT_EQ(s.spec().selector().backend(), v1::BACKEND_CPU);
  }
  EXPECT_EQ(fake.submits[0].idempotency_key(), "nightly-7/rmsnorm");
  EXPECT_EQ(fake.submits[1].idempotency_key(), "nightly-7/softmax");
}

TEST_F(SubmitTest, SuiteWaitReportsAllJobs) {
  {
    std::lock_guard<std::mutex> lock(fake.mu);
    for (const char* name : {"rmsnorm", "softmax"}) fake.kernels.add_ops()->set_name(name);
  }
  auto r = Run({"submit", "--suite", "default", "--wait", "--format", "json"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("[2/2 jobs] j-2 SUCCEEDED"));
  EXPECT_THAT(r.out, HasSubstr("\"job_id\":\"j-1\""));
  EXPECT_THAT(r.out, HasSubstr("\"job_id\":\"j-2\""));
}

}  // namespace
}  // namespace kbench::client
