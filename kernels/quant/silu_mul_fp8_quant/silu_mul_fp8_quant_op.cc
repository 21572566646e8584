// silu_mul_fp8_quant: the LLaMA MLP gate followed by per-token FP8 quantization, the input of an
// FP8 down projection: h = silu(x[r,0,:]) * x[r,1,:] (x one row [gate | up], shaped [rows, 2, d] as
// silu_and_mul's), scales[r] = max|h[r,:]| / 448, q = h / scales[r] in E4M3 (nearest even,
// saturating; an all-zero row: scale 0, q 0). Unfused, h makes a round trip through memory in bf16
// (4 B an output element more); fused, 4 B are read and 1 written an output element.
//
// Beside this file: the reference (silu_mul_fp8_quant_ref.cc), the CPU rung
// (silu_mul_fp8_quant_cpu.cc) and the CUDA ladder (silu_mul_fp8_quant.cu; its header says what each
// rung teaches).
#include "quant/silu_mul_fp8_quant/silu_mul_fp8_quant.h"

#include "quant/common/quant_inputs.h"

namespace kbench::kernels {

OpDef SiluMulFp8QuantDefinition() {
  OpDef op;
  op.name = "silu_mul_fp8_quant";
  op.description =
      "h = silu(x[r,0,c]) * x[r,1,c] (x one row [gate | up], halves = 2, bf16, float math), then per-token FP8 "
      "E4M3: scales[r] = max|h[r,:]| / 448, q = h / scales[r] (an all-zero row: scale 0, q 0). Cost: x read "
      "once, q and scales written once (the fused minimum); 7 FLOPs per output element. Flags zero_rows and "
      "outliers shape the edge inputs.";
  op.dims = {"rows", "halves", "d"};
  op.derived_dims = {{"halves", "2"}};
  op.zero_dims = {"rows", "d"};  // the edge preset's empty problems
  op.dtypes = {Dtype::kBF16};
  op.flags = {quant::kZeroRowsFlag, quant::kOutliersFlag};
  op.tensors = {
      {.name = "x",
       .dims = {"rows", "halves", "d"},
       .fill = [](const Problem& p, const Tensor& t, uint64_t seed, uint64_t stream) {
         quant::FillQuantInput(p, t, seed, stream, 2 * p.dim("d"), -4.0, 4.0);
       }},
      {.name = "q", .dims = {"rows", "d"}, .is_output = true, .fixed_dtype = Dtype::kFP8E4M3},
      {.name = "scales", .dims = {"rows"}, .is_output = true, .fixed_dtype = Dtype::kF32},
  };
  op.cost = [](const Problem& p) {
    const double rows = static_cast<double>(p.dim("rows")), d = static_cast<double>(p.dim("d"));
    return Cost{.bytes_read = rows * 2 * d * 2, .bytes_written = rows * d + rows * 4, .flops = 7 * rows * d};
  };
  op.reference = SiluMulFp8QuantReference;
  // q: the E4M3 rule of core/compare.h with a band of 2^-7 around each rounding midpoint: the unfused
  // rung rounds h to bf16 (2^-9 relative) and takes its max from the rounded values (another 2^-9 in
  // the scale); __expf adds a few ulps. scales: 2^-7 relative for the same reason.
  op.tolerance = [](Dtype) { return Tolerance{.rtol = 1.0 / 128, .atol = 1e-12}; };
  op.validate = [](const Problem& p) -> std::string {
    if (p.dim("halves") != 2) return "halves must be 2 (x is [rows, 2, d]: gate then up)";
    return p.dim("rows") < 0 || p.dim("d") < 0 ? "rows and d must be >= 0" : "";
  };
  const auto rd = [&op](int64_t rows, int64_t d, std::vector<std::string> flags = {}) {
    return MakeProblem(op, {rows, 2, d}, Dtype::kUnspecified, std::move(flags));
  };
  const std::string zr = quant::kZeroRowsFlag, ol = quant::kOutliersFlag;
  op.presets = {
      {"small", {rd(256, 1024)}},
      {"canonical", {rd(8192, 4096), rd(32768, 4096), rd(8192, 14336)}},
      {"edge",
       {rd(0, 4096), rd(1, 4096), rd(7, 4096, {zr}), rd(9, 4104, {ol}), rd(5, 4095, {zr, ol}), rd(3, 7, {zr}),
        rd(6, 14336, {zr, ol}), rd(2, 20000, {zr, ol}), rd(3, 0)}},
      {"quick", {rd(64, 512, {zr, ol}), rd(16, 4096, {ol})}},
      {"ci", {rd(8192, 4096, {})}},  // the PR gate: one production shape
  };
  return op;
}

OpDef MakeSiluMulFp8QuantOp() {
  OpDef op = SiluMulFp8QuantDefinition();
  AddSiluMulFp8QuantCpuVariants(op);
#ifdef KBENCH_HAVE_CUDA
  AddSiluMulFp8QuantCudaVariants(op);
#endif
  return op;
}

}  // namespace kbench::kernels
