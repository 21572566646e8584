// attention cuda_v3_flash_mma: FlashAttention-2's forward on mma.sync.m16n8k16 (sm_80+).
//
// A block of 4 warps owns 128 query rows of one (batch, head), each warp 32 of them (two 16-row mma
// tiles), and walks the keys in tiles of 64. What FA2 changed from the SIMT rung, all here:
//   - work split over the query dimension: a warp's rows are its own, so the softmax statistics (row
//     max, row sum) never leave the warp (FA1 split the keys over warps and merged through shared
//     memory); the grid is (query tiles, batch x heads), the longest causal tiles launched first
//     (the varlen op, attention_varlen/, runs this kernel on packed sequences: FindWork and SeqLayout
//     in attention_cuda.cuh say where a block's rows are; the fixed batch is their trivial case);
//   - Q stays on chip for the whole key loop: in shared memory, its fragments re-read by ldmatrix
//     each tile (FA2's choice at d = 128: 32 rows a warp leave no registers for it). The
//     Q-in-registers form (16 rows a warp, kM = 1 below) measured 11% slower: each K and V fragment
//     then feeds one mma instead of two;
//   - K and V tiles by cp.async in a ring of stages (2 at 32 rows a warp, two blocks an SM; 3 at 16,
//     one block): the loads of tile j+stages-1 are issued when tile j starts, so the math of the
//     tiles in between hides their latency, with one barrier per tile (one K and one V buffer,
//     refilled as soon as free, measured 12% slower: every warp of the SM waited on each refill);
//   - ldmatrix on XOR-swizzled shared memory: rows of d halves (128 or 256 bytes) put the 8 rows one
//     ldmatrix reads on the same banks; chunk ^ (row % 8) spreads them over all 32;
//   - P kept in registers between the two GEMMs: the accumulator layout of S (lane l holds row l/4,
//     columns 2(l%4), +1 of each 16x8 tile) is, two tiles side by side, the A-operand layout of the
//     next mma, so P = exp(S - m) is rounded to bf16/f16 pairs and fed to O += P V without shared memory;
//   - the causal mask costs nothing off the diagonal: key tiles past a block's last row are never
//     visited, and only the tiles that cross the diagonal (or the end of the keys) are masked;
//   - the online softmax rescales O only by exp2(m_old - m_new) per tile, in the log2 domain (one
//     FFMA + EX2 per score), and divides by the row sum once at the end;
//   - the output goes through shared memory (the Q tile's space) so each thread stores 16 bytes.
//   - addresses planned once, as CuTe plans FA2's: a thread's cp.async chunks and ldmatrix rows are
//     the same in every tile (TileCopy, ChunkAt), so the main loop computes no per-copy 64-bit
//     address or per-row swizzle. Recomputing them had v3 issuing ~8x FA2's integer instructions;
//     planning them took 8-9% off d = 128 (kernels/attention/README.md).
#include <cmath>
#include <string>
#include <vector>

#include "attention/attention/attention_cuda.cuh"
#include "attention/attention/smem_swizzle.h"
#include "core/cuda/occupancy.cuh"
#include "core/cuda/fast_exp2.cuh"
#include "gemm/gemm/gemm_ptx.cuh"

namespace kbench::kernels::attention {
namespace {

namespace ptx = gemm::ptx;

constexpr int kBlockM = 128, kBlockN = 64;  // shared memory: Q, then per stage a K and a V tile

template <typename T>
__device__ __forceinline__ uint32_t Pack(float lo, float hi) {
  if constexpr (std::is_same_v<T, __half>) {
    const __half2 h = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<const uint32_t*>(&h);
  } else {
    const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<const uint32_t*>(&h);
  }
}

// A thread's share of copying tiles of kRows rows of D halves into swizzled shared memory, planned
// once a kernel: its chunk and its rows within a tile (row0, row0 + kStep, ...) are the same for
// every tile, and kStep is a multiple of 8, so its destinations are fixed offsets (row & 7, which
// the swizzle reads, never changes) and only the source moves, by whole tiles. Computing each
// copy's 64-bit address and row guard afresh had cost ~150 integer instructions a warp per K/V tile,
// about an eighth of the main loop's instructions (Nsight Compute on the H200, kernels/attention/README.md).
// Rows at or past n are zero-filled; only a tile that reaches n checks them.
template <int D, int kRows, int kThreads>
struct TileCopy {
  static constexpr int kChunks = D / 8, kStep = kThreads / kChunks, kPer = kRows / kStep;
  static_assert(kThreads % kChunks == 0 && kStep % 8 == 0 && kRows % kStep == 0, "fixed swizzle rows");
  const char* src;    // this thread's chunk of its first row (row0) of the matrix
  int32_t row_bytes;  // a row of the matrix in memory (its rows are a head's: far below 2 GiB apart)
  uint32_t dst;       // this thread's first chunk in a tile

