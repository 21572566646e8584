// The tensor-core GEMV kernel of cuda_v4_mma_gemv (w4a16_mma_gemv.cu explains the fragment layout),
// as a template over its shape so that one GPU run can hold several against each other:
//   NT     n8 tiles of M (1, 2, 4, 8: M <= 8, 16, 32, 64), the mma's n side;
//   MT     m16 tiles of weight rows a warp (each B fragment of A loaded once for MT tiles);
//   SPLIT  warps of a block splitting K into contiguous ranges, summed through shared memory in
//          warp order at the end;
//   WN     warps of a block on different rows over the same k (their A loads hit in L1);
//   D      128-k chunks a load batch (weights, and the D scales and zero points of a row as one
//          vector each, all requested before any math); needs groups % D == 0;
//   PIPE   double-buffered batches: batch i+1 is requested before batch i's math, so a warp keeps
//          its loads in flight through its own math instead of relying on other warps;
//   MINB   __launch_bounds__ minimum blocks per SM (caps registers);
//   TILED  w is W_tiled (w4a16_gemm.h, W4TiledWord): a whole 16-row tile's chunk is one contiguous
//          kilobyte, so each load of a warp is 512 contiguous bytes; the partial last tile reads the
//          rows where W has them.
// For NT >= 4 the loop over a chunk's four 32-k steps is not unrolled: ptxas otherwise requests all
// four steps' A fragments at once (16 NT registers) and spills.
// Any grid: block b takes row tiles b, b + gridDim.x, ... (one each when the grid covers N), and a
// warp's batches run on from one tile into the next, the K split summed at each tile's end.
// Needs K % 128 == 0 and 16-byte aligned A and W.
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

#include "gemm/gemm/gemm_ptx.cuh"
#include "quant/w4a16_gemm/w4a16_gemm.h"
#include "quant/w4a16_gemm/w4a16_loads.cuh"
#include "quant/w4a16_gemm/w4a16_magic.cuh"

