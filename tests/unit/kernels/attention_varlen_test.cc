// The attention_varlen op (kernels/attention/attention_varlen): its batch description, cost model,
// validation and presets, the fp64 reference against the attention op's one run sequence by
// sequence, and the CPU rung.
//
//   AttentionVarlenShape.LengthsAndOffsets: sequence 0 takes first_len, the others [len_lo, len_hi]
//     from a fixed hash (seed-independent), the cu_seqlens fills are their running sums.
//   AttentionVarlenCost.CountsOnlyRealPairs: FLOPs over the real unmasked pairs (bottom-right causal
//     per sequence), bytes of q, k, v, the offsets, o and lse once; below the padded batch's cost.
//   AttentionVarlenValidate.*: bad dims are refused by name; every preset is valid and the presets
//     hold what they promise (a length-1 sequence, one sequence, equal lengths, lengths off every
//     tile, the skewed production mix causal and not, the ci shape).
//   AttentionVarlenReference.MatchesAttentionPerSequence: on the small and edge presets, every
//     sequence's o and lse equal the attention op's fp64 reference on that sequence alone (another
//     implementation, on the fixed [B,H,N,d] layout), within 1e-12.
//   AttentionVarlenReference.KnownAnswers: one key gives o = v; a sequence's outputs ignore the
//     other sequences' keys.
//   AttentionVarlenCpu.NaiveMatchesReference: cpu_naive against the reference with the op's
//     tolerance on the small and edge presets, bf16 and f16; the skewed preset is skipped with a reason.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "attention/attention_varlen/attention_varlen.h"
#include "core/compare.h"
#include "core/random.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace kbench::kernels {
namespace {

using attention_varlen::Shape;
using attention_varlen::VarlenShapeOf;
using testing::GetOp;

// seqs, H, H_kv, d, len_lo, len_hi, first_len, prefix (totals and offsets computed).
Problem Make(int64_t seqs, int64_t h, int64_t h_kv, int64_t d, int64_t lo, int64_t hi, int64_t first, int64_t prefix,
             bool causal, Dtype dt = Dtype::kBF16) {
  const OpDef& op = GetOp("attention_varlen");
  const Shape s{.seqs = seqs, .len_lo = lo, .len_hi = hi, .first_len = first, .prefix = prefix};
  return MakeProblem(op, {seqs, h, h_kv, d, lo, hi, first, prefix, s.sum_q(), s.sum_kv(), seqs + 1}, dt,
                     causal ? std::vector<std::string>{"causal"} : std::vector<std::string>{});
}

std::vector<Problem> Presets(std::initializer_list<const char*> names, Dtype dt) {
  std::vector<Problem> out;
  for (const char* name : names)
    for (Problem p : GetOp("attention_varlen").find_preset(name)->problems) {
      p.dtype = dt;
      out.push_back(p);
    }
  return out;
}

TEST(AttentionVarlenShape, LengthsAndOffsets) {
  const Shape s = VarlenShapeOf(Make(20, 2, 2, 64, 100, 300, 7, 3, false));
  EXPECT_EQ(s.q_len(0), 7);
  int64_t lo = 1 << 30, hi = 0;
  for (int64_t b = 1; b < 20; ++b) {
    lo = std::min(lo, s.q_len(b)), hi = std::max(hi, s.q_len(b));
    EXPECT_EQ(s.kv_len(b), s.q_len(b) + 3);
  }
  EXPECT_GE(lo, 100);
  EXPECT_LE(hi, 300);
  EXPECT_LT(lo, hi) << "the lengths must differ (a skewed batch)";
  const std::vector<int32_t> cu_q = attention_varlen::CuSeqlensQ(s), cu_k = attention_varlen::CuSeqlensK(s);
  ASSERT_EQ(cu_q.size(), 21u);
  EXPECT_EQ(cu_q[0], 0);
  for (int64_t b = 0; b < 20; ++b) {
    EXPECT_EQ(cu_q[b + 1] - cu_q[b], s.q_len(b));
    EXPECT_EQ(cu_k[b + 1] - cu_k[b], s.kv_len(b));
  }
  EXPECT_EQ(cu_q.back(), s.total_q);
  EXPECT_EQ(cu_k.back(), s.total_kv);
  // The op's fills write them, whatever the seed.
  const OpDef& op = GetOp("attention_varlen");
  const Problem p = Make(20, 2, 2, 64, 100, 300, 7, 3, false);
  for (uint64_t seed : {1, 9}) {
    auto h = testing::Allocate(op, p);
    testing::FillInputsPoisonOutputs(op, h, seed);
    const auto* got_q = static_cast<const int32_t*>(h.tensors[attention_varlen::kCuQ].data);
    const auto* got_k = static_cast<const int32_t*>(h.tensors[attention_varlen::kCuK].data);
    EXPECT_TRUE(std::equal(cu_q.begin(), cu_q.end(), got_q)) << "seed " << seed;
    EXPECT_TRUE(std::equal(cu_k.begin(), cu_k.end(), got_k)) << "seed " << seed;
  }
}

// q, k and v are filled on every host thread, with FillUniform's values bit for bit (the values the
// GPU checks were first run on), in each spec's range.
TEST(AttentionVarlenShape, FillIsUniformsValues) {
  const OpDef& op = GetOp("attention_varlen");
  const Problem p = Make(5, 4, 2, 64, 100, 900, 0, 7, true);
  for (uint64_t seed : {1, 3})
    for (int t = 0; t < 3; ++t) {
      const TensorSpec& spec = op.tensors[t];
      ASSERT_TRUE(spec.fill) << spec.name;
      const int64_t n = spec.numel(p);
      std::vector<uint16_t> got(static_cast<size_t>(n)), want(static_cast<size_t>(n));
      FillInput(spec, p, Tensor{got.data(), n, Dtype::kBF16}, seed, static_cast<uint64_t>(t));
      FillUniform(Tensor{want.data(), n, Dtype::kBF16}, seed, static_cast<uint64_t>(t), spec.init_lo, spec.init_hi);
      EXPECT_EQ(got, want) << spec.name << " seed " << seed;
    }
  EXPECT_EQ(op.tensors[2].init_lo, -1);
  EXPECT_EQ(op.tensors[2].init_hi, 1);
}

TEST(AttentionVarlenCost, CountsOnlyRealPairs) {
  const OpDef& op = GetOp("attention_varlen");
  // Lengths 10, 50, 50 (first_len 10; len_lo = len_hi = 50); 5 cached keys each: kv 15, 55, 55.
  const Problem p = Make(3, 8, 2, 64, 50, 50, 10, 5, false);
  const Cost c = op.cost(p);
  EXPECT_DOUBLE_EQ(c.flops, 4.0 * 8 * 64 * (10 * 15 + 2 * 50 * 55));
  EXPECT_DOUBLE_EQ(c.bytes_read, (110.0 * 8 * 64 + 2 * 125.0 * 2 * 64) * 2 + 2 * 4 * 4);
  EXPECT_DOUBLE_EQ(c.bytes_written, 110.0 * 8 * 64 * 2 + 110.0 * 8 * 4);
  EXPECT_EQ(c.unit, ComputeUnit::kTensorCore);
  // Causal, bottom-right per sequence: query i of a sequence sees i + 5 + 1 keys.
  const Cost cc = op.cost(Make(3, 8, 2, 64, 50, 50, 10, 5, true));
  EXPECT_DOUBLE_EQ(cc.flops, 4.0 * 8 * 64 * ((10 * 5 + 55) + 2 * (50 * 5 + 1275)));
  EXPECT_DOUBLE_EQ(cc.bytes_read, c.bytes_read);
  // The skewed preset costs far less than its batch padded to the longest sequence.
  const Problem sk = GetOp("attention_varlen").find_preset("skewed")->problems.at(0);
  const Shape s = VarlenShapeOf(sk);
  const double padded = 4.0 * s.seqs * s.heads * s.max_q() * s.max_q() * s.head_dim;
  EXPECT_LT(op.cost(Problem{sk.dims, Dtype::kBF16, sk.flags}).flops * 4, padded);
}

TEST(AttentionVarlenValidate, RejectsBadShapesByName) {
  const OpDef& op = GetOp("attention_varlen");
  EXPECT_EQ(op.validate(Make(4, 32, 8, 128, 10, 20, 0, 0, true)), "");
  EXPECT_NE(op.validate(Make(4, 32, 6, 128, 10, 20, 0, 0, true)).find("H_kv must divide H"), std::string::npos);
  EXPECT_NE(op.validate(Make(4, 2, 2, 256, 10, 20, 0, 0, true)).find("d must be 64 or 128"), std::string::npos);
  EXPECT_NE(op.validate(Make(4, 2, 2, 64, 20, 10, 0, 0, true)).find("len_hi must be >= len_lo"), std::string::npos);
  EXPECT_NE(op.validate(Make(4, 2, 2, 64, 0, 10, 0, 0, true)).find("len_lo must be >= 1"), std::string::npos);
  EXPECT_NE(op.validate(Make(0, 2, 2, 64, 1, 10, 0, 0, true)).find("seqs must be >= 1"), std::string::npos);
  // Totals that do not match the lengths.
  Problem wrong = Make(4, 2, 2, 64, 10, 20, 0, 0, false);
  for (auto& [name, value] : wrong.dims)
    if (name == "total_q") ++value;
  EXPECT_NE(op.validate(wrong).find("total_q must be the sum"), std::string::npos);
  wrong = Make(4, 2, 2, 64, 10, 20, 0, 3, false);
  for (auto& [name, value] : wrong.dims)
    if (name == "total_kv") value -= 3;
  EXPECT_NE(op.validate(wrong).find("total_kv must be the sum"), std::string::npos);
  wrong = Make(4, 2, 2, 64, 10, 20, 0, 0, false);
  for (auto& [name, value] : wrong.dims)
    if (name == "offsets") value = 4;
  EXPECT_NE(op.validate(wrong).find("offsets must be seqs + 1"), std::string::npos);
}

TEST(AttentionVarlenValidate, PresetsAreValidAndHoldWhatTheyPromise) {
  const OpDef& op = GetOp("attention_varlen");
  for (const Preset& preset : op.presets)
    for (const Problem& p : preset.problems) EXPECT_EQ(op.validate(p), "") << preset.name << " " << p.label();
  bool length_one = false, one_seq = false, equal = false, off_tile = false, prefix_causal = false;
  for (const Problem& p : op.find_preset("edge")->problems) {
    const Shape s = VarlenShapeOf(p);
    for (int64_t b = 0; b < s.seqs; ++b) {
      length_one |= s.q_len(b) == 1;
      off_tile |= s.q_len(b) % 64 != 0 && s.q_len(b) > 128;
    }
    one_seq |= s.seqs == 1;
    equal |= s.seqs > 1 && s.len_lo == s.len_hi && s.first_len == 0;
    prefix_causal |= s.prefix > 0 && s.causal;
  }
  EXPECT_TRUE(length_one && one_seq && equal && off_tile && prefix_causal);
  // The skewed production mix: H 32, H_kv 8, d 128, one sequence >= 8k among many of 512-1024, causal and not.
  const Preset* skewed = op.find_preset("skewed");
  ASSERT_NE(skewed, nullptr);
  ASSERT_EQ(skewed->problems.size(), 2u);
  EXPECT_NE(skewed->problems[0].has_flag("causal"), skewed->problems[1].has_flag("causal"));
  for (const Problem& p : skewed->problems) {
    const Shape s = VarlenShapeOf(p);
    EXPECT_EQ(s.heads, 32);
    EXPECT_EQ(s.kv_heads, 8);
    EXPECT_EQ(s.head_dim, 128);
    EXPECT_GE(s.q_len(0), 8192);
    EXPECT_GE(s.seqs, 16);
    for (int64_t b = 1; b < s.seqs; ++b) EXPECT_TRUE(s.q_len(b) >= 512 && s.q_len(b) <= 1024) << b;
  }
  ASSERT_NE(op.find_preset("ci"), nullptr);
  ASSERT_NE(op.find_preset("small"), nullptr);
}

// Sequence b of a packed problem as the attention op's batch of one: q [1,H,n_q,d] from [total_q,H,d].
struct OneSequence {
  Problem p;
  testing::HostTensors h;
};

OneSequence Gather(const Problem& vp, const testing::HostTensors& packed, int64_t b) {
  const OpDef& attn = GetOp("attention");
  const Shape s = VarlenShapeOf(vp);
  const auto* cu_q = static_cast<const int32_t*>(packed.tensors[attention_varlen::kCuQ].data);
  const auto* cu_k = static_cast<const int32_t*>(packed.tensors[attention_varlen::kCuK].data);
  const int64_t q0 = cu_q[b], n_q = cu_q[b + 1] - q0, k0 = cu_k[b], n_kv = cu_k[b + 1] - k0;
  OneSequence one{MakeProblem(attn, {1, s.heads, s.kv_heads, n_q, n_kv, s.head_dim}, vp.dtype, vp.flags), {}};
  one.h = testing::Allocate(attn, one.p);
  const size_t row = static_cast<size_t>(s.head_dim) * 2;
  const auto src = [&](int t) { return static_cast<const char*>(packed.tensors[t].data); };
  const auto dst = [&](int t) { return static_cast<char*>(one.h.tensors[t].data); };
  for (int64_t h = 0; h < s.heads; ++h)
    for (int64_t i = 0; i < n_q; ++i) std::memcpy(dst(0) + (h * n_q + i) * row, src(0) + ((q0 + i) * s.heads + h) * row, row);
  for (int t = 1; t < 3; ++t)
    for (int64_t h = 0; h < s.kv_heads; ++h)
      for (int64_t j = 0; j < n_kv; ++j)
        std::memcpy(dst(t) + (h * n_kv + j) * row, src(t) + ((k0 + j) * s.kv_heads + h) * row, row);
  return one;
}

TEST(AttentionVarlenReference, MatchesAttentionPerSequence) {
  const OpDef& op = GetOp("attention_varlen");
  const OpDef& attn = GetOp("attention");
  int sequences = 0;
  for (const Problem& p : Presets({"small", "edge"}, Dtype::kBF16)) {
    SCOPED_TRACE(p.label());
    auto packed = testing::Allocate(op, p);
    testing::FillInputsPoisonOutputs(op, packed, 4);
    const auto ref = testing::RunReference(op, p, packed.inputs());
    const Shape s = VarlenShapeOf(p);
    const auto* cu_q = static_cast<const int32_t*>(packed.tensors[attention_varlen::kCuQ].data);
    for (int64_t b = 0; b < s.seqs; ++b) {
      OneSequence one = Gather(p, packed, b);
      const auto want = testing::RunReference(attn, one.p, one.h.inputs());
      const int64_t q0 = cu_q[b], n_q = cu_q[b + 1] - q0;
      double worst = 0;
      for (int64_t h = 0; h < s.heads; ++h)
        for (int64_t i = 0; i < n_q; ++i) {
          for (int64_t c = 0; c < s.head_dim; ++c)
            worst = std::max(worst, std::fabs(ref[0][((q0 + i) * s.heads + h) * s.head_dim + c] -
                                              want[0][(h * n_q + i) * s.head_dim + c]));
          worst = std::max(worst, std::fabs(ref[1][h * s.total_q + q0 + i] - want[1][h * n_q + i]));
        }
      EXPECT_LT(worst, 1e-12) << "sequence " << b;
      ++sequences;
    }
  }
  EXPECT_GT(sequences, 50);
}

TEST(AttentionVarlenReference, KnownAnswers) {
  const OpDef& op = GetOp("attention_varlen");
  // Two sequences of one query and one key each: o = that sequence's v, whatever the other holds.
  const Problem p = Make(2, 1, 1, 64, 1, 1, 0, 0, true);
  auto h = testing::Allocate(op, p);
  testing::FillInputsPoisonOutputs(op, h, 2);
  const auto ref = testing::RunReference(op, p, h.inputs());
  for (int64_t i = 0; i < 2 * 64; ++i) EXPECT_NEAR(ref[0][i], LoadAsDouble(h.tensors[2].data, Dtype::kBF16, i), 1e-12);
  // Changing sequence 1's keys and values leaves sequence 0's outputs alone, and moves sequence 1's.
  const Problem p2 = Make(2, 2, 1, 64, 40, 60, 0, 10, true);
  auto a = testing::Allocate(op, p2);
  testing::FillInputsPoisonOutputs(op, a, 3);
  const auto before = testing::RunReference(op, p2, a.inputs());
  const Shape s = VarlenShapeOf(p2);
  const auto* cu_k = static_cast<const int32_t*>(a.tensors[attention_varlen::kCuK].data);
  for (int t = 1; t < 3; ++t)
    for (int64_t e = cu_k[1] * 64; e < cu_k[2] * 64; ++e)
      StoreFromDouble(a.tensors[t].data, Dtype::kBF16, e, -LoadAsDouble(a.tensors[t].data, Dtype::kBF16, e));
  const auto after = testing::RunReference(op, p2, a.inputs());
  const int64_t split = s.q_len(0) * s.heads * 64;
  EXPECT_TRUE(std::equal(before[0].begin(), before[0].begin() + split, after[0].begin()));
  EXPECT_FALSE(std::equal(before[0].begin() + split, before[0].end(), after[0].begin() + split));
}

TEST(AttentionVarlenCpu, NaiveMatchesReference) {
  const OpDef& op = GetOp("attention_varlen");
  int checked = 0;
  for (Dtype dt : {Dtype::kBF16, Dtype::kF16})
    for (const Problem& p : Presets({"small", "edge"}, dt))
      for (const auto& [variant, r] : testing::CheckCpuVariants(op, p, 5)) {
        EXPECT_TRUE(r.passed) << variant << " " << p.label() << ": max abs " << r.max_abs_error << ", " << r.mismatches
                              << " mismatches";
        ++checked;
      }
  EXPECT_GT(checked, 20);
  const Variant* naive = op.find_variant("cpu_naive");
  ASSERT_NE(naive, nullptr);
  const Problem sk = op.find_preset("skewed")->problems.at(0);
  EXPECT_NE(naive->skip_reason(Problem{sk.dims, Dtype::kBF16, {}}).find("too large for one CPU thread"), std::string::npos);
}

}  // namespace
}  // namespace kbench::kernels
