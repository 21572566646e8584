// Plugin and A/B jobs through the real kbench-runner child (CPU backend): a plugin's variant that
// crashes or hangs costs its own result and the job goes on; an A/B job of two plugin builds finds
// the slower head and pins a crash on the side that caused it; an incompatible plugin is refused
// at planning, before anything runs. The test process itself never loads a plugin.
#include <filesystem>
#include <fstream>
#include <map>

#include "api/sha256.h"
#include "core/registry.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "worker/isolation/isolated_backend.h"
#include "worker/plugin/plugin_libraries.h"
#include "worker/runner/job_runner.h"

namespace kbench::worker {
namespace {

using ::testing::HasSubstr;

class PluginRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/plugin-runner-" + std::to_string(::getpid());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    RunnerConfig config{.runner_path = KBENCH_RUNNER_BIN, .backend = "cpu", .log_path = dir_ + "/runner.log"};
    auto b = IsolatedBackend::Create(config, kernels::Backend::kCpu);
    ASSERT_TRUE(b.ok()) << b.status();
    backend_ = std::move(*b);
    v1::Calibration c;  // Fixed ceilings: the roofline needs some, the test needs no calibration run.
    c.set_copy_bytes_per_second(1e10);
    (*c.mutable_peak_flops_per_second())["f32"] = 1e11;
    backend_->set_calibration(c);
    cache_ = std::make_unique<PluginCache>(dir_ + "/cache", int64_t{64} << 20);
    libraries_ = std::make_unique<RunnerPluginLibraries>(*backend_, *cache_,
                                                         [this](const std::string& sha, const auto& write) {
                                                           std::ifstream in(files_.at(sha), std::ios::binary);
                                                           std::string bytes((std::istreambuf_iterator<char>(in)), {});
                                                           return write(bytes);
                                                         });
    jobs_ = std::make_unique<JobRunner>(catalog_, *backend_);
  }

  // Makes a plugin file fetchable by its hash; returns the hash.
  std::string Offer(const std::string& path) {
    const std::string sha = *api::Sha256OfFile(path);
    files_[sha] = path;
    return sha;
  }

