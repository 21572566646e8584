// The quantized GEMMs (kernels/quant/w4a16_gemm, kernels/quant/fp8_gemm: fp8_gemm and its block-scaled
// form fp8_gemm_block) on a GPU.
//
//   QgemmVariantTest.MatchesCpuReference (one test per CUDA variant of the two ops): the small and
//     edge presets (K off the group, M = 1, 3, 16, 129, N = 2112, K % 16 != 0) and shapes that reach
//     each rung's paths (M = 8, the ci decode shapes, partial k tiles, more wgmma tiles than SMs),
//     seeds 1 and 2 on cudaMalloc'd tensors (seed 1 twice: bitwise repeatable) and seed 3 on views
//     one element off (16-byte paths fall back; cuBLASLt FP8 requires 16-byte alignment, so its
//     offset trial is left out); outputs and guard bands poisoned, held to the op's tolerance.
//   QgemmLarge.MatchesDeviceReference: the prefill and canonical shapes whose CPU reference would take
//     minutes, against the op's fp64 device reference, for every rung that takes them.
//   QgemmDeviceReference.MatchesCpuReference: the fp64 device references against the CPU ones.
//   QgemmLadder.RungsTakeTheirPresets: on sm_90 the wgmma FP8 rungs (and fp8_gemm_block's 192-row one)
//     and the baselines do not skip the canonical and prefill presets, and the GEMV rungs take every
//     decode shape with M <= 8.
// Skips (GTEST_SKIP) only where no GPU is visible; fails where one is but CUDA cannot use it.
#include <cuda_runtime.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/compare.h"
#include "core/random.h"
#include "core/registry.h"
#include "gpu_presence.h"
#include "gpu_test_util.h"
#include "gtest/gtest.h"
#include "quant/w4a16_gemm/w4a16_gemm.h"

