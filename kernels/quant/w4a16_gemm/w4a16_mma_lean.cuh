// The M <= 8 kernel of cuda_v4_mma_gemv: the register-fed template's fragment layout
// (w4a16_mma_gemv.cu) with fewer instructions a weight and a K split chosen from N.
//   - The zero point leaves the weights: the magic pair is 128 + q, so a group's sum is
//     sum (128 + q) a - (128 + z) sum a, and sum a over the group's k comes from one more mma a
//     k16 step with an all-ones weight fragment (one instruction where the subtractions were four).
//     The products (128 + q) a are exact in f32 (8-bit by 8-bit significands), and the cancellation
//     costs ~2^-24 * 143 * 128 |a| a group, far below the bf16 output's rounding.
//   - Each warp walks its chunks with pointers fixed at the start; a ring of P chunks (weights,
//     scales and zero points) is in flight behind the chunk being computed.
// ~120 instructions a kilobyte a warp streams where the template issued ~235; on the H200 neither is
// issue-bound (GEMM_README.md): what made this kernel faster is SPLIT, the warps on a tile's K, which
// the launcher raises to 8 where N has few tiles (4096 rows: 256 tiles, 2048 warps).
// Block: SPLIT warps splitting K over one 16-row tile, summed in warp order through shared memory.
// Needs K % 128 == 0 and 16-byte aligned A and W (W_tiled's layout; a partial last tile reads W's).
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

#include "gemm/gemm/gemm_ptx.cuh"
#include "quant/w4a16_gemm/w4a16_gemm.h"
#include "quant/w4a16_gemm/w4a16_loads.cuh"
#include "quant/w4a16_gemm/w4a16_magic.cuh"

namespace kbench::kernels::w4a16 {

// One chunk of a lane in flight: 16 bytes of rows g and g + 8, and their scales and zero points.
struct LeanChunk {
  uint4 w0, w1;
  uint32_t s0, s1, z0, z1;
};

// A's B fragments of one chunk of a lane: row g at 32 k from pa (zeros where has_a is false).
__device__ __forceinline__ void LeanLoadAFragments(uint4 (&bf)[4], const __nv_bfloat16* pa, bool has_a) {
#pragma unroll
  for (int u = 0; u < 4; ++u) bf[u] = has_a ? LoadA(pa + 8 * u) : make_uint4(0, 0, 0, 0);
}

// One chunk of a lane: rows g and g + 8 at 32 k (w0, w1), A's fragments bf, the rows' scales and zero
// points as raw bf16 bits; adds to acc. kChains: the chunk's two chains of 8 mmas (the weights' and
// the all-ones one) each cut into kChains independent ones by u, summed at the end.
template <int kChains = 1>
__device__ __forceinline__ void LeanChunkMathOn(float (&acc)[4], const uint4& w0, const uint4& w1, uint32_t s0,
                                                uint32_t s1, uint32_t z0, uint32_t z1, const uint4 (&bf)[4]) {
  float part[kChains][4] = {}, sum_a[kChains][4] = {};
  uint32_t ones[4];  // bf16 pairs (1, 1)
  ones[0] = ones[1] = ones[2] = ones[3] = 0x3f803f80u;
#pragma unroll
  for (int u = 0; u < 4; ++u) {
    const uint32_t wa = u == 0 ? w0.x : u == 1 ? w0.y : u == 2 ? w0.z : w0.w;
    const uint32_t wb = u == 0 ? w1.x : u == 1 ? w1.y : u == 2 ? w1.z : w1.w;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const uint32_t frag[4] = {MagicPair(wa >> (8 * h)), MagicPair(wb >> (8 * h)), MagicPair(wa >> (8 * h + 4)),
                                MagicPair(wb >> (8 * h + 4))};
      const uint32_t b0 = h == 0 ? bf[u].x : bf[u].z, b1 = h == 0 ? bf[u].y : bf[u].w;
      gemm::ptx::MmaBf16(part[u % kChains], frag, b0, b1);
      gemm::ptx::MmaBf16(sum_a[u % kChains], ones, b0, b1);
    }
  }
#pragma unroll
  for (int c = 1; c < kChains; ++c)
#pragma unroll
    for (int i = 0; i < 4; ++i) part[0][i] += part[c][i], sum_a[0][i] += sum_a[c][i];
  // acc += s (sum (128 + q) a - (128 + z) sum a); sum_a's rows g and g + 8 hold the same sums.
  const float sc0 = __uint_as_float(s0 << 16), sc1 = __uint_as_float(s1 << 16);
  const float zz0 = 128.0f + __uint_as_float(z0 << 16), zz1 = 128.0f + __uint_as_float(z1 << 16);
  acc[0] = fmaf(sc0, fmaf(-zz0, sum_a[0][0], part[0][0]), acc[0]);
  acc[1] = fmaf(sc0, fmaf(-zz0, sum_a[0][1], part[0][1]), acc[1]);
  acc[2] = fmaf(sc1, fmaf(-zz1, sum_a[0][0], part[0][2]), acc[2]);
  acc[3] = fmaf(sc1, fmaf(-zz1, sum_a[0][1], part[0][3]), acc[3]);
}

// The same with A's fragments loaded from pa first.
__device__ __forceinline__ void LeanChunkMath(float (&acc)[4], const uint4& w0, const uint4& w1, uint32_t s0,
                                              uint32_t s1, uint32_t z0, uint32_t z1, const __nv_bfloat16* pa,
                                              bool has_a) {
  uint4 bf[4];
  LeanLoadAFragments(bf, pa, has_a);
  LeanChunkMathOn(acc, w0, w1, s0, s1, z0, z1, bf);
}

