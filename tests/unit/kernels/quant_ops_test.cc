// The quant family (fp8_quant, rmsnorm_fp8_quant, silu_mul_fp8_quant) and the fused elementwise ops
// (silu_and_mul, rope): references against hand-computed values, the zero-row and saturation rules,
// every CPU rung against the reference on the small, edge and ci presets, costs, presets and fills.
#include <cmath>
#include <string>
#include <vector>

#include "core/random.h"
#include "elementwise/rope/rope_math.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace kbench::kernels {
namespace {

using testing::GetOp;

const std::vector<std::string> kOps = {"fp8_quant", "rmsnorm_fp8_quant", "silu_mul_fp8_quant", "silu_and_mul",
                                       "rope"};

// Host tensors of the op for p, inputs set element by element from values (rounded to each dtype).
testing::HostTensors Inputs(const OpDef& op, const Problem& p, const std::vector<std::vector<double>>& values) {
  testing::HostTensors h = testing::Allocate(op, p);
  for (size_t i = 0; i < values.size(); ++i)
    for (size_t e = 0; e < values[i].size(); ++e)
      StoreFromDouble(h.tensors[i].data, h.tensors[i].dtype, static_cast<int64_t>(e), values[i][e]);
  return h;
}

TEST(QuantOps, Fp8QuantPerTokenKnownRows) {
  const OpDef& op = GetOp("fp8_quant");
  const Problem p = MakeProblem(op, {2, 4}, Dtype::kBF16);
  // Row 0: absmax 2, scale 2/448, v = x * 224; row 1 all zeros: scale 0, v 0 (no NaN).
  auto h = Inputs(op, p, {{1, -2, 0.5, 0.25, 0, 0, 0, 0}, {0.125}});
  const auto out = testing::RunReference(op, p, h.inputs());
  EXPECT_EQ(out.at(0), (std::vector<double>{224, -448, 112, 56, 0, 0, 0, 0}));
  ASSERT_EQ(out.at(1).size(), 2u);
  EXPECT_DOUBLE_EQ(out[1][0], 2.0 / 448);
  EXPECT_EQ(out[1][1], 0.0);
}

TEST(QuantOps, Fp8QuantStaticScale) {
  const OpDef& op = GetOp("fp8_quant");
  const Problem p = MakeProblem(op, {1, 3}, Dtype::kBF16, {"static_scale"});
  auto h = Inputs(op, p, {{1, -8, 0.5}, {0.0625}});
  const auto out = testing::RunReference(op, p, h.inputs());
  // Divided by the scale, unclamped: -128 stays, the comparison saturates what is past 448.
  EXPECT_EQ(out.at(0), (std::vector<double>{16, -128, 8}));
  EXPECT_EQ(out.at(1), (std::vector<double>{0.0625}));
}

TEST(QuantOps, RmsnormFp8QuantKnownRow) {
  const OpDef& op = GetOp("rmsnorm_fp8_quant");
  const Problem p = MakeProblem(op, {1, 2}, Dtype::kBF16);
  // Row [3, 4], weights [1, 2]: y = [0.8485, 2.2627]; absmax is y[1], so v = [448 * 3 / 8, 448].
  auto h = Inputs(op, p, {{3, 4}, {1, 2}});
  const auto out = testing::RunReference(op, p, h.inputs());
  EXPECT_NEAR(out.at(0)[0], 168.0, 1e-9);
  EXPECT_NEAR(out.at(0)[1], 448.0, 1e-9);
  EXPECT_NEAR(out.at(1)[0], 2.262741700 / 448, 1e-9);
}

TEST(QuantOps, SiluMulFp8QuantKnownRow) {
  const OpDef& op = GetOp("silu_mul_fp8_quant");
  const Problem p = MakeProblem(op, {1, 2, 2}, Dtype::kBF16);
  // gate [1, -1], up [2, 4]: h = [2 silu(1), 4 silu(-1)] = [1.4621, -1.0758].
  auto h = Inputs(op, p, {{1, -1, 2, 4}});
  const auto out = testing::RunReference(op, p, h.inputs());
  const double h0 = 2 / (1 + std::exp(-1.0)), h1 = -4 / (1 + std::exp(1.0));
  EXPECT_NEAR(out.at(0)[0], 448.0, 1e-9);
  EXPECT_NEAR(out.at(0)[1], 448.0 * h1 / h0, 1e-9);
  EXPECT_NEAR(out.at(1)[0], h0 / 448, 1e-12);
}

TEST(QuantOps, SiluAndMulKnownRow) {
  const OpDef& op = GetOp("silu_and_mul");
  const Problem p = MakeProblem(op, {1, 2, 2}, Dtype::kBF16);
  auto h = Inputs(op, p, {{1, -1, 2, 4}});
  const auto out = testing::RunReference(op, p, h.inputs()).at(0);
  EXPECT_NEAR(out[0], 2 / (1 + std::exp(-1.0)), 1e-12);
  EXPECT_NEAR(out[1], -4 / (1 + std::exp(1.0)), 1e-12);
  EXPECT_NE(op.validate(MakeProblem(op, {1, 3, 2})), "");
}

TEST(QuantOps, RopeRotatesPairsOfEachLayout) {
  const OpDef& op = GetOp("rope");
  // One token at position 1, one q head and one k head of 4: pairs (0,2),(1,3) NeoX, (0,1),(2,3) GPT-J.
  for (const bool gptj : {false, true}) {
    const Problem p = MakeProblem(op, {2, 1, 1, 4}, Dtype::kBF16, gptj ? std::vector<std::string>{"gptj"}
                                                                        : std::vector<std::string>{});
    testing::HostTensors h = testing::Allocate(op, p);
    testing::FillInputsPoisonOutputs(op, h, 1);
    for (int e = 0; e < 8; ++e) StoreFromDouble(h.tensors[0].data, Dtype::kBF16, e, e + 1);  // q = 1..8
    static_cast<int32_t*>(h.tensors[2].data)[0] = 1;
    static_cast<int32_t*>(h.tensors[2].data)[1] = 0;
    const auto out = testing::RunReference(op, p, h.inputs());
    const double a0 = rope::Angle(1, rope::InvFreq(0, 4)), a1 = rope::Angle(1, rope::InvFreq(1, 4));
    const auto c = [](double a) { return static_cast<double>(static_cast<float>(std::cos(a))); };
    const auto s = [](double a) { return static_cast<double>(static_cast<float>(std::sin(a))); };
    const int ia0 = 0, ib0 = gptj ? 1 : 2, ia1 = gptj ? 2 : 1, ib1 = 3;
    const double xa0 = ia0 + 1, xb0 = ib0 + 1, xa1 = ia1 + 1, xb1 = ib1 + 1;
    EXPECT_NEAR(out[0][ia0], xa0 * c(a0) - xb0 * s(a0), 1e-12) << gptj;
    EXPECT_NEAR(out[0][ib0], xb0 * c(a0) + xa0 * s(a0), 1e-12) << gptj;
    EXPECT_NEAR(out[0][ia1], xa1 * c(a1) - xb1 * s(a1), 1e-12) << gptj;
    EXPECT_NEAR(out[0][ib1], xb1 * c(a1) + xa1 * s(a1), 1e-12) << gptj;
    // Token 1 at position 0: angle 0, unchanged.
    for (int e = 4; e < 8; ++e) EXPECT_NEAR(out[0][e], e + 1, 1e-12);
  }
  EXPECT_NE(op.validate(MakeProblem(op, {1, 1, 1, 3})), "");
}

// Every CPU rung of the five ops against the reference on its small, edge and ci presets, 3 seeds.
TEST(QuantOps, CpuRungsMatchReference) {
  for (const std::string& name : kOps) {
    const OpDef& op = GetOp(name);
    int checks = 0;
    for (const char* preset : {"small", "edge", "quick"}) {
      ASSERT_NE(op.find_preset(preset), nullptr) << name << " " << preset;
      for (Problem p : op.find_preset(preset)->problems) {
        p.dtype = Dtype::kBF16;
        for (uint64_t seed : {1, 2, 3}) {
          for (const auto& [variant, r] : testing::CheckCpuVariants(op, p, seed)) {
            ++checks;
            EXPECT_TRUE(r.passed) << name << " " << variant << " " << p.label() << " seed " << seed << ": "
                                  << r.mismatches << " mismatches (first " << r.first_mismatch << "), "
                                  << r.non_finite << " non-finite, max abs " << r.max_abs_error;
          }
        }
      }
    }
    EXPECT_GT(checks, 0) << name;
  }
}

// A quantization that is off by a step somewhere (here: every element rounded toward zero) fails
// the check the CPU rungs pass: the comparison can fail.
TEST(QuantOps, TruncatingQuantizationFails) {
  const OpDef& op = GetOp("fp8_quant");
  const Problem p = MakeProblem(op, {64, 512}, Dtype::kBF16);
  testing::HostTensors h = testing::Allocate(op, p);
  testing::FillInputsPoisonOutputs(op, h, 5);
  const auto ref = testing::RunReference(op, p, h.inputs());
  std::vector<double> truncated(ref[0].size());
  for (size_t i = 0; i < ref[0].size(); ++i) {
    const double a = std::min(std::fabs(ref[0][i]), 448.0);
    const double step = a < 0x1p-6 ? 0x1p-9 : std::ldexp(1.0, std::ilogb(a) - 3);
    truncated[i] = std::copysign(std::floor(a / step) * step, ref[0][i]);
  }
  const CompareResult r = Compare(truncated, ref[0], testing::ToleranceFor(op, p), Dtype::kFP8E4M3);
  EXPECT_FALSE(r.passed);
  EXPECT_GT(r.mismatches, static_cast<int64_t>(ref[0].size() / 4));
}

// The edge inputs hold what they promise: all-zero rows and values past 448.
TEST(QuantOps, EdgeFillsHaveZeroRowsAndOutliers) {
  const OpDef& op = GetOp("fp8_quant");
  const Problem p = MakeProblem(op, {8, 64}, Dtype::kBF16, {"zero_rows", "outliers"});
  testing::HostTensors h = testing::Allocate(op, p);
  testing::FillInputsPoisonOutputs(op, h, 1);
  const auto x = testing::ToDoubles(h.tensors[0]);
  double row1 = 0, max_other = 0;
  for (int c = 0; c < 64; ++c) row1 += std::fabs(x[64 + c]);
  for (int c = 0; c < 64; ++c) max_other = std::max(max_other, std::fabs(x[c]));
  EXPECT_EQ(row1, 0.0);
  EXPECT_GT(max_other, 448.0);
  // Static problems read the fixed scale, whatever the seed.
  EXPECT_EQ(testing::ToDoubles(h.tensors[1])[0], 1.0 / 128);
}

TEST(QuantOps, CostsAreTheMinimalTraffic) {
  const auto cost = [](const char* name, std::vector<int64_t> dims, std::vector<std::string> flags = {}) {
    const OpDef& op = GetOp(name);
    return op.cost(MakeProblem(op, std::move(dims), Dtype::kBF16, std::move(flags)));
  };
  Cost c = cost("fp8_quant", {8192, 4096});
  EXPECT_DOUBLE_EQ(c.bytes_read, 8192.0 * 4096 * 2);
  EXPECT_DOUBLE_EQ(c.bytes_written, 8192.0 * 4096 + 8192 * 4);
  EXPECT_DOUBLE_EQ(cost("fp8_quant", {8192, 4096}, {"static_scale"}).bytes_read, 8192.0 * 4096 * 2 + 4);
  c = cost("rmsnorm_fp8_quant", {8192, 4096});
  EXPECT_DOUBLE_EQ(c.bytes_read, (8192.0 * 4096 + 4096) * 2);
  EXPECT_DOUBLE_EQ(c.bytes_written, 8192.0 * 4096 + 8192 * 4);
  c = cost("silu_mul_fp8_quant", {8192, 2, 14336});
  EXPECT_DOUBLE_EQ(c.bytes_read, 8192.0 * 2 * 14336 * 2);
  EXPECT_DOUBLE_EQ(c.bytes_written, 8192.0 * 14336 + 8192 * 4);
  c = cost("silu_and_mul", {8192, 2, 4096});
  EXPECT_DOUBLE_EQ(c.bytes_read, 8192.0 * 2 * 4096 * 2);
  EXPECT_DOUBLE_EQ(c.bytes_written, 8192.0 * 4096 * 2);
  c = cost("rope", {8192, 32, 8, 128});
  const double elems = 8192.0 * 40 * 128;
  EXPECT_DOUBLE_EQ(c.bytes_read, elems * 2 + 8192 * 4);
  EXPECT_DOUBLE_EQ(c.bytes_written, elems * 2);
}

TEST(QuantOps, PresetsAreValidAndHoldTheIssueShapes) {
  for (const std::string& name : kOps) {
    const OpDef& op = GetOp(name);
    for (const char* preset : {"small", "canonical", "edge", "quick", "ci"}) ASSERT_NE(op.find_preset(preset), nullptr);
    for (const Preset& preset : op.presets) {
      for (const Problem& p : preset.problems) {
        SCOPED_TRACE(name + " " + preset.name + " " + p.label());
        EXPECT_EQ(op.validate(p), "");
        ASSERT_EQ(p.dims.size(), op.dims.size());
        for (const std::string& f : p.flags) EXPECT_NE(std::find(op.flags.begin(), op.flags.end(), f), op.flags.end());
      }
    }
  }
  const auto has = [](const char* name, std::vector<int64_t> dims) {
    for (const Problem& p : GetOp(name).find_preset("canonical")->problems) {
      std::vector<int64_t> v;
      for (const auto& [n, x] : p.dims) v.push_back(x);
      if (v == dims) return true;
    }
    return false;
  };
  for (const char* name : {"fp8_quant", "rmsnorm_fp8_quant"}) {
    EXPECT_TRUE(has(name, {8192, 4096})) << name;
    EXPECT_TRUE(has(name, {32768, 4096})) << name;
  }
  EXPECT_TRUE(has("silu_and_mul", {8192, 2, 4096}));
  EXPECT_TRUE(has("silu_and_mul", {8192, 2, 14336}));
  EXPECT_TRUE(has("silu_mul_fp8_quant", {32768, 2, 4096}));
  EXPECT_TRUE(has("rope", {8192, 32, 8, 128}));
}

}  // namespace
}  // namespace kbench::kernels