namespace kbench::kernels::w4a16 {

__device__ __forceinline__ uint32_t HMul2(uint32_t x, uint32_t y) {
  __nv_bfloat162 a = *reinterpret_cast<__nv_bfloat162*>(&x), b = *reinterpret_cast<__nv_bfloat162*>(&y);
  __nv_bfloat162 d = __hmul2(a, b);
  return *reinterpret_cast<uint32_t*>(&d);
}

// Half h of a lane's weight words wa (row g) and wb (row g + 8) as the A fragment of one m16n8k16
// mma: the bf16 pairs (q - zero) (z0, z1: 128 + zero of each row, both halves), times the rows' bf16
// scales (s0p, s1p) where kScaled; then one mma an n8 tile of M into d[nt], B fragments bf[nt].
template <bool kScaled, int NT>
__device__ __forceinline__ void W4MmaHalf(float (&d)[NT][4], uint32_t wa, uint32_t wb, int h, uint32_t z0,
                                          uint32_t z1, uint32_t s0p, uint32_t s1p, const uint4 (&bf)[NT]) {
  uint32_t frag[4] = {HSub2(MagicPair(wa >> (8 * h)), z0), HSub2(MagicPair(wb >> (8 * h)), z1),
                      HSub2(MagicPair(wa >> (8 * h + 4)), z0), HSub2(MagicPair(wb >> (8 * h + 4)), z1)};
  if constexpr (kScaled) {
    frag[0] = HMul2(frag[0], s0p), frag[1] = HMul2(frag[1], s1p);
    frag[2] = HMul2(frag[2], s0p), frag[3] = HMul2(frag[3], s1p);
  }
#pragma unroll
  for (int nt = 0; nt < NT; ++nt)
    gemm::ptx::MmaBf16(d[nt], frag, h == 0 ? bf[nt].x : bf[nt].z, h == 0 ? bf[nt].y : bf[nt].w);
}

// acc += s * part over a weight tile's n8 tiles: d[0], d[1] are row g's (scale s0), d[2], d[3] row g + 8's.
template <int NT>
__device__ __forceinline__ void AddRowScaled(float (&acc)[NT][4], const float (&part)[NT][4], float s0, float s1) {
#pragma unroll
  for (int nt = 0; nt < NT; ++nt) {
    acc[nt][0] = fmaf(s0, part[nt][0], acc[nt][0]);
    acc[nt][1] = fmaf(s0, part[nt][1], acc[nt][1]);
    acc[nt][2] = fmaf(s1, part[nt][2], acc[nt][2]);
    acc[nt][3] = fmaf(s1, part[nt][3], acc[nt][3]);
  }
}

// D consecutive groups' scales (or zero points) of one row: D bf16 in one load.
template <int D>
struct W4Groups;
template <>
struct W4Groups<1> {
  using T = uint16_t;
};
template <>
struct W4Groups<2> {
  using T = uint32_t;
};
template <>
struct W4Groups<4> {
  using T = uint2;
};
template <>
struct W4Groups<8> {
  using T = uint4;
};

// The bf16 d of a D-group vector, widened to f32.
template <typename T>
__device__ __forceinline__ float GroupValue(const T& v, int d) {
  if constexpr (sizeof(T) == 2) {
    return __uint_as_float(uint32_t{v} << 16);
  } else {
    const uint32_t* p = reinterpret_cast<const uint32_t*>(&v);
    const uint32_t x = p[d / 2];
    return __uint_as_float(d % 2 == 0 ? x << 16 : x & 0xffff0000u);
  }
}

// One load batch of a lane: D consecutive chunks of rows g and g + 8 of each m16 tile, with their
// scales and zero points.
template <int MT, int D>
struct W4Batch {
  uint4 w[MT][2][D];
  typename W4Groups<D>::T s[MT][2], z[MT][2];
};

template <int NT, int MT, int SPLIT, int WN, int D, bool PIPE, int MINB, bool TILED = false>
__global__ void __launch_bounds__(32 * SPLIT * WN, MINB)
    GemvMmaT(const __nv_bfloat16* __restrict__ a, const uint32_t* __restrict__ w,
             const __nv_bfloat16* __restrict__ scales, const __nv_bfloat16* __restrict__ zeros,
             __nv_bfloat16* __restrict__ c, int64_t m, int64_t n, int64_t k) {
  using GT = typename W4Groups<D>::T;
  constexpr int kAcc = MT * NT * 4;
  constexpr int kBlockRows = 16 * MT * WN;
  __shared__ float red[SPLIT > 1 ? SPLIT - 1 : 1][WN][32][kAcc];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const int ks = warp % SPLIT, wn = warp / SPLIT;
  const int64_t words = k / kW4PerWord, groups = k / kW4Group, chunks = k / kW4Group;
  // This warp's chunks: a contiguous range of whole batches (the launcher makes groups % D == 0),
  // the same range in every row tile.
  const int batches = static_cast<int>(chunks / D), per = (batches + SPLIT - 1) / SPLIT;
  const int c0 = min(ks * per, batches) * D, nj = min((ks + 1) * per, batches) * D - c0;  // 32-bit: fewer registers
  // Row tiles blockIdx.x, + gridDim.x, ...: one a block when the grid covers N, several when the
  // launcher makes it persistent. A warp's batches run as one stream over its tiles, so the next
  // tile's first weights are in flight under this tile's last math.
  // Positions are (tile, batch) counters, not an item index divided by nb: a 64-bit division a load
  // doubled the instructions of the M = 1 loop.
  const int64_t tiles = (n + kBlockRows - 1) / kBlockRows;
  const int my_tiles = blockIdx.x < tiles ? static_cast<int>((tiles - 1 - blockIdx.x) / gridDim.x) + 1 : 0;
  const int nb = nj / D;
  struct Pos {
    int ti, j;  // this block's ti-th tile, the warp's j-th batch in it
  };
  const auto next = [&](Pos p) { return ++p.j == nb ? Pos{p.ti + 1, 0} : p; };
  const auto n0_of = [&](int ti) {
    return (blockIdx.x + static_cast<int64_t>(ti) * gridDim.x) * kBlockRows + wn * 16 * MT;
  };

  auto load = [&](W4Batch<MT, D>& b, Pos at) {
    const int64_t n0 = n0_of(at.ti), cj = c0 + static_cast<int64_t>(at.j) * D;
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const int64_t row = min(n0 + 16 * mt + 8 * r + g, n - 1);  // clamped loads, guarded stores
        const int64_t tile = (n0 + 16 * mt) / 16;
        const uint4* wr;
        int stride;  // 16-byte pieces from one chunk of a lane's row to the next
        if (TILED && 16 * tile + 16 <= n) {
          wr = reinterpret_cast<const uint4*>(w) + (tile * chunks + cj) * 64 + r * 32 + lane;
          stride = 64;
        } else {
          wr = reinterpret_cast<const uint4*>(w + row * words) + t + cj * 4;
          stride = 4;
        }
#pragma unroll
        for (int d = 0; d < D; ++d) b.w[mt][r][d] = LoadStream(wr + d * stride);
        b.s[mt][r] = __ldg(reinterpret_cast<const GT*>(scales + row * groups + cj));
        b.z[mt][r] = __ldg(reinterpret_cast<const GT*>(zeros + row * groups + cj));
      }
  };

