// The GEMM ladder on a GPU: registration (names, order, skip reasons, launch descriptions), the split-K
// GEMV's bitwise repeatability, rungs that must accept their presets, and the cuBLAS baselines under
// their tolerances (helpers: gemm_test_util.h; the variant-by-variant check: gemm_test.cc).
#include "gemm_test_util.h"

namespace kbench::kernels::testing {
namespace {

// Names, order, descriptions, and what every variant declares (no kernel runs).
TEST(GemmLadder, Registration) {
  ASSERT_TRUE(BuiltWithCuda());
  std::vector<std::string> names;
  for (const Variant* v : GemmCudaVariants()) names.push_back(v->name);
  const OpDef& op = GemmOp();
  const bool op_has_tf32 = std::find(op.dtypes.begin(), op.dtypes.end(), Dtype::kTF32) != op.dtypes.end();
  std::vector<std::string> expected = {"cuda_v1_naive",    "cuda_v2_smem_tile", "cuda_v3_register_block",
                                       "cuda_v4_vec_transpose", "cuda_v5_cp_async", "cublas_sgemm"};
  if (op_has_tf32) expected.push_back("cublas_tf32");  // registered only where the op offers tf32
  for (const char* n : {"cuda_gemv", "cuda_gemv_split_k", "cuda_wmma", "cuda_mma_sync", "cuda_wgmma_tma", "cublas_bf16", "cublaslt_bf16"})
    expected.push_back(n);
  EXPECT_EQ(names, expected);
  for (const Variant* v : GemmCudaVariants()) {
    SCOPED_TRACE(v->name);
    EXPECT_FALSE(v->description.empty());
    EXPECT_TRUE(v->run_cuda && v->skip_reason && v->launches);
    EXPECT_FALSE(v->run_cpu);
    EXPECT_EQ(v->is_baseline, v->name.rfind("cublas", 0) == 0);
    for (Dtype d : v->dtypes)
      EXPECT_TRUE(d == Dtype::kF32 || d == Dtype::kBF16 || (d == Dtype::kTF32 && v->name == "cublas_tf32")) << DtypeName(d);
    // Our own rungs describe their kernels for the resource report on every problem they accept.
    for (Problem p : GemmProblems(op)) {
      for (Dtype d : v->dtypes) {
        p.dtype = d;
        if (!v->skip_reason(p).empty() || v->is_baseline) continue;
        const std::vector<LaunchInfo> launches = v->launches(p);
        ASSERT_FALSE(launches.empty()) << p.label();
        for (const LaunchInfo& l : launches) {
          EXPECT_NE(l.func, nullptr) << l.kernel_name;
          EXPECT_TRUE(l.block_threads >= 32 && l.block_threads <= 1024 && l.block_threads % 32 == 0) << l.kernel_name;
        }
      }
    }
    // A dtype the variant does not compute is refused in words, not run.
    for (Dtype d : {Dtype::kF32, Dtype::kBF16}) {
      if (v->supports(d)) continue;
      const std::string why = v->skip_reason(MakeProblem(op, {128, 128, 128}, d));
      EXPECT_NE(why.find("only"), std::string::npos) << why;
    }
  }
}

// The split-K GEMV adds its splits in a fixed order and resets its arrival counters: launched again
// and again on a poisoned C, it writes the same bits every time (a counter left behind would make the
// next launch skip a column group's final sum and leave NaN there).
TEST(GemmLadder, SplitKGemvIsBitwiseRepeatable) {
  KBENCH_REQUIRE_GPU_OR_SKIP();
  const OpDef& op = GemmOp();
  const Variant* v = op.find_variant("cuda_gemv_split_k");
  ASSERT_NE(v, nullptr);
  for (const std::vector<int64_t>& dims : {std::vector<int64_t>{1, 14336, 4096}, {4, 4096, 4096}, {16, 2048, 1000}}) {
    const Problem p = MakeProblem(op, dims, Dtype::kBF16);
    SCOPED_TRACE(p.label());
    const Case& c = CaseFor(op, p, 7);
    const int64_t m = dims[0], n = dims[1], k = dims[2];
    DeviceBuffer a, b, out;
    ASSERT_EQ(a.Allocate(static_cast<size_t>(m * k) * 2, 0), cudaSuccess);
    ASSERT_EQ(b.Allocate(static_cast<size_t>(k * n) * 2, 0), cudaSuccess);
    ASSERT_EQ(out.Allocate(static_cast<size_t>(m * n) * 2, 0), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(a.data(), c.a.data(), a.bytes, cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(b.data(), c.b.data(), b.bytes, cudaMemcpyHostToDevice), cudaSuccess);
    const Tensor tensors[3] = {{a.data(), m * k, p.dtype}, {b.data(), k * n, p.dtype}, {out.data(), m * n, p.dtype}};
    std::vector<unsigned char> first, again(out.bytes);
    for (int run = 0; run < 5; ++run) {
      ASSERT_EQ(cudaMemset(out.data(), kPoison, out.bytes), cudaSuccess);
      ASSERT_EQ(v->run_cuda(p, tensors, nullptr), 0);
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      ASSERT_EQ(cudaMemcpy(again.data(), out.data(), out.bytes, cudaMemcpyDeviceToHost), cudaSuccess);
      if (run == 0) {
        first = again;
        std::vector<double> got(static_cast<size_t>(m * n));
        for (int64_t i = 0; i < m * n; ++i) got[i] = LoadAsDouble(first.data(), p.dtype, i);
        EXPECT_TRUE(Compare(got, c.expected, ToleranceFor(op, p)).passed);
      } else {
        EXPECT_EQ(std::memcmp(first.data(), again.data(), out.bytes), 0) << "run " << run << " differs from run 0";
      }
    }
  }
}

// The rungs the performance targets are about must accept the shapes those targets use.
TEST(GemmLadder, PerformanceRungsAcceptTheirShapes) {
  const OpDef& op = GemmOp();
  const auto skip_of = [&](const char* variant, Problem p, Dtype d) {
    p.dtype = d;
    const Variant* v = op.find_variant(variant);
    return v == nullptr ? std::string("not registered") : v->skip_reason(p);
  };
  for (const Problem& p : op.find_preset("canonical")->problems) {
    SCOPED_TRACE(p.label());
    for (const char* v : {"cuda_v3_register_block", "cuda_v4_vec_transpose", "cuda_v5_cp_async", "cublas_sgemm"})
      EXPECT_EQ(skip_of(v, p, Dtype::kF32), "") << v;
    for (const char* v : {"cuda_wmma", "cuda_mma_sync", "cublas_bf16", "cublaslt_bf16"})
      EXPECT_EQ(skip_of(v, p, Dtype::kBF16), "") << v;
  }
  for (const Problem& p : op.find_preset("decode")->problems)
    for (Dtype d : {Dtype::kF32, Dtype::kBF16})
      for (const char* v : {"cuda_gemv", "cuda_gemv_split_k"}) EXPECT_EQ(skip_of(v, p, d), "") << v << " " << p.label();
  for (const char* v : {"cuda_gemv", "cuda_gemv_split_k"})
    EXPECT_NE(skip_of(v, MakeProblem(op, {65, 4096, 4096}), Dtype::kBF16), "") << v;
  // Shapes TMA cannot describe are refused with the reason, not run wrong.
  const std::string tma = skip_of("cuda_wgmma_tma", MakeProblem(op, {769, 321, 131}), Dtype::kBF16);
  EXPECT_NE(tma.find("multiples of 8"), std::string::npos) << tma;
  // On Hopper the wgmma rung takes the canonical shapes; elsewhere it says why not.
  KBENCH_REQUIRE_GPU_OR_SKIP();
  int device = 0, major = 0, minor = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device), cudaSuccess);
  for (const Problem& p : op.find_preset("canonical")->problems) {
    const std::string s = skip_of("cuda_wgmma_tma", p, Dtype::kBF16);
    if (major * 10 + minor == 90) {
      EXPECT_EQ(s, "") << p.label();
    } else {
      EXPECT_NE(s.find("sm_90"), std::string::npos) << s;
    }
  }
}

// cublas_tf32 on an op copy that offers dtype tf32, under a tf32 tolerance: TF32 keeps 10 mantissa
// bits of each input (relative error 2^-11), so a sum of K products is off by ~2^-11 * s(K) with
// s(K) = sqrt(K)/3 the typical size of the sum (the f32 tolerance's reasoning, 2^13 times looser).
TEST(GemmLadder, CublasTf32UnderTf32Tolerance) {
  KBENCH_REQUIRE_GPU_OR_SKIP();
  EXPECT_EQ(GemmOp().find_variant("cublas_tf32") != nullptr,
            std::find(GemmOp().dtypes.begin(), GemmOp().dtypes.end(), Dtype::kTF32) != GemmOp().dtypes.end())
      << "cublas_tf32 is registered exactly when gemm lists dtype tf32";
  OpDef op = GemmDefinition();
  op.dtypes.push_back(Dtype::kTF32);
  op.problem_tolerance = [](const Problem& p) {
    const double s = std::sqrt(std::max<double>(static_cast<double>(p.dim("K")), 1.0)) / 3;
    return Tolerance{.rtol = 5e-3, .atol = 16 * 0x1p-11 * s};
  };
  AddGemmCudaVariants(op);
  const Variant* v = op.find_variant("cublas_tf32");
  ASSERT_NE(v, nullptr);
  EXPECT_TRUE(v->supports(Dtype::kTF32));
  for (const std::vector<int64_t>& dims : std::vector<std::vector<int64_t>>{{128, 128, 128}, {769, 321, 131}, {1, 4099, 257}, {257, 520, 1000}}) {
    for (const auto& [seed, offset] : {std::pair<uint64_t, int>{1, 0}, {3, 1}}) {
      const Problem p = MakeProblem(op, dims, Dtype::kTF32);
      const RunResult r = CheckVariant(op, *v, p, seed, offset);
      EXPECT_TRUE(r.skipped.empty()) << r.skipped;
      EXPECT_TRUE(r.failure.empty()) << r.failure;
    }
  }
}

// The vendor baselines at the precision they claim (kernels/gemm/gemm/gemm_cublas.cu): with split-K
// partials reduced in fp32, cublas_bf16 and cublaslt_bf16 pass the tolerance every rung passes at
// 1000x1000x999 bf16, a shape (odd K, no tile multiple) where reductions in bf16 put ~1000 elements
// outside it (max abs error 0.22 against an atol of 0.041, on an H200).
TEST(GemmLadder, CublasBf16BaselinesAccumulateInFp32) {
  KBENCH_REQUIRE_GPU_OR_SKIP();
  const OpDef& op = GemmOp();
  const Problem p = MakeProblem(op, {1000, 1000, 999}, Dtype::kBF16);
  for (const char* name : {"cublas_bf16", "cublaslt_bf16"}) {
    const Variant* v = op.find_variant(name);
    ASSERT_NE(v, nullptr) << name;
    for (const auto& [seed, offset] : {std::pair<uint64_t, int>{1, 0}, {2, 0}, {3, 1}}) {
      const RunResult r = CheckVariant(op, *v, p, seed, offset);
      EXPECT_TRUE(r.skipped.empty()) << name << ": " << r.skipped;
      EXPECT_TRUE(r.ran) << name;
      EXPECT_TRUE(r.failure.empty()) << r.failure;
    }
  }
}

}  // namespace
}  // namespace kbench::kernels::testing
