// attention_varlen: prefill attention over a packed batch of sequences of different lengths, the
// form serving engines send (FlashAttention's flash_attn_varlen_func): the sequences' tokens are
// concatenated along one dimension and cu_seqlens_q / cu_seqlens_k hold where each one starts. Per
// sequence b and query head h (KV head h / (H / H_kv)):
//   o[q0+i, h] = softmax_j(q[q0+i, h] . k[k0+j, h_kv] / sqrt(d) [causal: j <= i + kv_len - q_len]) v[k0+j, h_kv]
// with q0 = cu_seqlens_q[b], k0 = cu_seqlens_k[b]. Nothing is padded: the cost counts only the real,
// unmasked pairs, so a kernel that pads to the longest sequence, or schedules the long one last,
// shows as lost TFLOP/s.
//
// Layouts: q, o [total_q, H, d]; k, v [total_kv, H_kv, d] (d innermost); cu_seqlens_q, cu_seqlens_k
// [seqs + 1] i32; lse [H, total_q] f32 (FlashAttention's varlen lse layout: one head's rows
// contiguous). The CUDA rungs are the attention op's cuda_v3_flash_mma and cuda_v4_flash_wgmma
// kernels on a packed layout (attention_varlen.cu); the tolerance is the attention op's.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "attention/attention/attention.h"
#include "attention/attention_varlen/attention_varlen.h"
#include "core/cpu/parallel.h"
#include "core/random.h"

namespace kbench::kernels {
namespace attention_varlen {

int64_t Shape::q_len(int64_t b) const {
  if (b == 0 && first_len > 0) return first_len;
  const int64_t span = len_hi - len_lo + 1;
  return span > 1 ? len_lo + static_cast<int64_t>(SplitMix64(static_cast<uint64_t>(b)) % static_cast<uint64_t>(span)) : len_lo;
}

int64_t Shape::sum_q() const {
  int64_t t = 0;
  for (int64_t b = 0; b < seqs; ++b) t += q_len(b);
  return t;
}

int64_t Shape::sum_kv() const { return sum_q() + seqs * prefix; }

int64_t Shape::max_q() const {
  int64_t m = 0;
  for (int64_t b = 0; b < seqs; ++b) m = std::max(m, q_len(b));
  return m;
}

double Shape::pairs(int64_t b) const {
  const double nq = static_cast<double>(q_len(b)), nkv = static_cast<double>(kv_len(b));
  return causal ? nq * (nkv - nq) + nq * (nq + 1) / 2 : nq * nkv;
}

double Shape::pairs() const {
  double t = 0;
  for (int64_t b = 0; b < seqs; ++b) t += pairs(b);
  return t;
}

Shape VarlenShapeOf(const Problem& p) {
  return Shape{.seqs = p.dim("seqs"), .heads = p.dim("H"), .kv_heads = p.dim("H_kv"), .head_dim = p.dim("d"),
               .len_lo = p.dim("len_lo"), .len_hi = p.dim("len_hi"), .first_len = p.dim("first_len"),
               .prefix = p.dim("prefix"), .total_q = p.dim("total_q"), .total_kv = p.dim("total_kv"),
               .offsets = p.dim("offsets"), .causal = p.has_flag("causal")};
}

namespace {

std::vector<int32_t> Cumulative(const Shape& s, int64_t extra) {
  std::vector<int32_t> cu(static_cast<size_t>(std::max<int64_t>(s.seqs, 0) + 1), 0);
  for (int64_t b = 0; b < s.seqs; ++b) cu[b + 1] = static_cast<int32_t>(cu[b] + s.q_len(b) + extra);
  return cu;
}

// FillUniform's values (core/random.cc: element i from (seed, stream, i) alone, never an exact zero)
// on every host thread: the skewed preset's q, k and v are 200 M elements, ~2 s for the one-thread
// fill before each check. Bit-identical to FillUniform (AttentionVarlenShape.FillIsUniformsValues).
void FillParallelUniform(const Tensor& t, uint64_t seed, uint64_t stream, double lo, double hi) {
  const uint64_t base = SplitMix64(seed * 0x100000001b3ull ^ SplitMix64(stream));
  cpu::ParallelFor(t.numel, int64_t{1} << 18, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const double u = static_cast<double>(SplitMix64(base + static_cast<uint64_t>(i)) >> 11) * 0x1.0p-53;
      double v = lo + (hi - lo) * u;
      if (v == 0.0) v = (hi - lo) * 1e-3 + 1e-3;
      StoreFromDouble(t.data, t.dtype, i, v);
    }
  });
}

// The offsets the problem names; the seed does not change them (the batch is part of the problem).
void FillCu(const Tensor& t, const std::vector<int32_t>& cu) {
  for (int64_t i = 0; i < t.numel && i < static_cast<int64_t>(cu.size()); ++i) static_cast<int32_t*>(t.data)[i] = cu[i];
}

std::string Validate(const Problem& p) {
  const Shape s = VarlenShapeOf(p);
  for (const char* d : {"seqs", "H", "H_kv", "len_lo"})
    if (p.dim(d) < 1) return std::string(d) + " must be >= 1";
  if (s.heads % s.kv_heads != 0)
    return "H_kv must divide H (H = " + std::to_string(s.heads) + ", H_kv = " + std::to_string(s.kv_heads) + ")";
  if (s.head_dim != 64 && s.head_dim != 128) return "d must be 64 or 128, not " + std::to_string(s.head_dim);
  if (s.len_hi < s.len_lo) return "len_hi must be >= len_lo (" + std::to_string(s.len_lo) + ")";
  if (s.first_len < 0) return "first_len must be >= 0 (0: sequence 0 is drawn like the others)";
  if (s.prefix < 0) return "prefix must be >= 0";
  if (s.offsets != s.seqs + 1) return "offsets must be seqs + 1 = " + std::to_string(s.seqs + 1);
  // Checked before summing: the lengths and their sums must fit the i32 offsets.
  if (s.len_hi > (int64_t{1} << 30) || s.first_len > (int64_t{1} << 30) || s.prefix > (int64_t{1} << 30) ||
      s.seqs > (int64_t{1} << 20))
    return "lengths, prefix and seqs must keep the offsets within i32";
  const int64_t sq = s.sum_q(), skv = s.sum_kv();
  if (skv > (int64_t{1} << 31) - 1) return "the packed keys must fit the i32 offsets (sum " + std::to_string(skv) + ")";
  if (s.total_q != sq) return "total_q must be the sum of the query lengths, " + std::to_string(sq);
  if (s.total_kv != skv) return "total_kv must be the sum of the key lengths, " + std::to_string(skv);
  return "";
}

}  // namespace

