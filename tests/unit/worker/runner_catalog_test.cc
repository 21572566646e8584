// The worker's side of "the runner is the only process that loads kernels": through the real
// kbench-runner child (CPU backend), the catalog the worker registers is the one the runner reports
// of its own library, and the planner gets the op's own problem check from the runner, with the same
// verdict and message as where the op's code is in the process (the tests' LocalRunner). A job
// planned against the reported catalog runs in the runner. A runner that died since its last request
// costs the check one more try, not the job. A job's problems cross the pipe once, in the check; a
// runner started after it gets them again.
#include <unistd.h>

#include <filesystem>

#include "api/names.h"
#include "api/shape.h"
#include "core/registry.h"
#include "fake_backend.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_ops.h"
#include "worker/isolation/isolated_backend.h"
#include "worker/plan/catalog.h"
#include "worker/runner/job_runner.h"
#include "worker/runner/local_runner.h"
#include "worker/runner/problem_table.h"

namespace kbench::worker {
namespace {

using ::testing::HasSubstr;

class RunnerCatalogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/runner-catalog-" + std::to_string(::getpid());
    std::filesystem::create_directories(dir_);
    RunnerConfig config{.runner_path = KBENCH_RUNNER_BIN, .backend = "cpu", .log_path = dir_ + "/runner.log"};
    auto b = IsolatedBackend::Create(config, kernels::Backend::kCpu);
    ASSERT_TRUE(b.ok()) << b.status();
    backend_ = std::move(*b);
    v1::Calibration c;  // Fixed ceilings: the roofline needs some, the test needs no calibration run.
    c.set_copy_bytes_per_second(1e10);
    (*c.mutable_peak_flops_per_second())["f32"] = 1e11;
    backend_->set_calibration(c);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // An attention problem its op refuses (d must be 64, 128 or 256), then one it takes.
  static v1::JobSpec AttentionSpec(const std::string& shape) {
    v1::JobSpec spec;
    spec.set_op("attention");
    *spec.add_problems()->mutable_shape() = *api::ParseShape(shape);
    return spec;
  }

  std::string dir_;
  std::unique_ptr<IsolatedBackend> backend_;
};

TEST_F(RunnerCatalogTest, TheRunnerReportsTheCatalogAndVersionOfItsOwnLibrary) {
  const Catalog here(kernels::BuiltinRegistry(), {kernels::Backend::kCpu});
  ASSERT_FALSE(backend_->catalog().empty());
  ASSERT_EQ(backend_->catalog().size(), here.ops().size());
  for (size_t i = 0; i < here.ops().size(); ++i)
    EXPECT_EQ(backend_->catalog()[i].SerializeAsString(), here.ops()[i].SerializeAsString()) << here.ops()[i].name();
  EXPECT_EQ(backend_->library().suite_version(), kernels::SuiteVersion());
}

TEST_F(RunnerCatalogTest, ThePlannerGetsTheOpsOwnCheckFromTheRunner) {
  JobRunner remote(backend_->catalog(), *backend_);
  const absl::StatusOr<JobPlan> refused = remote.Plan(AttentionSpec("1x2x1x16x16x96"));
  ASSERT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument) << refused.status();
  EXPECT_THAT(refused.status().message(), HasSubstr("spec.problems: "));
  EXPECT_THAT(refused.status().message(), HasSubstr("d must be 64, 128 or 256, not 96"));

  // The same verdict, word for word, where the op's code is in this process.
  const Catalog here(kernels::BuiltinRegistry(), {kernels::Backend::kCpu});
  testing::FakeBackend fake;
  JobRunner local(here, fake);
  EXPECT_EQ(local.Plan(AttentionSpec("1x2x1x16x16x96")).status(), refused.status());

  const absl::StatusOr<JobPlan> taken = remote.Plan(AttentionSpec("1x2x1x16x16x64"));
  ASSERT_TRUE(taken.ok()) << taken.status();
  EXPECT_FALSE(taken->items.empty());
}

