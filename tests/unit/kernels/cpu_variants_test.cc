// Every CPU variant of the four core ops against the op's reference: the small and edge presets plus
// extra odd shapes, f32 and bf16, several seeds, outputs poisoned first. And the skip rules.
#include <string>

#include "gtest/gtest.h"
#include "test_util.h"

namespace kbench::kernels {
namespace {

using testing::GetOp;

// Shapes beyond the presets: uneven thread chunks, several K and M blocks, K = 0 (C must be zeroed),
// and a long K, where the K-scaled GEMM tolerance must still admit a sequential fp32 sum.
std::vector<std::vector<int64_t>> ExtraShapes(const std::string& op) {
  if (op == "vector_add") return {{200003}, {2}};
  if (op == "gemm") return {{5, 3, 0}, {97, 33, 515}, {200, 17, 9}, {3, 1030, 40}, {4, 24, 8192}};
  return {{2, 1}, {33, 17}, {40, 4099}};
}

class CpuVariants : public ::testing::TestWithParam<std::string> {
 protected:
  const OpDef& op() const { return GetOp(GetParam()); }

  void ExpectAllMatch(const Problem& base) {
    for (Dtype d : {Dtype::kF32, Dtype::kBF16}) {
      Problem p = base;
      p.dtype = d;
      for (const Variant& v : op().variants)
        if (v.backend == Backend::kCpu) ASSERT_EQ(v.skip_reason(p), "") << v.name << " " << p.label();
      for (uint64_t seed : {1, 2, 3}) {
        for (const auto& [variant, r] : testing::CheckCpuVariants(op(), p, seed)) {
          EXPECT_TRUE(r.passed) << variant << " " << p.label() << " seed " << seed << ": " << r.mismatches
                                << " mismatches (first " << r.first_mismatch << "), " << r.non_finite
                                << " non-finite, max abs " << r.max_abs_error << ", max rel " << r.max_rel_error;
        }
      }
    }
  }
};

TEST_P(CpuVariants, HasNaiveAndOptimized) {
  int cpu = 0;
  for (const Variant& v : op().variants) cpu += v.backend == Backend::kCpu;
  EXPECT_EQ(cpu, 2);
}

TEST_P(CpuVariants, MatchReferenceOnSmallAndEdgePresets) {
  for (const char* preset : {"small", "edge"})
    for (const Problem& p : op().find_preset(preset)->problems) ExpectAllMatch(p);
}

TEST_P(CpuVariants, MatchReferenceOnOddShapes) {
  for (const auto& dims : ExtraShapes(GetParam())) ExpectAllMatch(MakeProblem(op(), dims));
}

TEST_P(CpuVariants, SkipDataOverFourGiB) {
  // 6 GiB of f32 data in each op's shape.
  const std::vector<int64_t> huge = GetParam() == "vector_add" ? std::vector<int64_t>{int64_t{1} << 29}
                                    : GetParam() == "gemm"     ? std::vector<int64_t>{23170, 23170, 23170}
                                                               : std::vector<int64_t>{1 << 18, 3 << 10};
  for (const Variant& v : op().variants) {
    if (v.backend != Backend::kCpu) continue;
    const std::string reason = v.skip_reason(MakeProblem(op(), huge, Dtype::kF32));
    EXPECT_NE(reason.find("GiB"), std::string::npos) << v.name << ": " << reason;
  }
}

INSTANTIATE_TEST_SUITE_P(CoreOps, CpuVariants, ::testing::Values("vector_add", "rmsnorm", "softmax", "gemm"),
                         [](const auto& info) { return info.param; });

TEST(CpuSkips, NaiveGemmSkipsLargeProblems) {
  const OpDef& op = GetOp("gemm");
  const Variant& naive = *op.find_variant("cpu_naive");
  const std::string reason = naive.skip_reason(MakeProblem(op, {4096, 4096, 4096}, Dtype::kF32));
  EXPECT_NE(reason.find("naive CPU GEMM would take minutes"), std::string::npos) << reason;
  EXPECT_EQ(naive.skip_reason(MakeProblem(op, {2048, 2048, 2048}, Dtype::kF32)), "");  // 17 GFLOP
  EXPECT_EQ(naive.skip_reason(MakeProblem(op, {64, 14336, 4096}, Dtype::kBF16)), "");  // decode, 7.5 GFLOP
}

TEST(CpuSkips, CanonicalShapesRunOnOptimizedVariants) {
  const OpDef& gemm = GetOp("gemm");
  for (const Problem& base : gemm.find_preset("canonical")->problems) {
    Problem p = base;
    p.dtype = Dtype::kF32;
    EXPECT_EQ(gemm.find_variant("cpu_blocked")->skip_reason(p), "") << p.label();  // 768 MiB at 8192^3
  }
  const OpDef& va = GetOp("vector_add");
  EXPECT_EQ(va.find_variant("cpu_parallel")->skip_reason(MakeProblem(va, {int64_t{1} << 28}, Dtype::kF32)), "");
}

}  // namespace
}  // namespace kbench::kernels
