// cuda_v4_mma_marlin: Marlin's structure (Frantar et al., 2024) on mma.sync, for M <= 128 on any
// sm_80+ device. Where cuda_v4_mma_gemv feeds the tensor cores from registers (weights loaded straight
// into the fragments, a ring of them in flight a warp), here everything a k chunk needs goes through
// one shared-memory pipeline of S stages filled by cp.async, as Marlin does:
//   - a stage is one 128-k chunk: A's rows (zero past M; stored permuted as in w4a16_mma_smem.cuh, so
//     a warp's 16-byte fragment reads are 512 contiguous bytes) and the block's weights (W_tiled: each
//     16-row tile one contiguous kilobyte a chunk; W's rows for a partial last tile);
//   - S - 1 chunks are in flight while one is computed; one barrier a chunk frees the stage that the
//     next copy fills, so the copies of chunk j + S - 1 overlap the dequantization and mmas of chunk j;
//   - the dequantization is the magic-number one (a shift and lop3 a pair, one bf16x2 subtraction of
//     128 + zero), overlapped with the mmas by the warp schedulers; from 4 n8 tiles of M on, the scale
//     is applied to the weights in bf16 (one HMUL2 a pair, as Marlin does in fp16) instead of to each
//     n8 tile's partial sums;
//   - M sits on the mma's n = 8 side (C^T = W A^T, as in w4a16_mma_gemv.cu): 1, 2, 4 or 8 n8 tiles for
//     M <= 8, 16, 32, 64, each warp on 16 weight rows; for M <= 128 a warp takes 32 weight rows and
//     half of M (8 n8 tiles), so that each fragment of A it reads serves two weight tiles. A block is
//     8 warps and 128 weight rows;
//   - where the row blocks leave resident-block slots empty, K is split over blocks and the last
//     block of a row block sums the f32 partials in split order (FinishSplitK, w4a16_mma_smem.cuh).
// Scales and zero points are loaded into registers a chunk ahead: 2 bytes a row a chunk, below
// cp.async's 4-byte minimum in this layout.
// Needs K % 128 == 0 (skip_reason says so); A or W_tiled off 16-byte alignment runs v1's path.
// What it teaches against cuda_v4_mma_gemv and cuda_v5_wgmma_mixed: GEMM_README.md.
#include <cuda_bf16.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/occupancy.cuh"
#include "gemm/gemm/gemm_ptx.cuh"
#include "quant/w4a16_gemm/w4a16_cuda.cuh"
#include "quant/w4a16_gemm/w4a16_gemm.h"
#include "quant/w4a16_gemm/w4a16_loads.cuh"
#include "quant/w4a16_gemm/w4a16_magic.cuh"
#include "quant/w4a16_gemm/w4a16_mma_kernel.cuh"
#include "quant/w4a16_gemm/w4a16_mma_smem.cuh"

