// silu_mul_bias: out[r,c] = silu(x[r,c] + b[c]) * y[r,c], silu(z) = z / (1 + e^-z). The gated
// activation of an MLP with its bias, and the suite's fusion yardstick: run as three elementwise ops
// it moves 7 tensor passes, fused it moves 3 (the cost model counts those 3), so a variant's
// utilization shows how much traffic it adds over the fused minimum.
//
// Beside this file: the reference (silu_mul_bias_ref.cc), the CPU rungs (silu_mul_bias_cpu.cc) and the
// CUDA ladder (silu_mul_bias.cu; its header says what each rung teaches). MakeSiluMulBiasOp below
// assembles them.
#include "elementwise/silu_mul_bias/silu_mul_bias.h"

#include "elementwise/silu_mul_bias/silu_mul_bias_ref.h"

namespace kbench::kernels {

OpDef SiluMulBiasDefinition() {
  OpDef op;
  op.name = "silu_mul_bias";
  op.description =
      "out[r,c] = silu(x[r,c] + b[c]) * y[r,c], silu(z) = z / (1 + e^-z); x, y, b and out in the dtype, "
      "computed in float. Cost: x, y and out once plus b once (the fused minimum; an unfused variant's "
      "temporaries are not counted); 5 FLOPs per element (bias add, exp counted as 1, add, divide, multiply).";
  op.dims = {"rows", "cols"};
  op.zero_dims = {"rows"};  // the edge preset's empty problems
  op.dtypes = {Dtype::kF32, Dtype::kBF16};
  op.tensors = {
      {.name = "x", .dims = {"rows", "cols"}},
      {.name = "y", .dims = {"rows", "cols"}},
      {.name = "b", .dims = {"cols"}},
      {.name = "out", .dims = {"rows", "cols"}, .is_output = true},
  };
  op.cost = [](const Problem& p) {
    const double rows = static_cast<double>(p.dim("rows")), cols = static_cast<double>(p.dim("cols"));
    return Cost{.bytes_read = (2 * rows * cols + cols) * DtypeBytes(p.dtype),
                .bytes_written = rows * cols * DtypeBytes(p.dtype),
                .flops = 5 * rows * cols};
  };
  op.reference = SiluMulBiasReference;
  // Elementwise: the fused variant rounds once. The unfused one rounds tmp to the dtype twice more;
  // in bf16 (unit roundoff 2^-8) that is at most ~3.3 roundoffs through silu (whose relative
  // condition number is <= 1.25 for |z| <= 2), about 1.3%, inside the 1.6% rtol.
  op.tolerance = ElementwiseTolerance;
  op.validate = [](const Problem& p) -> std::string {
    return p.dim("rows") < 0 || p.dim("cols") < 0 ? "rows and cols must be >= 0" : "";
  };
  const auto rc = [&op](int64_t rows, int64_t cols) { return MakeProblem(op, {rows, cols}); };
  op.presets = {
      {"small", {rc(256, 1024)}},
      // 2^28 elements, the series' reference size for the fused silu(x + b) * y.
      {"canonical", {rc(65536, 4096)}},
      // The PR gate's one production shape (kbench-client compare's default): an MLP's intermediate
      // activations, 8192 tokens x 14336.
      {"ci", {rc(8192, 14336)}},
      {"edge", {rc(0, 4096), rc(1, 4096), rc(769, 5125), rc(3, 7), rc(5, 4095), rc(2, 769)}},
  };
  return op;
}

OpDef MakeSiluMulBiasOp() {
  OpDef op = SiluMulBiasDefinition();
  AddSiluMulBiasCpuVariants(op);
#ifdef KBENCH_HAVE_CUDA
  AddSiluMulBiasCudaVariants(op);
#endif
  return op;
}

}  // namespace kbench::kernels
