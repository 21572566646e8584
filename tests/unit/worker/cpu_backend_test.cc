// The CPU backend's MeasureOne on the scale fixture, with tiny settings.
#include "worker/cpu/cpu_backend.h"

#include "gtest/gtest.h"
#include "test_ops.h"
#include "worker/plan/settings.h"

namespace kbench::worker {
namespace {

class CpuBackendTest : public ::testing::Test {
 protected:
  CpuBackendTest() : backend_({}, testing::TestHost()) {
    v1::Calibration c;
    c.set_device_uuid(backend_.device().uuid());
    // Ceilings no 64-element run comes near, so the class is certain.
    c.set_copy_bytes_per_second(1e12);
    (*c.mutable_peak_flops_per_second())["f32"] = 1e13;
    backend_.set_calibration(c);
  }

  v1::Result Run(const std::string& variant, int64_t n = 64, kernels::Dtype dtype = kernels::Dtype::kF32,
                 v1::MeasurementSettings settings = testing::TinySettings()) {
    return backend_.MeasureOne(op_, *op_.find_variant(variant), kernels::MakeProblem(op_, {n}, dtype),
                               WithDefaults(settings), cancel_);
  }

  kernels::OpDef op_ = testing::MakeScaleOp();
  CpuBackend backend_;
  CancelFlag cancel_;
};

TEST_F(CpuBackendTest, DeviceDescribesTheHost) {
  const v1::DeviceInfo d = backend_.device();
  EXPECT_EQ(d.backend(), v1::BACKEND_CPU);
  EXPECT_EQ(d.name(), "Test CPU");
  EXPECT_EQ(d.uuid(), CpuDeviceUuid("test-host"));
  EXPECT_EQ(d.multiprocessor_count(), 2);
  EXPECT_EQ(d.l2_cache_bytes(), 256 << 10);
  EXPECT_EQ(d.driver_version(), "6.0.0-test");
  EXPECT_FALSE(backend_.datasheet().has_value());
  EXPECT_EQ(backend_.kind(), kernels::Backend::kCpu);
}

TEST_F(CpuBackendTest, CorrectVariantIsCheckedTimedAndPlacedOnTheRoofline) {
  for (v1::CacheMode mode : {v1::COLD, v1::HOT}) {
    v1::MeasurementSettings s = testing::TinySettings();
    s.set_cache_mode(mode);
    s.set_hot_batch(4);
    const v1::Result r = Run("cpu_good", 64, kernels::Dtype::kBF16, s);
    ASSERT_EQ(r.status(), v1::OK) << r.status_message();
    EXPECT_EQ(r.op(), "scale");
    EXPECT_EQ(r.variant(), "cpu_good");
    EXPECT_EQ(r.problem().dims(0).value(), 64);
    EXPECT_EQ(r.problem().dtype(), v1::DTYPE_BF16);
    EXPECT_TRUE(r.correctness().passed());
    EXPECT_EQ(r.correctness().trials(), 2);
    EXPECT_GE(r.timing().count(), 1);
    EXPECT_LE(r.timing().count(), 5);
    EXPECT_EQ(r.timing().samples_ns_size(), r.timing().count());
    EXPECT_GT(r.timing().median_ns(), 0);
    EXPECT_NE(r.timing().stop_reason(), v1::STOP_REASON_UNSPECIFIED);
    EXPECT_EQ(r.timing().cache_mode(), mode);
    EXPECT_EQ(r.timing().launches_per_sample(), mode == v1::HOT ? 4 : 1);
    EXPECT_GE(r.timing().warmup_launches(), 1);
    EXPECT_DOUBLE_EQ(r.roofline().bytes(), 2 * 64 * 2);
    EXPECT_DOUBLE_EQ(r.roofline().flops(), 64);
    ASSERT_EQ(r.roofline().ceilings_size(), 1);
    EXPECT_EQ(r.roofline().ceilings(0).source(), "calibrated");
    EXPECT_EQ(r.roofline().bound_class(), v1::LATENCY_BOUND);
    EXPECT_EQ(r.device().uuid(), backend_.device().uuid());
  }
}

TEST_F(CpuBackendTest, IncorrectVariantReportsCorrectnessAndNoTiming) {
  const v1::Result r = Run("cpu_wrong");
  EXPECT_EQ(r.status(), v1::INCORRECT);
  EXPECT_FALSE(r.correctness().passed());
  EXPECT_EQ(r.correctness().first_mismatch_index(), 3);
  EXPECT_FALSE(r.has_timing());
  EXPECT_FALSE(r.has_roofline());
  EXPECT_NE(r.status_message().find("first at index 3"), std::string::npos);

  const v1::Result lazy = Run("cpu_lazy");
  EXPECT_EQ(lazy.status(), v1::INCORRECT);
  EXPECT_GT(lazy.correctness().non_finite(), 0);
}

// The check again after timing: a variant that passes the check (2 trials) and then stops writing
// its output is INCORRECT, without a timing; one that keeps working through timing stays OK.
TEST_F(CpuBackendTest, VariantThatStopsWorkingAfterTheCheckIsIncorrect) {
  op_.variants.push_back(testing::MakeQuittingVariant(2));
  const v1::Result r = Run("cpu_quits");
  EXPECT_EQ(r.status(), v1::INCORRECT) << r.status_message();
  EXPECT_EQ(r.status_message().rfind("after timing: ", 0), 0u) << r.status_message();
  EXPECT_FALSE(r.correctness().passed());
  EXPECT_EQ(r.correctness().trials(), 1);
  EXPECT_GT(r.correctness().non_finite(), 0);
  EXPECT_FALSE(r.has_timing());
  EXPECT_FALSE(r.has_roofline());

  op_.variants.back() = testing::MakeQuittingVariant(1000);
  const v1::Result steady = Run("cpu_quits");
  EXPECT_EQ(steady.status(), v1::OK) << steady.status_message();
  EXPECT_EQ(steady.correctness().trials(), 2);
}

TEST_F(CpuBackendTest, SkipsWithTheReason) {
  const v1::Result big = Run("cpu_small", 1000);
  EXPECT_EQ(big.status(), v1::SKIPPED);
  EXPECT_EQ(big.status_message(), "n > 100");
  EXPECT_FALSE(big.has_correctness());

  const v1::Result dtype = Run("cpu_f32", 64, kernels::Dtype::kBF16);
  EXPECT_EQ(dtype.status(), v1::SKIPPED);
  EXPECT_NE(dtype.status_message().find("bf16"), std::string::npos);

  const v1::Result cuda = Run("cuda_good");
  EXPECT_EQ(cuda.status(), v1::SKIPPED);

  CpuHostInfo tiny = testing::TestHost();
  tiny.memory_bytes = 1000;  // 64 x 4 x 2 bytes = 512 > 1000 / 2.
  CpuBackend small(CpuBackendOptions{}, tiny);
  const v1::Result r = small.MeasureOne(op_, *op_.find_variant("cpu_good"), kernels::MakeProblem(op_, {64}, kernels::Dtype::kF32),
                                        WithDefaults(testing::TinySettings()), cancel_);
  EXPECT_EQ(r.status(), v1::SKIPPED);
  EXPECT_NE(r.status_message().find("host memory"), std::string::npos);
}

TEST_F(CpuBackendTest, ExceptionBecomesRuntimeError) {
  const v1::Result r = Run("cpu_throws");
  EXPECT_EQ(r.status(), v1::RUNTIME_ERROR);
  EXPECT_NE(r.status_message().find("boom"), std::string::npos);
}

TEST_F(CpuBackendTest, CancelledBeforeMeasuring) {
  cancel_.Cancel();
  EXPECT_EQ(Run("cpu_good").status(), v1::CANCELLED);
}

TEST_F(CpuBackendTest, EmptyProblemRuns) {
  const v1::Result r = Run("cpu_good", 0);
  EXPECT_EQ(r.status(), v1::OK) << r.status_message();
  EXPECT_TRUE(r.correctness().passed());
}

TEST(CacheFlusher, FlushesWithEveryThreadAndStopsCleanly) {
  for (int threads : {1, 3}) {
    CacheFlusher flusher(1000, threads);
    EXPECT_EQ(flusher.bytes(), 1024);  // Rounded up to whole cache lines.
    for (int i = 0; i < 5; ++i) flusher.Flush();
  }
}

}  // namespace
}  // namespace kbench::worker
