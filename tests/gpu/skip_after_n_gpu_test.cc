// The check after timing on a GPU, through the job runner and a real kbench-runner child (the path
// a worker's jobs take): kernels/testing/skip_after_n.h's variants, which pass the check before
// timing and then skip their work, come back INCORRECT with a message saying they failed after
// timing: cuda_quits_after_n on its timed launches (COLD and HOT), cuda_quits_in_graph on the HOT
// samples' graph replay only (COLD, where no graph runs, it is OK). cuda_ok in the same jobs is OK.
// The runner is found beside this binary or in ../bin (build tree and bundle), or at $KBENCH_RUNNER;
// the test kernel library (the job's plugin) beside this binary or at $KBENCH_TEST_KERNELS.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>

#include <fstream>

#include "api/sha256.h"
#include "api/shape.h"
#include "core/registry.h"
#include "gpu_presence.h"
#include "gtest/gtest.h"
#include "worker/isolation/isolated_backend.h"
#include "worker/plan/catalog.h"
#include "worker/plugin/plugin_libraries.h"
#include "worker/runner/job_runner.h"

namespace kbench::worker {
namespace {

std::string TestKernelsPath() {
  if (const char* p = std::getenv("KBENCH_TEST_KERNELS"); p && *p) return p;
  const auto self = std::filesystem::read_symlink("/proc/self/exe").parent_path();
  for (const auto& candidate : {self / "libkbench_test_kernels.so", self / ".." / "lib" / "libkbench_test_kernels.so",
                                self / ".." / "kernels" / "testing" / "libkbench_test_kernels.so"})
    if (std::filesystem::exists(candidate)) return candidate.string();
  return "";
}

std::string RunnerPath() {
  if (const char* p = std::getenv("KBENCH_RUNNER"); p && *p) return p;
  const auto self = std::filesystem::read_symlink("/proc/self/exe").parent_path();
  for (const auto& candidate : {self / "kbench-runner", self / ".." / "bin" / "kbench-runner"})
    if (std::filesystem::exists(candidate)) return candidate.string();
  return "";
}

// A fresh runner per test: the skipping variants count their calls per process.
class SkipAfterNGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    KBENCH_REQUIRE_GPU_OR_SKIP();
    const std::string runner = RunnerPath();
    test_kernels_ = TestKernelsPath();
    ASSERT_FALSE(test_kernels_.empty()) << "libkbench_test_kernels.so not found (set KBENCH_TEST_KERNELS)";
    ASSERT_FALSE(runner.empty()) << "kbench-runner not found beside the test (set KBENCH_RUNNER)";
    auto backend = IsolatedBackend::Create({.runner_path = runner,
                                            .backend = "cuda",
                                            .device = 0,
                                            .log_path = "/tmp/kbench-skip-after-n-gpu-test-runner.log",
                                            .quick_calibration = true},
                                           kernels::Backend::kCuda);
    ASSERT_TRUE(backend.ok()) << "the CUDA runner did not start: " << backend.status();
    backend_ = std::move(*backend);
    // The test-only op comes with the job, as its plugin, fetched from the file by its hash.
    dir_ = ::testing::TempDir() + "/skip-after-n-" + std::to_string(::getpid());
    std::filesystem::create_directories(dir_);
    cache_ = std::make_unique<PluginCache>(dir_ + "/cache", int64_t{256} << 20);
    libraries_ = std::make_unique<RunnerPluginLibraries>(*backend_, *cache_, [this](const std::string&, const auto& write) {
      std::ifstream in(test_kernels_, std::ios::binary);
      std::string bytes((std::istreambuf_iterator<char>(in)), {});
      return write(bytes);
    });
    catalog_ = std::make_unique<Catalog>(kernels::BuiltinRegistry(), std::set<kernels::Backend>{kernels::Backend::kCuda});
    runner_ = std::make_unique<JobRunner>(*catalog_, *backend_);
  }

