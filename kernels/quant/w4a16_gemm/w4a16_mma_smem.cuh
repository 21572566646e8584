// The tensor-core GEMV with A staged in shared memory, for M > 8: the register-fed template
// (w4a16_mma_kernel.cuh) reads A's B fragments through L1/L2 for every 16 weight rows, so at M = 16
// a 14336-row problem re-reads A (128 KB) 896 times from L2 and at M = 64 (512 KB) L2 bandwidth
// sets the time. Here a block of WN warps (16 weight rows each, all of K) walks K in slabs of D
// chunks; each slab of A (rows 0 .. 8 NT, zero past M) is copied once per block into shared memory
// with cp.async, double-buffered, and every warp reads its fragments from there. The slab is stored
// permuted, [chunk][u][row][t][8 k], so that a warp's 16-byte fragment reads (row g, 16 bytes t)
// are 512 contiguous bytes: no bank conflicts. Weights, scales and zero points are register-fed,
// double-buffered batches as in the template. Needs groups % D == 0, 16-byte aligned A and W, scales
// aligned to D-group vectors (GemvMmaShape::Takes says the same). TILED: w is W_tiled, as in the
// register-fed template.
// Split K (grid.y = ksplit > 1): a shape with few row blocks (N = 4096 is 32 of them for 132 SMs)
// gives each block a range of the slabs; the blocks of a row block write f32 partials and the last
// to arrive sums them in split order (bitwise repeatable), as the GEMM family's split-K GEMV does.
#pragma once

#include <cuda_bf16.h>

#include <algorithm>
#include <cstdint>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/occupancy.cuh"
#include "core/cuda/workspace.cuh"
#include "gemm/gemm/gemm_ptx.cuh"
#include "quant/w4a16_gemm/w4a16_gemm.h"
#include "quant/w4a16_gemm/w4a16_magic.cuh"
#include "quant/w4a16_gemm/w4a16_mma_kernel.cuh"