TEST_F(RunnerCatalogTest, AJobPlannedAgainstTheReportedCatalogRunsInTheRunner) {
  JobRunner remote(backend_->catalog(), *backend_);
  v1::JobSpec spec;
  spec.set_op("vector_add");
  *spec.add_problems()->mutable_shape() = *api::ParseShape("4096");
  spec.add_dtypes(v1::DTYPE_F32);
  spec.mutable_settings()->set_warmup_ns(1'000'000);
  spec.mutable_settings()->set_min_time_ns(1'000'000);
  spec.mutable_settings()->set_max_time_ns(50'000'000);
  spec.mutable_settings()->set_min_samples(3);
  spec.mutable_settings()->set_max_samples(5);
  std::vector<v1::Result> results;
  CancelFlag never;
  ASSERT_TRUE(remote.Run(spec, {.job_id = "j", .worker_id = "w"}, never, [&](const v1::RunJobEvent& e) {
    if (e.has_result()) results.push_back(e.result());
  }).ok());
  ASSERT_FALSE(results.empty());
  for (const v1::Result& r : results) {
    EXPECT_EQ(r.status(), v1::OK) << r.variant() << ": " << r.status_message();
    EXPECT_EQ(r.device().uuid(), backend_->device().uuid());
  }
}

// A device whose runner child is found dead by the first `deaths` calls (UNAVAILABLE, as
// RunnerProcess says it), then answers as a runner does (here: in the process, over the test ops).
class DyingRunner : public testing::FakeBackend, public RunnerChannel {
 public:
  DyingRunner(const Catalog& catalog, int deaths) : deaths_(deaths), local_(catalog, *this) {}
  absl::StatusOr<runner::RunnerResponse> CallRunner(const runner::RunnerRequest& request,
                                                    std::chrono::milliseconds timeout) override {
    if (++calls <= deaths_) return absl::UnavailableError("runner killed by signal 9 (Killed)");
    return local_.CallRunner(request, timeout);
  }
  RunnerChannel* runner_channel() override { return this; }
  int calls = 0;

 private:
  const int deaths_;
  LocalRunner local_;
};

v1::JobSpec ScaleSpec(const std::string& shape) {
  v1::JobSpec spec;
  spec.set_op("scale");
  *spec.add_problems()->mutable_shape() = *api::ParseShape(shape);
  spec.add_dtypes(v1::DTYPE_F32);
  return spec;
}

TEST(RunnerCheckTest, ARunnerFoundDeadIsAskedAgainNotTheJobFailed) {
  const Catalog catalog(testing::TestRegistry(), {kernels::Backend::kCpu});
  DyingRunner once(catalog, 1);
  JobRunner runner(catalog.ops(), once);
  const absl::StatusOr<JobPlan> refused = runner.Plan(ScaleSpec("13"));
  EXPECT_EQ(once.calls, 2);
  ASSERT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument) << refused.status();
  EXPECT_THAT(refused.status().message(), HasSubstr("n must not be 13"));

  DyingRunner always(catalog, 1000);
  JobRunner doomed(catalog.ops(), always);
  const absl::StatusOr<JobPlan> failed = doomed.Plan(ScaleSpec("12"));
  EXPECT_EQ(always.calls, 3);  // Two more tries, then the job is refused: the device cannot run it.
  ASSERT_EQ(failed.status().code(), absl::StatusCode::kUnavailable) << failed.status();
  EXPECT_THAT(failed.status().message(), HasSubstr("could not check the problems: runner killed"));
}

// A device whose runner is in this process and records every request; Restart() replaces it with a
// fresh one (holding no problem tables), as a runner started after a fault is.
class RecordingRunner : public testing::FakeBackend, public RunnerChannel {
 public:
  explicit RecordingRunner(const Catalog& catalog) : catalog_(catalog) { Restart(); }
  absl::StatusOr<runner::RunnerResponse> CallRunner(const runner::RunnerRequest& request,
                                                    std::chrono::milliseconds timeout) override {
    if (request.kind() == runner::RunnerRequest::MEASURE && measures++ == restart_before_measure) Restart();
    requests.push_back(request);
    return local_->CallRunner(request, timeout);
  }
  RunnerChannel* runner_channel() override { return this; }
  void Restart() { local_ = std::make_unique<LocalRunner>(catalog_, *this); }

  std::vector<runner::RunnerRequest> requests;
  int restart_before_measure = -1;  // 0-based count of MEASUREs

 private:
  const Catalog& catalog_;
  std::unique_ptr<LocalRunner> local_;
  int measures = 0;
};

std::vector<v1::Result> RunTwoByTwo(JobRunner& runner) {
  v1::JobSpec spec = ScaleSpec("64");
  *spec.add_problems()->mutable_shape() = *api::ParseShape("7");
  spec.add_variants("cpu_good");
  spec.add_variants("cpu_f32");
  *spec.mutable_settings() = testing::TinySettings();
  std::vector<v1::Result> results;
  CancelFlag never;
  const absl::Status s = runner.Run(spec, {.job_id = "j", .worker_id = "w"}, never, [&](const v1::RunJobEvent& e) {
    if (e.has_result()) results.push_back(e.result());
  });
  EXPECT_TRUE(s.ok()) << s;
  return results;
}

