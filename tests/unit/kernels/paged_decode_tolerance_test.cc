// The paged_decode tolerance, measured as the issue asks (FlashAttention's test style): the plain
// same-precision implementation (cpu_plain: bf16 inputs, float arithmetic, out rounded to bf16) is
// run against the fp64 reference; the op's tolerance must be twice its worst error plus a small
// floor, it must pass, and a rung that drops one token of context must fail. Prints the numbers the
// family README states.
#include <cmath>
#include <cstdio>
#include <vector>

#include "attention/paged_decode/paged_decode.h"
#include "core/compare.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace kbench::kernels {
namespace {

using testing::GetOp;

struct Errors {
  double max_rel = 0;   // over elements with |ref| >= 1e-2
  double max_abs_small = 0;  // over elements with |ref| < 1e-2
  double max_abs = 0;
};

Errors Measure(const std::vector<double>& out, const std::vector<double>& ref) {
  Errors e;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double err = std::fabs(out[i] - ref[i]);
    e.max_abs = std::max(e.max_abs, err);
    if (std::fabs(ref[i]) >= 1e-2) e.max_rel = std::max(e.max_rel, err / std::fabs(ref[i]));
    else e.max_abs_small = std::max(e.max_abs_small, err);
  }
  return e;
}

std::vector<Problem> Problems(const OpDef& op) {
  std::vector<Problem> ps = op.find_preset("small")->problems;
  for (const Problem& p : op.find_preset("edge")->problems) ps.push_back(p);
  // Longer contexts: float sums over thousands of terms.
  ps.push_back(MakeProblem(op, {2, 8, 2, 128, 16, 3000, 0, 376, 188}));
  ps.push_back(MakeProblem(op, {1, 4, 1, 128, 16, 20000, 0, 1250, 1250}));
  for (Problem& p : ps) p.dtype = Dtype::kBF16;
  return ps;
}

TEST(PagedDecodeTolerance, TwiceThePlainImplementationsErrorPlusAFloor) {
  const OpDef& op = GetOp("paged_decode");
  const Variant* plain = op.find_variant("cpu_plain");
  ASSERT_NE(plain, nullptr);
  const Tolerance tol = op.tolerance(Dtype::kBF16);
  Errors worst;
  for (const Problem& p : Problems(op))
    for (uint64_t seed : {1, 2, 3}) {
      testing::HostTensors h = testing::Allocate(op, p);
      testing::FillInputsPoisonOutputs(op, h, seed);
      const auto ref = testing::RunReference(op, p, h.inputs());
      plain->run_cpu(p, h.tensors);
      const std::vector<double> out = testing::ToDoubles(h.outputs()[0]);
      const Errors e = Measure(out, ref[0]);
      worst.max_rel = std::max(worst.max_rel, e.max_rel);
      worst.max_abs_small = std::max(worst.max_abs_small, e.max_abs_small);
      worst.max_abs = std::max(worst.max_abs, e.max_abs);
      const CompareResult r = Compare(out, ref[0], tol);
      EXPECT_TRUE(r.passed) << p.label() << " seed " << seed << ": max abs " << r.max_abs_error;
    }
  std::printf("cpu_plain against fp64: max rel error %.3e (|ref| >= 1e-2), max abs error %.3e (|ref| < 1e-2), "
              "max abs %.3e; tolerance rtol %.3e atol %.1e\n",
              worst.max_rel, worst.max_abs_small, worst.max_abs, tol.rtol, tol.atol);
  // The plain error is its output rounding: at most half a bf16 ulp, 2^-8 relative (8 significant
  // bits), and reached.
  EXPECT_LE(worst.max_rel, 0x1.0p-8 * 1.02);
  EXPECT_GE(worst.max_rel, 0x1.0p-8 * 0.9);
  // The tolerance is twice that, and the floor is small against the outputs (|out| ~ 0.1 - 1).
  EXPECT_DOUBLE_EQ(tol.rtol, 2 * 0x1.0p-8);
  EXPECT_GE(tol.atol, 2 * worst.max_abs_small);
  EXPECT_LE(tol.atol, 1e-4);
}

// Off by one token (the last one dropped, as a rung that mishandles the partly filled last page
// would): outside the tolerance.
TEST(PagedDecodeTolerance, DroppingTheLastTokenFails) {
  const OpDef& op = GetOp("paged_decode");
  for (const Problem& base : {MakeProblem(op, {2, 8, 2, 128, 16, 100, 0, 14, 7}),
                              MakeProblem(op, {1, 4, 1, 128, 16, 1000, 0, 63, 63})}) {
    Problem p = base;
    p.dtype = Dtype::kBF16;
    testing::HostTensors h = testing::Allocate(op, p);
    testing::FillInputsPoisonOutputs(op, h, 1);
    const auto ref = testing::RunReference(op, p, h.inputs());
    auto* lens = static_cast<int32_t*>(h.tensors[paged_decode::kContextLens].data);
    for (int64_t b = 0; b < p.dim("batch"); ++b) lens[b] -= 1;
    op.find_variant("cpu_plain")->run_cpu(p, h.tensors);
    const CompareResult r = Compare(testing::ToDoubles(h.outputs()[0]), ref[0], op.tolerance(Dtype::kBF16));
    EXPECT_FALSE(r.passed) << p.label() << ": max abs " << r.max_abs_error;
  }
}

}  // namespace
}  // namespace kbench::kernels
