// The A/B measurement on a GPU, judged by the compare's verdict: rmsnorm's naive rung against its
// 16-byte-vector rung (known to be several times slower on a large problem) gives SLOWER one way
// and FASTER the other; the vector rung against itself gives SAME.
#include "client/commands.h"
#include "gpu_presence.h"
#include "core/registry.h"
#include "gtest/gtest.h"
#include "worker/runner/convert.h"
#include "worker/cuda/cuda_backend.h"
#include "worker/plugin/ab_measure.h"
#include "worker/plan/settings.h"

namespace kbench::worker {
namespace {

class AbGpuTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto b = CudaBackend::Create(0, CudaCalibrationOptions{.quick = true});
    if (!b.ok()) {
      why_ = std::string(b.status().message());
      return;
    }
    backend_ = b->release();
    auto cal = backend_->Calibrate();
    if (cal.ok()) backend_->set_calibration(*cal);
  }
  void SetUp() override {
    KBENCH_REQUIRE_GPU_OR_SKIP();
    // A GPU is there: a backend that did not start is a failure, not a skip.
    ASSERT_NE(backend_, nullptr) << "the CUDA backend did not start: " << why_;
    op_ = kernels::BuiltinRegistry().Find("rmsnorm");
    ASSERT_NE(op_, nullptr);
  }

  // The verdict of base vs head on 8192x4096 bf16, measured in 6 alternating rounds per side.
  std::string Verdict(const char* base_variant, const char* head_variant) {
    const kernels::Variant* base = op_->find_variant(base_variant);
    const kernels::Variant* head = op_->find_variant(head_variant);
    EXPECT_NE(base, nullptr);
    EXPECT_NE(head, nullptr);
    if (!base || !head) return "?";
    v1::MeasurementSettings s;
    s.set_min_samples(30);
    s.set_max_time_ns(1'500'000'000);
    s.set_correctness_trials(1);
    CancelFlag never;
    auto [b, h] = MeasureAb(*backend_, {op_, base}, {op_, head},
                            kernels::MakeProblem(*op_, {8192, 4096}, kernels::Dtype::kBF16), WithDefaults(s), 6, never);
    EXPECT_EQ(b.status(), v1::OK) << b.status_message();
    EXPECT_EQ(h.status(), v1::OK) << h.status_message();
    EXPECT_GE(b.timing().count(), 30);
    EXPECT_GE(h.timing().count(), 30);
    return client::JudgePair(b, h, client::CompareOptions{});
  }

  static inline CudaBackend* backend_ = nullptr;
  static inline std::string why_;
  const kernels::OpDef* op_ = nullptr;
};

TEST_F(AbGpuTest, NaiveAgainstVectorizedIsSlowerAndTheReverseFaster) {
  EXPECT_EQ(Verdict("cuda_v5_vec16", "cuda_v1_naive"), "SLOWER");
  EXPECT_EQ(Verdict("cuda_v1_naive", "cuda_v5_vec16"), "FASTER");
}

TEST_F(AbGpuTest, AVariantAgainstItselfIsSame) { EXPECT_EQ(Verdict("cuda_v5_vec16", "cuda_v5_vec16"), "SAME"); }

}  // namespace
}  // namespace kbench::worker
