// fp8_gemm: C[M,N] = scale_a * scale_b * A[M,K] * B[N,K]^T with A and B in FP8 E4M3 (the per-tensor
// scaled FP8 linear layer of LLM serving: activations A, weights B stored [out, in] like a Linear),
// accumulated in fp32 and written as bf16. Both operands are K-major: the only layout Hopper's FP8
// wgmma reads, and the "TN" layout cuBLASLt's FP8 kernels require. Half the operand bytes of a bf16
// GEMM and twice its tensor-core rate.
//
// Beside this file: the CUDA ladder (fp8_gemm_cuda.cu: the fp64 device reference, the SIMT rung and
// the cuBLASLt baseline; fp8_gemm_wgmma.cu: the sm_90a wgmma rung).
#include <algorithm>
#include <cmath>
#include <string>

#include "core/cpu/variant.h"
#include "quant/fp8_gemm/fp8_gemm.h"

namespace kbench::kernels {
namespace {

// The GEMM family's K-scaled bf16 rule (gemm_op.cc, GemmTolerance) on the de-scaled inputs, which lie
// in [-1, 1] (the init ranges below: |A|, |B| <= 448, scales <= 1/448): rtol for C's rounding to bf16,
// atol one bf16 ulp of sqrt(K)/3. Products of two E4M3 values are exact in fp32; the tensor cores'
// reduced-precision FP8 accumulation is why the rungs promote partial sums into fp32 (see the wgmma
// rung).
Tolerance Fp8GemmTolerance(double k) {
  const double s = std::sqrt(std::max(k, 1.0)) / 3;
  return {.rtol = 1.6e-2, .atol = 0x1p-8 * s};
}

constexpr double kDefaultToleranceK = 16384;

// fp64: C[m][n] = sa * sb * sum_k A[m][k] * B[n][k], in ascending k.
void Fp8GemmReference(const Problem& p, std::span<const Tensor> in, std::vector<std::vector<double>>& out) {
  const int64_t m = p.dim("M"), n = p.dim("N"), k = p.dim("K");
  out.resize(1);
  out[0].assign(static_cast<size_t>(std::max<int64_t>(m * n, 0)), 0.0);
  const double scale = LoadAsDouble(in[2].data, in[2].dtype, 0) * LoadAsDouble(in[3].data, in[3].dtype, 0);
  std::vector<double> a(static_cast<size_t>(std::max<int64_t>(m * k, 0))),
      b(static_cast<size_t>(std::max<int64_t>(n * k, 0)));
  for (int64_t i = 0; i < m * k; ++i) a[i] = LoadAsDouble(in[0].data, in[0].dtype, i);
  for (int64_t i = 0; i < n * k; ++i) b[i] = LoadAsDouble(in[1].data, in[1].dtype, i);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0;
      for (int64_t kk = 0; kk < k; ++kk) acc += a[i * k + kk] * b[j * k + kk];
      out[0][i * n + j] = scale * acc;
    }
}

void RunCpuNaive(const Problem& p, std::span<const Tensor> t) {
  const int64_t m = p.dim("M"), n = p.dim("N"), k = p.dim("K");
  const auto* a = static_cast<const uint8_t*>(t[0].data);
  const auto* b = static_cast<const uint8_t*>(t[1].data);
  const float scale = *static_cast<const float*>(t[2].data) * *static_cast<const float*>(t[3].data);
  auto* c = static_cast<uint16_t*>(t[4].data);
  float lut[256];
  for (int v = 0; v < 256; ++v) lut[v] = Fp8E4M3ToFloat(static_cast<uint8_t>(v));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float acc = 0;
      for (int64_t kk = 0; kk < k; ++kk) acc += lut[a[i * k + kk]] * lut[b[j * k + kk]];
      c[i * n + j] = FloatToBf16(scale * acc);
    }
}

std::string SkipCpuNaive(const Problem& p) {
  const double flops = 2.0 * p.dim("M") * p.dim("N") * p.dim("K");
  if (flops > 2e10)
    return "the naive CPU rung would take minutes (" + std::to_string(flops / 1e9) + " GFLOP; limit 20)";
  return "";
}

}  // namespace

