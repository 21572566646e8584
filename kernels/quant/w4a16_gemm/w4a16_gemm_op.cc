// w4a16_gemm: C[M,N] = A[M,K] * dequant(W)[N,K]^T, A and C bf16, W 4-bit codes with a bf16 scale and
// zero point per 128 k of each row (the weight-only quantization of LLM serving: AWQ, GPTQ, Marlin).
// At decode sizes (M <= 64) the op is a stream of the packed weights, a quarter of the bf16 bytes,
// which is the whole point of it; at prefill sizes it is a GEMM with a dequantization in its loads.
//
// Beside this file: the format and its generator (w4a16_gemm.h, w4a16_pack.cc), the CPU rung
// (w4a16_gemm_cpu.cc) and the CUDA ladder (w4a16_gemm_cuda.cu registers it: cuda_v1_dequant_then_gemm,
// cuda_v2_gemv_dequant, cuda_v3_gemv_magic, and the cublas_bf16 baseline on W_bf16).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "quant/w4a16_gemm/w4a16_gemm.h"

namespace kbench::kernels {
namespace {

// The GEMM family's K-scaled bf16 rule (gemm_op.cc, GemmTolerance): rtol for C's final rounding to
// bf16, atol one bf16 ulp of the typical size sqrt(K)/3 of a dot product of K terms in [-1, 1]. A and
// the dequantized weights are within [-1, 1] here, every product is exact in fp32 (see the scales'
// 4 significant bits in w4a16_gemm.h), so the rule applies as it is.
Tolerance W4Tolerance(double k) {
  const double s = std::sqrt(std::max(k, 1.0)) / 3;
  return {.rtol = 1.6e-2, .atol = 0x1p-8 * s};
}

constexpr double kDefaultToleranceK = 16384;

// The packed codes of the problem's weights, word (r, w) stored at at(r, w).
template <typename At>
void FillCodesAt(const Problem& p, const Tensor& t, uint64_t seed, At at) {
  const int64_t n = p.dim("N"), k = p.dim("K"), words = W4Words(k);
  auto* out = static_cast<uint32_t*>(t.data);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t w = 0; w < words; ++w) {
      uint8_t q[kW4PerWord];
      for (int j = 0; j < kW4PerWord; ++j) q[j] = W4CodeAt(seed, r, w * kW4PerWord + j, k);
      out[at(r, w)] = PackW4Word(q);
    }
}

void FillCodes(const Problem& p, const Tensor& t, uint64_t seed, uint64_t) {
  const int64_t words = W4Words(p.dim("K"));
  FillCodesAt(p, t, seed, [words](int64_t r, int64_t w) { return r * words + w; });
}

// The same codes in the tensor-core rungs' streaming order (W4TiledWord).
void FillTiledCodes(const Problem& p, const Tensor& t, uint64_t seed, uint64_t) {
  const int64_t n = p.dim("N"), k = p.dim("K");
  FillCodesAt(p, t, seed, [n, k](int64_t r, int64_t w) { return W4TiledWord(r, w, n, k); });
}

void FillScales(const Problem& p, const Tensor& t, uint64_t seed, uint64_t) {
  const int64_t n = p.dim("N"), groups = W4Groups(p.dim("K"));
  auto* out = static_cast<uint16_t*>(t.data);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t g = 0; g < groups; ++g) out[r * groups + g] = FloatToBf16(W4ScaleAt(seed, r, g));
}

void FillZeros(const Problem& p, const Tensor& t, uint64_t seed, uint64_t) {
  const int64_t n = p.dim("N"), groups = W4Groups(p.dim("K"));
  auto* out = static_cast<uint16_t*>(t.data);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t g = 0; g < groups; ++g) out[r * groups + g] = FloatToBf16(W4ZeroAt(seed, r, g));
}

// The same weights dequantized to bf16 (exact, see the scales), for the cuBLAS baseline.
void FillDequantized(const Problem& p, const Tensor& t, uint64_t seed, uint64_t) {
  const int64_t n = p.dim("N"), k = p.dim("K");
  auto* out = static_cast<uint16_t*>(t.data);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t g = 0; g * kW4Group < k; ++g) {
      const float z = RoundBf16(W4ZeroAt(seed, r, g)), s = RoundBf16(W4ScaleAt(seed, r, g));
      for (int64_t c = g * kW4Group; c < std::min(k, (g + 1) * kW4Group); ++c)
        out[r * k + c] = FloatToBf16((static_cast<float>(W4CodeAt(seed, r, c, k)) - z) * s);
    }
}

// fp64: C[m][n] = sum_k A[m][k] * w(n, k), w dequantized from the packed tensors by the format's
// own function, summed in ascending k.
void W4a16Reference(const Problem& p, std::span<const Tensor> in, std::vector<std::vector<double>>& out) {
  const int64_t m = p.dim("M"), n = p.dim("N"), k = p.dim("K");
  out.resize(1);
  out[0].assign(static_cast<size_t>(std::max<int64_t>(m * n, 0)), 0.0);
  const auto* w = static_cast<const uint32_t*>(in[1].data);
  const auto* scales = static_cast<const uint16_t*>(in[2].data);
  const auto* zeros = static_cast<const uint16_t*>(in[3].data);
  std::vector<double> a(static_cast<size_t>(m * k)), row(static_cast<size_t>(k));
  for (int64_t i = 0; i < m * k; ++i) a[i] = LoadAsDouble(in[0].data, in[0].dtype, i);
  for (int64_t c = 0; c < n; ++c) {
    for (int64_t kk = 0; kk < k; ++kk) row[kk] = W4Dequant(w, scales, zeros, k, c, kk);
    for (int64_t r = 0; r < m; ++r) {
      double acc = 0;
      for (int64_t kk = 0; kk < k; ++kk) acc += a[r * k + kk] * row[kk];
      out[0][r * n + c] = acc;
    }
  }
}

