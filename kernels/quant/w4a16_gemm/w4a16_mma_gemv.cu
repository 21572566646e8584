// cuda_v4_mma_gemv: the decode shapes (M <= 64) on the tensor cores. The GEMV rungs spend ~4.5
// instructions a weight (dequantize, widen both operands to f32, FMA); here mma.sync.m16n8k16 does the
// multiply-adds of 16 weight rows by up to 8 rows of A at once, so a weight costs its dequantization
// alone: a shift, a lop3 and a bf16x2 subtraction per pair (1.5 instructions a weight), and the
// scale multiplies each 128-k group's partial sums once.
//
// No shuffled layout is needed: a dot product does not care in which order its k are summed, so the
// k slots of the mma fragments can hold any k as long as the weight (A operand) and activation (B
// operand) fragments agree. Lane (g = lane/4, t = lane%4) loads 16 bytes (4 words, 32 k) of weight
// rows n0+g and n0+g+8 at k = 128c + 32t .. +31, and word u's magic pairs (elements 4h, 4h+1) and
// (4h+2, 4h+3) fill the fragment slots (2t, 2t+1) and (2t+8, 2t+9) of mma (u, h); its B fragment is
// then A[m = g][128c + 32t + 8u + 4h + 0..3], 16 contiguous bytes of A row g a lane per k chunk.
// Computing C^T = W A^T puts M on the mma's n = 8 side: one mma per (u, h) and n8 tile of M (1, 2, 4
// or 8 tiles for M <= 8, 16, 32, 64); columns past M read zeros and are not stored. Every warp reads
// all of A for its 16 rows (from L1/L2), which is what limits it as M grows: a Marlin-style rung
// would stage A in shared memory for many more rows a block.
//
// A block is 4 warps on the same 16 rows, each taking every 4th 128-k chunk (split K inside the
// block, summed through shared memory), so even N = 4096 puts 4 x 256 warps in flight, each with
// kDepth chunks of weights loading before their math. Needs K % 128 == 0 and 16-byte aligned A and W;
// other problems run cuda_v3's path (M <= 8), cuda_v2's (M <= 16) or cuda_v1's.
#include <cuda_bf16.h>

#include <string>
#include <vector>

#include "core/cuda/cuda_check.cuh"
#include "gemm/gemm/gemm_ptx.cuh"
#include "quant/w4a16_gemm/w4a16_cuda.cuh"
#include "quant/w4a16_gemm/w4a16_gemm.h"
#include "quant/w4a16_gemm/w4a16_magic.cuh"

namespace kbench::kernels::w4a16 {
namespace {

using bf16 = __nv_bfloat16;
constexpr int kSplit = 4;  // warps per block, splitting K
constexpr int kThreads = 32 * kSplit;
constexpr int kChunk = 128;

// NT: n8 tiles of M (1: M <= 8, 2: M <= 16).
template <int NT>
__global__ void __launch_bounds__(kThreads)
    GemvMma(const bf16* __restrict__ a, const uint32_t* __restrict__ w, const bf16* __restrict__ scales,
            const bf16* __restrict__ zeros, bf16* __restrict__ c, int64_t m, int64_t n, int64_t k) {
  __shared__ float red[kSplit - 1][32][NT * 4];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const int64_t n0 = static_cast<int64_t>(blockIdx.x) * 16;
  const int64_t row0 = min(n0 + g, n - 1), row1 = min(n0 + g + 8, n - 1);  // clamped loads, stores guarded
  const int64_t words = k / kW4PerWord, groups = k / kW4Group, chunks = k / kChunk;
  const uint4* w0 = reinterpret_cast<const uint4*>(w + row0 * words) + t;
  const uint4* w1 = reinterpret_cast<const uint4*>(w + row1 * words) + t;
  float acc[NT][4] = {};
  // Chunks whose weights, scales and zero points are all requested before any of their math: the
  // scales and zeros are DRAM misses as much as the weights (a first version loaded them inside the
  // math loop, one round trip a chunk, and ran at 1.6 TB/s).
  constexpr int kDepth = NT == 1 ? 8 : NT == 2 ? 4 : 2;
  for (int64_t base = warp; base < chunks; base += kSplit * kDepth) {
    uint4 p0[kDepth], p1[kDepth];
    bf16 sz[kDepth][4];  // scale row0, scale row1, zero row0, zero row1
#pragma unroll
    for (int d = 0; d < kDepth; ++d) {
      const int64_t ch = base + d * kSplit;
      if (ch < chunks) {
        p0[d] = __ldg(w0 + ch * 4);
        p1[d] = __ldg(w1 + ch * 4);
        sz[d][0] = scales[row0 * groups + ch], sz[d][1] = scales[row1 * groups + ch];
        sz[d][2] = zeros[row0 * groups + ch], sz[d][3] = zeros[row1 * groups + ch];
      }
    }
#pragma unroll
    for (int d = 0; d < kDepth; ++d) {
      const int64_t ch = base + d * kSplit;
      if (ch >= chunks) break;
      const float s0 = __bfloat162float(sz[d][0]), s1 = __bfloat162float(sz[d][1]);
      const uint32_t z0 = PackBf16Pair(128.0f + __bfloat162float(sz[d][2]));
      const uint32_t z1 = PackBf16Pair(128.0f + __bfloat162float(sz[d][3]));
      float part[NT][4] = {};
      const uint32_t wa[4] = {p0[d].x, p0[d].y, p0[d].z, p0[d].w}, wb[4] = {p1[d].x, p1[d].y, p1[d].z, p1[d].w};
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        // A row (8 nt + g) at k = 128ch + 32t + 8u .. +7: the B fragments of mmas (u, 0) and (u, 1).
        uint4 b[NT];
#pragma unroll
        for (int nt = 0; nt < NT; ++nt) {
          const int64_t mr = nt * 8 + g;
          b[nt] = mr < m ? __ldg(reinterpret_cast<const uint4*>(a + mr * k + ch * kChunk + 32 * t + 8 * u))
                         : make_uint4(0, 0, 0, 0);
        }
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const uint32_t frag[4] = {HSub2(MagicPair(wa[u] >> (8 * h)), z0), HSub2(MagicPair(wb[u] >> (8 * h)), z1),
                                    HSub2(MagicPair(wa[u] >> (8 * h + 4)), z0),
                                    HSub2(MagicPair(wb[u] >> (8 * h + 4)), z1)};
#pragma unroll
          for (int nt = 0; nt < NT; ++nt)
            gemm::ptx::MmaBf16(part[nt], frag, h == 0 ? b[nt].x : b[nt].z, h == 0 ? b[nt].y : b[nt].w);
        }
      }
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) {
        acc[nt][0] = fmaf(s0, part[nt][0], acc[nt][0]);
        acc[nt][1] = fmaf(s0, part[nt][1], acc[nt][1]);
        acc[nt][2] = fmaf(s1, part[nt][2], acc[nt][2]);
        acc[nt][3] = fmaf(s1, part[nt][3], acc[nt][3]);
      }
    }
  }
  // The K split's partial sums, summed by warp 0 in warp order (the same order every run).
  if (warp > 0)
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
      for (int i = 0; i < 4; ++i) red[warp - 1][lane][nt * 4 + i] = acc[nt][i];
  __syncthreads();
  if (warp != 0) return;
