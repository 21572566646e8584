// The A/B measurement on a scripted backend: blocks alternate ABBA, each side's budget is split over
// the rounds, samples are pooled with fresh statistics, and a side that fails stops alone.
#include "worker/plugin/ab_measure.h"

#include <map>

#include "gtest/gtest.h"
#include "worker/runner/convert.h"
#include "worker/plan/settings.h"

namespace kbench::worker {
namespace {

// Answers each block with samples at the variant's scripted time; records the order of calls.
class ScriptedBackend : public Backend {
 public:
  kernels::Backend kind() const override { return kernels::Backend::kCpu; }
  v1::DeviceInfo device() const override { return {}; }
  absl::StatusOr<v1::Calibration> Calibrate() override { return v1::Calibration(); }
  std::optional<v1::DatasheetPeaks> datasheet() const override { return std::nullopt; }
  v1::Result MeasureOne(const kernels::OpDef& op, const kernels::Variant& variant, const kernels::Problem& problem,
                        const v1::MeasurementSettings& settings, const CancelFlag&) override {
    calls.push_back(variant.name);
    block_settings.push_back(settings);
    v1::Result r;
    r.set_op(op.name);
    r.set_variant(variant.name);
    *r.mutable_problem() = ToProtoProblem(problem);
    if (fail_on_call.count(variant.name) && --fail_on_call[variant.name] == 0) {
      r.set_status(v1::INCORRECT);
      return r;
    }
    r.set_status(v1::OK);
    r.mutable_correctness()->set_passed(true);
    r.mutable_correctness()->set_trials(settings.correctness_trials());
    for (int i = 0; i < settings.min_samples(); ++i) r.mutable_timing()->add_samples_ns(time_ns[variant.name] + i);
    r.mutable_timing()->set_warmup_ns(settings.warmup_ns());
    return r;
  }
  std::vector<std::string> calls;
  std::vector<v1::MeasurementSettings> block_settings;
  std::map<std::string, double> time_ns;
  std::map<std::string, int> fail_on_call;  // Fails the n-th block of that variant.
};

struct Fixture {
  kernels::OpDef op;
  Fixture() {
    op.name = "probe";
    op.dims = {"N"};
    op.cost = [](const kernels::Problem& p) { return kernels::Cost{.bytes_read = 4.0 * p.dim("N"), .bytes_written = 4.0 * p.dim("N")}; };
    for (const char* name : {"a", "b"}) {
      kernels::Variant v;
      v.name = name;
      op.variants.push_back(v);
    }
  }
};

TEST(AbMeasure, AlternatesAbbaAndPoolsEachSide) {
  Fixture f;
  ScriptedBackend backend;
  backend.time_ns = {{"a", 1000}, {"b", 2000}};
  v1::MeasurementSettings s;
  s.set_min_samples(12);
  s = WithDefaults(s);
  CancelFlag never;
  auto [base, head] = MeasureAb(backend, {&f.op, &f.op.variants[0]}, {&f.op, &f.op.variants[1]},
                                kernels::MakeProblem(f.op, {1024}), s, 4, never);
  EXPECT_EQ(backend.calls, (std::vector<std::string>{"a", "b", "b", "a", "a", "b", "b", "a"}));
  ASSERT_EQ(base.status(), v1::OK);
  ASSERT_EQ(head.status(), v1::OK);
  EXPECT_EQ(base.timing().count(), 12);  // 4 blocks of 3 samples
  // The blocks stay visible: each is one run of the compare's verdict.
  const auto& blocks = base.timing().block_sample_counts();
  EXPECT_EQ(std::vector<int32_t>(blocks.begin(), blocks.end()), std::vector<int32_t>(4, 3));
  EXPECT_EQ(head.timing().samples_ns_size(), 12);
  EXPECT_EQ(base.timing().median_ns(), 1001);
  EXPECT_EQ(head.timing().median_ns(), 2001);
  EXPECT_EQ(base.variant(), "a");
  EXPECT_EQ(head.variant(), "b");
  EXPECT_GT(base.roofline().achieved_bytes_per_second(), 0);  // Recomputed from the pooled median.
  // The first block of each side warms up fully and runs every correctness trial; later ones less.
  EXPECT_EQ(backend.block_settings[0].warmup_ns(), s.warmup_ns());
  EXPECT_EQ(backend.block_settings[0].correctness_trials(), s.correctness_trials());
  EXPECT_LT(backend.block_settings[2].warmup_ns(), s.warmup_ns());
  EXPECT_EQ(backend.block_settings[2].correctness_trials(), 1);
  EXPECT_EQ(backend.block_settings[0].max_time_ns(), s.max_time_ns() / 4);
}

TEST(AbMeasure, AFailingSideStopsAloneAndDecidesItsResult) {
  Fixture f;
  ScriptedBackend backend;
  backend.time_ns = {{"a", 1000}, {"b", 1000}};
  backend.fail_on_call = {{"b", 2}};  // The head's second block is wrong.
  CancelFlag never;
  auto [base, head] = MeasureAb(backend, {&f.op, &f.op.variants[0]}, {&f.op, &f.op.variants[1]},
                                kernels::MakeProblem(f.op, {1024}), WithDefaults({}), 4, never);
  EXPECT_EQ(base.status(), v1::OK);
  EXPECT_EQ(head.status(), v1::INCORRECT);
  EXPECT_EQ(std::count(backend.calls.begin(), backend.calls.end(), "b"), 2);
  EXPECT_EQ(std::count(backend.calls.begin(), backend.calls.end(), "a"), 4);
}

TEST(AbMeasure, BlockSettingsSplitTheBudget) {
  v1::MeasurementSettings s = WithDefaults({});
  const v1::MeasurementSettings b = BlockSettings(s, 5, false);
  EXPECT_EQ(b.max_time_ns(), s.max_time_ns() / 5);
  EXPECT_EQ(b.min_samples(), 3);  // ceil(10 / 5) = 2, raised to 3.
  EXPECT_EQ(b.max_samples(), s.max_samples() / 5);
  EXPECT_EQ(b.warmup_ns(), s.warmup_ns() / 5);
}

}  // namespace
}  // namespace kbench::worker