namespace kbench::kernels::w4a16 {
namespace {

constexpr int kMarlinWarps = 8;   // a block's warps
constexpr int kMarlinRows = 128;  // a block's weight rows
constexpr int kMarlinStages = 4;  // chunks in the pipeline (S - 1 in flight while one is computed)

// A launch shape: NT n8 tiles of M and MT 16-row weight tiles a warp, WM warps along M; the others
// (kMarlinWarps / WM of them) along the block's 128 rows. Past 64 rows of A a warp holds 32 weight
// rows and half of M, so that each fragment of A read from shared memory serves two weight tiles.
template <int NT_, int MT_, int WM_>
struct MarlinShape {
  static constexpr int NT = NT_, MT = MT_, WM = WM_, WR = kMarlinWarps / WM_;
  static_assert(16 * MT * WR == kMarlinRows, "a block is 128 weight rows");
  static constexpr int kABytes = 8 * NT * WM * static_cast<int>(kW4Group) * 2;  // A's rows of a chunk
  static constexpr int kStageBytes = kABytes + kMarlinRows * 64;               // then the weights
  static constexpr int kSmemBytes = kMarlinStages * kStageBytes;
};
using Marlin1 = MarlinShape<1, 1, 1>;
using Marlin2 = MarlinShape<2, 1, 1>;
using Marlin4 = MarlinShape<4, 1, 1>;
using Marlin8 = MarlinShape<8, 1, 1>;
using Marlin16 = MarlinShape<8, 2, 2>;

// A chunk's scales and zero points of a lane's rows g and g + 8 of each of its tiles (raw bf16 bits).
template <int MT>
struct MarlinScales {
  uint32_t s0[MT], s1[MT], z0[MT], z1[MT];
};

template <typename Sh, int S>
__global__ void __launch_bounds__(32 * kMarlinWarps, 1)
    GemvMmaMarlin(const __nv_bfloat16* __restrict__ a, const uint32_t* __restrict__ w,
                  const __nv_bfloat16* __restrict__ scales, const __nv_bfloat16* __restrict__ zeros,
                  __nv_bfloat16* __restrict__ c, int64_t m, int64_t n, int64_t k, int per_split,
                  float* __restrict__ part, unsigned* __restrict__ counters) {
  namespace ptx = gemm::ptx;
  constexpr int NT = Sh::NT, MT = Sh::MT, WM = Sh::WM, WR = Sh::WR;
  constexpr int kMp = 8 * NT * WM;  // rows of A staged
  constexpr int kABytes = Sh::kABytes, kStage = Sh::kStageBytes;
  constexpr int kTiles = kMarlinRows / 16;
  constexpr bool kBf16Scale = NT >= 4;
  constexpr int kThreads = 32 * kMarlinWarps;
  extern __shared__ __align__(16) uint8_t smem[];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const int wm = warp / WR, wr = warp % WR;  // this warp's columns of M and weight tiles
  const int64_t row0 = static_cast<int64_t>(blockIdx.x) * kMarlinRows;
  const int64_t chunks = k / kW4Group, words = k / kW4PerWord;
  // This block's chunks: [first, first + nc) of K (all of them without a split).
  const int64_t first = static_cast<int64_t>(blockIdx.y) * per_split;
  const int nc = static_cast<int>(max(int64_t{0}, min(chunks - first, static_cast<int64_t>(per_split))));

  // Piece q (0..63) of tile tb of a chunk: W_tiled's kilobyte [half][lane] in a whole tile; in a
  // partial last tile, W's row-major words (rows past N clamped: loaded, never stored).
  const uint32_t sbase = ptx::SmemAddr(smem);
  const auto weight_piece = [&](int tb, int q, int64_t chunk) -> const uint4* {
    const int64_t tile0 = row0 + 16 * tb;
    if (tile0 + 16 <= n) return reinterpret_cast<const uint4*>(w) + ((tile0 / 16) * chunks + chunk) * 64 + q;
    const int64_t row = min(tile0 + (q / 32) * 8 + (q % 32) / 4, n - 1);
    return reinterpret_cast<const uint4*>(w + row * words) + chunk * 4 + q % 4;
  };
  // Chunk j into stage st: A's 16-byte pieces (piece p: row p / 16, k 8 (p % 16)), then the block's
  // weights, 64 pieces a tile, all by the block's threads.
  const auto fill = [&](int st, int j) {
    const uint32_t at = sbase + st * kStage;
    const int64_t chunk = first + j;
    for (int p = threadIdx.x; p < kMp * 16; p += kThreads) {
      const int mrow = p / 16, kk = (p % 16) * 8, tt = kk / 32, u = (kk % 32) / 8;
      const bool in = mrow < m;
      ptx::CpAsync16(at + ((u * kMp + mrow) * 4 + tt) * 16, in ? a + mrow * k + chunk * kW4Group + kk : a, in);
    }
#pragma unroll
    for (int p = threadIdx.x; p < kTiles * 64; p += kThreads)
      ptx::CpAsync16(at + kABytes + p * 16, weight_piece(p / 64, p % 64, chunk), true);
  };
  const auto load_scales = [&](MarlinScales<MT>& x, int j) {
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
      const int64_t tile0 = row0 + 16 * (wr * MT + mt);
      const int64_t r0 = min(tile0 + g, n - 1), r1 = min(tile0 + 8 + g, n - 1), at = first + j;
      x.s0[mt] = LoadBf16Bits(scales + r0 * chunks + at), x.s1[mt] = LoadBf16Bits(scales + r1 * chunks + at);
      x.z0[mt] = LoadBf16Bits(zeros + r0 * chunks + at), x.z1[mt] = LoadBf16Bits(zeros + r1 * chunks + at);
    }
  };

