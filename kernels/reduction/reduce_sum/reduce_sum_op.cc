// reduce_sum: out[0] = sum_i x[i] over N elements, f32 or bf16 input, f32 output. The reduction in its
// purest form: N elements read, one written, so it is memory-bound and judged by bandwidth, while all
// the difficulty (and the non-determinism of the naive rung) is in combining partial sums.
//
// Beside this file: the reference (reduce_sum_ref.cc), the CPU rungs (reduce_sum_cpu.cc) and the CUDA
// ladder (reduce_sum.cu; its header says what each rung teaches). MakeReduceSumOp below assembles them.
#include "reduction/reduce_sum/reduce_sum.h"

#include "reduction/reduce_sum/reduce_sum_ref.h"

namespace kbench::kernels {

OpDef ReduceSumDefinition() {
  OpDef op;
  op.name = "reduce_sum";
  op.description =
      "out = sum_i x[i] over N elements; x in the dtype, accumulated and returned in f32. Inputs in "
      "[-1, 1]. Cost: x once plus 4 bytes out; 1 FLOP per element. Tolerance: float chains of at most "
      "2^16 additions, atol = 1e-5 + 2^-23 sqrt(N min(N, 2^16)) (0.5 at 2^28: dropped elements fail).";
  op.dims = {"N"};
  op.zero_dims = {"N"};  // the edge preset's empty problems
  op.dtypes = {Dtype::kF32, Dtype::kBF16};
  op.tensors = {
      // Mean zero: partial sums stay near sqrt(N), so a float accumulator never stagnates (a positive
      // input would make a sequential float sum stop growing near 2^24 and fail any sane check).
      {.name = "x", .dims = {"N"}},
      {.name = "out", .dims = {}, .is_output = true, .fixed_dtype = Dtype::kF32},
  };
  op.cost = [](const Problem& p) {
    const double n = static_cast<double>(p.dim("N"));
    return Cost{.bytes_read = n * DtypeBytes(p.dtype), .bytes_written = 4, .flops = n};
  };
  op.reference = ReduceSumReference;
  // Used only by a check that ignores problem_tolerance; right for small N only.
  op.tolerance = ReductionTolerance;
  op.problem_tolerance = ReduceSumTolerance;
  op.validate = [](const Problem& p) -> std::string { return p.dim("N") < 0 ? "N must be >= 0" : ""; };
  const auto n = [&op](int64_t v) { return MakeProblem(op, {v}); };
  op.presets = {
      {"small", {n(int64_t{1} << 20)}},
      {"canonical", {n(int64_t{1} << 28)}},
      // The PR gate's one production shape (kbench-client compare's default): 2^28, as canonical.
      {"ci", {n(int64_t{1} << 28)}},
      {"edge", {n(0), n(1), n(7), n(769), n(4095), n(5125), n((int64_t{1} << 20) + 3)}},
  };
  return op;
}

OpDef MakeReduceSumOp() {
  OpDef op = ReduceSumDefinition();
  AddReduceSumCpuVariants(op);
#ifdef KBENCH_HAVE_CUDA
  AddReduceSumCudaVariants(op);
#endif
  return op;
}

}  // namespace kbench::kernels
