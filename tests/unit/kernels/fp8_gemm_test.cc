// fp8_gemm's definition on the host: the reference on a hand-made example (scales applied once, to
// the fp64 sum), the cost, the presets the issue names, the K-scaled tolerance and the CPU rung.
#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "test_util.h"

namespace kbench::kernels {
namespace {

using testing::GetOp;

TEST(Fp8GemmReference, HandExample) {
  const OpDef& op = GetOp("fp8_gemm");
  // A = [1, 2], B = [[3, 4], [0.5, -1]] (rows of K), scales 0.5 and 2: C = [11, -1.5].
  uint8_t a[2] = {FloatToFp8E4M3(1), FloatToFp8E4M3(2)};
  uint8_t b[4] = {FloatToFp8E4M3(3), FloatToFp8E4M3(4), FloatToFp8E4M3(0.5f), FloatToFp8E4M3(-1)};
  float sa = 0.5f, sb = 2.0f;
  const Tensor in[4] = {{a, 2, Dtype::kFP8E4M3}, {b, 4, Dtype::kFP8E4M3}, {&sa, 1, Dtype::kF32}, {&sb, 1, Dtype::kF32}};
  const auto out = testing::RunReference(op, MakeProblem(op, {1, 2, 2}, Dtype::kFP8E4M3), in);
  EXPECT_EQ(out.at(0), (std::vector<double>{11.0, -1.5}));
}

TEST(Fp8GemmDefinition, CostIsOneByteAnOperandElement) {
  const OpDef& op = GetOp("fp8_gemm");
  const Cost c = op.cost(MakeProblem(op, {4096, 2112, 7168}, Dtype::kFP8E4M3));
  EXPECT_EQ(c.bytes_read, 4096.0 * 7168 + 2112.0 * 7168 + 8);
  EXPECT_EQ(c.bytes_written, 4096.0 * 2112 * 2);
  EXPECT_EQ(c.flops, 2.0 * 4096 * 2112 * 7168);
  EXPECT_EQ(c.unit, ComputeUnit::kTensorCore);
}

TEST(Fp8GemmDefinition, PresetsAndTolerance) {
  const OpDef& op = GetOp("fp8_gemm");
  bool deepseek = false, n2112_edge = false;
  for (const Problem& p : op.find_preset("prefill")->problems) deepseek |= p.dim("N") == 2112 && p.dim("K") == 7168;
  for (const Problem& p : op.find_preset("edge")->problems) n2112_edge |= p.dim("N") == 2112;
  EXPECT_TRUE(deepseek);
  EXPECT_TRUE(n2112_edge);
  ASSERT_NE(op.find_preset("canonical"), nullptr);
  EXPECT_EQ(op.find_preset("canonical")->problems.back().dim("K"), 8192);
  // The GEMM family's bf16 rule: atol = 2^-8 * sqrt(K) / 3.
  const Tolerance t = op.problem_tolerance(MakeProblem(op, {1, 1, 4096}, Dtype::kFP8E4M3));
  EXPECT_DOUBLE_EQ(t.atol, 0x1p-8 * 64 / 3);
  EXPECT_DOUBLE_EQ(t.rtol, 1.6e-2);
}

TEST(Fp8GemmCpuRung, MatchesReference) {
  const OpDef& op = GetOp("fp8_gemm");
  std::vector<Problem> problems = op.find_preset("small")->problems;
  for (const Problem& p : op.find_preset("edge")->problems) problems.push_back(p);
  int checked = 0;
  for (Problem p : problems) {
    p.dtype = Dtype::kFP8E4M3;
    for (const auto& [variant, r] : testing::CheckCpuVariants(op, p, 1)) {
      EXPECT_TRUE(r.passed) << variant << " " << p.label() << ": " << r.mismatches << " mismatches, max abs "
                            << r.max_abs_error;
      ++checked;
    }
  }
  EXPECT_GT(checked, 0);
}

}  // namespace
}  // namespace kbench::kernels