namespace kbench::kernels::w4a16 {

// The merge of a K split: rows [first, first + rows) of C from the f32 partials [split][M][N], summed in
// split order (bitwise repeatable), by the block's threads. Each thread takes kU elements at once so
// that their loads are in flight together: one element at a time, a 64 x 128 merge was 32 dependent
// L2 round trips a thread.
// By threads 0 .. nthreads - 1 of the block (all of it by default).
__device__ __forceinline__ void MergeSplits(const float* __restrict__ part, __nv_bfloat16* __restrict__ c,
                                            int64_t m, int64_t n, int64_t first, int64_t rows, unsigned splits,
                                            int nthreads = -1) {
  constexpr int kU = 8;
  const int64_t total = m * rows, stride = nthreads < 0 ? blockDim.x : nthreads;
  for (int64_t e0 = threadIdx.x; e0 < total; e0 += kU * stride) {
    float sum[kU];
    int64_t at[kU];
#pragma unroll
    for (int u = 0; u < kU; ++u) {
      const int64_t e = min(e0 + u * stride, total - 1);  // clamped: loaded, not stored
      at[u] = (e / rows) * n + first + e % rows;
      sum[u] = 0.0f;
    }
#pragma unroll 2
    for (unsigned sp = 0; sp < splits; ++sp) {
      float v[kU];
#pragma unroll
      for (int u = 0; u < kU; ++u) v[u] = __ldcg(part + sp * m * n + at[u]);
#pragma unroll
      for (int u = 0; u < kU; ++u) sum[u] += v[u];
    }
#pragma unroll
    for (int u = 0; u < kU; ++u)
      if (e0 + u * stride < total) c[at[u]] = __float2bfloat16_rn(sum[u]);
  }
}

// The K split of a launch of `row_blocks` blocks over `units` K units (slabs or chunks) by W4KSplit's
// rule (w4a16_gemm.h), and the workspace for the f32 partials and arrival counters (null when there
// is no split). 0 or a cudaError_t as int.
struct KSplit {
  int64_t per = 0, splits = 1;
  float* part = nullptr;
  unsigned* counters = nullptr;
};
inline int PlanKSplit(int64_t row_blocks, int64_t units, int64_t slots, int64_t m, int64_t n, cudaStream_t s,
                      KSplit* out) {
  KSplit& plan = *out;
  const W4KSplitShape shape = W4KSplit(row_blocks, units, slots);
  plan = KSplit{.per = shape.per, .splits = shape.splits};
  if (plan.splits == 1) return 0;
  void* p = nullptr;
  KB_CUDA_TRY(cuda::GetWorkspace(cuda::WorkspaceSlot::kW4a16SplitKPartials,
                                 static_cast<size_t>(plan.splits * m * n) * sizeof(float), s, &p));
  plan.part = static_cast<float*>(p);
  KB_CUDA_TRY(cuda::GetWorkspace(cuda::WorkspaceSlot::kW4a16SplitKCounters,
                                 static_cast<size_t>(row_blocks) * sizeof(unsigned), s, &p));
  plan.counters = static_cast<unsigned*>(p);
  return 0;
}

// The end of a split-K-capable block, in two parts. StoreSplitTile: one warp's acc (rows n0 + g and
// n0 + g + 8, columns col0 + nt * 8 + 2t + i % 2) to C when K is not split (gridDim.y == 1), else to
// its split's f32 partials [split][M][N]. FinishSplitK, by the whole block once its tiles are stored:
// with a split, the last block of the row block (rows [row0, row0 + rows)) to arrive sums the
// partials in split order (MergeSplits).
template <int NT>
__device__ __forceinline__ void StoreSplitTile(const float (&acc)[NT][4], int64_t n0, int col0,
                                               __nv_bfloat16* __restrict__ c, int64_t m, int64_t n,
                                               float* __restrict__ part) {
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  if (gridDim.y == 1) {
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int64_t row = n0 + g + (i >= 2 ? 8 : 0), col = col0 + nt * 8 + 2 * t + (i % 2);
        if (row < n && col < m) c[col * n + row] = __float2bfloat16_rn(acc[nt][i]);
      }
    return;
  }
  float* mine = part + static_cast<int64_t>(blockIdx.y) * m * n;
#pragma unroll
  for (int nt = 0; nt < NT; ++nt)
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int64_t row = n0 + g + (i >= 2 ? 8 : 0), col = col0 + nt * 8 + 2 * t + (i % 2);
      if (row < n && col < m) mine[col * n + row] = acc[nt][i];
    }
}
__device__ __forceinline__ void FinishSplitK(int64_t row0, int64_t block_rows, __nv_bfloat16* __restrict__ c,
                                             int64_t m, int64_t n, float* __restrict__ part,
                                             unsigned* __restrict__ counters) {
  if (gridDim.y == 1) return;
  __shared__ bool last;
  __threadfence();  // this thread's partials are visible device-wide before the block counts in
  __syncthreads();
  if (threadIdx.x == 0) {
    last = atomicAdd(&counters[blockIdx.x], 1u) == gridDim.y - 1;
    if (last) counters[blockIdx.x] = 0;  // left at zero for the next launch
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  const int64_t left_rows = n - row0;
  MergeSplits(part, c, m, n, row0, left_rows < block_rows ? left_rows : block_rows, gridDim.y);
}

template <int NT, int D>
constexpr int SmemASlabBytes() {
  return 8 * NT * D * kW4Group * 2;
}

template <int NT, int WN, int D, int MINB, bool TILED = false>
__global__ void __launch_bounds__(32 * WN, MINB)
    GemvMmaSmemA(const __nv_bfloat16* __restrict__ a, const uint32_t* __restrict__ w,
                 const __nv_bfloat16* __restrict__ scales, const __nv_bfloat16* __restrict__ zeros,
                 __nv_bfloat16* __restrict__ c, int64_t m, int64_t n, int64_t k, int per_split,
                 float* __restrict__ part, unsigned* __restrict__ counters) {
  namespace ptx = gemm::ptx;
  using GT = typename W4Groups<D>::T;
  constexpr int kMp = 8 * NT;                 // rows of A staged
  constexpr int kPieces = kMp * D * 16;       // 16-byte pieces of a slab (16 a row a chunk)
  constexpr int kSlab = SmemASlabBytes<NT, D>();
  constexpr bool kBf16Scale = NT >= 4;
  extern __shared__ __align__(16) uint8_t smem[];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const int64_t n0 = static_cast<int64_t>(blockIdx.x) * (16 * WN) + warp * 16;
  const int64_t words = k / kW4PerWord, groups = k / kW4Group;
  // This block's slabs: [s0, s0 + batches) of the k / (128 D) (all of them without a split).
  const int64_t s0 = static_cast<int64_t>(blockIdx.y) * per_split;
  const int64_t left = k / kW4Group / D - s0;
  const int64_t batches = left < 0 ? 0 : (left < per_split ? left : per_split);
  const uint4* wr[2];
  const GT *sr[2], *zr[2];
  const bool tiled = TILED && n0 + 16 <= n;
  const int cstride = tiled ? 64 : 4;  // 16-byte pieces from one chunk of a lane's row to the next
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int64_t row = min(n0 + 8 * r + g, n - 1);  // clamped loads, guarded stores
    wr[r] = tiled ? reinterpret_cast<const uint4*>(w) + (n0 / 16) * (k / kW4Group) * 64 + r * 32 + lane
                  : reinterpret_cast<const uint4*>(w + row * words) + t;
    sr[r] = reinterpret_cast<const GT*>(scales + row * groups);
    zr[r] = reinterpret_cast<const GT*>(zeros + row * groups);
  }
  const uint32_t sbase = ptx::SmemAddr(smem);

  // Slab bi of A into buffer buf: piece p is row p / (16 D), k offset 8 (p % (16 D)) in the slab.
  auto fill = [&](int buf, int64_t bi) {
    for (int p = threadIdx.x; p < kPieces; p += 32 * WN) {
      const int mrow = p / (16 * D), kk = (p % (16 * D)) * 8;
      const int d = kk / kW4Group, r = kk % kW4Group, tt = r / 32, u = (r % 32) / 8;
      const uint32_t dst = sbase + buf * kSlab + (((d * 4 + u) * kMp + mrow) * 4 + tt) * 16;
      const bool in = mrow < m;
      ptx::CpAsync16(dst, in ? a + mrow * k + (s0 + bi) * D * kW4Group + kk : a, in);
    }
    ptx::CpAsyncCommit();
  };
  auto load = [&](W4Batch<1, D>& b, int64_t bi) {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
#pragma unroll
      for (int d = 0; d < D; ++d) b.w[0][r][d] = LoadStream(wr[r] + ((s0 + bi) * D + d) * cstride);
      b.s[0][r] = __ldg(sr[r] + s0 + bi);
      b.z[0][r] = __ldg(zr[r] + s0 + bi);
    }
  };

  float acc[NT][4] = {};
  auto compute = [&](const W4Batch<1, D>& b, int buf) {
#pragma unroll
    for (int d = 0; d < D; ++d) {
      float part[kBf16Scale ? 1 : NT][4] = {};
      const uint32_t z0 = PackBf16Pair(128.0f + GroupValue(b.z[0][0], d));
      const uint32_t z1 = PackBf16Pair(128.0f + GroupValue(b.z[0][1], d));
      const float s0 = GroupValue(b.s[0][0], d), s1 = GroupValue(b.s[0][1], d);
      const uint32_t s0p = PackBf16Pair(s0), s1p = PackBf16Pair(s1);
      const uint4 p0 = b.w[0][0][d], p1 = b.w[0][1][d];
#pragma unroll(NT <= 2 ? 4 : 1)
      for (int u = 0; u < 4; ++u) {
        uint4 bf[NT];
#pragma unroll
        for (int nt = 0; nt < NT; ++nt)
          bf[nt] = ptx::LdsV4(sbase + buf * kSlab + (((d * 4 + u) * kMp + nt * 8 + g) * 4 + t) * 16);
        const uint32_t wa = u == 0 ? p0.x : u == 1 ? p0.y : u == 2 ? p0.z : p0.w;
        const uint32_t wb = u == 0 ? p1.x : u == 1 ? p1.y : u == 2 ? p1.z : p1.w;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          if constexpr (kBf16Scale) W4MmaHalf<true>(acc, wa, wb, h, z0, z1, s0p, s1p, bf);
          else W4MmaHalf<false>(part, wa, wb, h, z0, z1, s0p, s1p, bf);
        }
      }
      if constexpr (!kBf16Scale) AddRowScaled(acc, part, s0, s1);
    }
  };

  // One slab: request slab bi + 1 (A into the other buffer, weights into `next`), wait for slab bi's
  // A, compute it; the trailing barrier frees its buffer for slab bi + 2.
  auto step = [&](const W4Batch<1, D>& cur, W4Batch<1, D>& next, int64_t bi) {
    const bool more = bi + 1 < batches;
    if (more) {
      fill(static_cast<int>((bi + 1) & 1), bi + 1);
      load(next, bi + 1);
      ptx::CpAsyncWait<1>();
    } else {
      ptx::CpAsyncWait<0>();
    }
    __syncthreads();
    compute(cur, static_cast<int>(bi & 1));
    __syncthreads();
  };

  W4Batch<1, D> b0, b1;
  if (batches > 0) {
    fill(0, 0);
    load(b0, 0);
  }
  for (int64_t bi = 0; bi < batches; bi += 2) {
    step(b0, b1, bi);
    if (bi + 1 < batches) step(b1, b0, bi + 1);
  }
  StoreSplitTile<NT>(acc, n0, 0, c, m, n, part);
  FinishSplitK(static_cast<int64_t>(blockIdx.x) * 16 * WN, 16 * WN, c, m, n, part, counters);
}