  __device__ __forceinline__ TileCopy(const void* base, int64_t stride) {
    const int chunk = static_cast<int>(threadIdx.x) % kChunks, row0 = static_cast<int>(threadIdx.x) / kChunks;
    row_bytes = static_cast<int32_t>(stride * 2);
    src = static_cast<const char*>(base) + static_cast<int64_t>(row0) * row_bytes + chunk * 16;
    dst = Swz<D>(row0, chunk);
  }
  // The tile of rows r0.. of an n-row matrix, `delta` bytes past the planned one (V beside K), into
  // the tile at shared address `tile`.
  __device__ __forceinline__ void Load(uint32_t tile, int64_t r0, int64_t n, int64_t delta = 0) const {
    const char* p = src + delta + r0 * row_bytes;
    if (r0 + kRows <= n) {
#pragma unroll
      for (int i = 0; i < kPer; ++i)
        ptx::CpAsync16(tile + dst + i * kStep * D * 2, p + static_cast<int64_t>(i * kStep) * row_bytes, true);
    } else {
      const int row0 = static_cast<int>(threadIdx.x) / kChunks;
      const char* row_0 = src + delta - static_cast<int64_t>(row0) * row_bytes;  // valid for the zero-filled rows
#pragma unroll
      for (int i = 0; i < kPer; ++i) {
        const bool in = r0 + row0 + i * kStep < n;
        ptx::CpAsync16(tile + dst + i * kStep * D * 2, in ? p + static_cast<int64_t>(i * kStep) * row_bytes : row_0, in);
      }
    }
  }
};

// kM: 16-row mma tiles per warp. kM = 1: 8 warps of 16 rows, Q held in registers, 3 stages, one
// block per SM. kM = 2 (FA2's layout): 4 warps of 32 rows; every K and V fragment feeds two mmas, so
// ldmatrix traffic per mma drops from 1/2 to 5/16; Q is re-read from shared memory (its registers
// would not fit beside 2 x 128 accumulators; FA2 re-reads it too at d = 128); 2 stages, two blocks
// per SM. Measured on an H200 (bf16, kernels/attention/README.md): kM = 2 330 against 295 TFLOP/s at
// B8 H16 N4096 d128 and 273 against 226 at B16 H16 N2048 d64, so the rung runs kM = 2; kM = 1 stays
// as the Q-in-registers form the comparison was made with.
template <int kM>
struct Cfg {
  static constexpr int kWarps = 8 / kM, kThreads = kWarps * 32, kStages = kM == 1 ? 3 : 2;
  template <int D>
  static constexpr int SmemBytes() { return (kBlockM + kStages * 2 * kBlockN) * D * 2; }
};

template <typename T, int D, int kM>
__global__ void __launch_bounds__(Cfg<kM>::kThreads, kM == 1 ? 1 : 2)
    FlashMma(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v, T* __restrict__ o,
             float* __restrict__ lse, AttentionShape s, SeqLayout lay, float scale_log2) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  using C = Cfg<kM>;
  constexpr int kStg = C::kStages;
  extern __shared__ __align__(128) unsigned char smem[];
  const uint32_t sq = ptx::SmemAddr(smem);
  constexpr uint32_t kTile = kBlockN * D * 2;
  const auto sk = [&](int st) { return sq + kBlockM * D * 2 + st * 2 * kTile; };  // stage st: K, then V
  const auto sv = [&](int st) { return sk(st) + kTile; };
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  // Causal: the last query tiles have the most keys; FindWork hands them out first so they do not
  // form the tail. A varlen block past its sequence's tiles has nothing to do.
  const BlockWork w = FindWork<kBlockM>(s, lay);
  if (w.empty) return;
  const int64_t n_q = w.n_q, n_kv = w.n_kv;
  const int64_t i0 = w.m_block * kBlockM;
  const int64_t kv_head = w.h / (s.h / s.h_kv);
  const int64_t q_off = w.b * lay.q_batch + w.h * lay.q_head + w.q0 * lay.q_row;  // row 0 of q and o
  const T* qh = q + q_off;
  const T* kh = k + w.b * lay.kv_batch + kv_head * lay.kv_head + w.k0 * lay.kv_row;
  const T* vh = v + (kh - k);
  float* lse_h = lse + w.b * lay.lse_batch + w.h * lay.lse_head + w.q0;
  const int64_t shift = n_kv - n_q;
  const int64_t last_row = min(i0 + kBlockM, n_q) - 1;
  const int64_t key_end = s.causal ? min(n_kv, last_row + shift + 1) : n_kv;
  const int n_tiles = static_cast<int>((key_end + kBlockN - 1) / kBlockN);

