// The job runner: validation, expansion order, events, cancellation, result fields.
#include "worker/runner/job_runner.h"

#include "api/shape.h"
#include "fake_backend.h"
#include "gtest/gtest.h"
#include "test_ops.h"
#include "worker/cpu/cpu_backend.h"

namespace kbench::worker {
namespace {

class JobRunnerTest : public ::testing::Test {
 protected:
  JobRunnerTest() : catalog_(testing::TestRegistry(), {kernels::Backend::kCpu}), runner_(catalog_, backend_) {}

  static v1::JobSpec Spec(std::vector<std::string> variants, std::vector<std::string> presets) {
    v1::JobSpec spec;
    spec.set_op("scale");
    for (auto& v : variants) spec.add_variants(v);
    for (auto& p : presets) spec.add_problems()->set_preset(p);
    return spec;
  }

  absl::Status Run(const v1::JobSpec& spec, const CancelFlag& cancel = {}) {
    return runner_.Run(spec, {.job_id = "job-1", .worker_id = "w-1", .attempt = 2}, cancel,
                       [&](const v1::RunJobEvent& e) { events_.push_back(e); });
  }

  Catalog catalog_;
  testing::FakeBackend backend_;
  JobRunner runner_;
  std::vector<v1::RunJobEvent> events_;
};

TEST_F(JobRunnerTest, ExpandsProblemsThenVariantsInStableOrder) {
  v1::JobSpec spec = Spec({"cpu_f32", "cpu_good"}, {"edge"});
  spec.add_dtypes(v1::DTYPE_F32);
  spec.add_dtypes(v1::DTYPE_BF16);
  *spec.add_problems()->mutable_shape() = *api::ParseShape("100");
  (*spec.mutable_labels())["git_sha"] = "abc";
  ASSERT_TRUE(Run(spec).ok());
  // Problems: edge {1, 7} x {f32, bf16}, then 100 x {f32, bf16}; variants in catalog order.
  const std::vector<std::string> expected = {
      "cpu_good 1 f32",   "cpu_f32 1 f32",   "cpu_good 1 bf16",   "cpu_f32 1 bf16",
      "cpu_good 7 f32",   "cpu_f32 7 f32",   "cpu_good 7 bf16",   "cpu_f32 7 bf16",
      "cpu_good 100 f32", "cpu_f32 100 f32", "cpu_good 100 bf16", "cpu_f32 100 bf16"};
  EXPECT_EQ(backend_.measured, expected);
  ASSERT_EQ(events_.size(), 2 * expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    const v1::RunJobEvent& progress = events_[2 * i];
    const v1::RunJobEvent& result = events_[2 * i + 1];
    ASSERT_TRUE(progress.has_progress());
    EXPECT_EQ(progress.progress().results_done(), static_cast<int>(i));
    EXPECT_EQ(progress.progress().results_total(), 12);
    EXPECT_EQ(progress.progress().current(), "scale " + expected[i]);
    ASSERT_TRUE(result.has_result());
    const v1::Result& r = result.result();
    EXPECT_EQ(r.index(), static_cast<int>(i));
    EXPECT_EQ(r.job_id(), "job-1");
    EXPECT_EQ(r.worker_id(), "w-1");
    EXPECT_EQ(r.attempt(), 2);
    EXPECT_EQ(r.labels().at("git_sha"), "abc");
    EXPECT_GT(r.finished_unix_ms(), 0);
    EXPECT_EQ(r.status(), v1::OK);
  }
  // Results keep the preset the problem came from.
  EXPECT_EQ(events_[1].result().problem().preset(), "edge");
  EXPECT_EQ(events_[17].result().problem().preset(), "");
  EXPECT_EQ(events_[17].result().problem().dims(0).name(), "n");
}

TEST_F(JobRunnerTest, EmptySpecRunsEveryVariantOnTheSmallPresetWithDefaults) {
  v1::JobSpec spec;
  spec.set_op("scale");
  ASSERT_TRUE(Run(spec).ok());
  // small {64} x {f32, bf16} x 6 CPU variants.
  EXPECT_EQ(backend_.measured.size(), 12u);
  EXPECT_EQ(backend_.last_settings.min_samples(), 10);
  EXPECT_EQ(backend_.last_settings.cache_mode(), v1::COLD);
}

TEST_F(JobRunnerTest, CancellationTurnsTheRestIntoCancelledResults) {
  CancelFlag cancel;
  backend_.on_measure = [&](size_t count) {
    if (count == 2) cancel.Cancel();
  };
  ASSERT_TRUE(Run(Spec({"cpu_good"}, {"edge", "small"}), cancel).ok());
  // The items: 1, 7, 64 in f32 and bf16 each: 6. Two ran, four are cancelled.
  EXPECT_EQ(backend_.measured.size(), 2u);
  std::vector<v1::Result> results;
  int progress = 0;
  for (const auto& e : events_) {
    if (e.has_result()) results.push_back(e.result());
    else ++progress;
  }
  EXPECT_EQ(progress, 2);
  ASSERT_EQ(results.size(), 6u);
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(results[i].index(), i);
    EXPECT_EQ(results[i].status(), i < 2 ? v1::OK : v1::CANCELLED);
    EXPECT_EQ(results[i].variant(), "cpu_good");
    EXPECT_EQ(results[i].job_id(), "job-1");
    EXPECT_EQ(results[i].problem().dims_size(), 1);
  }
}

void ExpectInvalid(const absl::Status& s, const std::string& field) {
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_NE(s.message().find(field), std::string::npos) << s;
}

TEST_F(JobRunnerTest, InvalidSpecsNameTheFieldAndRunNothing) {
  ExpectInvalid(Run(Spec({"cpu_good", "cpu_nope"}, {})), "spec.variants[1]");
  ExpectInvalid(Run(Spec({"cuda_good"}, {})), "spec.variants[0]");  // Not on a CPU worker.
  ExpectInvalid(Run(Spec({}, {"huge"})), "spec.problems[0].preset");
  v1::JobSpec unknown_op;
  unknown_op.set_op("gemm");
  ExpectInvalid(Run(unknown_op), "spec.op");
  v1::JobSpec no_op;
  ExpectInvalid(Run(no_op), "spec.op");
  v1::JobSpec thirteen = Spec({}, {});
  *thirteen.add_problems()->mutable_shape() = *api::ParseShape("13");
  ExpectInvalid(Run(thirteen), "n must not be 13");
  v1::JobSpec too_big = Spec({}, {});
  *too_big.add_problems()->mutable_shape() = *api::ParseShape("1000000");
  backend_.memory_bytes = 1000;
  ExpectInvalid(Run(too_big), "spec.problems");
  EXPECT_TRUE(events_.empty());
  EXPECT_TRUE(backend_.measured.empty());
}

TEST(JobRunnerCpu, TinyJobOnTheCpuBackend) {
  const Catalog catalog(testing::TestRegistry(), {kernels::Backend::kCpu});
  CpuBackend backend({}, testing::TestHost());
  JobRunner runner(catalog, backend);
  v1::JobSpec spec;
  spec.set_op("scale");
  spec.add_variants("cpu_good");
  spec.add_variants("cpu_wrong");
  spec.add_dtypes(v1::DTYPE_F32);
  *spec.mutable_settings() = testing::TinySettings();
  std::vector<v1::Result> results;
  ASSERT_TRUE(runner
                  .Run(spec, {.job_id = "j"}, CancelFlag(),
                       [&](const v1::RunJobEvent& e) {
                         if (e.has_result()) results.push_back(e.result());
                       })
                  .ok());
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].status(), v1::OK);
  EXPECT_GT(results[0].timing().median_ns(), 0);
  EXPECT_EQ(results[1].status(), v1::INCORRECT);
  EXPECT_EQ(results[1].problem().preset(), "small");
}

}  // namespace
}  // namespace kbench::worker
