// References of the four core ops against small examples computed by hand.
#include <cmath>
#include <numeric>

#include "core/random.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace kbench::kernels {
namespace {

using testing::FromValues;
using testing::GetOp;
using testing::RunReference;

TEST(OpReference, VectorAdd) {
  const OpDef& op = GetOp("vector_add");
  auto in = FromValues({{1, 2, 3.25}, {0.5, -2, 4}}, Dtype::kF32);
  auto out = RunReference(op, MakeProblem(op, {3}, Dtype::kF32), in.inputs());
  EXPECT_EQ(out.at(0), (std::vector<double>{1.5, 0, 7.25}));
}

TEST(OpReference, VectorAddReadsStoredBf16) {
  const OpDef& op = GetOp("vector_add");
  // 1 + 2^-9 is not a bf16 value: stored as 1, so the reference sums 1 + 1.
  auto in = FromValues({{1 + 0x1p-9}, {1}}, Dtype::kBF16);
  EXPECT_EQ(RunReference(op, MakeProblem(op, {1}, Dtype::kBF16), in.inputs()).at(0).at(0), 2.0);
}

TEST(OpReference, RmsnormKnownRow) {
  const OpDef& op = GetOp("rmsnorm");
  // Row [3, 4]: mean square 12.5, rms sqrt(12.5) = 3.5355339; weights [1, 2].
  auto in = FromValues({{3, 4}, {1, 2}}, Dtype::kF32);
  auto out = RunReference(op, MakeProblem(op, {1, 2}, Dtype::kF32), in.inputs()).at(0);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_NEAR(out[0], 0.848528137, 1e-7);  // eps moves it by ~3e-8
  EXPECT_NEAR(out[1], 2.262741700, 1e-7);
}

TEST(OpReference, RmsnormEpsIsOneMillionth) {
  const OpDef& op = GetOp("rmsnorm");
  // Mean square 1e-6 + eps 1e-6 = 2e-6: out = 1e-3 / sqrt(2e-6) = 1/sqrt(2), not 1.
  auto in = FromValues({{1e-3, -1e-3}, {1, 1}}, Dtype::kF32);
  auto out = RunReference(op, MakeProblem(op, {1, 2}, Dtype::kF32), in.inputs()).at(0);
  EXPECT_NEAR(out[0], std::sqrt(0.5), 1e-6);
  EXPECT_NEAR(out[1], -std::sqrt(0.5), 1e-6);
}

TEST(OpReference, RmsnormRowsIndependent) {
  const OpDef& op = GetOp("rmsnorm");
  auto in = FromValues({{3, 4, 1, 1}, {1, 1}}, Dtype::kF32);
  auto out = RunReference(op, MakeProblem(op, {2, 2}, Dtype::kF32), in.inputs()).at(0);
  EXPECT_NEAR(out[2], 1.0, 1e-6);  // row [1, 1]: rms 1
  EXPECT_NEAR(out[3], 1.0, 1e-6);
}

TEST(OpReference, SoftmaxKnownRows) {
  const OpDef& op = GetOp("softmax");
  // Row 0 uniform; row 1 [0, ln 3]: weights 1 and 3; row 2 would overflow exp without the max.
  auto in = FromValues({{2, 2, 2, 2, 0, std::log(3.0), 0, 0, 1000, 1000, 0, 0}}, Dtype::kF32);
  auto out = RunReference(op, MakeProblem(op, {3, 4}, Dtype::kF32), in.inputs()).at(0);
  for (int c = 0; c < 4; ++c) EXPECT_DOUBLE_EQ(out[c], 0.25);
  EXPECT_NEAR(out[4], 1.0 / 6, 1e-7);
  EXPECT_NEAR(out[5], 3.0 / 6, 1e-7);
  EXPECT_NEAR(out[8], 0.5, 1e-12);
  EXPECT_NEAR(out[10], 0.0, 1e-300);
}

TEST(OpReference, SoftmaxRowsSumToOne) {
  const OpDef& op = GetOp("softmax");
  const Problem p = MakeProblem(op, {5, 769}, Dtype::kBF16);
  auto h = testing::Allocate(op, p);
  testing::FillInputsPoisonOutputs(op, h, 7);
  auto out = RunReference(op, p, h.inputs()).at(0);
  for (int r = 0; r < 5; ++r) {
    EXPECT_NEAR(std::accumulate(out.begin() + r * 769, out.begin() + (r + 1) * 769, 0.0), 1.0, 1e-12);
  }
}

TEST(OpReference, GemmTwoByThreeByTwo) {
  const OpDef& op = GetOp("gemm");
  // A = [[1,2,3],[4,5,6]] (2x3), B = [[7,8],[9,10],[11,12]] (3x2): C = [[58,64],[139,154]].
  auto in = FromValues({{1, 2, 3, 4, 5, 6}, {7, 8, 9, 10, 11, 12}}, Dtype::kF32);
  auto out = RunReference(op, MakeProblem(op, {2, 2, 3}, Dtype::kF32), in.inputs()).at(0);
  EXPECT_EQ(out, (std::vector<double>{58, 64, 139, 154}));
}

TEST(OpReference, GemmNonSquareRowMajor) {
  const OpDef& op = GetOp("gemm");
  // A 1x2 = [1, 2]; B 2x3 = [[1,0,2],[0,1,3]]: C = [1, 2, 8]. Catches a transposed B.
  auto in = FromValues({{1, 2}, {1, 0, 2, 0, 1, 3}}, Dtype::kF32);
  auto out = RunReference(op, MakeProblem(op, {1, 3, 2}, Dtype::kF32), in.inputs()).at(0);
  EXPECT_EQ(out, (std::vector<double>{1, 2, 8}));
}

TEST(OpReference, GemmEmptyKIsZero) {
  const OpDef& op = GetOp("gemm");
  auto in = FromValues({{}, {}}, Dtype::kF32);
  auto out = RunReference(op, MakeProblem(op, {2, 3, 0}, Dtype::kF32), in.inputs()).at(0);
  EXPECT_EQ(out, std::vector<double>(6, 0.0));
}

}  // namespace
}  // namespace kbench::kernels