namespace kbench::kernels::testing {
namespace {

const OpDef& Op(const std::string& name) {
  const OpDef* op = BuiltinRegistry().Find(name);
  if (op == nullptr) throw std::runtime_error(name + " is not registered");
  return *op;
}

Problem Shape(const OpDef& op, int64_t m, int64_t n, int64_t k) {
  Problem p = op.name == "w4a16_gemm"       ? MakeProblem(op, {m, n, k, W4Words(k), W4Groups(k)})
              : op.name == "fp8_gemm_block" ? MakeProblem(op, {m, n, k, (k + 127) / 128, (n + 127) / 128})
                                            : MakeProblem(op, {m, n, k});
  p.dtype = op.dtypes.at(0);
  return p;
}

std::vector<Problem> CheckedProblems(const OpDef& op) {
  std::vector<Problem> out;
  for (const char* preset : {"small", "edge"})
    for (Problem p : op.find_preset(preset)->problems) {
      p.dtype = op.dtypes.at(0);
      out.push_back(p);
    }
  if (op.name == "w4a16_gemm") {
    // M = 8 (the widest GEMV instantiation, one n8 tile of cuda_v4); M = 12, 24, 40, 64 (v4's 2, 4 and
    // 8 n8 tiles, partly used); K % 32 == 0 with a partial group (4128 = 32 * 129); a decode row over
    // 2048 outputs; N off v4's 16 rows. cuda_v4's K split and load batches: an odd number of groups
    // (1152, 384: batches of one group), K = 256 (warps of the split with no k at all), M = 33 and
    // N = 72 (a block's last rows past N), 2048 over a 7-row A. (The ci and decode shapes are checked
    // in QgemmLarge.) cuda_v5's wgmma widths past 64 (n = 128: M = 65, 100, 128), with a K split over
    // 9 groups and a block's rows past N.
    for (auto [m, n, k] : {std::tuple{8, 1024, 4096},
                           {65, 520, 512},
                           {100, 264, 1152},
                           {128, 4099, 256},
                           {12, 520, 1024},
                           {5, 300, 4128},
                           {1, 2048, 4096},
                           {3, 1000, 512},
                           {24, 264, 1024},
                           {40, 520, 512},
                           {64, 136, 1152},
                           {16, 200, 384},
                           {33, 72, 768},
                           {64, 136, 1024},
                           {2, 4099, 256},
                           {7, 264, 2048}})
      out.push_back(Shape(op, m, n, k));
  } else {
    // Whole tiles; K % 128 != 0; K shorter than one k tile; 9 x 20 tiles (more than the SMs, so
    // persistent blocks take a second tile); N = 2112 at a decode-sized M; a partial last k block and
    // N blocks that cuBLASLt's block scales accept (M and K/128 multiples of 4).
    for (auto [m, n, k] : {std::tuple{256, 256, 256},
                           {257, 520, 1008},
                           {130, 136, 32},
                           {1100, 2560, 144},
                           {64, 2112, 1024},
                           {132, 528, 400}})
      out.push_back(Shape(op, m, n, k));
  }
  return out;
}

struct Case {
  const OpDef* op;
  const Variant* variant;
};

std::vector<Case> AllCases() {
  std::vector<Case> cases;
  for (const char* name : {"w4a16_gemm", "fp8_gemm", "fp8_gemm_block"}) {
    const OpDef* op = BuiltinRegistry().Find(name);
    if (op == nullptr) continue;
    for (const Variant* v : CudaVariants(*op)) cases.push_back({op, v});
  }
  return cases;
}

std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  std::string name = info.param.op->name + "__" + info.param.variant->name;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

class QgemmVariantTest : public ::testing::TestWithParam<Case> {};

TEST_P(QgemmVariantTest, MatchesCpuReference) {
  KBENCH_REQUIRE_GPU_OR_SKIP();
  const OpDef& op = *GetParam().op;
  const Variant& v = *GetParam().variant;
  const bool offset_trial = v.name.rfind("cublaslt_fp8", 0) != 0;  // the library needs 16-byte alignment
  int ran = 0, skipped = 0;
  for (const Problem& p : CheckedProblems(op)) {
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      if (seed == 3 && !offset_trial) break;
      CheckOptions o;
      o.seed = seed;
      o.offset_elems = seed == 3 ? 1 : 0;
      o.check_deterministic = seed == 1;
      const CheckResult r = CheckCudaVariant(op, v, p, o);
      if (!r.skipped.empty()) {
        ++skipped;
        std::printf("  [skip] %s %s: %s\n", v.name.c_str(), p.label().c_str(), r.skipped.c_str());
        break;
      }
      ran += r.ran;
      EXPECT_TRUE(r.failure.empty()) << r.failure;
      if (!FirstFatalError().empty()) FAIL() << "CUDA context lost; stopping: " << FirstFatalError();
    }
  }
  std::printf("  %s / %s: %d checks ran, %d problem(s) skipped\n", op.name.c_str(), v.name.c_str(), ran, skipped);
  EXPECT_GT(ran, 0) << "every test problem was skipped: the variant was never checked";
}

INSTANTIATE_TEST_SUITE_P(Qgemm, QgemmVariantTest, ::testing::ValuesIn(AllCases()), CaseName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(QgemmVariantTest);

// ---- device-reference checks ------------------------------------------------------------------
std::string CudaText(cudaError_t e) { return std::string(cudaGetErrorName(e)) + " (" + cudaGetErrorString(e) + ")"; }

// Device copies of a problem's seeded inputs (host fills as the worker's) and its outputs.
struct DeviceProblem {
  std::vector<void*> buffers;
  std::vector<Tensor> host_inputs, device;
  std::vector<std::vector<unsigned char>> host;
  ~DeviceProblem() {
    for (void* b : buffers) cudaFree(b);
  }
  std::string Make(const OpDef& op, const Problem& p, uint64_t seed) {
    size_t input_index = 0;
    host.resize(op.tensors.size());
    for (size_t i = 0; i < op.tensors.size(); ++i) {
      const TensorSpec& spec = op.tensors[i];
      const int64_t numel = spec.numel(p);
      const size_t bytes = static_cast<size_t>(numel * DtypeBytes(spec.dtype(p)));
      void* d = nullptr;
      if (cudaError_t e = cudaMalloc(&d, bytes + 16); e != cudaSuccess) return "cudaMalloc: " + CudaText(e);
      buffers.push_back(d);
      device.push_back(Tensor{d, numel, spec.dtype(p)});
      if (spec.is_output) continue;
      host[i].resize(bytes);
      const Tensor h{host[i].data(), numel, spec.dtype(p)};
      FillInput(spec, p, h, seed, input_index++);
      host_inputs.push_back(h);
      if (cudaError_t e = cudaMemcpy(d, host[i].data(), bytes, cudaMemcpyHostToDevice); e != cudaSuccess)
        return "upload: " + CudaText(e);
    }
    return "";
  }
};

// Every rung that takes the problem against the fp64 device reference, computed once; "" when all
// pass, else one line per failing rung.
std::string CheckAgainstDeviceReference(const OpDef& op, const Problem& p, int* checked) {
  DeviceProblem d;
  if (std::string e = d.Make(op, p, 1); !e.empty()) return e;
  const Tensor& c = d.device.back();
  std::vector<double> want(static_cast<size_t>(c.numel)), actual(static_cast<size_t>(c.numel));
  {
    double* ref = nullptr;
    if (cudaError_t e = cudaMalloc(&ref, want.size() * sizeof(double)); e != cudaSuccess)
      return "cudaMalloc ref: " + CudaText(e);
    double* outs[1] = {ref};
    const std::vector<Tensor> inputs(d.device.begin(), d.device.end() - 1);
    const int rc = op.gpu_reference(p, inputs, outs, nullptr);
    const cudaError_t sync = cudaDeviceSynchronize();
    cudaMemcpy(want.data(), ref, want.size() * sizeof(double), cudaMemcpyDeviceToHost);
    cudaFree(ref);
    if (rc != 0 || sync != cudaSuccess)
      return "gpu_reference failed: " + CudaText(rc != 0 ? static_cast<cudaError_t>(rc) : sync);
  }
  const Tolerance tol = ToleranceFor(op, p);
  std::string failures;
  std::vector<uint16_t> got(static_cast<size_t>(c.numel));
  for (const Variant* v : CudaVariants(op)) {
    if (v->name == "cuda_v1_simt" && p.dim("M") * p.dim("N") * p.dim("K") > (int64_t{1} << 34)) continue;  // slow
    if (v->skip_reason && !v->skip_reason(p).empty()) continue;
    cudaMemset(c.data, 0xFF, got.size() * 2);  // NaN: an unwritten element fails
    if (const int rc = v->run_cuda(p, d.device, nullptr); rc != 0) {
      failures += "\n  " + v->name + ": run_cuda " + CudaText(static_cast<cudaError_t>(rc));
      continue;
    }
    if (cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess)
      return failures + "\n  " + v->name + ": " + CudaText(e);
    cudaMemcpy(got.data(), c.data, got.size() * 2, cudaMemcpyDeviceToHost);
    for (size_t i = 0; i < got.size(); ++i) actual[i] = Bf16ToFloat(got[i]);
    const CompareResult r = Compare(actual, want, tol);
    ++*checked;
    std::printf("  %-26s %-28s max abs %.3g (atol %.3g), rel L2 %.3g, %lld mismatches\n", v->name.c_str(),
                p.label().c_str(), r.max_abs_error, tol.atol, r.rel_l2_error, static_cast<long long>(r.mismatches));
    if (!r.passed)
      failures += "\n  " + v->name + ": " + std::to_string(r.mismatches) + " mismatches, " +
                  std::to_string(r.non_finite) + " non-finite, max abs error " + std::to_string(r.max_abs_error) +
                  " (atol " + std::to_string(tol.atol) + "), first at " + std::to_string(r.first_mismatch) + ": got " +
                  std::to_string(actual[r.first_mismatch]) + ", expected " + std::to_string(want[r.first_mismatch]);
  }
  return failures;
}

TEST(QgemmLarge, MatchesDeviceReference) {
  KBENCH_REQUIRE_GPU_OR_SKIP();
  struct Item {
    const char* op;
    int64_t m, n, k;
  };
  // 3 x 6144 x 4096: v4's M <= 8 kernel with 4 warps a tile (W4LeanSplit on an H100/H200); 1 x 14336 and
  // 8 x 4096 the 2- and 8-warp splits.
  const Item items[] = {{"w4a16_gemm", 1, 14336, 4096},       {"w4a16_gemm", 3, 6144, 4096},
                        {"w4a16_gemm", 16, 14336, 4096},
                        {"w4a16_gemm", 8, 4096, 14336},       {"w4a16_gemm", 64, 4096, 14336},
                        {"w4a16_gemm", 32, 4096, 4096},       {"w4a16_gemm", 128, 14336, 4096},
                        {"w4a16_gemm", 4096, 4096, 4096},     {"fp8_gemm", 4096, 4096, 4096},
                        {"fp8_gemm", 4096, 2112, 7168},       {"fp8_gemm_block", 4096, 4096, 4096},
                        {"fp8_gemm_block", 4096, 2112, 7168}, {"fp8_gemm_block", 129, 2112, 7168},
                        // Several tiles a block with 2 and 6 k tiles (the 128x128 rung's first
                        // iteration is a pair or a four-tile one; each stores the tile before).
                        {"fp8_gemm_block", 2048, 2112, 256},  {"fp8_gemm_block", 2048, 2048, 640}};
  int checked = 0;
  for (const Item& it : items) {
    const OpDef& op = Op(it.op);
    const Problem p = Shape(op, it.m, it.n, it.k);
    EXPECT_EQ(CheckAgainstDeviceReference(op, p, &checked), "") << p.label();
  }
  EXPECT_GT(checked, 0);
}

TEST(QgemmDeviceReference, MatchesCpuReference) {
  KBENCH_REQUIRE_GPU_OR_SKIP();
  for (const char* name : {"w4a16_gemm", "fp8_gemm", "fp8_gemm_block"}) {
    const OpDef& op = Op(name);
    ASSERT_TRUE(op.gpu_reference) << name;
    for (const Problem& p : CheckedProblems(op)) {
      if (p.dim("M") * p.dim("N") * p.dim("K") > (int64_t{1} << 30)) continue;
      DeviceProblem d;
      ASSERT_EQ(d.Make(op, p, 2), "");
      const int64_t numel = d.device.back().numel;
      double* ref = nullptr;
      ASSERT_EQ(cudaMalloc(&ref, static_cast<size_t>(std::max<int64_t>(numel, 1)) * sizeof(double)), cudaSuccess);
      double* outs[1] = {ref};
      const std::vector<Tensor> inputs(d.device.begin(), d.device.end() - 1);
      ASSERT_EQ(op.gpu_reference(p, inputs, outs, nullptr), 0);
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      std::vector<double> dev(static_cast<size_t>(numel));
      cudaMemcpy(dev.data(), ref, dev.size() * sizeof(double), cudaMemcpyDeviceToHost);
      cudaFree(ref);
      std::vector<std::vector<double>> cpu;
      op.reference(p, d.host_inputs, cpu);
      ASSERT_EQ(cpu.at(0).size(), dev.size());
      for (size_t i = 0; i < dev.size(); ++i)
        ASSERT_NEAR(dev[i], cpu[0][i], 1e-12 * (1 + std::fabs(cpu[0][i])))
            << name << " " << p.label() << " element " << i;
    }
  }
}

TEST(QgemmLadder, RungsTakeTheirPresets) {
  KBENCH_REQUIRE_GPU_OR_SKIP();
  int cc = 0, device = 0;
  cudaGetDevice(&device);
  int major = 0, minor = 0;
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device);
  cc = major * 10 + minor;
  const OpDef& fp8 = Op("fp8_gemm");
  for (const char* preset : {"canonical", "prefill", "ci"})
    for (Problem p : fp8.find_preset(preset)->problems) {
      p.dtype = Dtype::kFP8E4M3;
      EXPECT_EQ(fp8.find_variant("cublaslt_fp8")->skip_reason(p), "") << p.label();
      if (cc == 90) EXPECT_EQ(fp8.find_variant("cuda_wgmma_fp8")->skip_reason(p), "") << p.label();
    }
  const OpDef& block = Op("fp8_gemm_block");
  for (const char* preset : {"canonical", "prefill", "ci"})
    for (Problem p : block.find_preset(preset)->problems) {
      p.dtype = Dtype::kFP8E4M3;
      if (cc == 90) EXPECT_EQ(block.find_variant("cuda_wgmma_fp8")->skip_reason(p), "") << p.label();
      if (cc == 90) EXPECT_EQ(block.find_variant("cuda_wgmma_fp8_m192")->skip_reason(p), "") << p.label();
    }
  const OpDef& w4 = Op("w4a16_gemm");
  for (Problem p : w4.find_preset("decode")->problems) {
    p.dtype = Dtype::kBF16;
    const bool gemv = p.dim("M") <= 8;
    EXPECT_EQ(w4.find_variant("cuda_v3_gemv_magic")->skip_reason(p).empty(), gemv) << p.label();
    EXPECT_EQ(w4.find_variant("cuda_v4_mma_gemv")->skip_reason(p), "") << p.label();
    EXPECT_EQ(w4.find_variant("cuda_v4_mma_marlin")->skip_reason(p), "") << p.label();
    if (cc == 90) EXPECT_EQ(w4.find_variant("cuda_v5_wgmma_mixed")->skip_reason(p), "") << p.label();
    EXPECT_EQ(w4.find_variant("cublas_bf16")->skip_reason(p), "") << p.label();
  }
}

}  // namespace
}  // namespace kbench::kernels::testing
