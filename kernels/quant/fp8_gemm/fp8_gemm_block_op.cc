// fp8_gemm_block: fp8_gemm with DeepSeek-V3's block scales instead of per-tensor ones. A[M,K] and
// B[N,K] are E4M3 as in fp8_gemm; every 128 k of a row of A (a token) has its own scale, every
// 128x128 block of B (weights) its own, so an outlier spoils only its block:
//   C[m][n] = sum over k blocks kb of scale_a[kb][m] * scale_b[n / 128][kb] * sum_{k in kb} A[m][k] B[n][k]
// scale_a is stored [K_blocks, M] (M contiguous: one coalesced load a k block, DeepGEMM's layout) and
// scale_b [N_blocks, K_blocks]; K_blocks = ceil(K/128) and N_blocks = ceil(N/128) are derived dims.
// The rungs are fp8_gemm's kernels (fp8_gemm_cuda.cu, fp8_gemm_wgmma.cu), which apply the scales when
// they promote each 128-k partial sum into fp32.
#include <algorithm>
#include <cmath>
#include <string>

#include "core/cpu/variant.h"
#include "quant/fp8_gemm/fp8_gemm.h"

namespace kbench::kernels {
namespace {

constexpr int64_t kBlock = 128;

int64_t Blocks(int64_t x) { return (x + kBlock - 1) / kBlock; }

// As fp8_gemm's (the GEMM family's K-scaled bf16 rule): the scales' range below keeps the de-scaled
// inputs within [-1, 1].
Tolerance BlockTolerance(double k) {
  const double s = std::sqrt(std::max(k, 1.0)) / 3;
  return {.rtol = 1.6e-2, .atol = 0x1p-8 * s};
}

// fp64, k blocks in ascending order, each block's exact sum times (scale_a * scale_b).
void BlockReference(const Problem& p, std::span<const Tensor> in, std::vector<std::vector<double>>& out) {
  const int64_t m = p.dim("M"), n = p.dim("N"), k = p.dim("K"), kb_count = Blocks(k);
  out.resize(1);
  out[0].assign(static_cast<size_t>(std::max<int64_t>(m * n, 0)), 0.0);
  const auto* sa = static_cast<const float*>(in[2].data);
  const auto* sb = static_cast<const float*>(in[3].data);
  std::vector<double> a(static_cast<size_t>(std::max<int64_t>(m * k, 0))),
      b(static_cast<size_t>(std::max<int64_t>(n * k, 0)));
  for (int64_t i = 0; i < m * k; ++i) a[i] = LoadAsDouble(in[0].data, in[0].dtype, i);
  for (int64_t i = 0; i < n * k; ++i) b[i] = LoadAsDouble(in[1].data, in[1].dtype, i);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0;
      for (int64_t kb = 0; kb < kb_count; ++kb) {
        double part = 0;
        for (int64_t kk = kb * kBlock; kk < std::min(k, (kb + 1) * kBlock); ++kk) part += a[i * k + kk] * b[j * k + kk];
        acc += (static_cast<double>(sa[kb * m + i]) * static_cast<double>(sb[(j / kBlock) * kb_count + kb])) * part;
      }
      out[0][i * n + j] = acc;
    }
}

void RunCpuNaive(const Problem& p, std::span<const Tensor> t) {
  const int64_t m = p.dim("M"), n = p.dim("N"), k = p.dim("K"), kb_count = Blocks(k);
  const auto* a = static_cast<const uint8_t*>(t[0].data);
  const auto* b = static_cast<const uint8_t*>(t[1].data);
  const auto* sa = static_cast<const float*>(t[2].data);
  const auto* sb = static_cast<const float*>(t[3].data);
  auto* c = static_cast<uint16_t*>(t[4].data);
  float lut[256];
  for (int v = 0; v < 256; ++v) lut[v] = Fp8E4M3ToFloat(static_cast<uint8_t>(v));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float acc = 0;
      for (int64_t kb = 0; kb < kb_count; ++kb) {
        float part = 0;
        for (int64_t kk = kb * kBlock; kk < std::min(k, (kb + 1) * kBlock); ++kk)
          part += lut[a[i * k + kk]] * lut[b[j * k + kk]];
        acc += sa[kb * m + i] * sb[(j / kBlock) * kb_count + kb] * part;
      }
      c[i * n + j] = FloatToBf16(acc);
    }
}

std::string SkipCpuNaive(const Problem& p) {
  const double flops = 2.0 * p.dim("M") * p.dim("N") * p.dim("K");
  if (flops > 2e10)
    return "the naive CPU rung would take minutes (" + std::to_string(flops / 1e9) + " GFLOP; limit 20)";
  return "";
}

