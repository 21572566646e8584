// vector_add: out[i] = x[i] + y[i]. The first op of the suite and the bandwidth yardstick: one FLOP
// per 3 elements moved, so every variant is memory-bound and is judged by achieved bandwidth.
//
// Beside this file: the reference (vector_add_ref.cc), the CPU rungs (vector_add_cpu.cc) and the CUDA
// ladder (vector_add.cu; its header says what each rung teaches). MakeVectorAddOp below assembles them.
#include "elementwise/vector_add/vector_add.h"

#include "core/triton_rung.h"
#include "elementwise/vector_add/vector_add_ref.h"

namespace kbench::kernels {
#ifdef KBENCH_HAVE_CUDA
namespace embedded {
extern const char vector_add_triton_py[];  // vector_add_triton.py beside this file (kernels/CMakeLists.txt)
}  // namespace embedded
#endif

OpDef VectorAddDefinition() {
  OpDef op;
  op.name = "vector_add";
  op.description =
      "out[i] = x[i] + y[i] over N elements, computed in float and stored in the dtype. "
      "Cost: 3N elements moved, N FLOPs (intensity 1/12 FLOP/B in f32, 1/6 in bf16): memory-bound.";
  op.dims = {"N"};
  op.zero_dims = {"N"};  // the edge preset's empty problems
  op.dtypes = {Dtype::kF32, Dtype::kBF16};
  op.tensors = {
      {.name = "x", .dims = {"N"}},
      {.name = "y", .dims = {"N"}},
      {.name = "out", .dims = {"N"}, .is_output = true},
  };
  op.cost = [](const Problem& p) {
    const double n = static_cast<double>(p.dim("N"));
    return Cost{.bytes_read = 2 * n * DtypeBytes(p.dtype), .bytes_written = n * DtypeBytes(p.dtype), .flops = n};
  };
  op.reference = VectorAddReference;
  op.tolerance = ElementwiseTolerance;  // One rounding of an exact float sum.
  op.validate = [](const Problem& p) -> std::string { return p.dim("N") < 0 ? "N must be >= 0" : ""; };
  const auto n = [&op](int64_t v) { return MakeProblem(op, {v}); };
  op.presets = {
      {"small", {n(int64_t{1} << 20)}},
      {"canonical", {n(int64_t{1} << 28)}},
      // The PR gate's one production shape (kbench-client compare's default): 2^28, as canonical.
      {"ci", {n(int64_t{1} << 28)}},
      {"edge", {n(0), n(1), n(7), n(769), n(5125)}},
  };
  return op;
}

OpDef MakeVectorAddOp() {
  OpDef op = VectorAddDefinition();
  AddVectorAddCpuVariants(op);
#ifdef KBENCH_HAVE_CUDA
  AddVectorAddCudaVariants(op);
  AddTritonRung(op, {.name = "triton_vector_add",
                     .description = "Triton: one program per 4096 elements, masked tail, float sum",
                     .source = embedded::vector_add_triton_py,
                     .dtypes = {Dtype::kF32, Dtype::kBF16}});
#endif
  return op;
}

}  // namespace kbench::kernels
