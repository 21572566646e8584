// The CUDA GEMM ladder (kernels/gemm/gemm/*.cu) on a GPU, against the CPU reference.
//
//   GemmVariantTest.MatchesCpuReference (one test per CUDA gemm variant): the small, edge and decode
//     presets plus shapes that reach each rung's edge paths (partial tiles in M, N and K, K shorter
//     than a k tile, more wgmma tiles than SMs), f32 and bf16 as the variant supports, seeds 1 and 2
//     on cudaMalloc'd tensors and seed 3 on views one element off (16-byte paths must fall back);
//     outputs and guard bands poisoned with NaN, checked with the op's tolerance for the problem.
//     A failure names the variant, shape, dtype, seed and offset, and lists the first wrong
//     elements by (row, col) with got / expected, so one run says where a fragment layout is off.
//   GemmGpuReference.MatchesCpuReference: the fp64 device reference (used above 2 GFLOP) against the
//     CPU one; both sum exact products in ascending k, so they must agree to ~1e-15.
//   GemmLadder.*: registration (names, order, skip reasons, launch descriptions), that the rungs
//     meant for the canonical and decode presets do not skip them, cublas_tf32 under a tf32
//     tolerance on an op copy that lists tf32, and the bf16 cuBLAS baselines (fp32 split-K
//     reductions) within the rungs' tolerance at 1000x1000x999.
// Skips (GTEST_SKIP) only where no GPU is visible; fails where one is but CUDA cannot use it.
#include "gemm_test_util.h"

namespace kbench::kernels::testing {
namespace {

class GemmVariantTest : public ::testing::TestWithParam<const Variant*> {};

TEST_P(GemmVariantTest, MatchesCpuReference) {
  KBENCH_REQUIRE_GPU_OR_SKIP();
  const OpDef& op = GemmOp();
  const Variant& v = *GetParam();
  int ran = 0;
  std::set<std::string> skip_reasons;
  for (const Problem& base : GemmProblems(op)) {
    const bool decode = base.dim("M") <= 64 && base.dim("N") * base.dim("K") >= 4096 * 4096;
    for (const Dtype d : {Dtype::kF32, Dtype::kBF16}) {
      if (!v.supports(d)) continue;
      Problem p = base;
      p.dtype = d;
      // Seeds 1 and 2 aligned; seed 3 one element off (skipped on the decode shapes, whose CPU
      // reference is the slow part and whose unaligned paths the smaller shapes already reach).
      for (const auto& [seed, offset] : {std::pair<uint64_t, int>{1, 0}, {2, 0}, {3, 1}}) {
        if (offset != 0 && decode) continue;
        const RunResult r = CheckVariant(op, v, p, seed, offset);
        if (!r.skipped.empty()) {
          EXPECT_FALSE(r.skipped.empty());
          if (skip_reasons.insert(p.label() + ": " + r.skipped).second)
            std::printf("  [skip] %s %s: %s\n", v.name.c_str(), p.label().c_str(), r.skipped.c_str());
          break;  // the same reason for every seed
        }
        ran += r.ran;
        EXPECT_TRUE(r.failure.empty()) << r.failure;
        if (!FirstFatalError().empty()) FAIL() << "CUDA context lost; stopping: " << FirstFatalError();
      }
    }
  }
  std::printf("  gemm / %s: %d checks ran, %zu problem(s) skipped\n", v.name.c_str(), ran, skip_reasons.size());
  EXPECT_GT(ran, 0) << v.name << " skipped every test problem: it was never checked";
}

INSTANTIATE_TEST_SUITE_P(Gemm, GemmVariantTest, ::testing::ValuesIn(GemmCudaVariants()), VariantName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GemmVariantTest);

// The fp64 device reference against the CPU reference: exact products summed in the same order.
TEST(GemmGpuReference, MatchesCpuReference) {
  KBENCH_REQUIRE_GPU_OR_SKIP();
  const OpDef& op = GemmOp();
  ASSERT_TRUE(op.gpu_reference) << "the CUDA build sets gemm's gpu_reference";
  EXPECT_DOUBLE_EQ(op.gpu_reference_above_flops, 2e9) << "left at the op model's default";
  std::vector<Problem> problems;
  for (const char* name : {"small", "edge"})
    for (const Problem& p : op.find_preset(name)->problems) problems.push_back(p);
  problems.push_back(MakeProblem(op, {257, 520, 1000}));
  problems.push_back(MakeProblem(op, {3, 4099, 257}));
  for (Problem p : problems) {
    for (const Dtype d : {Dtype::kF32, Dtype::kBF16}) {
      p.dtype = d;
      SCOPED_TRACE(p.label());
      const Case& c = CaseFor(op, p, 1);
      const int64_t m = p.dim("M"), n = p.dim("N"), k = p.dim("K");
      const size_t elem = static_cast<size_t>(DtypeBytes(d));
      DeviceBuffer a, b, out;
      ASSERT_EQ(a.Allocate(static_cast<size_t>(m * k) * elem, 0), cudaSuccess);
      ASSERT_EQ(b.Allocate(static_cast<size_t>(k * n) * elem, 0), cudaSuccess);
      ASSERT_EQ(out.Allocate(static_cast<size_t>(m * n) * sizeof(double), 0), cudaSuccess);
      if (a.bytes) ASSERT_EQ(cudaMemcpy(a.data(), c.a.data(), a.bytes, cudaMemcpyHostToDevice), cudaSuccess);
      if (b.bytes) ASSERT_EQ(cudaMemcpy(b.data(), c.b.data(), b.bytes, cudaMemcpyHostToDevice), cudaSuccess);
      const Tensor inputs[2] = {{a.data(), m * k, d}, {b.data(), k * n, d}};
      double* const outputs[1] = {static_cast<double*>(out.data())};
      const int rc = op.gpu_reference(p, inputs, outputs, nullptr);
      ASSERT_EQ(rc, 0) << CudaText(static_cast<cudaError_t>(rc));
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      std::vector<double> got(static_cast<size_t>(m * n));
      if (out.bytes) ASSERT_EQ(cudaMemcpy(got.data(), out.data(), out.bytes, cudaMemcpyDeviceToHost), cudaSuccess);
      const Tolerance tight{.rtol = 1e-13, .atol = 1e-13};
      const CompareResult cmp = Compare(got, c.expected, tight);
      EXPECT_TRUE(cmp.passed) << cmp.mismatches << " mismatches, max abs " << cmp.max_abs_error << ", max rel "
                              << cmp.max_rel_error << DescribeMismatches(got, c.expected, n, tight);
      std::string error;
      EXPECT_EQ(out.GuardDamage(&error), 0u) << error;
    }
  }
}

}  // namespace
}  // namespace kbench::kernels::testing