  // Group 0: Q and tile 0; then the next kStg - 2 tiles (empty groups past the last tile keep the
  // count of groups, and so the wait below, the same for every tile).
  TileCopy<D, kBlockM, C::kThreads>(qh, lay.q_row).Load(sq, i0, n_q);
  const TileCopy<D, kBlockN, C::kThreads> kv(kh, lay.kv_row);
  const int64_t v_delta = reinterpret_cast<const char*>(vh) - reinterpret_cast<const char*>(kh);
#pragma unroll
  for (int st = 0; st < kStg - 1; ++st) {
    if (st < n_tiles) {
      kv.Load(sk(st), static_cast<int64_t>(st) * kBlockN, n_kv);
      kv.Load(sv(st), static_cast<int64_t>(st) * kBlockN, n_kv, v_delta);
    }
    ptx::CpAsyncCommit();
  }

  // Rows of this thread in mma tile mt: r_lo(mt) = warp*16*kM + mt*16 + lane/4, and 8 below.
  const int warp_row = warp * 16 * kM;
  // ldmatrix rows of this lane (all lane % 8 mod 8) and its chunk bits, as ChunkAt takes them: Q
  // and V (transposed) rows lane % 16, chunk bit lane / 16; K rows lane % 8 + 8 (lane / 16), chunk
  // bit lane / 8 % 2.
  const uint32_t q_rows = sq + (warp_row + (lane & 15)) * (D * 2), v_rows = (lane & 15) * (D * 2);
  const uint32_t k_rows = ((lane & 7) + ((lane >> 4) << 3)) * (D * 2);
  const uint32_t xq = static_cast<uint32_t>((lane >> 4) ^ (lane & 7)) << 4;
  const uint32_t xk = static_cast<uint32_t>(((lane >> 3) & 1) ^ (lane & 7)) << 4;
  uint32_t qf[kM == 1 ? D / 16 : 1][4];  // kM = 1: Q in registers
  float acc[kM][D / 8][4];
  float m[kM][2], l[kM][2];
#pragma unroll
  for (int mt = 0; mt < kM; ++mt) {
    m[mt][0] = m[mt][1] = -INFINITY;
    l[mt][0] = l[mt][1] = 0.f;
#pragma unroll
    for (int t = 0; t < D / 8; ++t) acc[mt][t][0] = acc[mt][t][1] = acc[mt][t][2] = acc[mt][t][3] = 0.f;
  }

