// The worker's side of "the runner is the only process that loads kernels": through the real
// kbench-runner child (CPU backend), the catalog the worker registers is the one the runner reports
// of its own library, and the planner gets the op's own problem check from the runner, with the same
// verdict and message as where the op's code is in the process (the tests' LocalRunner). A job
// planned against the reported catalog runs in the runner. A runner that died since its last request
// costs the check one more try, not the job.
#include <unistd.h>

#include <filesystem>

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

}  // namespace
}  // namespace kbench::worker
