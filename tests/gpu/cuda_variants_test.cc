// Every CUDA variant of every op in the built-in registry (gemm has gemm_test.cc), on a GPU, against
// the op's CPU reference: the small and edge presets plus a few fallback-path shapes
// (gpu_test_util.cc), f32 and bf16, three seeds with 16-byte aligned tensors and one seed with every
// pointer one element off (so vectorized rungs must take their scalar paths), outputs poisoned with
// NaN and guard bands checked for stray writes. Deterministic rungs (all but atomics) must also give
// the same bits twice.
// Skips (GTEST_SKIP) only where no GPU is visible; fails where one is but CUDA cannot use it.
#include <cctype>
#include <cstdio>
#include <string>
#include <vector>

#include "core/registry.h"
#include "gpu_presence.h"
#include "gpu_test_util.h"
#include "gtest/gtest.h"

namespace kbench::kernels::testing {
namespace {

struct Case {
  const OpDef* op;
  const Variant* variant;
};

// Every op but the GEMMs, whose ladders have their own tests (gemm_test.cc: GEMM shapes, tf32
// tolerances; qgemm_gpu_test.cc: w4a16_gemm, fp8_gemm and fp8_gemm_block, FP8 dtypes, library alignment rules).
std::vector<Case> AllCudaCases() {
  std::vector<Case> cases;
  for (const OpDef& op : BuiltinRegistry().ops()) {
    if (op.name == "gemm" || op.name == "w4a16_gemm" || op.name.rfind("fp8_gemm", 0) == 0) continue;
    for (const Variant* v : CudaVariants(op)) cases.push_back({&op, v});
  }
  return cases;
}

std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  std::string name = info.param.op->name + "__" + info.param.variant->name;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

class CudaVariantTest : public ::testing::TestWithParam<Case> {};

TEST_P(CudaVariantTest, MatchesReference) {
  KBENCH_REQUIRE_GPU_OR_SKIP();
  const OpDef& op = *GetParam().op;
  const Variant& v = *GetParam().variant;
  // Atomics make the float summation order depend on timing; everything else must be reproducible.
  const bool deterministic = v.name.find("atomic") == std::string::npos;
  int ran = 0, skipped = 0;
  for (const Problem& base : TestProblems(op)) {
    for (const Dtype d : {Dtype::kF32, Dtype::kBF16}) {
      if (!v.supports(d)) continue;
      if (base.dtype != Dtype::kUnspecified && base.dtype != d) continue;
      Problem p = base;
      p.dtype = d;
      for (uint64_t seed = 1; seed <= 4; ++seed) {
        CheckOptions o;
        o.seed = seed;
        o.offset_elems = seed == 4 ? 1 : 0;  // the last trial runs on unaligned pointers
        o.check_deterministic = deterministic && seed == 1;
        const CheckResult r = CheckCudaVariant(op, v, p, o);
        if (!r.skipped.empty()) {
          ++skipped;
          std::printf("  [skip] %s %s: %s\n", v.name.c_str(), p.label().c_str(), r.skipped.c_str());
          break;  // the same reason for every seed
        }
        ran += r.ran;
        EXPECT_TRUE(r.failure.empty()) << r.failure;
        if (!FirstFatalError().empty()) FAIL() << "CUDA context lost; stopping: " << FirstFatalError();
      }
    }
  }
  std::printf("  %s / %s: %d checks ran, %d problem(s) skipped\n", op.name.c_str(), v.name.c_str(), ran, skipped);
  EXPECT_GT(ran, 0) << "every test problem was skipped: the variant was never checked";
}

INSTANTIATE_TEST_SUITE_P(AllOps, CudaVariantTest, ::testing::ValuesIn(AllCudaCases()), CaseName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(CudaVariantTest);

}  // namespace
}  // namespace kbench::kernels::testing