std::string Validate(const Problem& p) {
  const int64_t m = p.dim("M"), n = p.dim("N"), k = p.dim("K");
  if (m < 0 || n < 0 || k < 0) return "M, N and K must be >= 0";
  if (k % kW4PerWord != 0)
    return "K = " + std::to_string(k) + " must be a multiple of 8: the 4-bit codes are packed 8 to an int32 word";
  if (p.dim("K_words") != W4Words(k))
    return "K_words must be K / 8 = " + std::to_string(W4Words(k)) + ", not " + std::to_string(p.dim("K_words"));
  if (p.dim("groups") != W4Groups(k))
    return "groups must be ceil(K / 128) = " + std::to_string(W4Groups(k)) + ", not " + std::to_string(p.dim("groups"));
  return "";
}

}  // namespace

OpDef W4a16GemmDefinition() {
  OpDef op;
  op.name = "w4a16_gemm";
  op.description =
      "C[M,N] = A[M,K] * dequant(W)[N,K]^T: A, C bf16 row-major; W 4-bit codes packed 8 to an int32 (the op's "
      "nibble order), a bf16 scale and zero point per 128 k of each row, weight (q - zero) * scale. K_words = K/8 "
      "and groups = ceil(K/128) are derived dims. W_bf16 is the same weights in bf16, read only by the cuBLAS "
      "baseline and not counted; W_tiled is W's words in the order the tensor-core rung streams them (a pre-shuffled "
      "layout, read instead of W: the same bytes). Cost: A, packed W, scales and zeros read once, C written once; "
      "2MNK FLOPs.";
  op.dims = {"M", "N", "K", "K_words", "groups"};
  op.derived_dims = {{"K_words", "K / 8"}, {"groups", "cdiv(K, 128)"}};
  op.zero_dims = {"M"};  // the edge preset's empty problems
  op.dtypes = {Dtype::kBF16};
  op.tensors = {
      {.name = "A", .dims = {"M", "K"}},
      {.name = "W", .dims = {"N", "K_words"}, .fixed_dtype = Dtype::kI32, .fill = FillCodes},
      {.name = "scales", .dims = {"N", "groups"}, .fixed_dtype = Dtype::kBF16, .fill = FillScales},
      {.name = "zeros", .dims = {"N", "groups"}, .fixed_dtype = Dtype::kBF16, .fill = FillZeros},
      {.name = "W_bf16", .dims = {"N", "K"}, .fixed_dtype = Dtype::kBF16, .fill = FillDequantized},
      {.name = "W_tiled", .dims = {"N", "K_words"}, .fixed_dtype = Dtype::kI32, .fill = FillTiledCodes},
      {.name = "C", .dims = {"M", "N"}, .is_output = true},
  };
  op.cost = [](const Problem& p) {
    const double m = static_cast<double>(p.dim("M")), n = static_cast<double>(p.dim("N")),
                 k = static_cast<double>(p.dim("K")), g = static_cast<double>(W4Groups(p.dim("K")));
    return Cost{.bytes_read = m * k * 2 + n * k / 2 + n * g * 2 * 2,
                .bytes_written = m * n * 2,
                .flops = 2 * m * n * k,
                .unit = ComputeUnit::kTensorCore};
  };
  op.reference = W4a16Reference;
  op.tolerance = [](Dtype) { return W4Tolerance(kDefaultToleranceK); };
  op.problem_tolerance = [](const Problem& p) { return W4Tolerance(static_cast<double>(p.dim("K"))); };
  op.validate = Validate;
  const auto mnk = [&op](int64_t m, int64_t n, int64_t k) {
    return MakeProblem(op, {m, n, k, W4Words(k), W4Groups(k)});
  };
  const std::pair<int64_t, int64_t> shapes[] = {{4096, 4096}, {14336, 4096}, {4096, 14336}};
  Preset decode{"decode", {}}, prefill{"prefill", {}};
  for (int64_t m : {1, 16, 64})
    for (auto [n, k] : shapes) decode.problems.push_back(mnk(m, n, k));
  for (auto [n, k] : shapes) prefill.problems.push_back(mnk(4096, n, k));
  op.presets = {
      {"small", {mnk(4, 256, 512)}},
      // The PR gate: one decode token and a 16-token batch through Llama-3-70B's MLP up-projection
      // (28672x8192: 117 MB of packed weights, past L2 and the suite's 64 MiB rule for ci shapes).
      {"ci", {mnk(1, 28672, 8192), mnk(16, 28672, 8192)}},
      // K off the group size (200, 328, 1000: partial last groups; 200 and 1000 off 32 too), M = 1, 3,
      // 16, 129, N off every tile width, and the empty problem.
      {"edge", {mnk(0, 64, 128), mnk(1, 4099, 200), mnk(3, 257, 328), mnk(16, 520, 1000), mnk(129, 300, 264)}},
      std::move(decode),
      std::move(prefill),
  };
  return op;
}

OpDef MakeW4a16GemmOp() {
  OpDef op = W4a16GemmDefinition();
  AddW4a16GemmCpuVariants(op);
#ifdef KBENCH_HAVE_CUDA
  AddW4a16GemmCudaVariants(op);
#endif
  return op;
}

}  // namespace kbench::kernels