#pragma unroll
  for (int nt = 0; nt < NT; ++nt)
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      float v = acc[nt][i];
#pragma unroll
      for (int q = 0; q < kSplit - 1; ++q) v += red[q][lane][nt * 4 + i];
      // d[i]: row n0 + g (+8 for i >= 2), column (M index) 8 nt + 2t + (i % 2).
      const int64_t row = n0 + g + (i >= 2 ? 8 : 0), col = nt * 8 + 2 * t + (i % 2);
      if (row < n && col < m) c[col * n + row] = __float2bfloat16_rn(v);
    }
}

int RunV4(const Problem& p, std::span<const Tensor> t, void* stream) {
  const W4Args g = ArgsOf(p, t);
  const cudaStream_t s = cuda::AsStream(stream);
  int rc = 0;
  if (HandleDegenerate(g, s, &rc)) return rc;
  if (g.k % kChunk != 0 || !cuda::Aligned16(g.a) || !cuda::Aligned16(g.w))
    return g.m <= 8 ? LaunchW4GemvMagic(g, s) : g.m <= 16 ? LaunchW4GemvDequant(g, s) : LaunchW4DequantThenGemm(g, s);
  const auto grid = static_cast<unsigned>(cuda::CeilDiv(g.n, 16));
  const auto* a = static_cast<const bf16*>(g.a);
  const auto* sc = static_cast<const bf16*>(g.scales);
  const auto* z = static_cast<const bf16*>(g.zeros);
  auto* c = static_cast<bf16*>(g.c);
  if (g.m <= 8) {
    GemvMma<1><<<grid, kThreads, 0, s>>>(a, g.w, sc, z, c, g.m, g.n, g.k);
  } else if (g.m <= 16) {
    GemvMma<2><<<grid, kThreads, 0, s>>>(a, g.w, sc, z, c, g.m, g.n, g.k);
  } else if (g.m <= 32) {
    GemvMma<4><<<grid, kThreads, 0, s>>>(a, g.w, sc, z, c, g.m, g.n, g.k);
  } else {
    GemvMma<8><<<grid, kThreads, 0, s>>>(a, g.w, sc, z, c, g.m, g.n, g.k);
  }
  KB_LAUNCH_CHECK();
  return 0;
}

std::string SkipV4(const Problem& p) {
  if (p.dim("M") > 64)
    return "M = " + std::to_string(p.dim("M")) + " > 64: this rung puts M on the mma's n side, at most eight n8 tiles";
  if (p.dim("N") > int64_t{16} * 0x7fffffff) return "N too large for the grid";
  return "";
}

std::vector<LaunchInfo> LaunchesV4(const Problem& p) {
  const int64_t m = p.dim("M");
  const void* f = m <= 8    ? (const void*)&GemvMma<1>
                  : m <= 16 ? (const void*)&GemvMma<2>
                  : m <= 32 ? (const void*)&GemvMma<4>
                            : (const void*)&GemvMma<8>;
  return {{"GemvMma<n8 tiles>", f, kThreads, 0}};
}

}  // namespace

void AddW4a16MmaGemvVariant(OpDef& op) {
  op.variants.push_back({
      .name = "cuda_v4_mma_gemv",
      .description = "M <= 64: mma.sync on magic-dequantized bf16 pairs, k slots permuted to the natural layout.",
      .backend = Backend::kCuda,
      .dtypes = {Dtype::kBF16},
      .min_compute_capability = 80,
      .skip_reason = SkipV4,
      .run_cuda = RunV4,
      .launches = LaunchesV4,
  });
}

}  // namespace kbench::kernels::w4a16