  for (int jt = 0; jt < n_tiles; ++jt) {
    const int64_t j0 = static_cast<int64_t>(jt) * kBlockN;
    const int st = jt % kStg;
    ptx::CpAsyncWait<kStg - 2>();  // this thread's copies of tile j (and, the first time, Q) landed
    __syncthreads();               // everyone's; and no warp still reads tile j-1's stage
    if (jt + kStg - 1 < n_tiles) {  // into tile j-1's stage
      const int nst = (jt + kStg - 1) % kStg;
      kv.Load(sk(nst), j0 + (kStg - 1) * kBlockN, n_kv);
      kv.Load(sv(nst), j0 + (kStg - 1) * kBlockN, n_kv, v_delta);
    }
    ptx::CpAsyncCommit();
    if constexpr (kM == 1) {
      if (jt == 0) {
#pragma unroll
        for (int ks = 0; ks < D / 16; ++ks) ptx::LdMatrixX4(q_rows + ChunkAt(xq, ks), qf[ks]);
      }
    }
    // S = Q K_j^T: 16*kM x 64 per warp, kM x 8 tiles of 16x8.
    float sc[kM][kBlockN / 8][4];
#pragma unroll
    for (int mt = 0; mt < kM; ++mt)
#pragma unroll
      for (int t = 0; t < kBlockN / 8; ++t) sc[mt][t][0] = sc[mt][t][1] = sc[mt][t][2] = sc[mt][t][3] = 0.f;
#pragma unroll
    for (int ks = 0; ks < D / 16; ++ks) {
      uint32_t qa[kM][4];
#pragma unroll
      for (int mt = 0; mt < kM; ++mt) {
        if constexpr (kM == 1) {
#pragma unroll
          for (int r = 0; r < 4; ++r) qa[mt][r] = qf[ks][r];
        } else {
          ptx::LdMatrixX4(q_rows + mt * 16 * (D * 2) + ChunkAt(xq, ks), qa[mt]);
        }
      }
#pragma unroll
      for (int np = 0; np < kBlockN / 16; ++np) {
        uint32_t kf[4];
        // Keys np*16 + (l & 7) + 8*(l >= 16), d chunk 2ks + ((l >> 3) & 1): b0, b1 of two key tiles.
        ptx::LdMatrixX4(sk(st) + k_rows + np * 16 * (D * 2) + ChunkAt(xk, ks), kf);
#pragma unroll
        for (int mt = 0; mt < kM; ++mt) {
          Mma<T>(sc[mt][2 * np], qa[mt], kf[0], kf[1]);
          Mma<T>(sc[mt][2 * np + 1], qa[mt], kf[2], kf[3]);
        }
      }
    }
    uint32_t pf[kM][kBlockN / 16][4];
#pragma unroll
    for (int mt = 0; mt < kM; ++mt) {
      const int64_t row0 = i0 + warp_row + mt * 16 + (lane >> 2), row1 = row0 + 8;
      // Mask: keys past the end, and (causal) keys past each row's diagonal. Only tiles that reach
      // either need it.
      if (j0 + kBlockN > n_kv || (s.causal && j0 + kBlockN - 1 > i0 + shift)) {
#pragma unroll
        for (int t = 0; t < kBlockN / 8; ++t)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int64_t j = j0 + t * 8 + 2 * (lane & 3) + (e & 1);
            const int64_t i = e < 2 ? row0 : row1;
            if (j >= n_kv || (s.causal && j > i + shift)) sc[mt][t][e] = -INFINITY;
          }
      }
      // Online softmax over the tile: the 4 lanes of a quad share a row.
      float tm0 = -INFINITY, tm1 = -INFINITY;
#pragma unroll
      for (int t = 0; t < kBlockN / 8; ++t) {
        tm0 = fmaxf(tm0, fmaxf(sc[mt][t][0], sc[mt][t][1]));
        tm1 = fmaxf(tm1, fmaxf(sc[mt][t][2], sc[mt][t][3]));
      }
#pragma unroll
      for (int off = 1; off <= 2; off <<= 1) {
        tm0 = fmaxf(tm0, __shfl_xor_sync(0xffffffffu, tm0, off));
        tm1 = fmaxf(tm1, __shfl_xor_sync(0xffffffffu, tm1, off));
      }
      const float mn0 = fmaxf(m[mt][0], tm0), mn1 = fmaxf(m[mt][1], tm1);
      // A row with no visible key so far keeps m = -inf (padding rows): use 0 so no NaN appears.
      const float b0 = mn0 == -INFINITY ? 0.f : mn0 * scale_log2, b1 = mn1 == -INFINITY ? 0.f : mn1 * scale_log2;
      const float alpha0 = cuda::FastExp2(m[mt][0] * scale_log2 - b0), alpha1 = cuda::FastExp2(m[mt][1] * scale_log2 - b1);
      m[mt][0] = mn0, m[mt][1] = mn1;
      float ps0 = 0.f, ps1 = 0.f;
#pragma unroll
      for (int t = 0; t < kBlockN / 8; ++t) {
        sc[mt][t][0] = cuda::FastExp2(fmaf(sc[mt][t][0], scale_log2, -b0));
        sc[mt][t][1] = cuda::FastExp2(fmaf(sc[mt][t][1], scale_log2, -b0));
        sc[mt][t][2] = cuda::FastExp2(fmaf(sc[mt][t][2], scale_log2, -b1));
        sc[mt][t][3] = cuda::FastExp2(fmaf(sc[mt][t][3], scale_log2, -b1));
        ps0 += sc[mt][t][0] + sc[mt][t][1];
        ps1 += sc[mt][t][2] + sc[mt][t][3];
      }
      // Row sums stay per lane (a quad's four partial sums) until the end: one reduction, not one a tile.
      l[mt][0] = l[mt][0] * alpha0 + ps0;
      l[mt][1] = l[mt][1] * alpha1 + ps1;
#pragma unroll
      for (int t = 0; t < D / 8; ++t) {
        acc[mt][t][0] *= alpha0, acc[mt][t][1] *= alpha0;
        acc[mt][t][2] *= alpha1, acc[mt][t][3] *= alpha1;
      }
      // P as the A operand: k step kk covers keys 16kk..16kk+15 = score tiles 2kk and 2kk+1.
#pragma unroll
      for (int kk = 0; kk < kBlockN / 16; ++kk) {
        pf[mt][kk][0] = Pack<T>(sc[mt][2 * kk][0], sc[mt][2 * kk][1]);
        pf[mt][kk][1] = Pack<T>(sc[mt][2 * kk][2], sc[mt][2 * kk][3]);
        pf[mt][kk][2] = Pack<T>(sc[mt][2 * kk + 1][0], sc[mt][2 * kk + 1][1]);
        pf[mt][kk][3] = Pack<T>(sc[mt][2 * kk + 1][2], sc[mt][2 * kk + 1][3]);
      }
    }
    // O += P V_j: V rows are keys (k), columns d (n): ldmatrix.trans gives the "col" B operand.
#pragma unroll
    for (int kk = 0; kk < kBlockN / 16; ++kk) {
#pragma unroll
      for (int dp = 0; dp < D / 16; ++dp) {
        uint32_t vf[4];
        ptx::LdMatrixX4Trans(sv(st) + v_rows + kk * 16 * (D * 2) + ChunkAt(xq, dp), vf);
#pragma unroll
        for (int mt = 0; mt < kM; ++mt) {
          Mma<T>(acc[mt][2 * dp], pf[mt][kk], vf[0], vf[1]);
          Mma<T>(acc[mt][2 * dp + 1], pf[mt][kk], vf[2], vf[3]);
        }
      }
    }
  }
  ptx::CpAsyncWait<0>();  // only empty groups are left; nothing may land after the kernel