  float acc[MT][NT][4] = {};
  const auto compute = [&](const MarlinScales<MT>& x, int st) {
    const uint32_t at = sbase + st * kStage;
    uint4 p0[MT], p1[MT];
    uint32_t z0[MT], z1[MT], s0p[MT], s1p[MT];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
      const int tb = wr * MT + mt;
      p0[mt] = ptx::LdsV4(at + kABytes + (tb * 64 + lane) * 16);
      p1[mt] = ptx::LdsV4(at + kABytes + (tb * 64 + 32 + lane) * 16);
      z0[mt] = PackBf16Pair(128.0f + __uint_as_float(x.z0[mt] << 16));
      z1[mt] = PackBf16Pair(128.0f + __uint_as_float(x.z1[mt] << 16));
      s0p[mt] = x.s0[mt] | (x.s0[mt] << 16), s1p[mt] = x.s1[mt] | (x.s1[mt] << 16);
    }
    float partial[kBf16Scale ? 1 : MT][kBf16Scale ? 1 : NT][4] = {};
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      uint4 bf[NT];
#pragma unroll
      for (int nt = 0; nt < NT; ++nt)
        bf[nt] = ptx::LdsV4(at + ((u * kMp + (wm * NT + nt) * 8 + g) * 4 + t) * 16);
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
        const uint32_t wa = u == 0 ? p0[mt].x : u == 1 ? p0[mt].y : u == 2 ? p0[mt].z : p0[mt].w;
        const uint32_t wb = u == 0 ? p1[mt].x : u == 1 ? p1[mt].y : u == 2 ? p1[mt].z : p1[mt].w;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          if constexpr (kBf16Scale) W4MmaHalf<true>(acc[mt], wa, wb, h, z0[mt], z1[mt], s0p[mt], s1p[mt], bf);
          else W4MmaHalf<false>(partial[mt], wa, wb, h, z0[mt], z1[mt], s0p[mt], s1p[mt], bf);
        }
      }
    }
    if constexpr (!kBf16Scale) {
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) AddRowScaled(acc[mt], partial[mt], LowBf16(x.s0[mt]), LowBf16(x.s1[mt]));
    }
  };

  // One chunk: wait for chunk j's copies (one commit group a chunk, empty past the end); the barrier
  // also says every warp is done with chunk j - 1, whose stage now takes chunk j + S - 1.
  const auto step = [&](const MarlinScales<MT>& cur, MarlinScales<MT>& next, int j) {
    ptx::CpAsyncWait<S - 2>();
    __syncthreads();
    if (j + S - 1 < nc) fill((j + S - 1) % S, j + S - 1);
    ptx::CpAsyncCommit();
    if (j + 1 < nc) load_scales(next, j + 1);
    compute(cur, j % S);
  };
#pragma unroll
  for (int st = 0; st < S - 1; ++st) {
    if (st < nc) fill(st, st);
    ptx::CpAsyncCommit();
  }
  MarlinScales<MT> x0{}, x1{};
  if (nc > 0) load_scales(x0, 0);
  for (int j = 0; j < nc; j += 2) {  // two register sets in turn: no copy of a loaded register
    step(x0, x1, j);
    if (j + 1 < nc) step(x1, x0, j + 1);
  }
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
    StoreSplitTile<NT>(acc[mt], row0 + 16 * (wr * MT + mt), wm * NT * 8, c, m, n, part);
  FinishSplitK(row0, kMarlinRows, c, m, n, part, counters);
}

template <typename Sh>
const void* MarlinKernel() {
  return reinterpret_cast<const void*>(&GemvMmaMarlin<Sh, kMarlinStages>);
}