std::string Validate(const Problem& p) {
  if (p.dim("M") < 0 || p.dim("N") < 0 || p.dim("K") < 0) return "M, N and K must be >= 0";
  if (p.dim("K_blocks") != Blocks(p.dim("K")))
    return "K_blocks must be ceil(K / 128) = " + std::to_string(Blocks(p.dim("K"))) + ", not " +
           std::to_string(p.dim("K_blocks"));
  if (p.dim("N_blocks") != Blocks(p.dim("N")))
    return "N_blocks must be ceil(N / 128) = " + std::to_string(Blocks(p.dim("N"))) + ", not " +
           std::to_string(p.dim("N_blocks"));
  return "";
}

}  // namespace

OpDef Fp8GemmBlockDefinition() {
  OpDef op;
  op.name = "fp8_gemm_block";
  op.description =
      "C[M,N] = A[M,K] * B[N,K]^T in FP8 E4M3 with DeepSeek-V3 block scales: scale_a [K_blocks, M] f32 (one per 128 k "
      "of a row of A), scale_b [N_blocks, K_blocks] f32 (one per 128x128 block of B); C bf16, fp32 accumulation. "
      "K_blocks = ceil(K/128), N_blocks = ceil(N/128). Inputs in [-448, 448], scales in [1/1792, 1/448]. Cost: A, B "
      "and the scales read once, C written once; 2MNK FLOPs.";
  op.dims = {"M", "N", "K", "K_blocks", "N_blocks"};
  op.derived_dims = {{"K_blocks", "cdiv(K, 128)"}, {"N_blocks", "cdiv(N, 128)"}};
  op.zero_dims = {"M"};  // the edge preset's empty problems
  op.dtypes = {Dtype::kFP8E4M3};
  // Scales vary 4x between blocks, so a rung that applies the wrong block's scale fails the check.
  op.tensors = {
      {.name = "A", .dims = {"M", "K"}, .init_lo = -448, .init_hi = 448},
      {.name = "B", .dims = {"N", "K"}, .init_lo = -448, .init_hi = 448},
      {.name = "scale_a",
       .dims = {"K_blocks", "M"},
       .fixed_dtype = Dtype::kF32,
       .init_lo = 1.0 / 1792,
       .init_hi = 1.0 / 448},
      {.name = "scale_b",
       .dims = {"N_blocks", "K_blocks"},
       .fixed_dtype = Dtype::kF32,
       .init_lo = 1.0 / 1792,
       .init_hi = 1.0 / 448},
      {.name = "C", .dims = {"M", "N"}, .is_output = true, .fixed_dtype = Dtype::kBF16},
  };
  op.cost = [](const Problem& p) {
    const double m = static_cast<double>(p.dim("M")), n = static_cast<double>(p.dim("N")),
                 k = static_cast<double>(p.dim("K")), kb = static_cast<double>(Blocks(p.dim("K"))),
                 nb = static_cast<double>(Blocks(p.dim("N")));
    return Cost{.bytes_read = m * k + n * k + 4 * (kb * m + nb * kb),
                .bytes_written = m * n * 2,
                .flops = 2 * m * n * k,
                .unit = ComputeUnit::kTensorCore};
  };
  op.reference = BlockReference;
  op.tolerance = [](Dtype) { return BlockTolerance(16384); };
  op.problem_tolerance = [](const Problem& p) { return BlockTolerance(static_cast<double>(p.dim("K"))); };
  op.validate = Validate;
  const auto mnk = [&op](int64_t m, int64_t n, int64_t k) { return MakeProblem(op, {m, n, k, Blocks(k), Blocks(n)}); };
  op.presets = {
      {"small", {mnk(128, 128, 256)}},
      {"canonical", {mnk(4096, 4096, 4096), mnk(8192, 8192, 8192)}},
      {"prefill", {mnk(4096, 4096, 4096), mnk(4096, 14336, 4096), mnk(4096, 4096, 14336), mnk(4096, 2112, 7168)}},
      {"ci", {mnk(4096, 4096, 4096), mnk(4096, 14336, 4096)}},
      // M = 1, 3, 16, 129; N = 2112 (16.5 blocks of 128) and 200; K off the 128 block (272, 144) and
      // K = 40 (SIMT only); the empty problem.
      {"edge",
       {mnk(0, 64, 64), mnk(1, 2112, 7168), mnk(3, 136, 272), mnk(16, 200, 144), mnk(129, 2112, 512), mnk(5, 24, 40)}},
  };
  return op;
}

OpDef MakeFp8GemmBlockOp() {
  OpDef op = Fp8GemmBlockDefinition();
  Variant v = cpu::MakeCpuVariant(op, "cpu_naive", "One thread, i-j-k loops, each 128-k block's sum scaled.",
                                  RunCpuNaive, SkipCpuNaive);
  v.dtypes = {Dtype::kFP8E4M3};
  op.variants.push_back(std::move(v));
#ifdef KBENCH_HAVE_CUDA
  AddFp8GemmBlockCudaVariants(op);
#endif
  return op;
}

}  // namespace kbench::kernels