std::vector<int32_t> CuSeqlensQ(const Shape& s) { return Cumulative(s, 0); }
std::vector<int32_t> CuSeqlensK(const Shape& s) { return Cumulative(s, s.prefix); }

}  // namespace attention_varlen

OpDef AttentionVarlenDefinition() {
  using attention_varlen::Shape;
  using attention_varlen::VarlenShapeOf;
  OpDef op;
  op.name = "attention_varlen";
  op.description =
      "Prefill attention over a packed variable-length batch (FlashAttention's varlen form): sequence b's queries are "
      "rows [cu_seqlens_q[b], cu_seqlens_q[b+1]) of q [total_q,H,d], its keys rows [cu_seqlens_k[b], cu_seqlens_k[b+1]) "
      "of k, v [total_kv,H_kv,d]; query head h reads KV head h/(H/H_kv); flag causal masks keys j > i + kv_len - q_len "
      "per sequence (bottom-right). Sequence 0 holds first_len queries when > 0, the others lengths in [len_lo, len_hi] "
      "(a fixed hash of b); each holds prefix keys before its queries. o [total_q,H,d] in the dtype, lse [H,total_q] "
      "f32. Cost: q, k, v, the offsets read once, o and lse written once; 4*H*d FLOPs per real unmasked pair.";
  op.dims = {"seqs", "H", "H_kv", "d", "len_lo", "len_hi", "first_len", "prefix", "total_q", "total_kv", "offsets"};
  // total_q and total_kv are sums of hashed lengths, which no grid expression computes: Validate names them.
  op.derived_dims = {{"offsets", "seqs + 1"}};
  op.zero_dims = {"first_len", "prefix"};
  op.dtypes = {Dtype::kBF16, Dtype::kF16};
  op.flags = {"causal"};
  // The attention op's value ranges (q, k in [-2, 2]: scores spread ~1.3, so a wrong mask shows).
  op.tensors = {
      {.name = "q", .dims = {"total_q", "H", "d"}, .init_lo = -2, .init_hi = 2,
       .fill = [](const Problem&, const Tensor& t, uint64_t seed, uint64_t stream) {
         attention_varlen::FillParallelUniform(t, seed, stream, -2, 2);
       }},
      {.name = "k", .dims = {"total_kv", "H_kv", "d"}, .init_lo = -2, .init_hi = 2,
       .fill = [](const Problem&, const Tensor& t, uint64_t seed, uint64_t stream) {
         attention_varlen::FillParallelUniform(t, seed, stream, -2, 2);
       }},
      {.name = "v", .dims = {"total_kv", "H_kv", "d"},
       .fill = [](const Problem&, const Tensor& t, uint64_t seed, uint64_t stream) {
         attention_varlen::FillParallelUniform(t, seed, stream, -1, 1);
       }},
      {.name = "cu_seqlens_q", .dims = {"offsets"}, .fixed_dtype = Dtype::kI32,
       .fill = [](const Problem& p, const Tensor& t, uint64_t, uint64_t) {
         attention_varlen::FillCu(t, attention_varlen::CuSeqlensQ(VarlenShapeOf(p)));
       }},
      {.name = "cu_seqlens_k", .dims = {"offsets"}, .fixed_dtype = Dtype::kI32,
       .fill = [](const Problem& p, const Tensor& t, uint64_t, uint64_t) {
         attention_varlen::FillCu(t, attention_varlen::CuSeqlensK(VarlenShapeOf(p)));
       }},
      {.name = "o", .dims = {"total_q", "H", "d"}, .is_output = true},
      {.name = "lse", .dims = {"H", "total_q"}, .is_output = true, .fixed_dtype = Dtype::kF32},
  };
  op.cost = [](const Problem& p) {
    const Shape s = VarlenShapeOf(p);
    const double e = static_cast<double>(DtypeBytes(p.dtype));
    const double q = static_cast<double>(s.total_q) * s.heads * s.head_dim;
    const double kv = static_cast<double>(s.total_kv) * s.kv_heads * s.head_dim;
    return Cost{.bytes_read = (q + 2 * kv) * e + 2.0 * 4 * static_cast<double>(s.offsets),
                .bytes_written = q * e + static_cast<double>(s.total_q) * s.heads * 4,
                .flops = 4 * static_cast<double>(s.heads) * static_cast<double>(s.head_dim) * s.pairs(),
                .unit = ComputeUnit::kTensorCore};
  };
  op.reference = AttentionVarlenReference;
  op.tolerance = AttentionTolerance;  // the same kernels and arithmetic as the attention op
  op.validate = attention_varlen::Validate;
  // seqs, H, H_kv, d, len_lo, len_hi, first_len, prefix; the totals and offsets follow from them.
  const auto mk = [&op](int64_t seqs, int64_t h, int64_t h_kv, int64_t d, int64_t lo, int64_t hi, int64_t first,
                        int64_t prefix, bool causal) {
    const Shape s{.seqs = seqs, .len_lo = lo, .len_hi = hi, .first_len = first, .prefix = prefix};
    return MakeProblem(op, {seqs, h, h_kv, d, lo, hi, first, prefix, s.sum_q(), s.sum_kv(), seqs + 1},
                       Dtype::kUnspecified, causal ? std::vector<std::string>{"causal"} : std::vector<std::string>{});
  };
  Preset skewed{"skewed", {}};
  // Production: one 8k-token prompt among 31 of 512-1024 (a Llama-3-8B layer: 32 query heads over 8 KV
  // heads, d 128): padding to the longest would do ~8x the work; a schedule that starts the long
  // sequence last leaves the GPU on one sequence's tail.
  for (bool causal : {false, true}) skewed.problems.push_back(mk(32, 32, 8, 128, 512, 1024, 8192, 0, causal));
  op.presets = {
      {"small", {mk(3, 4, 2, 64, 20, 90, 0, 0, false), mk(2, 2, 2, 128, 50, 150, 0, 30, true)}},
      std::move(skewed),
      {"edge",
       {mk(4, 4, 2, 64, 100, 300, 1, 0, true),      // sequence 0 of length 1
        mk(5, 8, 2, 128, 1, 300, 0, 0, false),      // lengths off every tile (1-300)
        mk(6, 4, 4, 64, 1, 200, 0, 0, true),        // the same, causal
        mk(3, 4, 1, 128, 128, 128, 0, 0, true),     // equal lengths on the tile; MQA
        mk(3, 2, 2, 64, 200, 200, 0, 0, false),     // equal lengths off the tile
        mk(1, 2, 1, 64, 1000, 1000, 0, 0, true),    // one sequence
        mk(3, 4, 2, 128, 1, 200, 0, 77, true),      // 77 cached keys each: causal with kv_len > q_len
        mk(2, 2, 2, 64, 30, 70, 0, 129, false),     // the same, not causal
        mk(3, 4, 1, 128, 10, 60, 1500, 0, true),    // one long first sequence among short ones
        mk(40, 2, 1, 64, 1, 40, 0, 0, true)}},      // 40 sequences: more than one warp's worth of offsets
      // The PR gate: a Llama-3-8B layer's prefill of 8 sequences of 256-2048 tokens, causal.
      {"ci", {mk(8, 32, 8, 128, 256, 2048, 0, 0, true)}},
  };
  return op;
}

OpDef MakeAttentionVarlenOp() {
  OpDef op = AttentionVarlenDefinition();
  AddAttentionVarlenCpuVariants(op);
#ifdef KBENCH_HAVE_CUDA
  AddAttentionVarlenCudaVariants(op);
#endif
  return op;
}

}  // namespace kbench::kernels
