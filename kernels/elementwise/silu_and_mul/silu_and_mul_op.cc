// silu_and_mul: the LLaMA MLP gate, out[r,c] = silu(x[r,0,c]) * x[r,1,c], silu(z) = z / (1 + e^-z):
// the gate and up projections come out of one GEMM as one row [gate | up] of 2d values, and this op
// halves it. x is [rows, 2, d] so its shape can be named from the op's dims; in memory it is
// [rows, 2d]. halves is always 2. 4 B read and 2 B written an output element in bf16.
//
// Beside this file: the reference (silu_and_mul_ref.cc), the CPU rung (silu_and_mul_cpu.cc) and the
// CUDA ladder (silu_and_mul.cu; its header says what each rung teaches).
#include "elementwise/silu_and_mul/silu_and_mul.h"

namespace kbench::kernels {

OpDef SiluAndMulDefinition() {
  OpDef op;
  op.name = "silu_and_mul";
  op.description =
      "out[r,c] = silu(x[r,0,c]) * x[r,1,c], silu(z) = z / (1 + e^-z): x is one row [gate | up] of 2d values "
      "(halves = 2, always), bf16, computed in float. Cost: x read once, out written once; 5 FLOPs per output "
      "element (exp counted as 1, add, divide, negate, multiply).";
  op.dims = {"rows", "halves", "d"};
  op.derived_dims = {{"halves", "2"}};
  op.zero_dims = {"rows"};  // the edge preset's empty problems
  op.dtypes = {Dtype::kBF16};
  op.tensors = {
      // +-4 covers silu's curved part and its linear tails.
      {.name = "x", .dims = {"rows", "halves", "d"}, .init_lo = -4.0, .init_hi = 4.0},
      {.name = "out", .dims = {"rows", "d"}, .is_output = true},
  };
  op.cost = [](const Problem& p) {
    const double rows = static_cast<double>(p.dim("rows")), d = static_cast<double>(p.dim("d"));
    return Cost{.bytes_read = rows * 2 * d * 2, .bytes_written = rows * d * 2, .flops = 5 * rows * d};
  };
  op.reference = SiluAndMulReference;
  op.tolerance = ElementwiseTolerance;
  op.validate = [](const Problem& p) -> std::string {
    if (p.dim("halves") != 2) return "halves must be 2 (x is [rows, 2, d]: gate then up)";
    return p.dim("rows") < 0 || p.dim("d") < 0 ? "rows and d must be >= 0" : "";
  };
  const auto rd = [&op](int64_t rows, int64_t d) { return MakeProblem(op, {rows, 2, d}); };
  op.presets = {
      {"small", {rd(64, 1024)}},
      // Llama-3-8B's intermediate size is 14336; 4096 the common smaller one.
      {"canonical", {rd(8192, 4096), rd(8192, 14336), rd(32768, 4096)}},
      {"edge", {rd(0, 4096), rd(1, 4096), rd(3, 7), rd(5, 4095), rd(2, 1), rd(7, 14336), rd(3, 4104)}},
      {"quick", {rd(16, 4096), rd(3, 1001)}},
      {"ci", {rd(8192, 4096)}},  // the PR gate: one production shape
  };
  return op;
}

OpDef MakeSiluAndMulOp() {
  OpDef op = SiluAndMulDefinition();
  AddSiluAndMulCpuVariants(op);
#ifdef KBENCH_HAVE_CUDA
  AddSiluAndMulCudaVariants(op);
#endif
  return op;
}

}  // namespace kbench::kernels