OpDef Fp8GemmDefinition() {
  OpDef op;
  op.name = "fp8_gemm";
  op.description =
      "C[M,N] = scale_a * scale_b * A[M,K] * B[N,K]^T: A, B FP8 E4M3 row-major (both K-major, the TN layout), "
      "scale_a, scale_b f32 scalars (per-tensor), C bf16; fp32 accumulation. Inputs in [-448, 448], scales in "
      "[1/512, 1/448]. Cost: A, B and the scales read once, C written once; 2MNK FLOPs.";
  op.dims = {"M", "N", "K"};
  op.zero_dims = {"M"};  // the edge preset's empty problems
  op.dtypes = {Dtype::kFP8E4M3};
  op.tensors = {
      {.name = "A", .dims = {"M", "K"}, .init_lo = -448, .init_hi = 448},
      {.name = "B", .dims = {"N", "K"}, .init_lo = -448, .init_hi = 448},
      {.name = "scale_a", .dims = {}, .fixed_dtype = Dtype::kF32, .init_lo = 1.0 / 512, .init_hi = 1.0 / 448},
      {.name = "scale_b", .dims = {}, .fixed_dtype = Dtype::kF32, .init_lo = 1.0 / 512, .init_hi = 1.0 / 448},
      {.name = "C", .dims = {"M", "N"}, .is_output = true, .fixed_dtype = Dtype::kBF16},
  };
  op.cost = [](const Problem& p) {
    const double m = static_cast<double>(p.dim("M")), n = static_cast<double>(p.dim("N")),
                 k = static_cast<double>(p.dim("K"));
    return Cost{.bytes_read = m * k + n * k + 8,
                .bytes_written = m * n * 2,
                .flops = 2 * m * n * k,
                .unit = ComputeUnit::kTensorCore};
  };
  op.reference = Fp8GemmReference;
  op.tolerance = [](Dtype) { return Fp8GemmTolerance(kDefaultToleranceK); };
  op.problem_tolerance = [](const Problem& p) { return Fp8GemmTolerance(static_cast<double>(p.dim("K"))); };
  op.validate = [](const Problem& p) -> std::string {
    return p.dim("M") < 0 || p.dim("N") < 0 || p.dim("K") < 0 ? "M, N and K must be >= 0" : "";
  };
  const auto mnk = [&op](int64_t m, int64_t n, int64_t k) { return MakeProblem(op, {m, n, k}); };
  op.presets = {
      {"small", {mnk(128, 128, 128)}},
      {"canonical", {mnk(4096, 4096, 4096), mnk(8192, 8192, 8192)}},
      // Prefill through Llama-3-8B's projections (N x K = 4096x4096, 14336x4096, 4096x14336) and
      // DeepSeek-V3's 2112x7168 (N = 2112: 16.5 tiles of 128).
      {"prefill", {mnk(4096, 4096, 4096), mnk(4096, 14336, 4096), mnk(4096, 4096, 14336), mnk(4096, 2112, 7168)}},
      // The PR gate: 4096^3 and the MLP up-projection at M = 4096 (at least 64 MiB each, past L2).
      {"ci", {mnk(4096, 4096, 4096), mnk(4096, 14336, 4096)}},
      // M = 1, 3, 16, 129; N = 2112 and N off every tile; K off the 128-byte k tile (272, 144) and
      // K = 40, not a multiple of 16 (only the SIMT rung takes it); the empty problem.
      {"edge",
       {mnk(0, 64, 64), mnk(1, 2112, 7168), mnk(3, 136, 272), mnk(16, 200, 144), mnk(129, 2112, 512), mnk(5, 24, 40)}},
  };
  return op;
}

void AddFp8GemmCpuVariants(OpDef& op) {
  Variant v = cpu::MakeCpuVariant(op, "cpu_naive", "One thread, i-j-k loops, E4M3 widened through a table.",
                                  RunCpuNaive, SkipCpuNaive);
  v.dtypes = {Dtype::kFP8E4M3};
  op.variants.push_back(std::move(v));
}

OpDef MakeFp8GemmOp() {
  OpDef op = Fp8GemmDefinition();
  AddFp8GemmCpuVariants(op);
#ifdef KBENCH_HAVE_CUDA
  AddFp8GemmCudaVariants(op);
#endif
  return op;
}

}  // namespace kbench::kernels
