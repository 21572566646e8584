// Cost models of the four core ops against hand-computed bytes and FLOPs (and the reference series'
// numbers: 3 GiB for a 2^28 f32 vector add, ~128 MiB and intensity ~1 for an 8192x4096 bf16 RMSNorm,
// 137.4 GFLOP and 100.7 MB for a 4096^3 bf16 GEMM).
#include "gtest/gtest.h"
#include "test_util.h"

namespace kbench::kernels {
namespace {

using testing::GetOp;

Cost CostOf(std::string_view op_name, std::vector<int64_t> dims, Dtype d) {
  const OpDef& op = GetOp(op_name);
  return op.cost(MakeProblem(op, std::move(dims), d));
}

TEST(OpCost, VectorAdd) {
  Cost c = CostOf("vector_add", {1000}, Dtype::kF32);
  EXPECT_DOUBLE_EQ(c.bytes(), 12000);  // x, y read, out written: 3 * 1000 * 4 B
  EXPECT_DOUBLE_EQ(c.bytes_read, 8000);
  EXPECT_DOUBLE_EQ(c.bytes_written, 4000);
  EXPECT_DOUBLE_EQ(c.flops, 1000);
  c = CostOf("vector_add", {1000}, Dtype::kBF16);
  EXPECT_DOUBLE_EQ(c.bytes(), 6000);
  c = CostOf("vector_add", {int64_t{1} << 28}, Dtype::kF32);
  EXPECT_DOUBLE_EQ(c.bytes(), 3.0 * (1 << 30));  // 3 GiB
  EXPECT_DOUBLE_EQ(CostOf("vector_add", {0}, Dtype::kF32).bytes(), 0);
}

TEST(OpCost, Rmsnorm) {
  Cost c = CostOf("rmsnorm", {3, 7}, Dtype::kF32);
  EXPECT_DOUBLE_EQ(c.bytes(), (21 + 21 + 7) * 4.0);  // x, out, weight
  EXPECT_DOUBLE_EQ(c.flops, 4 * 21);
  EXPECT_DOUBLE_EQ(c.bytes_written, 21 * 4.0);
  c = CostOf("rmsnorm", {8192, 4096}, Dtype::kBF16);
  EXPECT_DOUBLE_EQ(c.bytes(), 2.0 * 8192 * 4096 * 2 + 4096 * 2);  // 128 MiB + 8 KiB
  EXPECT_NEAR(c.flops / c.bytes(), 1.0, 1e-3);                    // "RMSNorm I ~ 1"
}

TEST(OpCost, Softmax) {
  Cost c = CostOf("softmax", {3, 7}, Dtype::kBF16);
  EXPECT_DOUBLE_EQ(c.bytes(), 2 * 21 * 2.0);
  EXPECT_DOUBLE_EQ(c.flops, 5 * 21);
  c = CostOf("softmax", {32768, 4096}, Dtype::kF32);
  EXPECT_DOUBLE_EQ(c.bytes(), 1.0 * (1 << 30));  // 512 MiB in, 512 MiB out
}

TEST(OpCost, Gemm) {
  Cost c = CostOf("gemm", {2, 5, 3}, Dtype::kF32);  // M=2, N=5, K=3
  EXPECT_DOUBLE_EQ(c.bytes(), (2 * 3 + 3 * 5 + 2 * 5) * 4.0);
  EXPECT_DOUBLE_EQ(c.flops, 2 * 2 * 5 * 3);
  EXPECT_DOUBLE_EQ(c.bytes_written, 2 * 5 * 4.0);  // C is written, never read
  EXPECT_EQ(c.unit, ComputeUnit::kFp32Fma);
  c = CostOf("gemm", {4096, 4096, 4096}, Dtype::kBF16);
  EXPECT_DOUBLE_EQ(c.flops, 137438953472.0);  // 137.4 GFLOP
  EXPECT_DOUBLE_EQ(c.bytes(), 100663296.0);     // 100.7 MB
  EXPECT_EQ(c.unit, ComputeUnit::kTensorCore);
  c = CostOf("gemm", {4096, 4096, 4096}, Dtype::kF32);
  EXPECT_DOUBLE_EQ(c.bytes(), 192.0 * (1 << 20));        // 192 MiB
  c = CostOf("gemm", {1, 14336, 4096}, Dtype::kBF16);  // decode: dominated by B
  EXPECT_DOUBLE_EQ(c.bytes(), (4096 + 4096.0 * 14336 + 14336) * 2);
}

// The split must keep today's total for every op of the suite, and name a side for each tensor.
TEST(OpCost, ReadsPlusWritesIsTheMinimalTraffic) {
  for (const char* name : {"reduce_sum", "layernorm", "add_rmsnorm", "silu_mul_bias"}) {
    const OpDef& op = GetOp(name);
    std::vector<int64_t> dims(op.dims.size(), 64);
    const Problem p = MakeProblem(op, dims, Dtype::kF32);
    double in = 0, out = 0;
    for (const TensorSpec& t : op.tensors) (t.is_output ? out : in) += t.numel(p) * 4.0;
    const Cost c = op.cost(p);
    EXPECT_DOUBLE_EQ(c.bytes_read, in) << name;
    EXPECT_DOUBLE_EQ(c.bytes_written, out) << name;
  }
}

}  // namespace
}  // namespace kbench::kernels
