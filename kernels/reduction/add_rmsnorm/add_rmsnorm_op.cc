// add_rmsnorm: the residual add fused with RMSNorm, as every pre-norm transformer block runs it:
//   residual_out = x + residual (stored in the dtype), out = rmsnorm(residual_out) * weight, eps 1e-6.
// The fusion lesson for reductions: unfused it moves 5 tensor passes, fused 4 (10 -> 8 B per bf16
// element); the cost model counts the 4.
//
// Beside this file: the reference (add_rmsnorm_ref.cc), the CPU rungs (add_rmsnorm_cpu.cc) and the CUDA
// ladder (add_rmsnorm.cu; its header says what each rung teaches). MakeAddRmsnormOp below assembles
// them.
#include "reduction/add_rmsnorm/add_rmsnorm.h"

#include "reduction/add_rmsnorm/add_rmsnorm_ref.h"

namespace kbench::kernels {

OpDef AddRmsnormDefinition() {
  OpDef op;
  op.name = "add_rmsnorm";
  op.description =
      "Fused residual add + RMSNorm over cols: residual_out = x + residual (rounded to the dtype), "
      "out = residual_out / sqrt(mean_c(residual_out^2) + eps) * weight, eps = 1e-6; sums in float. "
      "Reference shapes 8192x4096 and 32768x4096 bf16. Cost: x and residual read once, out and "
      "residual_out written once, weight once; 5 FLOPs per element (add 1, square+accumulate 2, "
      "scale 1, weight 1).";
  op.dims = {"rows", "cols"};
  op.zero_dims = {"rows"};  // the edge preset's empty problems
  op.dtypes = {Dtype::kF32, Dtype::kBF16};
  op.tensors = {
      {.name = "x", .dims = {"rows", "cols"}},
      {.name = "residual", .dims = {"rows", "cols"}},
      // Around 1 so that bf16 outputs keep their relative precision and a wrong weight shows.
      {.name = "weight", .dims = {"cols"}, .init_lo = 0.5, .init_hi = 1.5},
      {.name = "out", .dims = {"rows", "cols"}, .is_output = true},
      {.name = "residual_out", .dims = {"rows", "cols"}, .is_output = true},
  };
  op.cost = [](const Problem& p) {
    const double rows = static_cast<double>(p.dim("rows")), cols = static_cast<double>(p.dim("cols"));
    return Cost{.bytes_read = (2 * rows * cols + cols) * DtypeBytes(p.dtype),
                .bytes_written = 2 * rows * cols * DtypeBytes(p.dtype),
                .flops = 5 * rows * cols};
  };
  op.reference = AddRmsnormReference;
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
      // 20000: a row too wide for a thread's registers, so the re-reading path runs too.
      {"edge", {rc(0, 4096), rc(1, 4096), rc(769, 5125), rc(3, 7), rc(5, 4095), rc(2, 769), rc(2, 20000)}},
  };
  return op;
}

OpDef MakeAddRmsnormOp() {
  OpDef op = AddRmsnormDefinition();
  AddAddRmsnormCpuVariants(op);
#ifdef KBENCH_HAVE_CUDA
  AddAddRmsnormCudaVariants(op);
#endif
  return op;
}

}  // namespace kbench::kernels