// One warp's chunks [0, nc) from the given pointers (chunk j at w0 + j * kStride, scales at s0 + j,
// A at pa + 128 j), summed into acc. kStride: uint4s from one chunk to the next (64 in W_tiled's
// tiles, 4 along a row of W).
template <int P, int kStride>
__device__ __forceinline__ void LeanStream(float (&acc)[4], const uint4* w0, const uint4* w1,
                                           const __nv_bfloat16* s0, const __nv_bfloat16* s1,
                                           const __nv_bfloat16* z0, const __nv_bfloat16* z1,
                                           const __nv_bfloat16* pa, bool has_a, int nc) {
  const auto load = [&](LeanChunk& x, int j) {
    x.w0 = LoadStreamInOrder(w0 + j * kStride);
    x.w1 = LoadStreamInOrder(w1 + j * kStride);
    x.s0 = LoadBf16Bits(s0 + j), x.s1 = LoadBf16Bits(s1 + j);
    x.z0 = LoadBf16Bits(z0 + j), x.z1 = LoadBf16Bits(z1 + j);
  };
  const auto compute = [&](const LeanChunk& x, int i) {
    LeanChunkMath(acc, x.w0, x.w1, x.s0, x.s1, x.z0, x.z1, pa + i * kW4Group, has_a);
  };

  // The ring: chunk j in slot j % P, reloaded with chunk j + P once computed; the pointers advance a
  // round at a time so that every address in the loop is a pointer plus a constant.
  LeanChunk ring[P];
#pragma unroll
  for (int i = 0; i < P; ++i)
    if (i < nc) load(ring[i], i);
  for (int left = nc; left > 0; left -= P) {
#pragma unroll
    for (int i = 0; i < P; ++i) {
      if (i < left) {
        compute(ring[i], i);
        if (i + P < left) load(ring[i], i + P);
      }
    }
    w0 += P * kStride, w1 += P * kStride, s0 += P, s1 += P, z0 += P, z1 += P, pa += P * kW4Group;
  }
}

template <int SPLIT, int P, int MINB>
__global__ void __launch_bounds__(32 * SPLIT, MINB)
    GemvMmaLean(const __nv_bfloat16* __restrict__ a, const uint32_t* __restrict__ w,
                const __nv_bfloat16* __restrict__ scales, const __nv_bfloat16* __restrict__ zeros,
                __nv_bfloat16* __restrict__ c, int64_t m, int64_t n, int64_t k) {
  __shared__ float red[SPLIT > 1 ? SPLIT - 1 : 1][32][4];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const int chunks = static_cast<int>(k / kW4Group);
  const int per = (chunks + SPLIT - 1) / SPLIT;
  const int c0 = min(warp * per, chunks), nc = min(c0 + per, chunks) - c0;
  const int64_t n0 = static_cast<int64_t>(blockIdx.x) * 16;
  const int64_t r0 = min(n0 + g, n - 1), r1 = min(n0 + 8 + g, n - 1);  // clamped loads, guarded stores
  const __nv_bfloat16 *s0 = scales + r0 * chunks + c0, *s1 = scales + r1 * chunks + c0;
  const __nv_bfloat16 *z0 = zeros + r0 * chunks + c0, *z1 = zeros + r1 * chunks + c0;
  // A row g (lanes past M feed zeros: their columns are not stored).
  const bool has_a = g < static_cast<int>(m);
  const __nv_bfloat16* pa = a + (has_a ? g : 0) * k + static_cast<int64_t>(c0) * kW4Group + 32 * t;

  float acc[4] = {};
  // Weights: a whole tile's chunks are contiguous kilobytes in W_tiled; a partial tile reads W's rows.
  if (n0 + 16 <= n) {
    const uint4* w0 = reinterpret_cast<const uint4*>(w) + (static_cast<int64_t>(blockIdx.x) * chunks + c0) * 64 + lane;
    LeanStream<P, 64>(acc, w0, w0 + 32, s0, s1, z0, z1, pa, has_a, nc);
  } else {
    const uint4* w0 = reinterpret_cast<const uint4*>(w + r0 * (k / kW4PerWord)) + t + c0 * 4;
    const uint4* w1 = reinterpret_cast<const uint4*>(w + r1 * (k / kW4PerWord)) + t + c0 * 4;
    LeanStream<P, 4>(acc, w0, w1, s0, s1, z0, z1, pa, has_a, nc);
  }

  // The K split's partial sums, summed by warp 0 in warp order (the same order every run).
  if constexpr (SPLIT > 1) {
    if (warp > 0)
#pragma unroll
      for (int i = 0; i < 4; ++i) red[warp - 1][lane][i] = acc[i];
    __syncthreads();
    if (warp > 0) return;
#pragma unroll
    for (int q = 0; q < SPLIT - 1; ++q)
#pragma unroll
      for (int i = 0; i < 4; ++i) acc[i] += red[q][lane][i];
  }
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    // acc[i]: row n0 + g (+8 for i >= 2), column (M index) 2t + (i % 2).
    const int64_t row = n0 + g + (i >= 2 ? 8 : 0), col = 2 * t + (i % 2);
    if (row < n && col < m) c[col * n + row] = __float2bfloat16_rn(acc[i]);
  }
}

}  // namespace kbench::kernels::w4a16