  // Epilogue: the quad's row sums, O / l into this warp's rows of the Q tile (no other warp reads
  // those rows), then 16-byte stores.
#pragma unroll
  for (int mt = 0; mt < kM; ++mt) {
    const int r_lo = warp_row + mt * 16 + (lane >> 2);
    const int64_t row0 = i0 + r_lo, row1 = row0 + 8;
    float l0 = l[mt][0], l1 = l[mt][1];
#pragma unroll
    for (int off = 1; off <= 2; off <<= 1) {
      l0 += __shfl_xor_sync(0xffffffffu, l0, off);
      l1 += __shfl_xor_sync(0xffffffffu, l1, off);
    }
    const float inv0 = l0 > 0.f ? 1.f / l0 : 0.f, inv1 = l1 > 0.f ? 1.f / l1 : 0.f;
#pragma unroll
    for (int t = 0; t < D / 8; ++t) {
      const int col = t * 8 + 2 * (lane & 3);  // the pair (col, col + 1) lies in chunk col / 8
      const uint32_t off = (col % 8) * 2;
      ptx::StsB32(sq + Swz<D>(r_lo, col / 8) + off, Pack<T>(acc[mt][t][0] * inv0, acc[mt][t][1] * inv0));
      ptx::StsB32(sq + Swz<D>(r_lo + 8, col / 8) + off, Pack<T>(acc[mt][t][2] * inv1, acc[mt][t][3] * inv1));
    }
    if ((lane & 3) == 0) {
      constexpr float kLn2 = 0.69314718055994531f;
      if (row0 < n_q) lse_h[row0] = (m[mt][0] * scale_log2 + log2f(l0)) * kLn2;
      if (row1 < n_q) lse_h[row1] = (m[mt][1] * scale_log2 + log2f(l1)) * kLn2;
    }
  }
  __syncwarp();
  constexpr int kChunks = D / 8;
#pragma unroll
  for (int e = lane; e < 16 * kM * kChunks; e += 32) {
    const int row = warp_row + e / kChunks, chunk = e % kChunks;
    const int64_t i = i0 + row;
    if (i < n_q) *reinterpret_cast<uint4*>(o + q_off + i * lay.q_row + chunk * 8) = ptx::LdsV4(sq + Swz<D>(row, chunk));
  }
#endif
}