namespace kbench::worker {
namespace {

// Throttled samples stay in the pooled samples, flagged index for index, out of the statistics.
TEST(AbMeasure, PoolingKeepsThrottledSamplesFlaggedAndOutOfTheStatistics) {
  Fixture f;
  ScriptedBackend backend;
  v1::Result b1, b2;
  for (v1::Result* b : {&b1, &b2}) {
    b->set_status(v1::OK);
    b->mutable_timing()->add_samples_ns(100);
    b->mutable_timing()->add_samples_ns(100);
  }
  b2.mutable_timing()->add_samples_ns(900);  // throttled
  b2.mutable_timing()->add_sample_throttled(false);
  b2.mutable_timing()->add_sample_throttled(false);
  b2.mutable_timing()->add_sample_throttled(true);
  b2.mutable_timing()->set_discarded_throttled(1);
  const v1::Result pooled = PoolBlocks({b1, b2}, f.op, kernels::MakeProblem(f.op, {8}), backend);
  ASSERT_EQ(pooled.timing().samples_ns_size(), 5);
  ASSERT_EQ(pooled.timing().sample_throttled_size(), 5);
  EXPECT_TRUE(pooled.timing().sample_throttled(4));
  EXPECT_FALSE(pooled.timing().sample_throttled(0));
  EXPECT_EQ(pooled.timing().count(), 4);
  EXPECT_DOUBLE_EQ(pooled.timing().max_ns(), 100);
  EXPECT_EQ(pooled.timing().discarded_throttled(), 1);
}

}  // namespace
}  // namespace kbench::worker
