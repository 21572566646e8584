// An op is its folder plus one line of the suite list. tiny_scale/ is a test-only op folder laid out
// as the suite's are (definition, reference, CPU rung, CUDA rung beside its kernel); kWithTinyScale is
// the production list (KBENCH_SUITE_OPS, kernels/suite.h) with one more line, made into a registry by
// RegistryOf, as BuiltinRegistry() makes the suite. The tests also pin down what that function
// builds: the built-in suite itself, and CUDA rungs exactly in CUDA builds.
#include <string>
#include <vector>

#include "core/registry.h"
#include "gtest/gtest.h"
#include "suite.h"
#include "test_util.h"

// The suite's list, and one line for the new op.
#define TEST_SUITE_OPS(X) \
  KBENCH_SUITE_OPS(X)     \
  X(MakeTinyScaleOp)

namespace kbench::kernels {

TEST_SUITE_OPS(KBENCH_DECLARE_OP)

namespace {

constexpr OpFactory kSuite[] = {KBENCH_SUITE_OPS(KBENCH_LIST_OP)};
constexpr OpFactory kWithTinyScale[] = {TEST_SUITE_OPS(KBENCH_LIST_OP)};

std::vector<std::string> OpNames(const Registry& r) {
  std::vector<std::string> names;
  for (const OpDef& op : r.ops()) names.push_back(op.name);
  return names;
}

std::vector<std::string> VariantNames(const OpDef& op, Backend backend) {
  std::vector<std::string> names;
  for (const Variant& v : op.variants)
    if (v.backend == backend) names.push_back(v.name);
  return names;
}

// The production list through RegistryOf is the built-in suite: the same ops in the same order with
// the same variants (BuiltinRegistry may add the fault-injection op after them, by environment).
TEST(Suite, ListIsTheBuiltinRegistry) {
  const Registry suite = RegistryOf(kSuite);
  const auto& builtin = BuiltinRegistry().ops();
  ASSERT_FALSE(suite.ops().empty());
  ASSERT_GE(builtin.size(), suite.ops().size());
  for (size_t i = 0; i < suite.ops().size(); ++i) {
    const OpDef& op = suite.ops()[i];
    SCOPED_TRACE(op.name);
    EXPECT_EQ(op.name, builtin[i].name);
    for (const Backend b : {Backend::kCpu, Backend::kCuda})
      EXPECT_EQ(VariantNames(op, b), VariantNames(builtin[i], b));
  }
}

// Every op's CUDA rungs register from its .cu files in CUDA builds, and none exist otherwise.
TEST(Suite, CudaRungsExactlyInCudaBuilds) {
  const Registry suite = RegistryOf(kSuite);
  for (const OpDef& op : suite.ops()) {
    SCOPED_TRACE(op.name);
    EXPECT_FALSE(VariantNames(op, Backend::kCpu).empty());
    EXPECT_EQ(!VariantNames(op, Backend::kCuda).empty(), BuiltWithCuda());
  }
}

TEST(NewOp, OneLineAddsItAfterTheSuite) {
  std::vector<std::string> expected = OpNames(RegistryOf(kSuite));
  expected.push_back("tiny_scale");
  EXPECT_EQ(OpNames(RegistryOf(kWithTinyScale)), expected);
  EXPECT_EQ(BuiltinRegistry().Find("tiny_scale"), nullptr) << "the production suite must not change";
}

TEST(NewOp, HasItsRungs) {
  const Registry r = RegistryOf(kWithTinyScale);
  const OpDef* op = r.Find("tiny_scale");
  ASSERT_NE(op, nullptr);
  EXPECT_EQ(VariantNames(*op, Backend::kCpu), std::vector<std::string>{"cpu_naive"});
  EXPECT_EQ(VariantNames(*op, Backend::kCuda),
            BuiltWithCuda() ? std::vector<std::string>{"cuda_v1_naive"} : std::vector<std::string>{});
}

TEST(NewOp, CpuRungMatchesItsReference) {
  const Registry r = RegistryOf(kWithTinyScale);
  const OpDef* op = r.Find("tiny_scale");
  ASSERT_NE(op, nullptr);
  int checked = 0;
  for (const Preset& preset : op->presets) {
    for (Problem p : preset.problems) {
      for (const Dtype d : op->dtypes) {
        p.dtype = d;
        for (const auto& [variant, result] : testing::CheckCpuVariants(*op, p, /*seed=*/1)) {
          EXPECT_TRUE(result.passed) << variant << " " << p.label() << " " << DtypeName(d) << ": "
                                     << result.mismatches << " mismatches";
          ++checked;
        }
      }
    }
  }
  EXPECT_EQ(checked, 8);  // 4 problems x 2 dtypes x 1 CPU rung
}

}  // namespace
}  // namespace kbench::kernels
