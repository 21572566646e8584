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
// or 8 tiles for M <= 8, 16, 32, 64); columns past M read zeros and are not stored.
//
// Three kernels, chosen by GPU measurements (GEMM_README.md, Performance), all reading W_tiled (the op's
// pre-shuffled copy of W: each warp load 512 contiguous bytes, each 16-row tile one linear stream):
// M <= 8 runs GemvMmaLean (w4a16_mma_lean.cuh: the zero points folded out of the weights, 2-8 warps
// splitting K over a 16-row tile as N's tile count allows, a ring of 4 chunks a warp); 8 < M <= 16
// the register-fed template (w4a16_mma_kernel.cuh), each warp on two or four 16-row tiles so that A's
// fragments serve them all, loading batches of 2 chunks (weights, and the batch's scales and zero
// points as one vector load a row) before the batch's math; M > 16 stages A in shared memory for 128-row blocks (w4a16_mma_smem.cuh),
// since the template re-reads A from L2 for every 16 weight rows a warp holds (4 NT registers a 32-k
// step), and splits K over blocks where N gives too few of them.
//
// Needs K % 128 == 0 and 16-byte aligned A and W; problems whose group count is not a whole number of
// batches (or whose scales are not aligned to them) take the same kernel with one-group batches;
// other problems run cuda_v3's path (M <= 8), cuda_v2's (M <= 16) or cuda_v1's.
#include <cuda_bf16.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/occupancy.cuh"
#include "quant/w4a16_gemm/w4a16_cuda.cuh"
#include "quant/w4a16_gemm/w4a16_gemm.h"
#include "quant/w4a16_gemm/w4a16_mma_kernel.cuh"
#include "quant/w4a16_gemm/w4a16_mma_lean.cuh"
#include "quant/w4a16_gemm/w4a16_mma_smem.cuh"

