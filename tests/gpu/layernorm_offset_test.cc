// Layernorm on rows whose mean is far from zero: the statistics must not cancel. Every rung keeps the
// cancellation bounded (two passes, Welford, or one-pass sums of deviations from a pivot that is one
// of the values) and must match the fp64 reference within the dtype's tolerance. The f32 case is the
// one that catches a kernel that does not: float sums of x and x^2 over 128 threads miss it by ~10x
// the tolerance (mean / standard deviation ~30). bf16's inputs are quantized to 8 significant bits,
// which keeps mean / standard deviation to a few hundred (~220 here), where even those sums pass; it
// checks the normalization at a large offset (v * rstd - mean * rstd). The shapes cover the
// fixed-geometry instantiations of the pipelined rungs (4096 and 8192 columns in bf16, 2048 and 4096
// in f32, more rows than resident blocks) and one any-geometry width.
#include <cstdio>
#include <string>
#include <vector>

#include "core/registry.h"
#include "gpu_presence.h"
#include "gpu_test_util.h"
#include "gtest/gtest.h"

namespace kbench::kernels::testing {
namespace {

TEST(LayernormOffsetTest, FarFromZeroMeansMatchTheReference) {
  KBENCH_REQUIRE_GPU_OR_SKIP();
  const OpDef* base = BuiltinRegistry().Find("layernorm");
  ASSERT_NE(base, nullptr);
  ASSERT_EQ(base->tensors[0].name, "x");
  struct Range {
    Dtype dtype;
    double lo, hi;  // x's uniform range
    std::vector<std::vector<int64_t>> shapes;
  };
  // f32 keeps the offset smaller: an ulp of the mean over the row's standard deviation must stay
  // below f32's tolerance (1e-5) for any algorithm. bf16 inputs in this range are multiples of 4.
  const Range ranges[] = {
      {Dtype::kBF16, 1000.0, 1016.0, {{1700, 4096}, {600, 8192}, {40, 5125}}},
      {Dtype::kF32, 60.0, 68.0, {{1700, 2048}, {600, 4096}, {40, 5125}}},
  };
  int ran = 0;
  for (const Range& range : ranges) {
    OpDef op = *base;
    op.tensors[0].init_lo = range.lo;
    op.tensors[0].init_hi = range.hi;
    for (const Variant* v : CudaVariants(op)) {
      if (!v->supports(range.dtype)) continue;
      for (const auto& shape : range.shapes) {
        const Problem p = MakeProblem(op, shape, range.dtype);
        for (uint64_t seed = 1; seed <= 2; ++seed) {
          CheckOptions o;
          o.seed = seed;
          const CheckResult r = CheckCudaVariant(op, *v, p, o);
          if (!r.skipped.empty()) {
            std::printf("  [skip] %s %s: %s\n", v->name.c_str(), p.label().c_str(), r.skipped.c_str());
            break;
          }
          ran += r.ran;
          EXPECT_TRUE(r.failure.empty()) << v->name << " " << p.label() << ": " << r.failure;
          if (!FirstFatalError().empty()) FAIL() << "CUDA context lost; stopping: " << FirstFatalError();
        }
      }
    }
  }
  std::printf("  layernorm far from zero: %d checks ran\n", ran);
  EXPECT_GE(ran, 40) << "4 rungs x 2 dtypes x 3 shapes x 2 seeds, less what skipped";
}

}  // namespace
}  // namespace kbench::kernels::testing
