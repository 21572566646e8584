// attention (prefill forward): O = softmax(scale * Q K^T [+ causal mask]) V per (batch, query head),
// scale = 1/sqrt(d), with the row's log-sum-exp beside O. The op where the memory hierarchy decides
// everything: the naive form writes and re-reads the N_q x N_kv score matrix (O(N^2) bytes), the
// flash forms keep it on chip and leave 4*N_q*N_kv*d tensor-core FLOPs against O(N*d) bytes.
//
// Beside this file: the references (attention_ref.cc: fp64, and the plain same-precision
// implementation that sets the tolerance and is the CPU rung, attention_cpu.cc) and the CUDA ladder
// (attention_naive.cu, attention_flash_simt.cu, attention_flash_mma.cu, each header saying what its
// rung teaches; attention_reference.cu registers them in ladder order beside the device reference),
// and the Triton rung (attention_triton.py), registered after them below.
#include <cmath>
#include <string>

#include "attention/attention/attention.h"
#include "attention/attention/attention_ref.h"
#include "core/triton_rung.h"

namespace kbench::kernels {
#ifdef KBENCH_HAVE_CUDA
namespace embedded {
extern const char attention_triton_py[];  // attention_triton.py beside this file (kernels/CMakeLists.txt)
}  // namespace embedded
#endif
namespace {

// Query-key pairs the problem computes: all of them, or under the causal mask (bottom-right aligned,
// N_q <= N_kv) row i sees N_kv - N_q + i + 1 keys.
double Pairs(const AttentionShape& s) {
  const double nq = static_cast<double>(s.n_q), nkv = static_cast<double>(s.n_kv);
  if (!s.causal) return nq * nkv;
  return nq * (nkv - nq) + nq * (nq + 1) / 2;
}

}  // namespace

// FlashAttention's rule (tests/test_flash_attn.py there): a kernel's largest error against the fp64
// reference may be at most twice that of the plain implementation in the same precision, plus a
// small floor (1e-5). The plain implementation (AttentionPlain: S and P stored in the dtype, f32
// accumulation) measured against fp64 on the small and edge presets, seeds 1 and 2
// (AttentionTolerance.CoversTwiceThePlainError in tests/unit/kernels/attention_test.cc prints it):
//   bf16: O max abs error 0.0062, LSE max relative error 0.0060 (max abs 0.0096 at |LSE| ~ 2-9);
//   f16:  O max abs error 0.00084, LSE max relative error 0.00068.
// O is an average of V (|O| <= 1), so its error is absolute: atol = 2 x the O error (rounded up) +
// the floor. The LSE (f32, but computed from S stored in the dtype) errs in proportion to |S|:
// rtol = 2 x its relative error (rounded up). The flash rungs keep S in f32 and sit well inside.
Tolerance AttentionTolerance(Dtype d) {
  if (d == Dtype::kF16) return {.rtol = 2 * 0.00075, .atol = 2 * 0.0009 + 1e-5};
  return {.rtol = 2 * 0.0064, .atol = 2 * 0.0064 + 1e-5};  // bf16: 3 fewer mantissa bits than f16
}

OpDef AttentionDefinition() {
  OpDef op;
  op.name = "attention";
  op.description =
      "Prefill attention forward: o = softmax(q k^T / sqrt(d)) v per batch and query head, query head h reading "
      "KV head h / (H / H_kv) (MHA, GQA, MQA); flag causal masks keys j > i + N_kv - N_q (bottom-right aligned). "
      "q [B,H,N_q,d], k and v [B,H_kv,N_kv,d], o [B,H,N_q,d] in the dtype, lse [B,H,N_q] in f32 (natural log "
      "of the row's sum of exp(scores)); float accumulation. Cost: q, k, v read once, o and lse written once; "
      "4*B*H*d FLOPs per unmasked query-key pair, on the tensor cores.";
  op.dims = {"B", "H", "H_kv", "N_q", "N_kv", "d"};
  op.dtypes = {Dtype::kBF16, Dtype::kF16};
  op.flags = {"causal"};
  // q and k in [-2, 2] (standard deviation 1.15, like FlashAttention's randn inputs): scores then
  // spread ~1.3 around 0, so the softmax weights differ by e^+-4 and a wrong mask or scale shows.
  op.tensors = {
      {.name = "q", .dims = {"B", "H", "N_q", "d"}, .init_lo = -2, .init_hi = 2},
      {.name = "k", .dims = {"B", "H_kv", "N_kv", "d"}, .init_lo = -2, .init_hi = 2},
      {.name = "v", .dims = {"B", "H_kv", "N_kv", "d"}},
      {.name = "o", .dims = {"B", "H", "N_q", "d"}, .is_output = true},
      {.name = "lse", .dims = {"B", "H", "N_q"}, .is_output = true, .fixed_dtype = Dtype::kF32},
  };
  op.cost = [](const Problem& p) {
    const AttentionShape s = ShapeOf(p);
    const double e = static_cast<double>(DtypeBytes(p.dtype));
    const double q = static_cast<double>(s.b * s.h * s.n_q * s.d), kv = static_cast<double>(s.b * s.h_kv * s.n_kv * s.d);
    return Cost{.bytes_read = (q + 2 * kv) * e,
                .bytes_written = q * e + static_cast<double>(s.b * s.h * s.n_q) * 4,
                .flops = 4 * static_cast<double>(s.b * s.h) * Pairs(s) * static_cast<double>(s.d),
                .unit = ComputeUnit::kTensorCore};
  };
  op.reference = AttentionReference;
  op.tolerance = AttentionTolerance;
  op.validate = [](const Problem& p) -> std::string {
    const AttentionShape s = ShapeOf(p);
    for (const char* d : {"B", "H", "H_kv", "N_q", "N_kv", "d"})
      if (p.dim(d) < 1) return std::string(d) + " must be >= 1";
    if (s.h % s.h_kv != 0)
      return "H_kv must divide H (H = " + std::to_string(s.h) + ", H_kv = " + std::to_string(s.h_kv) + ")";
    if (s.d != 64 && s.d != 128 && s.d != 256) return "d must be 64, 128 or 256, not " + std::to_string(s.d);
    if (s.causal && s.n_q > s.n_kv)
      return "causal needs N_q <= N_kv (bottom-right alignment would leave the first rows without keys)";
    return "";
  };
  const auto pr = [&op](int64_t b, int64_t h, int64_t h_kv, int64_t n_q, int64_t n_kv, int64_t d, bool causal = false) {
    return MakeProblem(op, {b, h, h_kv, n_q, n_kv, d}, Dtype::kUnspecified,
                       causal ? std::vector<std::string>{"causal"} : std::vector<std::string>{});
  };
  Preset canonical{"canonical", {}}, gqa{"gqa", {}};
  for (bool causal : {false, true}) {
    canonical.problems.push_back(pr(8, 16, 16, 4096, 4096, 128, causal));
    canonical.problems.push_back(pr(16, 16, 16, 2048, 2048, 64, causal));
    gqa.problems.push_back(pr(4, 32, 8, 4096, 4096, 128, causal));
  }
  op.presets = {
      // A few ms of fp64 on one core.
      {"small", {pr(1, 2, 2, 128, 128, 64), pr(1, 4, 2, 96, 160, 128, true)}},
      std::move(canonical),
      std::move(gqa),
      // N off every tile (1, 17, 1000, 4097), one query row, causal with N_q < N_kv, MQA (H_kv = 1),
      // and d = 256 (the rungs without it say SKIPPED).
      {"edge",
       {pr(1, 2, 2, 1, 1, 64), pr(1, 2, 1, 17, 17, 128, true), pr(1, 2, 2, 1000, 1000, 64, true),
        pr(1, 1, 1, 4097, 4097, 64), pr(2, 4, 2, 1, 300, 128), pr(1, 2, 2, 100, 333, 64, true),
        pr(2, 8, 1, 64, 200, 128), pr(1, 2, 2, 130, 130, 256, true)}},
      // One production shape: a Llama-3-8B layer's prefill (32 query heads over 8 KV heads).
      {"ci", {pr(2, 32, 8, 2048, 2048, 128, true)}},
  };
  return op;
}

OpDef MakeAttentionOp() {
  OpDef op = AttentionDefinition();
  AddAttentionCpuVariants(op);
#ifdef KBENCH_HAVE_CUDA
  AddAttentionCudaVariants(op);
  AddTritonRung(op, {.name = "triton_attention",
                     .description = "Triton: FlashAttention-2's forward, online softmax in f32, d 64 and 128, autotuned tiles",
                     .source = embedded::attention_triton_py,
                     .dtypes = {Dtype::kBF16, Dtype::kF16}});
#endif
  return op;
}

}  // namespace kbench::kernels
