// softmax over cols: out[r,c] = exp(x[r,c] - max_c x[r,:]) / sum_c exp(x[r,c] - max_c x[r,:]). The
// two-reduction yardstick (a max, then a sum of exponentials, before the row can be written): memory-
// bound like rmsnorm, and the lesson is how few passes over the row a variant needs.
//
// Beside this file: the reference (softmax_ref.cc), the CPU rungs (softmax_cpu.cc) and the CUDA ladder
// (softmax.cu; its header says what each rung teaches). MakeSoftmaxOp below assembles them.
#include "reduction/softmax/softmax.h"

#include "core/triton_rung.h"
#include "reduction/softmax/softmax_ref.h"

namespace kbench::kernels {
#ifdef KBENCH_HAVE_CUDA
namespace embedded {
extern const char softmax_triton_py[];  // softmax_triton.py beside this file (kernels/CMakeLists.txt)
}  // namespace embedded
#endif
namespace {

// ReductionTolerance's rtol with a much smaller atol. Softmax outputs are probabilities of typical
// size 1/cols, so ReductionTolerance's bf16 atol (1e-2) is above every output of a row wider than a
// few hundred columns and would pass a kernel that writes zeros. The outputs are positive and a float
// computation keeps their relative precision (exp(x - max) never underflows for these inputs), so
// the check stays relative down to outputs of 1e-6 (a typical probability of a 10^6-column row):
// atol = rtol * 1e-6.
Tolerance SoftmaxTolerance(Dtype d) {
  Tolerance t = ReductionTolerance(d);
  t.atol = t.rtol * 1e-6;
  return t;
}

}  // namespace

OpDef SoftmaxDefinition() {
  OpDef op;
  op.name = "softmax";
  op.description =
      "Softmax over cols: out[r,c] = exp(x[r,c] - m_r) / sum_c exp(x[r,c] - m_r), m_r the row max; "
      "x and out in the dtype, computed in float. Inputs in [-4, 4]. "
      "Cost: x and out once; 5 FLOPs per element (max, subtract, exp counted as 1, sum, divide).";
  op.dims = {"rows", "cols"};
  op.zero_dims = {"rows"};  // the edge preset's empty problems
  op.dtypes = {Dtype::kF32, Dtype::kBF16};
  op.tensors = {
      // Logit-like spread: probabilities span e^8 ~ 3000x, so both the max and the sum matter.
      {.name = "x", .dims = {"rows", "cols"}, .init_lo = -4.0, .init_hi = 4.0},
      {.name = "out", .dims = {"rows", "cols"}, .is_output = true},
  };
  op.cost = [](const Problem& p) {
    const double n = static_cast<double>(p.dim("rows")) * static_cast<double>(p.dim("cols"));
    return Cost{.bytes_read = n * DtypeBytes(p.dtype), .bytes_written = n * DtypeBytes(p.dtype), .flops = 5 * n};
  };
  op.reference = SoftmaxReference;
  op.tolerance = SoftmaxTolerance;
  op.validate = [](const Problem& p) -> std::string {
    return p.dim("rows") < 0 || p.dim("cols") < 0 ? "rows and cols must be >= 0" : "";
  };
  const auto rc = [&op](int64_t rows, int64_t cols) { return MakeProblem(op, {rows, cols}); };
  op.presets = {
      {"small", {rc(256, 1024)}},
      {"canonical", {rc(8192, 4096), rc(32768, 4096)}},
      // The PR gate's one production shape (kbench-client compare's default): 8192 rows x 4096.
      {"ci", {rc(8192, 4096)}},
      {"edge", {rc(0, 4096), rc(1, 4096), rc(769, 5125), rc(3, 7)}},
  };
  return op;
}

OpDef MakeSoftmaxOp() {
  OpDef op = SoftmaxDefinition();
  AddSoftmaxCpuVariants(op);
#ifdef KBENCH_HAVE_CUDA
  AddSoftmaxCudaVariants(op);
  AddTritonRung(op, {.name = "triton_softmax",
                     .description = "Triton: one program per row, the row in registers, float max/exp/sum",
                     .source = embedded::softmax_triton_py,
                     .dtypes = {Dtype::kF32, Dtype::kBF16}});
#endif
  return op;
}

}  // namespace kbench::kernels