namespace kbench::kernels::w4a16 {
namespace {

using bf16 = __nv_bfloat16;

// M > 16: A staged in shared memory by blocks of 8 warps (128 rows), slabs of 2 chunks, K split over
// blocks when the row blocks are few. Any group count: the template with one-group batches on W.
// M <= 8: GemvMmaLean with 2, 4 or 8 warps splitting K over a 16-row tile (a ring of 4 chunks a warp,
// at most 128 registers). It replaced the template with 4 warps a tile and batches of 2 chunks, which
// left N = 4096 with 1024 warps for 132 SMs (GEMM_README.md).
template <int kSplit>
const void* LeanKernel() {
  return reinterpret_cast<const void*>(&GemvMmaLean<kSplit, 4, 16 / kSplit>);
}
// W4LeanSplit on this device (more warps on each tile's K where N has few tiles).
cudaError_t LeanSplit(int64_t n, int* split) {
  *split = W4LeanSplit(cuda::CeilDiv(n, int64_t{16}), cuda::ResidentBlocks(LeanKernel<8>(), 256, 0),
                       cuda::ResidentBlocks(LeanKernel<4>(), 128, 0));
  return cudaGetLastError();
}
bool LeanTakes(const W4Args& g) {
  return g.m <= 8 && g.k % kW4Group == 0 && cuda::Aligned16(g.a) && cuda::Aligned16(g.w_tiled);
}
template <int kSplit>
void GoLean(const W4Args& g, cudaStream_t s) {
  const auto grid = static_cast<unsigned>(cuda::CeilDiv(g.n, int64_t{16}));
  GemvMmaLean<kSplit, 4, 16 / kSplit><<<grid, 32 * kSplit, 0, s>>>(
      static_cast<const __nv_bfloat16*>(g.a), g.w_tiled, static_cast<const __nv_bfloat16*>(g.scales),
      static_cast<const __nv_bfloat16*>(g.zeros), static_cast<__nv_bfloat16*>(g.c), g.m, g.n, g.k);
}
// 8 < M <= 16: the same with two n8 tiles, and each warp on four 16-row tiles at once (one batch at a
// time, 228 registers, 2 blocks an SM), so that one load of A's fragments serves 64 weight rows. With
// one tile a warp, A (16 x K bf16: four times the tile's weight bytes) was read from L2 again for
// every 16 rows, five times the weight bytes in all, and 16 x 14336 x 4096 took 29.6 us; this shape
// 20.0 (cuBLAS bf16 32.1; H200, GEMM_README.md). Where N gives fewer 64-row blocks than SMs, two tiles
// a warp and eight warps splitting K keep every SM busy: 16 x 4096 x 4096 9.8 against 11.3 us,
// 16 x 4096 x 14336 21.4 against 26.3.
using Wide16 = GemvMmaShape<2, 4, 4, 1, 2, false, 2, true>;
using Wide16Split8 = GemvMmaShape<2, 2, 8, 1, 2, true, 1, true>;
// Whether N's 64-row blocks are at least the SMs (then Wide16, else Wide16Split8); the launch and its
// resource report decide alike.
cudaError_t Wide16IsTall(int64_t n, bool* tall) {
  int sms = 0;
  const cudaError_t e = cuda::SmCount(&sms);
  *tall = e == cudaSuccess && cuda::CeilDiv(n, Wide16::kRows) >= sms;
  return e;
}
using OneGroup = GemvMmaShape<8, 1, 4, 1, 1, false, 1>;
constexpr int kSmemWarps = 8;
using SlabTakes2 = GemvMmaShape<1, 1, 1, 1, 2, false, 1>;

struct Ptrs {
  const bf16 *a, *sc, *z;
  bf16* c;
};

Ptrs PtrsOf(const W4Args& g) {
  return {static_cast<const bf16*>(g.a), static_cast<const bf16*>(g.scales), static_cast<const bf16*>(g.zeros),
          static_cast<bf16*>(g.c)};
}

// The launch of shape S with the n8 tiles of M, instantiated from kLo to kHi tiles only.
template <typename S, int kLo, int kHi>
void Go(const W4Args& g, cudaStream_t s) {
  const Ptrs p = PtrsOf(g);
  // At most two waves of resident blocks; past that the blocks walk row tiles (w4a16_mma_kernel.cuh)
  // and each warp's next tile's weights are in flight under its last batch. Of the decode shapes only
  // 16 x 14336 x 4096 has more tiles (896 for 396 resident blocks): on the H200 29.1 and 28.8 us
  // persistent against 31.8 and 29.5 a block a tile (two runs); a single wave was no better.
  const int64_t tiles = cuda::CeilDiv(g.n, S::kRows);
  const int64_t waves2 = 2 * int64_t{cuda::ResidentBlocks(S::KernelFor(g.m), S::kThreads, 0)};
  const auto grid = static_cast<unsigned>(std::min(tiles, waves2));
  if constexpr (kLo <= 1)
    if (g.m <= 8) return S::template Go<1>(grid, s, p.a, g.w, p.sc, p.z, p.c, g.m, g.n, g.k);
  if constexpr (kLo <= 2 && kHi >= 2)
    if (g.m <= 16) return S::template Go<2>(grid, s, p.a, g.w, p.sc, p.z, p.c, g.m, g.n, g.k);
  if constexpr (kLo <= 4 && kHi >= 4)
    if (g.m <= 32) return S::template Go<4>(grid, s, p.a, g.w, p.sc, p.z, p.c, g.m, g.n, g.k);
  if constexpr (kHi >= 8) return S::template Go<8>(grid, s, p.a, g.w, p.sc, p.z, p.c, g.m, g.n, g.k);
}

int RunV4(const Problem& p, std::span<const Tensor> t, void* stream) {
  const W4Args g = ArgsOf(p, t);
  const cudaStream_t s = cuda::AsStream(stream);
  int rc = 0;
  if (HandleDegenerate(g, s, &rc)) return rc;
  const Ptrs q = PtrsOf(g);
  const uint32_t* wt = g.w_tiled;  // W's words in the streaming order (w4a16_gemm.h)
  if (g.m > 8 && g.m <= 16 && Wide16::Takes(g.a, wt, g.scales, g.zeros, g.k)) {
    W4Args tiled = g;
    tiled.w = wt;
    bool tall = false;
    KB_CUDA_TRY(Wide16IsTall(g.n, &tall));
    if (tall) Go<Wide16, 2, 2>(tiled, s);
    else Go<Wide16Split8, 2, 2>(tiled, s);
  } else if (LeanTakes(g)) {
    int split = 2;
    KB_CUDA_TRY(LeanSplit(g.n, &split));
    if (split == 8) GoLean<8>(g, s);
    else if (split == 4) GoLean<4>(g, s);
    else GoLean<2>(g, s);
  } else if (g.m > 16 && SlabTakes2::Takes(g.a, wt, g.scales, g.zeros, g.k)) {
    return g.m <= 32 ? LaunchGemvMmaSmemA<4, kSmemWarps, 2, true>(s, q.a, wt, q.sc, q.z, q.c, g.m, g.n, g.k)
                     : LaunchGemvMmaSmemA<8, kSmemWarps, 2, true>(s, q.a, wt, q.sc, q.z, q.c, g.m, g.n, g.k);
  } else if (OneGroup::Takes(g.a, g.w, g.scales, g.zeros, g.k)) {
    Go<OneGroup, 1, 8>(g, s);
  } else {
    return g.m <= 8 ? LaunchW4GemvMagic(g, s) : g.m <= 16 ? LaunchW4GemvDequant(g, s) : LaunchW4DequantThenGemm(g, s);
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

// The kernel of the aligned path (the one timed on the presets).
std::vector<LaunchInfo> LaunchesV4(const Problem& p) {
  const int64_t m = p.dim("M");
  if (m <= 8) {
    int split = 2;
    (void)LeanSplit(p.dim("N"), &split);
    const void* f = split == 8 ? LeanKernel<8>() : split == 4 ? LeanKernel<4>() : LeanKernel<2>();
    return {{"GemvMmaLean<split " + std::to_string(split) + ">", f, 32 * split, 0}};
  }
  if (m <= 16) {
    bool tall = false;
    (void)Wide16IsTall(p.dim("N"), &tall);
    return {{tall ? "GemvMmaT<n16,64 rows>" : "GemvMmaT<n16,32 rows,split 8>",
             tall ? Wide16::Kernel<2>() : Wide16Split8::Kernel<2>(), tall ? Wide16::kThreads : Wide16Split8::kThreads,
             0}};
  }
  const void* f = m <= 32 ? (const void*)&GemvMmaSmemA<4, kSmemWarps, 2, 1, true>
                          : (const void*)&GemvMmaSmemA<8, kSmemWarps, 2, 1, true>;
  const int64_t smem = m <= 32 ? 2 * SmemASlabBytes<4, 2>() : 2 * SmemASlabBytes<8, 2>();
  return {{"GemvMmaSmemA", f, 32 * kSmemWarps, smem}};
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
