// Tolerances of the four core ops: an exact output passes, a perturbed one fails, and the checks are
// tight enough to catch the bugs they exist for (a dropped GEMM term, an all-zero softmax).
#include <cmath>

#include "gtest/gtest.h"
#include "test_util.h"

namespace kbench::kernels {
namespace {

using testing::GetOp;

struct OpShape {
  const char* op;
  std::vector<int64_t> dims;
};

// The reference rounded to the dtype, i.e. what a perfect kernel writes, and the reference itself.
struct Outputs {
  std::vector<double> exact, rounded;
};

Outputs ReferenceOutputs(const OpDef& op, const Problem& p, uint64_t seed) {
  auto h = testing::Allocate(op, p);
  testing::FillInputsPoisonOutputs(op, h, seed);
  Outputs o;
  o.exact = testing::RunReference(op, p, h.inputs()).at(0);
  const Tensor& out = h.outputs()[0];
  for (int64_t i = 0; i < out.numel; ++i) StoreFromDouble(out.data, out.dtype, i, o.exact[i]);
  o.rounded = testing::ToDoubles(out);
  return o;
}

class PerturbedOutput : public ::testing::TestWithParam<std::tuple<OpShape, Dtype>> {};

TEST_P(PerturbedOutput, ExactPassesPerturbedFails) {
  const auto& [shape, dtype] = GetParam();
  const OpDef& op = GetOp(shape.op);
  const Problem p = MakeProblem(op, shape.dims, dtype);
  const Tolerance tol = testing::ToleranceFor(op, p);
  Outputs o = ReferenceOutputs(op, p, 11);
  ASSERT_TRUE(Compare(o.rounded, o.exact, tol).passed);

  const int64_t i = static_cast<int64_t>(o.rounded.size()) / 2;
  o.rounded[i] = o.exact[i] * (1 + 4 * tol.rtol) + (o.exact[i] >= 0 ? 2 : -2) * tol.atol;  // well outside
  CompareResult r = Compare(o.rounded, o.exact, tol);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.mismatches, 1);
  EXPECT_EQ(r.first_mismatch, i);

  o.rounded[i] = NAN;
  r = Compare(o.rounded, o.exact, tol);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.non_finite, 1);
}

INSTANTIATE_TEST_SUITE_P(
    CoreOps, PerturbedOutput,
    ::testing::Combine(::testing::Values(OpShape{"vector_add", {1000}}, OpShape{"rmsnorm", {16, 300}},
                                         OpShape{"softmax", {16, 300}}, OpShape{"gemm", {24, 40, 256}}),
                       ::testing::Values(Dtype::kF32, Dtype::kBF16)));

TEST(OpTolerance, SoftmaxZerosFailInBf16) {
  const OpDef& op = GetOp("softmax");
  const Problem p = MakeProblem(op, {4, 1024}, Dtype::kBF16);
  Outputs o = ReferenceOutputs(op, p, 3);
  const std::vector<double> zeros(o.exact.size(), 0.0);
  // Every probability of a 1024-wide row is under 1e-2: the generic reduction atol would pass zeros.
  EXPECT_TRUE(Compare(zeros, o.exact, ReductionTolerance(Dtype::kBF16)).passed);
  EXPECT_FALSE(Compare(zeros, o.exact, testing::ToleranceFor(op, p)).passed);
}

TEST(OpTolerance, GemmScalesWithK) {
  const OpDef& op = GetOp("gemm");
  ASSERT_TRUE(op.problem_tolerance);
  const auto at = [&](int64_t k, Dtype d) { return op.problem_tolerance(MakeProblem(op, {64, 64, k}, d)); };
  // bf16: one bf16 ulp of the typical |C| = sqrt(K)/3; f32: 8 u sqrt(K) sqrt(K)/3.
  EXPECT_DOUBLE_EQ(at(4096, Dtype::kBF16).rtol, 1.6e-2);
  EXPECT_NEAR(at(4096, Dtype::kBF16).atol, 0x1p-8 * 64 / 3, 1e-12);
  EXPECT_NEAR(at(16 * 4096, Dtype::kBF16).atol, 4 * at(4096, Dtype::kBF16).atol, 1e-12);
  EXPECT_DOUBLE_EQ(at(4096, Dtype::kF32).rtol, 1e-4);
  EXPECT_NEAR(at(4096, Dtype::kF32).atol, 8 * 0x1p-24 * 4096 / 3, 1e-15);
  EXPECT_NEAR(at(8192, Dtype::kF32).atol, 2 * at(4096, Dtype::kF32).atol, 1e-15);
  EXPECT_GT(at(0, Dtype::kF32).atol, 0);  // K = 0 still has a finite, positive atol
  // Without a problem: the dtype-only tolerance, taken at K = 16384 (above every preset's K).
  EXPECT_NEAR(op.tolerance(Dtype::kBF16).atol, at(16384, Dtype::kBF16).atol, 1e-12);
  EXPECT_NEAR(op.tolerance(Dtype::kF32).atol, at(16384, Dtype::kF32).atol, 1e-15);
}

// A kernel that drops the last k term is off by |A[i,K-1] * B[K-1,j]| (~1/4 on average) per element:
// far below |C| ~ sqrt(K)/3, so only a tolerance that is not too loose notices.
TEST(OpTolerance, GemmCatchesADroppedTerm) {
  const OpDef& op = GetOp("gemm");
  for (Dtype d : {Dtype::kF32, Dtype::kBF16}) {
    const int64_t m = 16, n = 32, k = 256;
    const Problem p = MakeProblem(op, {m, n, k}, d);
    auto h = testing::Allocate(op, p);
    testing::FillInputsPoisonOutputs(op, h, 5);
    const auto a = testing::ToDoubles(h.inputs()[0]), b = testing::ToDoubles(h.inputs()[1]);
    const auto ref = testing::RunReference(op, p, h.inputs()).at(0);
    std::vector<double> wrong(ref);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) wrong[i * n + j] -= a[i * k + k - 1] * b[(k - 1) * n + j];
    const CompareResult r = Compare(wrong, ref, testing::ToleranceFor(op, p));
    EXPECT_FALSE(r.passed) << DtypeName(d);
    EXPECT_GT(r.mismatches, m * n / 4) << DtypeName(d);
  }
}

}  // namespace
}  // namespace kbench::kernels