const std::vector<std::string> kTwoByTwo = {"cpu_good 64 f32", "cpu_f32 64 f32", "cpu_good 7 f32", "cpu_f32 7 f32"};

TEST(RunnerProblemTableTest, AJobsProblemsCrossThePipeOnce) {
  const Catalog catalog(testing::TestRegistry(), {kernels::Backend::kCpu});
  RecordingRunner device(catalog);
  JobRunner runner(catalog.ops(), device);
  const std::vector<v1::Result> results = RunTwoByTwo(runner);

  ASSERT_EQ(device.requests.size(), 5u);  // one check, four measures
  const runner::RunnerRequest& check = device.requests[0];
  ASSERT_EQ(check.kind(), runner::RunnerRequest::CHECK_PROBLEMS);
  ASSERT_EQ(check.problems_size(), 2);
  EXPECT_NE(check.problem_table(), 0u);
  for (size_t i = 1; i < device.requests.size(); ++i) {
    const runner::RunnerRequest& m = device.requests[i];
    ASSERT_EQ(m.kind(), runner::RunnerRequest::MEASURE);
    EXPECT_FALSE(m.has_problem()) << "measure " << i << " carried its problem";
    EXPECT_EQ(m.problem_table(), check.problem_table());
    EXPECT_EQ(m.problem_index(), i <= 2 ? 0 : 1);
  }
  EXPECT_EQ(device.measured, kTwoByTwo);  // the runner measured the problems the table holds
  ASSERT_EQ(results.size(), 4u);
  for (const v1::Result& r : results) EXPECT_EQ(r.status(), v1::OK) << r.status_message();
  EXPECT_EQ(api::ShapeLabel(results[2].problem()), "7");
}

TEST(RunnerProblemTableTest, ARunnerStartedAfterTheCheckGetsTheProblemsAgain) {
  const Catalog catalog(testing::TestRegistry(), {kernels::Backend::kCpu});
  RecordingRunner device(catalog);
  device.restart_before_measure = 2;
  JobRunner runner(catalog.ops(), device);
  const std::vector<v1::Result> results = RunTwoByTwo(runner);

  std::vector<const runner::RunnerRequest*> checks;
  for (const runner::RunnerRequest& r : device.requests)
    if (r.kind() == runner::RunnerRequest::CHECK_PROBLEMS) checks.push_back(&r);
  ASSERT_EQ(checks.size(), 2u);
  EXPECT_EQ(checks[1]->problem_table(), checks[0]->problem_table());
  EXPECT_EQ(checks[1]->problems_size(), 2);
  EXPECT_EQ(device.requests.size(), 7u);  // check, 2 measures, refused measure, check, 2 measures
  EXPECT_EQ(device.measured, kTwoByTwo);
  ASSERT_EQ(results.size(), 4u);
  for (const v1::Result& r : results) EXPECT_EQ(r.status(), v1::OK) << r.status_message();
}

TEST(RunnerProblemTableTest, AnUnknownTableOrIndexIsRefusedNotGuessed) {
  ProblemTable table;
  runner::RunnerRequest check;
  check.set_problem_table(42);
  *check.add_problems() = *api::ParseShape("64");
  table.Keep(check);
  runner::RunnerRequest m;
  m.set_kind(runner::RunnerRequest::MEASURE);
  m.set_problem_table(42);
  m.set_problem_index(0);
  runner::RunnerResponse resp;
  ASSERT_TRUE(table.Resolve(m, &resp));
  EXPECT_EQ(api::ShapeLabel(m.problem()), "64");
  for (auto [id, index] : {std::pair<uint64_t, int>{42, 1}, {42, -1}, {43, 0}}) {
    runner::RunnerRequest bad = m;
    bad.clear_problem();
    bad.set_problem_table(id);
    bad.set_problem_index(index);
    runner::RunnerResponse r;
    EXPECT_FALSE(table.Resolve(bad, &r));
    EXPECT_TRUE(r.problem_table_unknown());
    EXPECT_FALSE(bad.has_problem());
  }
  // The oldest of more than kTablesKept tables is dropped.
  for (uint64_t id = 100; id < 100 + ProblemTable::kTablesKept; ++id) {
    check.set_problem_table(id);
    table.Keep(check);
  }
  runner::RunnerResponse dropped;
  EXPECT_FALSE(table.Resolve(m, &dropped));
  EXPECT_TRUE(dropped.problem_table_unknown());
}

}  // namespace
}  // namespace kbench::worker