  float acc[MT][NT][4] = {};
  auto compute = [&](const W4Batch<MT, D>& b, Pos at) {
    const int64_t j0 = static_cast<int64_t>(at.j) * D;
#pragma unroll
    for (int d = 0; d < D; ++d) {
      const int64_t ch = c0 + j0 + d;
      // NT >= 4: the scale multiplies each dequantized pair in bf16 (one rounding, as W_bf16 has) and
      // the mmas accumulate into acc, since per-group partial sums of 4 NT registers a tile do not fit.
      constexpr bool kBf16Scale = NT >= 4;
      float part[kBf16Scale ? 1 : MT][kBf16Scale ? 1 : NT][4] = {};
      // NT <= 2: the chunk's A fragments requested together (4 NT registers each); wider M one u at
      // a time.
      constexpr int kAhead = NT <= 2 ? 4 : 1;
      uint4 bfa[kAhead][NT];
      const auto load_a = [&](int u, uint4(&dst)[NT]) {
#pragma unroll
        for (int nt = 0; nt < NT; ++nt) {
          const int64_t mr = nt * 8 + g;
          dst[nt] = mr < m ? LoadA(a + mr * k + ch * kW4Group + 32 * t + 8 * u) : make_uint4(0, 0, 0, 0);
        }
      };
      if constexpr (kAhead == 4) {
#pragma unroll
        for (int u = 0; u < 4; ++u) load_a(u, bfa[u]);
      }
      // Wider M: a rolled loop over u, so that ptxas cannot hoist every u's A fragments (4 NT
      // registers each) above the mmas.
#pragma unroll(kAhead == 4 ? 4 : 1)
      for (int u = 0; u < 4; ++u) {
        // A row (8 nt + g) at k = 128ch + 32t + 8u .. +7: the B fragments of mmas (u, 0) and (u, 1).
        if constexpr (kAhead == 1) load_a(u, bfa[0]);
        const uint4(&bf)[NT] = bfa[kAhead == 4 ? u : 0];
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          const uint32_t z0 = PackBf16Pair(128.0f + GroupValue(b.z[mt][0], d));
          const uint32_t z1 = PackBf16Pair(128.0f + GroupValue(b.z[mt][1], d));
          const uint4 p0 = b.w[mt][0][d], p1 = b.w[mt][1][d];
          uint32_t s0p = 0, s1p = 0;
          if constexpr (kBf16Scale)
            s0p = PackBf16Pair(GroupValue(b.s[mt][0], d)), s1p = PackBf16Pair(GroupValue(b.s[mt][1], d));
          const uint32_t wa = u == 0 ? p0.x : u == 1 ? p0.y : u == 2 ? p0.z : p0.w;
          const uint32_t wb = u == 0 ? p1.x : u == 1 ? p1.y : u == 2 ? p1.z : p1.w;
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            if constexpr (kBf16Scale) W4MmaHalf<true>(acc[mt], wa, wb, h, z0, z1, s0p, s1p, bf);
            else W4MmaHalf<false>(part[mt], wa, wb, h, z0, z1, s0p, s1p, bf);
          }
        }
      }
      if constexpr (!kBf16Scale) {
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
          AddRowScaled(acc[mt], part[mt], GroupValue(b.s[mt][0], d), GroupValue(b.s[mt][1], d));
      }
    }
  };

  // A tile's end: the K split's partial sums, summed by warp ks = 0 in warp order (the same order
  // every run), stored, and acc cleared for the next tile. Every warp of the block reaches it once a
  // tile (the same tiles and the same number of batches a tile in every warp, or none at all).
  auto finish = [&](int ti) {
    if constexpr (SPLIT > 1) {
      if (ks > 0)
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
          for (int nt = 0; nt < NT; ++nt)
#pragma unroll
            for (int i = 0; i < 4; ++i) red[ks - 1][wn][lane][(mt * NT + nt) * 4 + i] = acc[mt][nt][i];
      __syncthreads();
      if (ks == 0)
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
          for (int nt = 0; nt < NT; ++nt)
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
              for (int q = 0; q < SPLIT - 1; ++q) acc[mt][nt][i] += red[q][wn][lane][(mt * NT + nt) * 4 + i];
      if (ti + 1 < my_tiles) __syncthreads();  // red is read before the next tile's partials land
    }
    const int64_t n0 = n0_of(ti);
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          // d[i]: row n0 + 16 mt + g (+8 for i >= 2), column (M index) 8 nt + 2t + (i % 2).
          const int64_t row = n0 + 16 * mt + g + (i >= 2 ? 8 : 0), col = nt * 8 + 2 * t + (i % 2);
          if (ks == 0 && row < n && col < m) c[col * n + row] = __float2bfloat16_rn(acc[mt][nt][i]);
          acc[mt][nt][i] = 0.0f;
        }
  };
  const auto done = [&](Pos at) {
    if (at.j == nb - 1) finish(at.ti);
  };

  if (nb == 0) {  // no chunks for this warp (fewer batches than warps): it still meets every tile's barrier
    for (int ti = 0; ti < my_tiles; ++ti) finish(ti);
  } else if constexpr (PIPE) {
    W4Batch<MT, D> b0, b1;
    const Pos end{my_tiles, 0};
    const auto before = [&](Pos p) { return p.ti < end.ti; };
    Pos p0{0, 0};
    if (before(p0)) load(b0, p0);
    while (before(p0)) {
      const Pos p1 = next(p0);
      if (before(p1)) load(b1, p1);
      compute(b0, p0);
      done(p0);
      const Pos p2 = before(p1) ? next(p1) : p1;
      if (before(p2)) load(b0, p2);
      if (before(p1)) {
        compute(b1, p1);
        done(p1);
      }
      p0 = p2;
    }
  } else {
    for (Pos p{0, 0}; p.ti < my_tiles; p = next(p)) {
      W4Batch<MT, D> b;
      load(b, p);
      compute(b, p);
      done(p);
    }
  }
}