namespace kbench::kernels {
namespace {

Problem Block(const OpDef& op, int64_t m, int64_t n, int64_t k) {
  return MakeProblem(op, {m, n, k, (k + 127) / 128, (n + 127) / 128}, Dtype::kFP8E4M3);
}

TEST(Fp8GemmBlockReference, EachBlockHasItsOwnScale) {
  const OpDef& op = testing::GetOp("fp8_gemm_block");
  // M = 2, N = 129 (two N blocks), K = 129 (two K blocks): A and B all ones, so each C element is
  // sa[0][m] * sb[n/128][0] * 128 + sa[1][m] * sb[n/128][1] * 1.
  const Problem p = Block(op, 2, 129, 129);
  std::vector<uint8_t> a(2 * 129, FloatToFp8E4M3(1)), b(129 * 129, FloatToFp8E4M3(1));
  float sa[4] = {1, 2, 3, 4};          // [K_blocks = 2][M = 2]
  float sb[4] = {0.5f, 0.25f, 8, 16};  // [N_blocks = 2][K_blocks = 2]
  const Tensor in[4] = {{a.data(), 258, Dtype::kFP8E4M3},
                        {b.data(), 129 * 129, Dtype::kFP8E4M3},
                        {sa, 4, Dtype::kF32},
                        {sb, 4, Dtype::kF32}};
  const auto c = testing::RunReference(op, p, in).at(0);
  ASSERT_EQ(c.size(), 2u * 129);
  EXPECT_EQ(c[0], 1 * 0.5 * 128 + 3 * 0.25 * 1);        // m 0, n 0
  EXPECT_EQ(c[128], 1 * 8.0 * 128 + 3 * 16.0 * 1);      // m 0, n 128 (second N block)
  EXPECT_EQ(c[129 + 5], 2 * 0.5 * 128 + 4 * 0.25 * 1);  // m 1, n 5
}

TEST(Fp8GemmBlockDefinition, ValidatesDerivedDimsAndPresets) {
  const OpDef& op = testing::GetOp("fp8_gemm_block");
  EXPECT_NE(op.validate(MakeProblem(op, {1, 2112, 7168, 56, 16})).find("N_blocks must be ceil(N / 128) = 17"),
            std::string::npos);
  EXPECT_NE(op.validate(MakeProblem(op, {1, 2112, 7168, 57, 17})).find("K_blocks must be ceil(K / 128) = 56"),
            std::string::npos);
  for (const Preset& preset : op.presets)
    for (const Problem& p : preset.problems) EXPECT_EQ(op.validate(p), "") << preset.name << " " << p.label();
}

#if KBENCH_HAVE_CUDA
// The 192-row three-consumer rung is fp8_gemm_block's alone (per-tensor problems promote every 256 k
// on the n256 rung), and it refuses a per-tensor problem whatever the device.
TEST(Fp8GemmBlockDefinition, M192RungIsBlockScaledOnly) {
  const OpDef& block = GetOp("fp8_gemm_block");
  const Variant* m192 = block.find_variant("cuda_wgmma_fp8_m192");
  ASSERT_NE(m192, nullptr);
  EXPECT_EQ(m192->min_compute_capability, 90);
  EXPECT_EQ(GetOp("fp8_gemm").find_variant("cuda_wgmma_fp8_m192"), nullptr);
  Problem per_tensor = MakeProblem(GetOp("fp8_gemm"), {4096, 2112, 7168});
  per_tensor.dtype = Dtype::kFP8E4M3;
  EXPECT_NE(m192->skip_reason(per_tensor).find("block scales only"), std::string::npos);
}
#endif

TEST(Fp8GemmBlockCpuRung, MatchesReference) {
  const OpDef& op = testing::GetOp("fp8_gemm_block");
  int checked = 0;
  for (const char* preset : {"small", "edge"})
    for (Problem p : op.find_preset(preset)->problems) {
      p.dtype = Dtype::kFP8E4M3;
      for (const auto& [variant, r] : testing::CheckCpuVariants(op, p, 2)) {
        EXPECT_TRUE(r.passed) << variant << " " << p.label() << ": " << r.mismatches << " mismatches";
        ++checked;
      }
    }
  EXPECT_GT(checked, 0);
}

}  // namespace
}  // namespace kbench::kernels
