// w4a16_gemm's definition on the host: the packed format (nibble order the magic-number rung
// relies on), the fills describing one set of weights, the reference on a hand-made example, the
// derived dims' validation, the cost split and the CPU rung against the reference.
#include "quant/w4a16_gemm/w4a16_gemm.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/random.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace kbench::kernels {
namespace {

using testing::GetOp;

Problem Mnk(const OpDef& op, int64_t m, int64_t n, int64_t k) {
  return MakeProblem(op, {m, n, k, W4Words(k), W4Groups(k)}, Dtype::kBF16);
}

TEST(W4a16Format, PairsOfTheMagicTrickShareAShift) {
  const uint8_t q[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  const uint32_t w = PackW4Word(q);
  for (int j = 0; j < 8; ++j) EXPECT_EQ(W4Code(w, j), q[j]) << j;
  // (w >> 4i) & 0x000f000f holds elements 2i (low half) and 2i + 1 (high half).
  for (int i = 0; i < 4; ++i) {
    const uint32_t pair = (w >> (4 * i)) & 0x000f000fu;
    EXPECT_EQ(pair & 0xffffu, q[2 * i]) << i;
    EXPECT_EQ(pair >> 16, q[2 * i + 1]) << i;
    // OR'd into 0x4300 (bf16 128.0, ulp 1) the halves read 128 + q.
    EXPECT_EQ(Bf16ToFloat(static_cast<uint16_t>((pair | 0x43004300u) & 0xffffu)), 128.0f + q[2 * i]);
    EXPECT_EQ(Bf16ToFloat(static_cast<uint16_t>((pair | 0x43004300u) >> 16)), 128.0f + q[2 * i + 1]);
  }
}

TEST(W4a16Format, GeneratorRanges) {
  for (int64_t n = 0; n < 50; ++n)
    for (int64_t g = 0; g < 4; ++g) {
      const float s = W4ScaleAt(7, n, g), z = W4ZeroAt(7, n, g);
      EXPECT_GE(s, 0.0625f);
      EXPECT_LE(s, 11 * 0x1p-7f);
      EXPECT_EQ(RoundBf16(s), s);
      EXPECT_GE(z, 4.0f);
      EXPECT_LE(z, 11.0f);
      EXPECT_EQ(z, static_cast<float>(static_cast<int>(z)));
      EXPECT_LE(W4CodeAt(7, n, g, 4), 15);
    }
}

// The four weight tensors of a filled problem describe the same weights: W_bf16 is the packed
// weights dequantized, exactly.
TEST(W4a16Fills, DequantizedCopyMatchesThePackedWeights) {
  const OpDef& op = GetOp("w4a16_gemm");
  const Problem p = Mnk(op, 2, 37, 200);  // a partial last group
  testing::HostTensors h = testing::Allocate(op, p);
  testing::FillInputsPoisonOutputs(op, h, 5);
  const auto* w = static_cast<const uint32_t*>(h.tensors[1].data);
  const auto* s = static_cast<const uint16_t*>(h.tensors[2].data);
  const auto* z = static_cast<const uint16_t*>(h.tensors[3].data);
  const auto* wd = static_cast<const uint16_t*>(h.tensors[4].data);
  int distinct_codes = 0;
  std::vector<bool> seen(16);
  for (int64_t n = 0; n < 37; ++n)
    for (int64_t k = 0; k < 200; ++k) {
      const double v = W4Dequant(w, s, z, 200, n, k);
      ASSERT_EQ(Bf16ToFloat(wd[n * 200 + k]), v) << n << "," << k;
      ASSERT_LE(std::abs(v), 1.0);
      const uint8_t q = W4Code(w[n * 25 + k / 8], static_cast<int>(k % 8));
      if (!seen[q]) seen[q] = true, ++distinct_codes;
    }
  EXPECT_EQ(distinct_codes, 16);
}

// W_tiled holds W's words, each once, where W4TiledWord puts them: a 16-row tile's 128-k chunk as
// one kilobyte in the mma lanes' order, rows past the last whole tile (and K off 128) as in W.
TEST(W4a16Fills, TiledCopyIsAPermutationOfThePackedWords) {
  const OpDef& op = GetOp("w4a16_gemm");
  // Word positions of the layout, by hand (K = 256: 2 chunks of 16 words a row, a tile 512 words).
  EXPECT_EQ(W4TiledWord(0, 0, 37, 256), 0);
  EXPECT_EQ(W4TiledWord(0, 1, 37, 256), 1);
  EXPECT_EQ(W4TiledWord(0, 4, 37, 256), 4);     // lane t = 1 of row 0
  EXPECT_EQ(W4TiledWord(1, 0, 37, 256), 16);    // lane g = 1
  EXPECT_EQ(W4TiledWord(8, 0, 37, 256), 128);   // the second half of the tile's chunk
  EXPECT_EQ(W4TiledWord(0, 16, 37, 256), 256);  // chunk 1: the next kilobyte
  EXPECT_EQ(W4TiledWord(16, 0, 37, 256), 512);  // tile 1
  EXPECT_EQ(W4TiledWord(32, 5, 37, 256), 32 * 32 + 5);  // past the last whole tile: W's place
  EXPECT_EQ(W4TiledWord(3, 5, 37, 200), 3 * 25 + 5);    // K off 128: W's order
  for (const int64_t k : {256, 200}) {
    const Problem p = Mnk(op, 1, 37, k);
    testing::HostTensors h = testing::Allocate(op, p);
    testing::FillInputsPoisonOutputs(op, h, 9);
    ASSERT_EQ(op.tensors[5].name, "W_tiled");
    const auto* w = static_cast<const uint32_t*>(h.tensors[1].data);
    const auto* tiled = static_cast<const uint32_t*>(h.tensors[5].data);
    const int64_t words = W4Words(k);
    std::vector<int> hits(static_cast<size_t>(37 * words));
    for (int64_t n = 0; n < 37; ++n)
      for (int64_t i = 0; i < words; ++i) {
        const int64_t at = W4TiledWord(n, i, 37, k);
        ASSERT_GE(at, 0);
        ASSERT_LT(at, 37 * words);
        ++hits[static_cast<size_t>(at)];
        ASSERT_EQ(tiled[at], w[n * words + i]) << "K " << k << " row " << n << " word " << i;
      }
    for (size_t i = 0; i < hits.size(); ++i) ASSERT_EQ(hits[i], 1) << "K " << k << " word " << i;
  }
}

// The split rule on decode launches of a 132-SM device (264 slots: two blocks an SM; 132: one, as v5's
// kernel held at n = 32-128 on the H200), and its invariants everywhere: one wave, no empty split, no
// split without idle slots.
TEST(W4a16KSplit, FillsIdleSlotsInOneWave) {
  const auto expect = [](int64_t rb, int64_t units, int64_t slots, int64_t per, int64_t splits) {
    const W4KSplitShape s = W4KSplit(rb, units, slots);
    EXPECT_EQ(s.per, per) << rb << " " << units << " " << slots;
    EXPECT_EQ(s.splits, splits) << rb << " " << units << " " << slots;
  };
  expect(32, 32, 264, 4, 8);     // 4096 x 4096: 32 row blocks of 128, 32 chunks
  expect(112, 32, 264, 16, 2);   // 14336 x 4096
  expect(32, 112, 264, 14, 8);   // 4096 x 14336
  expect(32, 32, 132, 8, 4);     // n = 128: one block an SM
  expect(3, 9, 264, 1, 9);       // more slots than units: one unit a split
  expect(132, 32, 132, 32, 1);   // every slot taken: no split
  expect(8, 1, 264, 1, 1);       // one unit: nothing to split
  for (int64_t rb = 1; rb <= 300; rb += 7)
    for (int64_t units = 1; units <= 130; units += 3)
      for (int64_t slots : {1, 132, 264, 528}) {
        const W4KSplitShape s = W4KSplit(rb, units, slots);
        ASSERT_GE(s.splits, 1);
        ASSERT_GE(s.per, 1);
        EXPECT_GE(s.per * s.splits, units);         // every unit in a split
        EXPECT_LT((s.splits - 1) * s.per, units);   // no empty split
        if (s.splits > 1) EXPECT_LE(rb * s.splits, slots) << rb << " " << units << " " << slots;  // one wave
        if (rb >= slots) EXPECT_EQ(s.splits, 1);
      }
}

// Which of v5's splits sum in a cluster (given every cluster fits): on one block an SM of a 132-SM
// device, 4096 x 4096 (4 splits of 8 chunks) and 2112 x 7168 (7 of 8) do; 4096 x 14336 (4 of 28)
// keeps the global merge, where the clustered grid measured 30% slower; more than 8 splits are past a
// portable cluster; no split, no merge.
TEST(W4a16KSplit, ClusterOnlyForShortPortableSplits) {
  EXPECT_TRUE(W4ClusterShape(W4KSplit(32, 32, 132)));
  EXPECT_TRUE(W4ClusterShape(W4KSplit(17, 56, 132)));
  EXPECT_FALSE(W4ClusterShape(W4KSplit(32, 112, 132)));
  EXPECT_FALSE(W4ClusterShape(W4KSplit(112, 32, 132)));  // no split
  EXPECT_FALSE(W4ClusterShape(W4KSplit(3, 9, 264)));     // 9 splits
  EXPECT_TRUE(W4ClusterShape(W4KSplit(32, 32, 264)));    // 8 splits of 4
  for (int64_t rb = 1; rb <= 300; rb += 7)
    for (int64_t units = 1; units <= 130; units += 3)
      for (int64_t slots : {132, 264}) {
        const W4KSplitShape s = W4KSplit(rb, units, slots);
        if (W4ClusterShape(s)) {
          EXPECT_GE(s.splits, 2);
          EXPECT_LE(s.splits, 8);
          EXPECT_LE(s.per, kW4ClusterMaxUnits);
        }
      }
}

// The split of clusters whose blocks each own an SM: the widest that fits, never past 8 ways, the
// planner's own split or kW4ClusterMaxUnitsOneSm units a block; every unit covered once.
TEST(W4a16KSplit, ClusterAloneTakesTheWidestSplitThatFits) {
  // 4096 x 4096 on the H200: clusters of 4 do not all fit one block an SM, clusters of 3 do.
  const W4KSplitShape s = W4ClusterSplit(32, 4, [](int64_t splits) { return splits <= 3; });
  EXPECT_EQ(s.splits, 3);
  EXPECT_EQ(s.per, 11);
  EXPECT_EQ(W4ClusterSplit(32, 4, [](int64_t) { return true; }).splits, 4);
  EXPECT_EQ(W4ClusterSplit(56, 14, [](int64_t) { return true; }).splits, 8);     // a portable cluster
  EXPECT_EQ(W4ClusterSplit(32, 4, [](int64_t) { return false; }).splits, 1);     // nothing fits
  EXPECT_EQ(W4ClusterSplit(32, 1, [](int64_t) { return true; }).splits, 1);      // no split wanted
  EXPECT_EQ(W4ClusterSplit(112, 8, [](int64_t) { return true; }).splits, 1);     // 14 units a block
  EXPECT_EQ(W4ClusterSplit(112, 8, [](int64_t s) { return s < 8; }).splits, 1);  // 16 and more
  for (int64_t units = 1; units <= 130; units += 3)
    for (int64_t max_splits = 1; max_splits <= 12; ++max_splits)
      for (int64_t fit = 1; fit <= 9; ++fit) {
        const W4KSplitShape c = W4ClusterSplit(units, max_splits, [&](int64_t splits) { return splits <= fit; });
        if (c.splits == 1) continue;
        EXPECT_LE(c.splits, std::min<int64_t>({8, max_splits, fit}));
        EXPECT_LE(c.per, kW4ClusterMaxUnitsOneSm);
        EXPECT_GE(c.per * c.splits, units);
        EXPECT_LT(c.per * (c.splits - 1), units);  // no empty split
        // The scale box of a block holds its whole K range, from any first group.
        EXPECT_LE(7 + c.per, kW4ScaleBoxGroups);
      }
}

TEST(W4a16KSplit, ScalesByTmaNeedRowsOfWhole16Bytes) {
  EXPECT_TRUE(W4ScalesByTma(32));   // K = 4096
  EXPECT_TRUE(W4ScalesByTma(56));   // K = 7168
  EXPECT_TRUE(W4ScalesByTma(112));  // K = 14336
  EXPECT_FALSE(W4ScalesByTma(9));   // K = 1152: 18-byte rows
  EXPECT_FALSE(W4ScalesByTma(4));
}

// v4's M <= 8 split on the H200 (132 SMs; the 8-warp kernel holds 2 blocks an SM, the 4-warp one 4):
// 4096 rows (256 tiles) take 8 warps a tile, 6144 rows 4, 14336 rows 2; never a second wave where a
// narrower split avoids one.
TEST(W4a16LeanSplit, WidestSplitInOneWave) {
  EXPECT_EQ(W4LeanSplit(256, 264, 528), 8);
  EXPECT_EQ(W4LeanSplit(384, 264, 528), 4);
  EXPECT_EQ(W4LeanSplit(896, 264, 528), 2);
  EXPECT_EQ(W4LeanSplit(1, 264, 528), 8);
  EXPECT_EQ(W4LeanSplit(264, 264, 528), 8);
  EXPECT_EQ(W4LeanSplit(265, 264, 528), 4);
  EXPECT_EQ(W4LeanSplit(529, 264, 528), 2);
  for (int64_t tiles = 1; tiles <= 2000; tiles += 13) {
    const int s = W4LeanSplit(tiles, 264, 528);
    if (s == 8) EXPECT_LE(tiles, 264);
    if (s == 4) EXPECT_GT(tiles, 264);
    if (s == 4) EXPECT_LE(tiles, 528);
    if (s == 2) EXPECT_GT(tiles, 528);
  }
}

TEST(W4a16Reference, HandExample) {
  const OpDef& op = GetOp("w4a16_gemm");
  // M = 1, N = 2, K = 8: one word a row. Row 0 codes 0..7, zero 2, scale 0.5; row 1 all 15, zero 0,
  // scale 1. A = [1, 0, 0, 0, 0, 0, 0, 2].
  const Problem p = Mnk(op, 1, 2, 8);
  uint16_t a[8] = {};
  a[0] = FloatToBf16(1), a[7] = FloatToBf16(2);
  const uint8_t q0[8] = {0, 1, 2, 3, 4, 5, 6, 7}, q1[8] = {15, 15, 15, 15, 15, 15, 15, 15};
  uint32_t w[2] = {PackW4Word(q0), PackW4Word(q1)};
  uint16_t s[2] = {FloatToBf16(0.5f), FloatToBf16(1.0f)}, z[2] = {FloatToBf16(2.0f), FloatToBf16(0.0f)};
  uint16_t wd[16] = {}, c[2] = {};
  const Tensor in[6] = {{a, 8, Dtype::kBF16}, {w, 2, Dtype::kI32},   {s, 2, Dtype::kBF16},
                        {z, 2, Dtype::kBF16}, {wd, 16, Dtype::kBF16}, {w, 2, Dtype::kI32}};
  const auto out = testing::RunReference(op, p, in);
  // Row 0: 1 * (0 - 2) * 0.5 + 2 * (7 - 2) * 0.5 = -1 + 5 = 4. Row 1: 1 * 15 + 2 * 15 = 45.
  EXPECT_EQ(out.at(0), (std::vector<double>{4.0, 45.0}));
  (void)c;
}

TEST(W4a16Definition, ValidatesDerivedDims) {
  const OpDef& op = GetOp("w4a16_gemm");
  EXPECT_EQ(op.validate(Mnk(op, 1, 14336, 4096)), "");
  EXPECT_NE(op.validate(MakeProblem(op, {1, 64, 4096, 4096, 32})).find("K_words must be K / 8 = 512"),
            std::string::npos);
  EXPECT_NE(op.validate(MakeProblem(op, {1, 64, 200, 25, 1})).find("groups must be ceil(K / 128) = 2"),
            std::string::npos);
  EXPECT_NE(op.validate(MakeProblem(op, {1, 64, 12, 1, 1})).find("multiple of 8"), std::string::npos);
  for (const Preset& preset : op.presets)
    for (const Problem& p : preset.problems) EXPECT_EQ(op.validate(p), "") << preset.name << " " << p.label();
}

TEST(W4a16Definition, CostCountsPackedWeightsNotTheBf16Copy) {
  const OpDef& op = GetOp("w4a16_gemm");
  const Cost c = op.cost(Mnk(op, 1, 14336, 4096));
  // A 8 KiB, W 14336 * 4096 / 2, scales and zeros 14336 * 32 * 2 bytes each.
  EXPECT_EQ(c.bytes_read, 4096 * 2 + 14336.0 * 4096 / 2 + 14336.0 * 32 * 4);
  EXPECT_EQ(c.bytes_written, 14336 * 2);
  EXPECT_EQ(c.flops, 2.0 * 14336 * 4096);
}

TEST(W4a16Definition, HasTheIssuesPresets) {
  const OpDef& op = GetOp("w4a16_gemm");
  ASSERT_NE(op.find_preset("decode"), nullptr);
  EXPECT_EQ(op.find_preset("decode")->problems.size(), 9u);
  ASSERT_NE(op.find_preset("prefill"), nullptr);
  for (const Problem& p : op.find_preset("prefill")->problems) EXPECT_EQ(p.dim("M"), 4096);
  bool partial_group = false;
  for (const Problem& p : op.find_preset("edge")->problems) partial_group |= p.dim("K") % 128 != 0;
  EXPECT_TRUE(partial_group);
}

TEST(W4a16CpuRung, MatchesReference) {
  const OpDef& op = GetOp("w4a16_gemm");
  std::vector<Problem> problems = op.find_preset("small")->problems;
  for (const Problem& p : op.find_preset("edge")->problems) problems.push_back(p);
  for (Problem p : problems) {
    p.dtype = Dtype::kBF16;
    for (uint64_t seed : {1, 2})
      for (const auto& [variant, r] : testing::CheckCpuVariants(op, p, seed))
        EXPECT_TRUE(r.passed) << variant << " " << p.label() << ": " << r.mismatches << " mismatches, max abs "
                              << r.max_abs_error;
  }
}

}  // namespace
}  // namespace kbench::kernels