// The launch of one shape: the n8 tiles from M (M <= 8 * NTMAX), rows a block 16 * MT * WN.
template <int NTMAX, int MT, int SPLIT, int WN, int D, bool PIPE, int MINB, bool TILED = false>
struct GemvMmaShape {
  static constexpr bool kTiled = TILED;
  static constexpr int kThreads = 32 * SPLIT * WN;
  static constexpr int kRows = 16 * MT * WN;
  // The problems this shape takes: whole batches of D groups, 16-byte aligned A and W, scales and
  // zero points aligned to their D-group vectors.
  static bool Takes(const void* a, const void* w, const void* sc, const void* z, int64_t k) {
    const auto al = [](const void* p, uintptr_t b) { return reinterpret_cast<uintptr_t>(p) % b == 0; };
    return k % kW4Group == 0 && (k / kW4Group) % D == 0 && al(a, 16) && al(w, 16) && al(sc, 2 * D) && al(z, 2 * D);
  }
  template <int NT>
  static const void* Kernel() {
    return reinterpret_cast<const void*>(&GemvMmaT<NT, MT, SPLIT, WN, D, PIPE, MINB, TILED>);
  }
  static const void* KernelFor(int64_t m) {
    if (m <= 8 || NTMAX < 2) return Kernel<1>();
    if constexpr (NTMAX >= 2)
      if (m <= 16 || NTMAX < 4) return Kernel<2>();
    if constexpr (NTMAX >= 4)
      if (m <= 32 || NTMAX < 8) return Kernel<4>();
    if constexpr (NTMAX >= 8) return Kernel<8>();
    return nullptr;
  }
  template <int NT>
  static void Go(unsigned grid, cudaStream_t s, const __nv_bfloat16* a, const uint32_t* w, const __nv_bfloat16* sc,
                 const __nv_bfloat16* z, __nv_bfloat16* c, int64_t m, int64_t n, int64_t k) {
    GemvMmaT<NT, MT, SPLIT, WN, D, PIPE, MINB, TILED><<<grid, kThreads, 0, s>>>(a, w, sc, z, c, m, n, k);
  }
  // M must be <= 8 * NTMAX (the caller's skip_reason says so).
  static void Launch(cudaStream_t s, const __nv_bfloat16* a, const uint32_t* w, const __nv_bfloat16* sc,
                     const __nv_bfloat16* z, __nv_bfloat16* c, int64_t m, int64_t n, int64_t k) {
    const auto grid = static_cast<unsigned>((n + kRows - 1) / kRows);
    if (m <= 8) return Go<1>(grid, s, a, w, sc, z, c, m, n, k);
    if constexpr (NTMAX >= 2)
      if (m <= 16) return Go<2>(grid, s, a, w, sc, z, c, m, n, k);
    if constexpr (NTMAX >= 4)
      if (m <= 32) return Go<4>(grid, s, a, w, sc, z, c, m, n, k);
    if constexpr (NTMAX >= 8) return Go<8>(grid, s, a, w, sc, z, c, m, n, k);
  }
};

}  // namespace kbench::kernels::w4a16