  // Variant -> result of one job on fault_injection N=1048576 f32 with the default 3 trials.
  std::map<std::string, v1::Result> Run(v1::CacheMode mode, const std::vector<std::string>& variants) {
    v1::JobSpec spec;
    spec.set_op("fault_injection");
    spec.set_plugin_sha256(*api::Sha256OfFile(test_kernels_));
    *spec.add_problems()->mutable_shape() = *api::ParseShape("N=1048576");
    spec.add_dtypes(v1::DTYPE_F32);
    for (const auto& v : variants) spec.add_variants(v);
    auto* s = spec.mutable_settings();
    s->set_warmup_ns(5'000'000);
    s->set_min_time_ns(10'000'000);
    s->set_max_time_ns(100'000'000);
    s->set_timeout_ns(10'000'000'000);
    s->set_cache_mode(mode);
    s->set_hot_batch(8);
    std::map<std::string, v1::Result> results;
    absl::StatusOr<JobPlan> plan = runner_->Plan(spec, libraries_.get());
    EXPECT_TRUE(plan.ok()) << plan.status();
    if (!plan.ok()) return results;
    CancelFlag never;
    runner_->Run(*plan, {.job_id = "j", .worker_id = "w", .attempt = 1}, never, [&](const v1::RunJobEvent& e) {
      if (e.has_result()) results[e.result().variant()] = e.result();
    });
    return results;
  }

  static void ExpectIncorrectAfterTiming(const v1::Result& r, const std::string& prefix) {
    EXPECT_EQ(r.status(), v1::INCORRECT) << r.variant() << ": " << r.status_message();
    EXPECT_EQ(r.status_message().rfind(prefix, 0), 0u) << r.variant() << ": " << r.status_message();
    EXPECT_FALSE(r.correctness().passed());
    EXPECT_GT(r.correctness().mismatches() + r.correctness().non_finite(), 0);
    EXPECT_FALSE(r.has_timing());
  }

  std::string test_kernels_, dir_;
  std::unique_ptr<IsolatedBackend> backend_;
  std::unique_ptr<PluginCache> cache_;
  std::unique_ptr<RunnerPluginLibraries> libraries_;
  std::unique_ptr<Catalog> catalog_;
  std::unique_ptr<JobRunner> runner_;
};

TEST_F(SkipAfterNGpuTest, QuitsAfterNIsIncorrectAfterTimingCold) {
  auto results = Run(v1::COLD, {"cuda_ok", "cuda_quits_after_n"});
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results["cuda_ok"].status(), v1::OK) << results["cuda_ok"].status_message();
  ExpectIncorrectAfterTiming(results["cuda_quits_after_n"], "after timing: ");
}

TEST_F(SkipAfterNGpuTest, QuitsAfterNIsIncorrectAfterTimingHot) {
  auto results = Run(v1::HOT, {"cuda_quits_after_n"});
  ASSERT_EQ(results.size(), 1u);
  ExpectIncorrectAfterTiming(results["cuda_quits_after_n"], "after timing: ");
}

TEST_F(SkipAfterNGpuTest, SkipInTheGraphIsCaughtByTheReplayCheck) {
  auto hot = Run(v1::HOT, {"cuda_ok", "cuda_quits_in_graph"});
  ASSERT_EQ(hot.size(), 2u);
  EXPECT_EQ(hot["cuda_ok"].status(), v1::OK) << hot["cuda_ok"].status_message();
  ExpectIncorrectAfterTiming(hot["cuda_quits_in_graph"], "after timing (graph replay): ");
  // Launched, it copies: COLD samples are launches, so it is correct there.
  auto cold = Run(v1::COLD, {"cuda_quits_in_graph"});
  ASSERT_EQ(cold.size(), 1u);
  EXPECT_EQ(cold["cuda_quits_in_graph"].status(), v1::OK) << cold["cuda_quits_in_graph"].status_message();
}

}  // namespace
}  // namespace kbench::worker
