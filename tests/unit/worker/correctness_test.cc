// The correctness check on the scale fixture: a correct variant, a wrong one, a lazy one.
#include "worker/measure/correctness.h"

#include "core/random.h"
#include "gtest/gtest.h"
#include "test_ops.h"
#include "worker/plan/settings.h"

namespace kbench::worker {
namespace {

class CorrectnessTest : public ::testing::Test {
 protected:
  absl::StatusOr<v1::Correctness> Check(const std::string& variant, kernels::Dtype dtype = kernels::Dtype::kF32,
                                        int64_t n = 64) {
    const kernels::Variant* v = op_.find_variant(variant);
    EXPECT_NE(v, nullptr);
    problem_ = kernels::MakeProblem(op_, {n}, dtype);
    tensors_ = std::make_unique<HostTensors>(op_, problem_);
    v1::MeasurementSettings s = WithDefaults({});
    return CheckCorrectness(op_, problem_, *tensors_, s, [&](std::span<const kernels::Tensor> t) {
      ++runs_;
      v->run_cpu(problem_, t);
      return absl::OkStatus();
    });
  }

  kernels::OpDef op_ = testing::MakeScaleOp();
  kernels::Problem problem_;
  std::unique_ptr<HostTensors> tensors_;
  int runs_ = 0;
};

TEST_F(CorrectnessTest, CorrectVariantPasses) {
  for (kernels::Dtype d : {kernels::Dtype::kF32, kernels::Dtype::kBF16}) {
    runs_ = 0;
    auto c = Check("cpu_good", d);
    ASSERT_TRUE(c.ok()) << c.status();
    EXPECT_TRUE(c->passed());
    EXPECT_EQ(c->trials(), 3);
    EXPECT_EQ(runs_, 3);
    EXPECT_EQ(c->mismatches(), 0);
    EXPECT_EQ(c->first_mismatch_index(), -1);
    EXPECT_EQ(c->non_finite(), 0);
    EXPECT_EQ(c->reference(), "cpu fp64");
    EXPECT_DOUBLE_EQ(c->rtol(), kernels::ElementwiseTolerance(d).rtol);
  }
}

TEST_F(CorrectnessTest, WrongVariantIsReportedWithCountAndFirstIndex) {
  auto c = Check("cpu_wrong");
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->passed());
  EXPECT_EQ(c->first_mismatch_index(), 3);
  EXPECT_EQ(c->mismatches(), 3 * (64 - 3));  // Every trial, indices 3..63.
  EXPECT_EQ(c->non_finite(), 0);
  EXPECT_NEAR(c->max_abs_error(), 1, 1e-6);
  EXPECT_NE(DescribeFailure(*c).find("first at index 3"), std::string::npos);
}

TEST_F(CorrectnessTest, UnwrittenOutputIsNonFiniteAndFails) {
  auto c = Check("cpu_lazy");
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->passed());
  EXPECT_EQ(c->non_finite(), 3 * 32);
  EXPECT_EQ(c->first_mismatch_index(), 32);
}

TEST_F(CorrectnessTest, InputsAreSeededPerTrialAndNeverZero) {
  auto c = Check("cpu_good", kernels::Dtype::kF32, 256);
  ASSERT_TRUE(c.ok());
  // After the run the tensors hold the last trial's inputs: seed 1 + 2, stream 0.
  HostTensors expected(op_, problem_);
  kernels::FillUniform(expected[0], 3, 0, -1, 1);
  for (int64_t i = 0; i < 256; ++i) {
    const double x = kernels::LoadAsDouble((*tensors_)[0].data, kernels::Dtype::kF32, i);
    EXPECT_EQ(x, kernels::LoadAsDouble(expected[0].data, kernels::Dtype::kF32, i));
    EXPECT_NE(x, 0);
    EXPECT_GE(x, -1);
    EXPECT_LE(x, 1);
  }
}

TEST_F(CorrectnessTest, RunErrorsAndInterruptionsPassThrough) {
  problem_ = kernels::MakeProblem(op_, {8}, kernels::Dtype::kF32);
  HostTensors t(op_, problem_);
  const v1::MeasurementSettings s = WithDefaults({});
  auto failing = [](std::span<const kernels::Tensor>) { return absl::InternalError("device fault"); };
  EXPECT_EQ(CheckCorrectness(op_, problem_, t, s, failing).status().message(), "device fault");
  auto ok = [](std::span<const kernels::Tensor>) { return absl::OkStatus(); };
  auto cancelled = [] { return absl::CancelledError("stop"); };
  EXPECT_TRUE(absl::IsCancelled(CheckCorrectness(op_, problem_, t, s, ok, cancelled).status()));
}

}  // namespace
}  // namespace kbench::worker
