// layernorm: out[r,c] = (x[r,c] - mean_r) / sqrt(var_r + 1e-5) * gamma[c] + beta[c], with mean_r and
// the population variance var_r over cols. RMSNorm's older sibling: two statistics per row (mean and
// variance) instead of one, which is where Welford's single-pass update earns its place.
//
// Beside this file: the reference (layernorm_ref.cc), the CPU rungs (layernorm_cpu.cc) and the CUDA
// ladder (layernorm.cu; its header says what each rung teaches). MakeLayernormOp below assembles them.
#include "reduction/layernorm/layernorm.h"

#include "core/triton_rung.h"
#include "reduction/layernorm/layernorm_ref.h"

namespace kbench::kernels {
#ifdef KBENCH_HAVE_CUDA
namespace embedded {
extern const char layernorm_triton_py[];  // layernorm_triton.py beside this file (kernels/CMakeLists.txt)
}  // namespace embedded
#endif

OpDef LayernormDefinition() {
  OpDef op;
  op.name = "layernorm";
  op.description =
      "LayerNorm over cols: out[r,c] = (x[r,c] - mean_r) / sqrt(var_r + eps) * gamma[c] + beta[c], "
      "eps = 1e-5, var_r the population variance; x, gamma, beta and out in the dtype, statistics in "
      "float. x in [60, 68]: a one-pass variance cancels and fails. Reference shapes 8192x4096 and "
      "32768x4096 bf16. Cost: x and out once plus gamma and beta "
      "once; 8 FLOPs per element (mean 1, variance 3, normalize 4).";
  op.dims = {"rows", "cols"};
  op.zero_dims = {"rows"};  // the edge preset's empty problems
  op.dtypes = {Dtype::kF32, Dtype::kBF16};
  op.tensors = {
      // Far from zero (mean / standard deviation ~28): statistics that cancel, a one-pass variance
      // E[x^2] - mean^2 in float, fail the f32 check instead of passing on zero-mean inputs.
      {.name = "x", .dims = {"rows", "cols"}, .init_lo = 60.0, .init_hi = 68.0},
      // Around 1, so that a wrong gamma shows and bf16 outputs keep their relative precision.
      {.name = "gamma", .dims = {"cols"}, .init_lo = 0.5, .init_hi = 1.5},
      {.name = "beta", .dims = {"cols"}, .init_lo = -0.5, .init_hi = 0.5},
      {.name = "out", .dims = {"rows", "cols"}, .is_output = true},
  };
  op.cost = [](const Problem& p) {
    const double rows = static_cast<double>(p.dim("rows")), cols = static_cast<double>(p.dim("cols"));
    return Cost{.bytes_read = (rows * cols + 2 * cols) * DtypeBytes(p.dtype),
                .bytes_written = rows * cols * DtypeBytes(p.dtype),
                .flops = 8 * rows * cols};
  };
  op.reference = LayernormReference;
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

OpDef MakeLayernormOp() {
  OpDef op = LayernormDefinition();
  AddLayernormCpuVariants(op);
#ifdef KBENCH_HAVE_CUDA
  AddLayernormCudaVariants(op);
  AddTritonRung(op, {.name = "triton_layernorm",
                     .description = "Triton: one program per row, the row in registers, float mean/variance",
                     .source = embedded::layernorm_triton_py,
                     .dtypes = {Dtype::kF32, Dtype::kBF16}});
#endif
  return op;
}

}  // namespace kbench::kernels