// grid: (query tiles, B*H) for the fixed layout, (H, PackedTiles) for a packed one (FindWork).
template <typename T, int D, int kM>
int LaunchMma(const AttnArgs& a, const SeqLayout& lay, dim3 grid, cudaStream_t st) {
  constexpr int kSmem = Cfg<kM>::template SmemBytes<D>();
  const auto kernel = FlashMma<T, D, kM>;
  KB_CUDA_TRY(cuda::AllowDynamicSmem(reinterpret_cast<const void*>(kernel), kSmem));
  kernel<<<grid, Cfg<kM>::kThreads, kSmem, st>>>(static_cast<const T*>(a.q), static_cast<const T*>(a.k),
                                                 static_cast<const T*>(a.v), static_cast<T*>(a.o), a.lse, a.s, lay,
                                                 static_cast<float>(a.s.scale * 1.4426950408889634));
  KB_LAUNCH_CHECK();
  return 0;
}

template <int kM>
int RunMma(const Problem& p, std::span<const Tensor> t, void* stream) {
  const AttnArgs a = ArgsOf(p, t);
  const cudaStream_t st = cuda::AsStream(stream);
  // cp.async and the 16-byte stores need 16-byte aligned rows (d halves are); the tensors' starts
  // come from cudaMalloc. An offset view goes to the SIMT rung, never read wrong.
  for (const void* ptr : {a.q, a.k, a.v, static_cast<const void*>(a.o)})
    if (!cuda::Aligned16(ptr)) return RunAttentionFlashSimt(p, t, stream);
  const SeqLayout lay = FixedLayout(a.s);
  const dim3 grid(static_cast<unsigned>(cuda::CeilDiv(a.s.n_q, kBlockM)), static_cast<unsigned>(a.s.b * a.s.h));
  return DispatchHalf(a.dtype, [&](auto tag) {
    using T = decltype(tag);
    if (a.s.d == 64) return LaunchMma<T, 64, kM>(a, lay, grid, st);
    if (a.s.d == 128) return LaunchMma<T, 128, kM>(a, lay, grid, st);
    return static_cast<int>(cudaErrorInvalidValue);  // skip_reason refuses it
  });
}

std::string SkipMma(const Problem& p) {
  const AttentionShape s = ShapeOf(p);
  if (std::string why = HeadDimSkip(s, {64, 128}); !why.empty()) return why;
  return SizeSkip(s);
}

template <int kM>
std::vector<LaunchInfo> LaunchesMma(const Problem& p) {
  const bool f16 = p.dtype == Dtype::kF16, d64 = p.dim("d") == 64;
  const void* f = f16 ? (d64 ? (const void*)&FlashMma<__half, 64, kM> : (const void*)&FlashMma<__half, 128, kM>)
                      : (d64 ? (const void*)&FlashMma<__nv_bfloat16, 64, kM> : (const void*)&FlashMma<__nv_bfloat16, 128, kM>);
  return {{std::string("FlashMma<d=") + (d64 ? "64" : "128") + ", " + std::to_string(16 * kM) + " rows a warp>", f,
           Cfg<kM>::kThreads, d64 ? Cfg<kM>::template SmemBytes<64>() : Cfg<kM>::template SmemBytes<128>()}};
}

}  // namespace

int LaunchFlashMmaPacked(const AttnArgs& a, const SeqLayout& lay, int64_t total_q, int64_t, cudaStream_t st) {
  const int64_t tiles = PackedTiles(total_q, a.s.b, kBlockM);
  if (tiles <= 0) return 0;
  const dim3 grid(static_cast<unsigned>(a.s.h), static_cast<unsigned>(tiles));
  return DispatchHalf(a.dtype, [&](auto tag) {
    using T = decltype(tag);
    if (a.s.d == 64) return LaunchMma<T, 64, 2>(a, lay, grid, st);
    if (a.s.d == 128) return LaunchMma<T, 128, 2>(a, lay, grid, st);
    return static_cast<int>(cudaErrorInvalidValue);
  });
}

std::vector<LaunchInfo> FlashMmaLaunches(const Problem& p) { return LaunchesMma<2>(p); }

void AddAttentionFlashMmaVariant(OpDef& op) {
  op.variants.push_back({
      .name = "cuda_v3_flash_mma",
      .description = "FlashAttention-2 on mma.sync: 32 query rows a warp, a cp.async K/V ring, swizzled ldmatrix, P in registers.",
      .backend = Backend::kCuda,
      .dtypes = {Dtype::kBF16, Dtype::kF16},
      .min_compute_capability = 80,
      .skip_reason = SkipMma,
      .run_cuda = RunMma<2>,
      .launches = LaunchesMma<2>,
  });
}

}  // namespace kbench::kernels::attention