// The launch of shape Sh: 128-row blocks, K split over grid.y where the row blocks leave
// resident-block slots empty (the rule of w4a16_mma_smem.cuh, at most one split a chunk).
template <typename Sh>
int LaunchMarlin(const W4Args& g, cudaStream_t s) {
  const void* kernel = MarlinKernel<Sh>();
  // Always: at 48 KB of stages the split's static flag alone takes a block past the default limit.
  KB_CUDA_TRY(cuda::AllowDynamicSmem(kernel, Sh::kSmemBytes));
  const int64_t row_blocks = cuda::CeilDiv(g.n, int64_t{kMarlinRows}), chunks = g.k / kW4Group;
  const int64_t slots = std::max<int64_t>(1, cuda::ResidentBlocks(kernel, 32 * kMarlinWarps, Sh::kSmemBytes));
  KSplit split;
  if (const int e = PlanKSplit(row_blocks, chunks, slots, g.m, g.n, s, &split); e != 0) return e;
  const dim3 grid(static_cast<unsigned>(row_blocks), static_cast<unsigned>(split.splits));
  GemvMmaMarlin<Sh, kMarlinStages><<<grid, 32 * kMarlinWarps, Sh::kSmemBytes, s>>>(
      static_cast<const __nv_bfloat16*>(g.a), g.w_tiled, static_cast<const __nv_bfloat16*>(g.scales),
      static_cast<const __nv_bfloat16*>(g.zeros), static_cast<__nv_bfloat16*>(g.c), g.m, g.n, g.k,
      static_cast<int>(split.per), split.part, split.counters);
  KB_LAUNCH_CHECK();
  return 0;
}

int RunMarlin(const Problem& p, std::span<const Tensor> t, void* stream) {
  const W4Args g = ArgsOf(p, t);
  const cudaStream_t s = cuda::AsStream(stream);
  int rc = 0;
  if (HandleDegenerate(g, s, &rc)) return rc;
  if (g.m > 128 || g.k % kW4Group != 0) return static_cast<int>(cudaErrorInvalidValue);  // skip_reason refuses
  if (!cuda::Aligned16(g.a) || !cuda::Aligned16(g.w_tiled)) return LaunchW4DequantThenGemm(g, s);
  if (g.m <= 8) return LaunchMarlin<Marlin1>(g, s);
  if (g.m <= 16) return LaunchMarlin<Marlin2>(g, s);
  if (g.m <= 32) return LaunchMarlin<Marlin4>(g, s);
  if (g.m <= 64) return LaunchMarlin<Marlin8>(g, s);
  return LaunchMarlin<Marlin16>(g, s);
}

std::string SkipMarlin(const Problem& p) {
  if (p.dim("M") > 128)
    return "M = " + std::to_string(p.dim("M")) + " > 128: this rung puts M on the mma's n side, at most 16 n8 tiles";
  if (p.dim("K") % kW4Group != 0)
    return "K = " + std::to_string(p.dim("K")) + " is not a multiple of 128: the pipeline copies whole 128-k chunks";
  if (p.dim("N") > int64_t{128} * 0x7fffffff) return "N too large for the grid";
  return "";
}

std::vector<LaunchInfo> LaunchesMarlin(const Problem& p) {
  const int64_t m = p.dim("M");
  const auto info = [](const char* shape, const void* f, int smem) {
    return std::vector<LaunchInfo>{{std::string("GemvMmaMarlin<") + shape + ",128 rows," +
                                        std::to_string(kMarlinStages) + " stages>",
                                    f, 32 * kMarlinWarps, smem}};
  };
  if (m <= 8) return info("1 n8 tile", MarlinKernel<Marlin1>(), Marlin1::kSmemBytes);
  if (m <= 16) return info("2 n8 tiles", MarlinKernel<Marlin2>(), Marlin2::kSmemBytes);
  if (m <= 32) return info("4 n8 tiles", MarlinKernel<Marlin4>(), Marlin4::kSmemBytes);
  if (m <= 64) return info("8 n8 tiles", MarlinKernel<Marlin8>(), Marlin8::kSmemBytes);
  return info("8 n8 tiles x 2 weight tiles a warp, M in halves", MarlinKernel<Marlin16>(), Marlin16::kSmemBytes);
}

}  // namespace

void AddW4a16MarlinVariant(OpDef& op) {
  op.variants.push_back({
      .name = "cuda_v4_mma_marlin",
      .description = "M <= 128: Marlin's structure, A and the weights through a 4-stage cp.async pipeline, "
                     "magic dequantization feeding mma.sync.",
      .backend = Backend::kCuda,
      .dtypes = {Dtype::kBF16},
      .min_compute_capability = 80,
      .skip_reason = SkipMarlin,
      .run_cuda = RunMarlin,
      .launches = LaunchesMarlin,
  });
}

}  // namespace kbench::kernels::w4a16
