// fp8_quant: bf16 -> FP8 E4M3 (round to nearest even, saturating at +-448), the activation side of
// an FP8 GEMM. Per-token dynamic scale (default): scales[r] = max_c |x[r,c]| / 448 and
// q[r,c] = x[r,c] / scales[r]; a row of all zeros gets scale 0 and q 0. Per-tensor static scale
// (flag static_scale): q = x / scale with the given f32 scale, and scales[r] = scale for every row
// (one layout for the consumer; its 4 B a row are 0.1% of the traffic at 4096 columns).
// A row-wise max feeding an elementwise scale: memory-bound, 3 B an element moved.
//
// Beside this file: the reference (fp8_quant_ref.cc), the CPU rung (fp8_quant_cpu.cc) and the CUDA
// ladder (fp8_quant.cu; its header says what each rung teaches).
#include "quant/fp8_quant/fp8_quant.h"

#include "quant/common/quant_inputs.h"

namespace kbench::kernels {

OpDef Fp8QuantDefinition() {
  OpDef op;
  op.name = "fp8_quant";
  op.description =
      "bf16 -> FP8 E4M3 (nearest even, saturating at 448). Per-token: scales[r] = max|x[r,:]| / 448, "
      "q = x / scales[r] (an all-zero row: scale 0, q 0); flag static_scale: q = x / scale (an f32 input), "
      "scales[r] = scale. Cost: x read once, q and scales written once (the static scale's 4 B when used); "
      "2 FLOPs per element (max, multiply). Flags zero_rows and outliers shape the edge inputs.";
  op.dims = {"rows", "cols"};
  op.zero_dims = {"rows"};  // the edge preset's empty problems
  op.dtypes = {Dtype::kBF16};
  op.flags = {quant::kStaticScaleFlag, quant::kZeroRowsFlag, quant::kOutliersFlag};
  op.tensors = {
      {.name = "x",
       .dims = {"rows", "cols"},
       .fill = [](const Problem& p, const Tensor& t, uint64_t seed, uint64_t stream) {
         quant::FillQuantInput(p, t, seed, stream, p.dim("cols"), -1.0, 1.0);
       }},
      {.name = "scale", .dims = {}, .fixed_dtype = Dtype::kF32, .fill = quant::FillStaticScale},
      {.name = "q", .dims = {"rows", "cols"}, .is_output = true, .fixed_dtype = Dtype::kFP8E4M3},
      {.name = "scales", .dims = {"rows"}, .is_output = true, .fixed_dtype = Dtype::kF32},
  };
  op.cost = [](const Problem& p) {
    const double rows = static_cast<double>(p.dim("rows")), cols = static_cast<double>(p.dim("cols"));
    const double scale_in = p.has_flag(quant::kStaticScaleFlag) ? 4 : 0;
    return Cost{.bytes_read = rows * cols * 2 + scale_in,
                .bytes_written = rows * cols + rows * 4,
                .flops = 2 * rows * cols};
  };
  op.reference = Fp8QuantReference;
  // q: the E4M3 rule of core/compare.h, the band around a rounding midpoint 1e-5 relative (a float
  // scale and its inverse are a few ulps from the exact ones); scales: the same 1e-5 relative.
  op.tolerance = [](Dtype) { return Tolerance{.rtol = 1e-5, .atol = 1e-12}; };
  op.validate = [](const Problem& p) -> std::string {
    return p.dim("rows") < 0 || p.dim("cols") < 0 ? "rows and cols must be >= 0" : "";
  };
  const auto rc = [&op](int64_t rows, int64_t cols, std::vector<std::string> flags = {}) {
    return MakeProblem(op, {rows, cols}, Dtype::kUnspecified, std::move(flags));
  };
  const std::string st = quant::kStaticScaleFlag, zr = quant::kZeroRowsFlag, ol = quant::kOutliersFlag;
  op.presets = {
      {"small", {rc(256, 1024), rc(256, 1024, {st})}},
      {"canonical", {rc(8192, 4096), rc(32768, 4096), rc(32768, 4096, {st})}},
      {"edge",
       {rc(0, 4096), rc(1, 4096), rc(7, 4096, {zr}), rc(9, 4104, {ol}), rc(5, 4095, {zr, ol}), rc(3, 7, {zr}),
        rc(4, 33, {st, ol}), rc(6, 4096, {st, zr, ol}), rc(2, 20000, {zr, ol})}},
      {"quick", {rc(64, 512, {zr, ol}), rc(16, 4096, {st, ol})}},
      {"ci", {rc(8192, 4096, {})}},  // the PR gate: one production shape
  };
  return op;
}

OpDef MakeFp8QuantOp() {
  OpDef op = Fp8QuantDefinition();
  AddFp8QuantCpuVariants(op);
#ifdef KBENCH_HAVE_CUDA
  AddFp8QuantCudaVariants(op);
#endif
  return op;
}

}  // namespace kbench::kernels
