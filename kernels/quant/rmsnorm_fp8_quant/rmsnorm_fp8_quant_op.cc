// rmsnorm_fp8_quant: RMSNorm followed by per-token FP8 quantization, the input side of an FP8 GEMM
// after a norm: y = x / sqrt(mean_c(x^2) + 1e-6) * weight, scales[r] = max|y[r,:]| / 448,
// q = y / scales[r] in E4M3 (nearest even, saturating; an all-zero row: scale 0, q 0). Unfused, y
// makes a round trip through memory in bf16 (4 B an element more); fused, x is read once and only
// the 1-byte q and the scales are written.
//
// Beside this file: the reference (rmsnorm_fp8_quant_ref.cc), the CPU rung
// (rmsnorm_fp8_quant_cpu.cc) and the CUDA ladder (rmsnorm_fp8_quant.cu; its header says what each
// rung teaches).
#include "quant/rmsnorm_fp8_quant/rmsnorm_fp8_quant.h"

#include "core/triton_rung.h"
#include "quant/common/quant_inputs.h"

namespace kbench::kernels::embedded {
extern const char rmsnorm_fp8_quant_triton_py[];  // rmsnorm_fp8_quant_triton.py beside this file
}  // namespace kbench::kernels::embedded

namespace kbench::kernels {

OpDef RmsnormFp8QuantDefinition() {
  OpDef op;
  op.name = "rmsnorm_fp8_quant";
  op.description =
      "y = x / sqrt(mean_c(x^2) + 1e-6) * weight (bf16 x and weight, float math), then per-token FP8 E4M3: "
      "scales[r] = max|y[r,:]| / 448, q = y / scales[r] (an all-zero row: scale 0, q 0). Cost: x and weight "
      "read once, q and scales written once (the fused minimum; an unfused rung's bf16 y is not counted); "
      "6 FLOPs per element. Flags zero_rows and outliers shape the edge inputs.";
  op.dims = {"rows", "cols"};
  op.zero_dims = {"rows", "cols"};  // the edge preset's empty problems
  op.dtypes = {Dtype::kBF16};
  op.flags = {quant::kZeroRowsFlag, quant::kOutliersFlag};
  op.tensors = {
      {.name = "x",
       .dims = {"rows", "cols"},
       .fill = [](const Problem& p, const Tensor& t, uint64_t seed, uint64_t stream) {
         quant::FillQuantInput(p, t, seed, stream, p.dim("cols"), -1.0, 1.0);
       }},
      {.name = "weight", .dims = {"cols"}, .init_lo = 0.5, .init_hi = 1.5},
      {.name = "q", .dims = {"rows", "cols"}, .is_output = true, .fixed_dtype = Dtype::kFP8E4M3},
      {.name = "scales", .dims = {"rows"}, .is_output = true, .fixed_dtype = Dtype::kF32},
  };
  op.cost = [](const Problem& p) {
    const double rows = static_cast<double>(p.dim("rows")), cols = static_cast<double>(p.dim("cols"));
    return Cost{.bytes_read = (rows * cols + cols) * 2,
                .bytes_written = rows * cols + rows * 4,
                .flops = 6 * rows * cols};
  };
  op.reference = RmsnormFp8QuantReference;
  // q: the E4M3 rule of core/compare.h with a band of 2^-7 around each rounding midpoint: the unfused
  // rung rounds y to bf16 (2^-9 relative) and takes its max from the rounded values (another 2^-9 in
  // the scale); float rstd and products add ~1e-6. scales: 2^-7 relative for the same reason.
  op.tolerance = [](Dtype) { return Tolerance{.rtol = 1.0 / 128, .atol = 1e-12}; };
  op.validate = [](const Problem& p) -> std::string {
    return p.dim("rows") < 0 || p.dim("cols") < 0 ? "rows and cols must be >= 0" : "";
  };
  const auto rc = [&op](int64_t rows, int64_t cols, std::vector<std::string> flags = {}) {
    return MakeProblem(op, {rows, cols}, Dtype::kUnspecified, std::move(flags));
  };
  const std::string zr = quant::kZeroRowsFlag, ol = quant::kOutliersFlag;
  op.presets = {
      {"small", {rc(256, 1024)}},
      {"canonical", {rc(8192, 4096), rc(32768, 4096)}},
      {"edge",
       {rc(0, 4096), rc(1, 4096), rc(7, 4096, {zr}), rc(9, 4104, {ol}), rc(5, 4095, {zr, ol}), rc(3, 7, {zr}),
        rc(6, 4096, {zr, ol}), rc(2, 20000, {zr, ol}), rc(3, 0)}},
      {"quick", {rc(64, 512, {zr, ol}), rc(16, 4096, {ol})}},
      {"ci", {rc(8192, 4096, {})}},  // the PR gate: one production shape
  };
  return op;
}

OpDef MakeRmsnormFp8QuantOp() {
  OpDef op = RmsnormFp8QuantDefinition();
  AddRmsnormFp8QuantCpuVariants(op);
#ifdef KBENCH_HAVE_CUDA
  AddRmsnormFp8QuantCudaVariants(op);
  AddTritonRung(op, {.name = "triton_rmsnorm_fp8_quant",
                     .description = "Triton: one program per row, the row and weight in registers, one fused reduction",
                     .source = embedded::rmsnorm_fp8_quant_triton_py,
                     .dtypes = {Dtype::kBF16}});
#endif
  return op;
}

}  // namespace kbench::kernels
