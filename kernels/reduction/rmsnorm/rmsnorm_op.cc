// rmsnorm: out[r,c] = x[r,c] / sqrt(mean_c(x[r,c]^2) + 1e-6) * weight[c], one row at a time. The
// reduction yardstick: a row-wise sum feeds an elementwise scale, about 1 FLOP per byte in bf16, so a
// good variant runs at memory bandwidth and the lesson is in how the row's sum is formed.
//
// Beside this file: the reference (rmsnorm_ref.cc), the CPU rungs (rmsnorm_cpu.cc) and the CUDA ladder
// (rmsnorm.cu; its header says what each rung teaches). MakeRmsnormOp below assembles them.
#include "reduction/rmsnorm/rmsnorm.h"

#include "core/triton_rung.h"
#include "reduction/rmsnorm/rmsnorm_ref.h"

namespace kbench::kernels {
#ifdef KBENCH_HAVE_CUDA
namespace embedded {
extern const char rmsnorm_triton_py[];  // rmsnorm_triton.py beside this file (kernels/CMakeLists.txt)
}  // namespace embedded
#endif

OpDef RmsnormDefinition() {
  OpDef op;
  op.name = "rmsnorm";
  op.description =
      "RMSNorm over cols: out[r,c] = x[r,c] / sqrt(mean_c(x[r,c]^2) + eps) * weight[c], eps = 1e-6; "
      "x, weight and out in the dtype, sum of squares accumulated in float. "
      "Cost: x and out once plus weight once; 4 FLOPs per element (square+accumulate 2, scale 1, weight 1).";
  op.dims = {"rows", "cols"};
  op.zero_dims = {"rows"};  // the edge preset's empty problems
  op.dtypes = {Dtype::kF32, Dtype::kBF16};
  op.tensors = {
      {.name = "x", .dims = {"rows", "cols"}},
      // Around 1 so that bf16 outputs keep their relative precision and a wrong weight shows.
      {.name = "weight", .dims = {"cols"}, .init_lo = 0.5, .init_hi = 1.5},
      {.name = "out", .dims = {"rows", "cols"}, .is_output = true},
  };
  op.cost = [](const Problem& p) {
    const double rows = static_cast<double>(p.dim("rows")), cols = static_cast<double>(p.dim("cols"));
    // 4 FLOPs per element keeps intensity ~1 FLOP/B in bf16, as the reference series counts it.
    return Cost{.bytes_read = (rows * cols + cols) * DtypeBytes(p.dtype),
                .bytes_written = rows * cols * DtypeBytes(p.dtype),
                .flops = 4 * rows * cols};
  };
  op.reference = RmsnormReference;
  op.tolerance = ReductionTolerance;
  op.validate = [](const Problem& p) -> std::string {
    return p.dim("rows") < 0 || p.dim("cols") < 0 ? "rows and cols must be >= 0" : "";
  };
  const auto rc = [&op](int64_t rows, int64_t cols) { return MakeProblem(op, {rows, cols}); };
  op.presets = {
      {"small", {rc(256, 1024)}},
      {"canonical", {rc(8192, 4096), rc(32768, 4096)}},
      // The PR gate's one production shape (kbench-client compare's default): 8192 tokens x 4096.
      {"ci", {rc(8192, 4096)}},
      {"edge", {rc(0, 4096), rc(1, 4096), rc(769, 5125), rc(3, 7)}},
  };
  return op;
}

OpDef MakeRmsnormOp() {
  OpDef op = RmsnormDefinition();
  AddRmsnormCpuVariants(op);
#ifdef KBENCH_HAVE_CUDA
  AddRmsnormCudaVariants(op);
  AddTritonRung(op, {.name = "triton_rmsnorm",
                     .description = "Triton: one program per row, the row in registers, float statistics",
                     .source = embedded::rmsnorm_triton_py,
                     .dtypes = {Dtype::kF32, Dtype::kBF16}});
#endif
  return op;
}

}  // namespace kbench::kernels
