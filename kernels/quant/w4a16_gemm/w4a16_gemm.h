// The w4a16_gemm op's functions and its weight format, each defined in this folder. The suite lists
// MakeW4a16GemmOp (kernels/suite.h); the others are its parts, for tests and the CUDA rungs.
//
// The weight format (the op's own, shared by the reference, the fills, the tests and the kernels):
//   W       int32 [N, K/8]: word w of row n holds the unsigned 4-bit codes q of k = 8w .. 8w+7, element
//           j in nibble (j / 2) + 4 * (j % 2), i.e. nibbles 0..7 hold elements 0,2,4,6,1,3,5,7. So
//           (word >> 4i) & 0x000f000f puts elements 2i and 2i+1 in the low bits of each 16-bit half,
//           where one lop3 with 0x43004300 turns them into the bf16 pair (128 + q): the magic-number
//           dequantization of cuda_v3_gemv_magic.
//   scales  bf16 [N, groups], zeros bf16 [N, groups] (zero points in code units, whole numbers in
//           [0, 15]); group g covers k = 128g .. 128g+127, the last group is partial when 128 does not
//           divide K.
//   The weight of (n, k) is (q - zero) * scale.
//   W_tiled  the same words in the order the tensor-core rungs stream them (W4TiledWord): for K a
//           multiple of 128, each 16-row tile's 128-k chunk is one contiguous kilobyte, [half h][lane
//           (g, t)][4 words], lane (g, t) holding row 16 tile + 8 h + g at k = 128 chunk + 32 t .. +31, the
//           16 bytes that lane's mma fragments take; a tile's chunks follow each other. So a warp's
//           16-byte-a-lane load is 512 contiguous bytes and a warp walks its tile's 16 rows as one
//           linear stream, where W's row-major order gives it 16 runs of 64 bytes, 2 KB apart. Rows past
//           the last whole tile, and every row when K is not a multiple of 128, stay where W has them.
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/op.h"