// The launch: a grid of 16 WN rows a block, two slabs of dynamic shared memory, and K split over
// grid.y when the row blocks alone leave resident-block slots empty: floor(slots / row blocks)
// splits (at most one a slab), so that one wave fills the slots. On the H200 that splits N = 4096
// (32 row blocks) 4-8 ways, as the rule before it did, and now also N = 14336 at M <= 32 (112 row
// blocks, 2 resident an SM): 32 x 14336 x 4096 42.4 against 48.6 us unsplit (at M = 16, before the
// merge took its loads together, two splits there had cost 28 -> 33 us). A cudaError_t as int.
template <int NT, int WN, int D, bool TILED = false>
int LaunchGemvMmaSmemA(cudaStream_t s, const __nv_bfloat16* a, const uint32_t* w, const __nv_bfloat16* sc,
                       const __nv_bfloat16* z, __nv_bfloat16* c, int64_t m, int64_t n, int64_t k) {
  constexpr int kSmem = 2 * SmemASlabBytes<NT, D>();
  const auto* kernel = reinterpret_cast<const void*>(&GemvMmaSmemA<NT, WN, D, 1, TILED>);
  if constexpr (kSmem > 48 * 1024) {
    KB_CUDA_TRY(cuda::AllowDynamicSmem(kernel, kSmem));
  }
  const int64_t row_blocks = (n + 16 * WN - 1) / (16 * WN), slabs = k / kW4Group / D;
  const int64_t slots = std::max<int64_t>(1, cuda::ResidentBlocks(kernel, 32 * WN, kSmem));
  KSplit split;
  if (const int e = PlanKSplit(row_blocks, slabs, slots, m, n, s, &split); e != 0) return e;
  const dim3 grid(static_cast<unsigned>(row_blocks), static_cast<unsigned>(split.splits));
  GemvMmaSmemA<NT, WN, D, 1, TILED><<<grid, 32 * WN, kSmem, s>>>(a, w, sc, z, c, m, n, k, static_cast<int>(split.per),
                                                                 split.part, split.counters);
  KB_LAUNCH_CHECK();
  return 0;
}

}  // namespace kbench::kernels::w4a16