  static v1::MeasurementSettings Quick() {
    v1::MeasurementSettings s;
    s.set_warmup_ns(5'000'000);
    s.set_min_time_ns(20'000'000);
    s.set_max_time_ns(300'000'000);
    s.set_min_samples(12);
    s.set_timeout_ns(3'000'000'000);
    return s;
  }

  std::vector<v1::Result> RunJob(const v1::JobSpec& spec, absl::Status* plan_status = nullptr) {
    absl::StatusOr<JobPlan> plan = jobs_->Plan(spec, libraries_.get());
    if (plan_status) *plan_status = plan.status();
    if (!plan.ok()) return {};
    std::vector<v1::Result> results;
    CancelFlag never;
    jobs_->Run(*plan, {.job_id = "j-test", .worker_id = "w-test"}, never, [&](const v1::RunJobEvent& e) {
      if (e.has_result()) results.push_back(e.result());
    });
    return results;
  }

  std::string dir_;
  const Catalog catalog_{kernels::BuiltinRegistry(), {kernels::Backend::kCpu}};
  std::unique_ptr<IsolatedBackend> backend_;
  std::unique_ptr<PluginCache> cache_;
  std::unique_ptr<RunnerPluginLibraries> libraries_;
  std::unique_ptr<JobRunner> jobs_;
  std::map<std::string, std::string> files_;
};

TEST_F(PluginRunnerTest, CrashAndHangInAPluginCostOneResultEach) {
  v1::JobSpec spec;
  spec.set_op("fault_injection");
  spec.set_plugin_sha256(Offer(KBENCH_TEST_PLUGIN_BASE));
  *spec.mutable_settings() = Quick();
  spec.mutable_settings()->set_timeout_ns(2'000'000'000);
  const std::vector<v1::Result> results = RunJob(spec);
  std::map<std::string, v1::Result> by_variant;
  for (const auto& r : results) by_variant[r.variant()] = r;
  ASSERT_EQ(results.size(), 4u);
  EXPECT_EQ(by_variant["cpu_wrong"].status(), v1::INCORRECT);
  EXPECT_EQ(by_variant["cpu_segfault"].status(), v1::RUNTIME_ERROR);
  EXPECT_THAT(by_variant["cpu_segfault"].status_message(), HasSubstr("signal 11"));
  // The runner's fault report names the file and offset of every frame on the faulting stack
  // (the plugin's own frame is a tail call into raise here, so it is the runner's that show).
  EXPECT_THAT(by_variant["cpu_segfault"].status_message(), HasSubstr("frames:"));
  EXPECT_THAT(by_variant["cpu_segfault"].status_message(), HasSubstr("kbench-runner+0x"));
  EXPECT_EQ(by_variant["cpu_hang"].status(), v1::TIMEOUT);
  EXPECT_EQ(by_variant["cpu_ok"].status(), v1::OK) << by_variant["cpu_ok"].status_message();
  for (const auto& r : results) {
    EXPECT_EQ(r.plugin_sha256(), spec.plugin_sha256());
    EXPECT_EQ(r.ab_side(), v1::AB_SIDE_UNSPECIFIED);
    EXPECT_EQ(r.job_id(), "j-test");
  }
  EXPECT_EQ(backend_->runner_starts(), 3);  // The first, then one fresh runner after the crash and one after the hang.
}

TEST_F(PluginRunnerTest, AbJobFindsTheSlowerHeadAndPinsACrashOnItsSide) {
  v1::JobSpec spec;
  spec.set_op("plugin_probe");
  spec.mutable_ab()->set_base_plugin_sha256(Offer(KBENCH_TEST_PLUGIN_BASE));
  spec.mutable_ab()->set_head_plugin_sha256(Offer(KBENCH_TEST_PLUGIN_HEAD));
  spec.mutable_ab()->set_rounds(4);
  spec.add_variants("cpu_copy");
  spec.add_variants("cpu_fragile");
  *spec.mutable_settings() = Quick();
  absl::Status planned;
  const std::vector<v1::Result> results = RunJob(spec, &planned);
  ASSERT_TRUE(planned.ok()) << planned;
  ASSERT_EQ(results.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(results[i].index(), i);
    EXPECT_EQ(results[i].ab_pair(), i / 2);
    EXPECT_EQ(results[i].ab_side(), i % 2 == 0 ? v1::AB_BASE : v1::AB_HEAD);
    EXPECT_EQ(results[i].plugin_sha256(),
              i % 2 == 0 ? spec.ab().base_plugin_sha256() : spec.ab().head_plugin_sha256());
  }
  // cpu_copy: the head does eight dependent multiply-adds per element before copying.
  ASSERT_EQ(results[0].status(), v1::OK) << results[0].status_message();
  ASSERT_EQ(results[1].status(), v1::OK) << results[1].status_message();
  EXPECT_GE(results[0].timing().count(), 12);
  EXPECT_GT(results[1].timing().median_ns(), 2.5 * results[0].timing().median_ns());
  // cpu_fragile: the head crashes the runner; measured alone, the base is fine.
  EXPECT_EQ(results[2].variant(), "cpu_fragile");
  EXPECT_EQ(results[2].status(), v1::OK) << results[2].status_message();
  EXPECT_EQ(results[3].status(), v1::RUNTIME_ERROR);
}

TEST_F(PluginRunnerTest, IncompatiblePluginIsRefusedAtPlanning) {
  v1::JobSpec spec;
  spec.set_op("plugin_probe");
  spec.set_plugin_sha256(Offer(KBENCH_TEST_PLUGIN_ABI99));
  absl::Status planned;
  RunJob(spec, &planned);
  EXPECT_EQ(planned.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(planned.message(), HasSubstr("plugin ABI version 99 is not this runner's version 1"));

  v1::JobSpec unknown_op;
  unknown_op.set_op("no_such_op");
  unknown_op.set_plugin_sha256(Offer(KBENCH_TEST_PLUGIN_BASE));
  RunJob(unknown_op, &planned);
  EXPECT_EQ(planned.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(planned.message(), HasSubstr("spec.op: op 'no_such_op' is not in plugin"));
}

}  // namespace
}  // namespace kbench::worker
