// BuiltinRegistry() holds the four core ops with their problem spaces, presets and CPU variants.
#include "core/registry.h"

#include <algorithm>

#include "gtest/gtest.h"
#include "suite.h"
#include "test_util.h"

namespace kbench::kernels {

KBENCH_SUITE_OPS(KBENCH_DECLARE_OP)

namespace {

using testing::GetOp;

std::vector<std::string> VariantNames(const OpDef& op) {
  std::vector<std::string> names;
  for (const Variant& v : op.variants)
    if (v.backend == Backend::kCpu) names.push_back(v.name);
  return names;
}

bool HasProblem(const Preset& preset, std::vector<int64_t> dims) {
  return std::any_of(preset.problems.begin(), preset.problems.end(), [&](const Problem& p) {
    std::vector<int64_t> values;
    for (const auto& [name, v] : p.dims) values.push_back(v);
    return values == dims;
  });
}

TEST(Registry, ListsCoreOpsWithCpuVariants) {
  using V = std::vector<std::string>;
  EXPECT_EQ(VariantNames(GetOp("vector_add")), (V{"cpu_naive", "cpu_parallel"}));
  EXPECT_EQ(VariantNames(GetOp("rmsnorm")), (V{"cpu_naive", "cpu_fused_rows"}));
  EXPECT_EQ(VariantNames(GetOp("softmax")), (V{"cpu_naive", "cpu_fused_rows"}));
  EXPECT_EQ(VariantNames(GetOp("gemm")), (V{"cpu_naive", "cpu_blocked"}));
  // In the order BuiltinRegistry() adds them, before the rest of the suite.
  const auto& ops = BuiltinRegistry().ops();
  ASSERT_GE(ops.size(), 4u);
  EXPECT_EQ(ops[0].name, "vector_add");
  EXPECT_EQ(ops[3].name, "gemm");
}

TEST(Registry, ProblemSpaces) {
  EXPECT_EQ(GetOp("vector_add").dims, (std::vector<std::string>{"N"}));
  EXPECT_EQ(GetOp("rmsnorm").dims, (std::vector<std::string>{"rows", "cols"}));
  EXPECT_EQ(GetOp("softmax").dims, (std::vector<std::string>{"rows", "cols"}));
  EXPECT_EQ(GetOp("gemm").dims, (std::vector<std::string>{"M", "N", "K"}));
  for (const char* name : {"vector_add", "rmsnorm", "softmax", "gemm"}) {
    const OpDef& op = GetOp(name);
    SCOPED_TRACE(name);
    EXPECT_EQ(op.dtypes, (std::vector<Dtype>{Dtype::kF32, Dtype::kBF16}));
    EXPECT_FALSE(op.description.empty());
    EXPECT_TRUE(op.cost && op.reference && op.tolerance && op.validate);
    ASSERT_EQ(op.outputs().size(), 1u);
    EXPECT_TRUE(op.tensors.back().is_output);
    for (const Variant& v : op.variants) {
      if (v.backend != Backend::kCpu) continue;
      SCOPED_TRACE(v.name);
      EXPECT_FALSE(v.description.empty());
      EXPECT_TRUE(v.supports(Dtype::kF32) && v.supports(Dtype::kBF16));
      EXPECT_FALSE(v.supports(Dtype::kF16));
      EXPECT_TRUE(v.run_cpu && v.skip_reason);
      EXPECT_FALSE(v.run_cuda);
    }
  }
  const auto& gemm = GetOp("gemm").tensors;
  EXPECT_EQ(gemm[0].dims, (std::vector<std::string>{"M", "K"}));
  EXPECT_EQ(gemm[1].dims, (std::vector<std::string>{"K", "N"}));
  EXPECT_EQ(gemm[2].dims, (std::vector<std::string>{"M", "N"}));
}

TEST(Registry, Presets) {
  const OpDef& va = GetOp("vector_add");
  EXPECT_TRUE(HasProblem(*va.find_preset("canonical"), {int64_t{1} << 28}));
  for (int64_t n : {0, 1, 7, 769, 5125}) EXPECT_TRUE(HasProblem(*va.find_preset("edge"), {n})) << n;
  for (const char* name : {"rmsnorm", "softmax"}) {
    const OpDef& op = GetOp(name);
    EXPECT_TRUE(HasProblem(*op.find_preset("canonical"), {8192, 4096})) << name;
    EXPECT_TRUE(HasProblem(*op.find_preset("canonical"), {32768, 4096})) << name;
    for (auto dims : std::vector<std::vector<int64_t>>{{0, 4096}, {1, 4096}, {769, 5125}, {3, 7}})
      EXPECT_TRUE(HasProblem(*op.find_preset("edge"), dims)) << name;
  }
  const OpDef& gemm = GetOp("gemm");
  EXPECT_TRUE(HasProblem(*gemm.find_preset("canonical"), {4096, 4096, 4096}));
  EXPECT_TRUE(HasProblem(*gemm.find_preset("canonical"), {8192, 8192, 8192}));
  EXPECT_TRUE(HasProblem(*gemm.find_preset("edge"), {1, 1, 1}));
  ASSERT_NE(gemm.find_preset("decode"), nullptr);
  EXPECT_EQ(gemm.find_preset("decode")->problems.size(), 6u);
  for (int64_t m : {1, 16, 64}) {
    EXPECT_TRUE(HasProblem(*gemm.find_preset("decode"), {m, 4096, 4096}));
    EXPECT_TRUE(HasProblem(*gemm.find_preset("decode"), {m, 14336, 4096}));
  }
}

// Every preset problem is valid, names the op's dims in order, and leaves the dtype to the job.
TEST(Registry, PresetProblemsAreValid) {
  for (const char* name : {"vector_add", "rmsnorm", "softmax", "gemm"}) {
    const OpDef& op = GetOp(name);
    for (const char* preset : {"small", "canonical", "edge"})
      ASSERT_NE(op.find_preset(preset), nullptr) << name << " " << preset;
    for (const Preset& preset : op.presets)
      for (const Problem& p : preset.problems) {
        SCOPED_TRACE(std::string(name) + " " + preset.name + " " + p.label());
        EXPECT_EQ(op.validate(p), "");
        ASSERT_EQ(p.dims.size(), op.dims.size());
        for (size_t i = 0; i < op.dims.size(); ++i) EXPECT_EQ(p.dims[i].first, op.dims[i]);
        EXPECT_EQ(p.dtype, Dtype::kUnspecified);
      }
  }
  const OpDef& gemm = GetOp("gemm");
  EXPECT_NE(gemm.validate(MakeProblem(gemm, {-1, 2, 2})), "");
}

// The PR gate (kbench-client compare's default, deploy/ci/kbench-pr.yml) measures every op of the
// suite at its "ci" preset: production shapes whose tensors are larger than any GPU's L2 (H200: 50 MiB)
// or that are compute-heavy, never the launch-bound "small" problems.
TEST(Registry, EveryOpOfTheSuiteHasACiPresetOfProductionSize) {
  constexpr OpFactory kSuite[] = {KBENCH_SUITE_OPS(KBENCH_LIST_OP)};
  for (OpFactory make : kSuite) {
    const OpDef op = make();
    SCOPED_TRACE(op.name);
    const Preset* ci = op.find_preset("ci");
    ASSERT_NE(ci, nullptr) << op.name << " has no ci preset";
    ASSERT_FALSE(ci->problems.empty());
    for (const Problem& p : ci->problems) {
      SCOPED_TRACE(p.label());
      if (op.validate) EXPECT_EQ(op.validate(p), "");
      Problem bf16 = p;
      bf16.dtype = Dtype::kBF16;
      ASSERT_TRUE(op.cost);
      EXPECT_GE(op.cost(bf16).bytes(), 64.0 * (1 << 20));
    }
  }
  const OpDef& gemm = GetOp("gemm");
  EXPECT_TRUE(HasProblem(*gemm.find_preset("ci"), {4096, 4096, 4096}));
  EXPECT_TRUE(HasProblem(*gemm.find_preset("ci"), {1, 14336, 4096}));
  for (const char* name : {"rmsnorm", "softmax", "layernorm", "add_rmsnorm"})
    EXPECT_TRUE(HasProblem(*GetOp(name).find_preset("ci"), {8192, 4096})) << name;
  for (const char* name : {"vector_add", "reduce_sum"})
    EXPECT_TRUE(HasProblem(*GetOp(name).find_preset("ci"), {int64_t{1} << 28})) << name;
}

}  // namespace
}  // namespace kbench::kernels