namespace kbench::kernels {

inline constexpr int64_t kW4Group = 128;  // k values per scale and zero point
inline constexpr int kW4PerWord = 8;      // 4-bit codes per int32 word

OpDef MakeW4a16GemmOp();                   // w4a16_gemm_op.cc: the op with every rung of this build
OpDef W4a16GemmDefinition();               // w4a16_gemm_op.cc: the definition alone, no rungs
void AddW4a16GemmCpuVariants(OpDef& op);   // w4a16_gemm_cpu.cc
void AddW4a16GemmCudaVariants(OpDef& op);  // w4a16_gemm_cuda.cu; compiled only with CUDA

// Nibble position of element j (0..7) inside its word.
constexpr int W4Nibble(int j) { return j / 2 + 4 * (j % 2); }

// Packs 8 codes (each 0..15, element order) into one word of the format above.
uint32_t PackW4Word(const uint8_t (&q)[8]);
// The code of element j of a packed word.
inline uint8_t W4Code(uint32_t word, int j) { return static_cast<uint8_t>((word >> (4 * W4Nibble(j))) & 0xfu); }

// The seeded quantized weights of a problem, one generator for the W, scales, zeros and W_bf16
// fills (so the four tensors always describe the same weights): code of (n, k), and the scale and
// zero point of (n, group). Scales have 4 significant bits (m * 2^-7, m in 8..11), so every
// (q - zero) * scale is exactly a bf16 value.
uint8_t W4CodeAt(uint64_t seed, int64_t n, int64_t k, int64_t K);
float W4ScaleAt(uint64_t seed, int64_t n, int64_t g);
float W4ZeroAt(uint64_t seed, int64_t n, int64_t g);

// The index in W_tiled of word `word` (0 .. K/8 - 1) of row n, for an [N, K] weight matrix.
inline int64_t W4TiledWord(int64_t n, int64_t word, int64_t N, int64_t K) {
  const int64_t words = K / kW4PerWord;
  if (K % kW4Group != 0 || n >= N / 16 * 16) return n * words + word;
  const int64_t chunks = K / kW4Group, c = word / 16, t = (word % 16) / 4, i = word % 4;
  return (((n / 16) * chunks + c) * 64 + ((n % 16) / 8) * 32 + (n % 8) * 4 + t) * 4 + i;
}

// The dequantized weight of (n, k) read from the packed tensors (host memory).
double W4Dequant(const uint32_t* w, const uint16_t* scales, const uint16_t* zeros, int64_t K, int64_t n, int64_t k);

// The dims a problem must have besides M, N, K: K/8 words a row and ceil(K/128) groups.
inline int64_t W4Words(int64_t k) { return k / kW4PerWord; }
inline int64_t W4Groups(int64_t k) { return (k + kW4Group - 1) / kW4Group; }

// The K split of the tensor-core rungs (v4's shared-memory-A kernel, v5): `row_blocks` blocks over
// `units` K units (slabs or chunks) split floor(slots / row_blocks) ways where the row blocks leave
// resident-block slots empty, so that one wave fills them; `per` units a split (the last may have
// fewer), `splits` = ceil(units / per).
struct W4KSplitShape {
  int64_t per, splits;
};
inline W4KSplitShape W4KSplit(int64_t row_blocks, int64_t units, int64_t slots) {
  if (row_blocks >= slots || units <= 1) return {units, 1};
  const int64_t want = std::min<int64_t>(units, slots / row_blocks);
  const int64_t per = (units + want - 1) / want;
  return {per, (units + per - 1) / per};
}

// Whether v5 sums a split's partials inside one cluster (distributed shared memory) rather than through
// global memory, as far as the split's shape decides: 2 to 8 splits (a portable cluster) of at most
// kW4ClusterMaxUnits K units each. Past that the clustered grid measured slower on the H200 (its blocks
// packed two an SM; GEMM_README.md). The launcher also needs every cluster resident at once.
inline constexpr int64_t kW4ClusterMaxUnits = 8;
inline bool W4ClusterShape(const W4KSplitShape& s) {
  return s.splits >= 2 && s.splits <= 8 && s.per <= kW4ClusterMaxUnits;
}

// v5's clustered blocks read their scales and zero points from one TMA box of each, loaded with the
// first chunk: kW4ScaleBoxGroups groups from the block's first group rounded down to 8 (a box starts
// 16-byte aligned in global memory), so a block's K range is at most 24 - 7 = 17 groups. TMA needs the
// tensors' row stride (groups x 2 bytes) a multiple of 16.
inline constexpr int kW4ScaleBoxGroups = 24;
inline bool W4ScalesByTma(int64_t groups) { return groups % 8 == 0; }

// The K split of v5's clusters whose blocks each own an SM: the widest split of at most
// min(max_splits, 8) ways (W4KSplit's, and a portable cluster) and at least 2 whose K ranges are at
// most kW4ClusterMaxUnitsOneSm units and for which fits(splits) (the device holds every cluster at once,
// one block an SM); {units, 1} where none does. 12: ranges up to 11 chunks were measured (4096 x 4096,
// faster than 8-chunk ones on shared SMs); 28-chunk clusters at K = 14336, tried on shared SMs, were
// slower than the global merge, and long ranges alone on their SMs were not tried.
inline constexpr int64_t kW4ClusterMaxUnitsOneSm = 12;
template <typename Fits>
W4KSplitShape W4ClusterSplit(int64_t units, int64_t max_splits, Fits&& fits) {
  for (int64_t want = std::min<int64_t>(max_splits, 8); want >= 2; --want) {
    const int64_t per = (units + want - 1) / want, splits = (units + per - 1) / per;
    if (per > kW4ClusterMaxUnitsOneSm) break;  // fewer ways only lengthen the ranges
    if (splits >= 2 && fits(splits)) return {per, splits};
  }
  return {units, 1};
}

// Warps splitting K over a 16-row tile in v4's M <= 8 kernel (w4a16_mma_lean.cuh): the widest of 8, 4
// and 2 whose blocks (one a tile) all fit one wave of resident blocks, `slots8` and `slots4` being the
// device's resident blocks of the 8- and 4-warp kernels; 2 where neither does.
inline int W4LeanSplit(int64_t tiles, int64_t slots8, int64_t slots4) {
  return tiles <= slots8 ? 8 : tiles <= slots4 ? 4 : 2;
}

}  // namespace kbench::kernels
