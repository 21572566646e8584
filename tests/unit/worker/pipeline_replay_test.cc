// The pipeline's check after timing of what HOT samples replayed (measure/pipeline.cc): a device
// whose replay (a CUDA graph on the GPU) skips the work while its launches do it is INCORRECT, with
// a message saying it failed after timing on the graph replay; a correct replay, or none, is OK.
// A fake device stands in for the GPU: the CPU backend has no graphs.
#include <string>

#include "fake_backend.h"
#include "gtest/gtest.h"
#include "test_ops.h"
#include "worker/measure/pipeline.h"
#include "worker/plan/settings.h"

namespace kbench::worker {
namespace {

enum class Replay { kNone, kCorrect, kSkips };

// Launches run the variant on the host tensors; the replay does too, or writes nothing.
class FakeRun final : public DeviceRun {
 public:
  FakeRun(const kernels::Variant& v, const kernels::Problem& p, Replay replay, int* replays)
      : variant_(v), problem_(p), replay_(replay), replays_(replays) {}
  absl::Status RunOnHost(std::span<const kernels::Tensor> h) override {
    variant_.run_cpu(problem_, h);
    return absl::OkStatus();
  }
  worker::RunOnHost ReplayOnHost() override {
    if (replay_ == Replay::kNone) return {};
    return [this](std::span<const kernels::Tensor> h) {
      ++*replays_;
      if (replay_ == Replay::kCorrect) variant_.run_cpu(problem_, h);
      return absl::OkStatus();
    };
  }
  absl::StatusOr<double> Sample(int launches) override { return 1000.0 * launches; }
  void Flush() override {}
  std::string FailureMessage(const absl::Status& s, v1::ResultStatus) const override { return std::string(s.message()); }

 private:
  const kernels::Variant& variant_;
  const kernels::Problem& problem_;
  Replay replay_;
  int* replays_;
};

class FakeDevice final : public MeasureDevice {
 public:
  explicit FakeDevice(Replay replay) : replay_(replay) {}
  std::string SkipReason(const kernels::OpDef&, const kernels::Variant&, const kernels::Problem&) override { return ""; }
  absl::StatusOr<std::unique_ptr<DeviceRun>> Allocate(const kernels::OpDef&, const kernels::Variant& v,
                                                      const kernels::Problem& p, const HostTensors&) override {
    return std::make_unique<FakeRun>(v, p, replay_, &replays);
  }
  int replays = 0;

 private:
  Replay replay_;
};

v1::Result Measure(Replay replay, int* replays) {
  static const kernels::OpDef op = testing::MakeScaleOp();
  testing::FakeBackend backend;
  FakeDevice device(replay);
  const kernels::Problem p = kernels::MakeProblem(op, {64}, kernels::Dtype::kF32);
  v1::MeasurementSettings s = testing::TinySettings();
  s.set_cache_mode(v1::HOT);
  s.set_hot_batch(4);
  v1::Result r = NewResult(backend, op, *op.find_variant("cpu_good"), p);
  CancelFlag cancel;
  MeasureInto(backend, device, op, *op.find_variant("cpu_good"), p, WithDefaults(s), cancel, &r);
  *replays = device.replays;
  return r;
}

TEST(PipelineReplayTest, ReplayThatSkipsItsWorkIsIncorrectAfterTiming) {
  int replays = 0;
  const v1::Result r = Measure(Replay::kSkips, &replays);
  EXPECT_EQ(replays, 1);
  EXPECT_EQ(r.status(), v1::INCORRECT) << r.status_message();
  EXPECT_EQ(r.status_message().rfind("after timing (graph replay): ", 0), 0u) << r.status_message();
  EXPECT_FALSE(r.correctness().passed());
  EXPECT_EQ(r.correctness().trials(), 1);
  EXPECT_EQ(r.correctness().non_finite(), 64);  // every output left poisoned
  EXPECT_FALSE(r.has_timing());
  EXPECT_FALSE(r.has_roofline());
}

TEST(PipelineReplayTest, CorrectReplayOrNoneIsOk) {
  int replays = 0;
  const v1::Result r = Measure(Replay::kCorrect, &replays);
  EXPECT_EQ(replays, 1);
  EXPECT_EQ(r.status(), v1::OK) << r.status_message();
  EXPECT_TRUE(r.correctness().passed());
  EXPECT_TRUE(r.has_timing());

  const v1::Result plain = Measure(Replay::kNone, &replays);
  EXPECT_EQ(replays, 0);
  EXPECT_EQ(plain.status(), v1::OK) << plain.status_message();
}

}  // namespace
}  // namespace kbench::worker
