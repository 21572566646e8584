// tiny_scale: out[i] = 2 * x[i]. A test-only op that proves an op is one folder: this definition, its
// reference (tiny_scale_ref.cc), its CPU rung (tiny_scale_cpu.cc) and its CUDA rung (tiny_scale.cu),
// which MakeTinyScaleOp below assembles exactly as the suite's ops do.
#include "tiny_scale/tiny_scale.h"

#include "tiny_scale/tiny_scale_ref.h"

namespace kbench::kernels {

OpDef TinyScaleDefinition() {
  OpDef op;
  op.name = "tiny_scale";
  op.description = "out[i] = 2 * x[i] over N elements (a test-only op).";
  op.dims = {"N"};
  op.dtypes = {Dtype::kF32, Dtype::kBF16};
  op.tensors = {
      {.name = "x", .dims = {"N"}},
      {.name = "out", .dims = {"N"}, .is_output = true},
  };
  op.cost = [](const Problem& p) {
    const double n = static_cast<double>(p.dim("N"));
    return Cost{.bytes_read = n * DtypeBytes(p.dtype), .bytes_written = n * DtypeBytes(p.dtype), .flops = n};
  };
  op.reference = TinyScaleReference;
  op.tolerance = ElementwiseTolerance;
  op.validate = [](const Problem& p) -> std::string { return p.dim("N") < 0 ? "N must be >= 0" : ""; };
  const auto n = [&op](int64_t v) { return MakeProblem(op, {v}); };
  op.presets = {{"small", {n(1000)}}, {"edge", {n(0), n(1), n(7)}}};
  return op;
}

OpDef MakeTinyScaleOp() {
  OpDef op = TinyScaleDefinition();
  AddTinyScaleCpuVariants(op);
#ifdef KBENCH_HAVE_CUDA
  AddTinyScaleCudaVariants(op);
#endif
  return op;
}

}  // namespace kbench::kernels
