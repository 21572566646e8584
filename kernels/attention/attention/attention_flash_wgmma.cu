// attention cuda_v4_flash_wgmma: FlashAttention-3's structure on Hopper (sm_90a), in its simplest
// correct form. What changes from the mma.sync rung:
//   - TMA loads by a producer warpgroup: one thread issues 3D box copies of Q (once) and of each K
//     and V tile ([heads][rows][d] tensor maps, 128-byte swizzle, rows past the head's end
//     zero-filled), counted in bytes on "full" mbarriers; the consumers hand each stage back on
//     "empty" mbarriers. Two stages of K and two of V, so the loads of tile j+1 run under the math of
//     tile j, and no block-wide barrier is left in the main loop. The producer gives its registers
//     back (setmaxnreg.dec 24) to the consumers (setmaxnreg.inc 240).
//   - wgmma consumers: two warpgroups of 64 query rows each (128 a block). S = Q K^T is one chain of
//     m64n128k16 wgmmas reading Q and K straight from shared memory (no ldmatrix, no Q registers);
//     O += P V is m64n{d}k16 with P as the register A operand: the S accumulator layout is the
//     mma.sync A-fragment layout per warp, so P goes from the softmax to the tensor cores without
//     shared memory, as in FA2.
//     Descriptors are encoded once a kernel and offset per wgmma, the warpgroup index made provably
//     uniform: 1-2.4% on an H200 against an encode at each wgmma (attention README).
//   - intra-warpgroup overlap (FA3's two-stage pipelining): S_j = Q K_j^T is issued before
//     O += P_{j-1} V_{j-1}, and the softmax of S_j runs while the tensor cores still work on the
//     latter; O is rescaled only once that group has completed;
//   - ping-pong between the two consumer warpgroups (FA3): named barriers make them take turns
//     issuing their wgmmas, so one's softmax runs while the other's GEMMs own the tensor cores.
//     Measured on an H200 (bf16): 635 against 626 TFLOP/s without it at B8 H16 N4096 d128, 382
//     against 334 at B16 H16 N2048 d64 (kPingPong = false is the schedule it was compared with).
//   - persistent (fixed layout): one block an SM walks the query tiles in the order a full grid
//     would launch them (the first wave by block index, then a global counter), so the next tile's
//     Q and first K/V tiles load while this tile's last P V and output stores run, instead of each
//     new block waiting for its Q. Measured on an H200 (bf16, B8 H16 N4096 d128): 1645-1648 against
//     1669-1672 us, 909-910 against 942 causal; causal d = 64 386 against 417.
//     The consumers' loop runs across tiles: two Q buffers, and a tile's last P V is issued beside
//     the next tile's first S, so neither waits alone at the boundary (1-2% on the causal problems,
//     whose tiles are shortest; nothing on the others).
//   - the softmax's row maxima and sums as trees, not chains: with one warp of each warpgroup on a
//     scheduler the softmax is latency-bound, and it sets how soon a warpgroup takes its next turn
//     (1% at d = 128, 3% at d = 64; the attention README has both measurements).
//   - no new row maxima past a row's first key tile (unmasked tiles): the exponentials are taken
//     against the running maxima as they stand, so they start as soon as S lands, and O is not
//     rescaled. FA4 rescales lazily but still takes each tile's maxima; here a score above the
//     running maximum just gives an exponential > 1, which P (bf16/f16), the f32 sums and O carry
//     with the same relative precision. What bounds it: a lane's partial row sum past 2^15 (or not
//     finite, an exponential past f32's range) sends the warp to the exact path, with S recomputed
//     by mma.sync from Q and K in global memory. 131 of a key tile's 531 instructions gone; on an
//     H200 7-8% off B8 H16 N4096 d128, 6% off causal (AttentionVariantTest.ScoreJumps checks the
//     exact path; the attention README has the numbers).
// Causal: key tiles past the block's last row are not loaded; the tiles crossing the diagonal are
// masked per element; the longest query tiles are launched (persistent: handed out) first. Edges:
// TMA zero-fills and the mask covers any N; the output is stored with row guards. Packed
// variable-length batches (the varlen op, attention_varlen/) run the same kernel, not persistent:
// FindWork (attention_cuda.cuh) maps a block to its sequence, and the tensor maps are [total][H][d]
// (see the kernel for boxes that cross sequences).
// Only sm_90a machine code exists for the kernel (wgmma, setmaxnreg): elsewhere its body is empty and
// skip_reason refuses the problem, naming the device's compute capability.
#include <cuda.h>  // CUtensorMap (types only; the function comes from the runtime's entry point)

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "attention/attention/attention_cuda.cuh"
#include "attention/attention/attention_wgmma.cuh"
#include "core/cuda/occupancy.cuh"
#include "core/cuda/tensor_map.cuh"
#include "core/cuda/workspace.cuh"
#include "core/cuda/fast_exp2.cuh"
#include "gemm/gemm/gemm_cuda.cuh"  // CurrentComputeCapability

namespace kbench::kernels::attention {
namespace {

namespace ptx = gemm::ptx;

constexpr int kBlockM = 128, kBlockN = 128, kStages = 2;
constexpr int kConsumers = 2, kThreads = 128 * (1 + kConsumers);
constexpr int kChunkCols = 64;  // one TMA box / swizzle row: 64 halves = 128 bytes

// kQBufs: the persistent kernel keeps two Q buffers, so the next tile's Q is in shared memory before
// its first S is issued beside the current tile's last P V (the consumers' loop runs across tiles).
template <int D, int kQBufs>
struct Layout {
  static constexpr int kChunks = D / kChunkCols;
  static constexpr int kQBytes = kBlockM * D * 2;          // chunk c at c * kBlockM * 128
  static constexpr int kTileChunkBytes = kBlockN * 128;    // one 64-column chunk of a K or V tile
  static constexpr int kTileBytes = kBlockN * D * 2;
  static constexpr int kK = kQBufs * kQBytes;              // Q buffers, then K stages, then V stages
  static constexpr int kV = kK + kStages * kTileBytes;
  // mbarriers, 8 bytes each: q_full[2], k_full[2], k_empty[2], v_full[2], v_empty[2]; persistent:
  // q_empty[2], tile_full[2], tile_empty[2]; then the two tile ids (136 bytes in all)
  static constexpr int kBars = kV + kStages * kTileBytes;
  static constexpr int kSmem = kBars + 20 * 8 + 1024;      // + slack to align the base to 1024
  static_assert(kSmem <= 227 * 1024, "Q and two stages of K and V fit");
  static_assert(kChunks * kTileChunkBytes == kTileBytes && kTileChunkBytes % 1024 == 0,
                "a tile is whole 64-column chunks, each on a 1024-byte boundary (the swizzle period)");
};
template <int D, bool kPersistent>
using LayoutOf = Layout<D, kPersistent ? 2 : 1>;

#if KB_GEMM_SM90A
template <typename T, int D>
__device__ __forceinline__ void Gemm1(float (&s)[64], uint64_t da, uint64_t db) {
  if constexpr (std::is_same_v<T, __half>) wg::WgmmaSF16(s, da, db);
  else wg::WgmmaSBf16(s, da, db);
}
template <typename T, int D>
__device__ __forceinline__ void Gemm2(float (&o)[D / 2], const uint32_t (&a)[4], uint64_t db) {
  if constexpr (D == 64) {
    if constexpr (std::is_same_v<T, __half>) wg::WgmmaO64F16(o, a, db);
    else wg::WgmmaO64Bf16(o, a, db);
  } else {
    if constexpr (std::is_same_v<T, __half>) wg::WgmmaO128F16(o, a, db);
    else wg::WgmmaO128Bf16(o, a, db);
  }
}

// v[0] op v[1] op ... op v[15] as a tree of depth 4 (v is overwritten): written out level by level so
// that it unrolls into registers.
template <typename Op>
__device__ __forceinline__ float Tree16(float (&v)[16], Op op) {
#pragma unroll
  for (int i = 0; i < 8; ++i) v[i] = op(v[i], v[i + 8]);
#pragma unroll
  for (int i = 0; i < 4; ++i) v[i] = op(v[i], v[i + 4]);
  v[0] = op(v[0], v[2]), v[1] = op(v[1], v[3]);
  return op(v[0], v[1]);
}

// A lane's partial sum of a row's exponentials (32 of them) past which the stale-maximum softmax
// gives way to the exact one: scores up to ~2^10-2^15 times the running maximum's exponential. Every
// exponential is at most the sum, so P stays below f16's largest value (65504) when rounded.
constexpr float kMaxPartial = 32768.f;

template <typename T>
__device__ __forceinline__ uint32_t Pack2(float lo, float hi) {
  if constexpr (std::is_same_v<T, __half>) {
    const __half2 h = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<const uint32_t*>(&h);
  } else {
    const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<const uint32_t*>(&h);
  }
}
#endif

// The persistent schedule's state in global memory: [0] the next tile past the first wave, [1] the
// blocks done fetching. The last block to finish fetching sets both back to zero, so every launch
// starts from zeros (the buffer is zero when allocated), as the split-K counters of the GEMV do.
struct TileCounter {
  unsigned* next_and_done = nullptr;
  int tiles = 0;     // query tiles a head (the fixed layout's grid x)
  int pairs = 0;     // B * H
};

template <typename T, int D, bool kPingPong, bool kPersistent>
__global__ void __launch_bounds__(kThreads, 1)
    FlashWgmma(const __grid_constant__ CUtensorMap map_q, const __grid_constant__ CUtensorMap map_k,
               const __grid_constant__ CUtensorMap map_v, const T* __restrict__ q, const T* __restrict__ k,
               T* __restrict__ o, float* __restrict__ lse, AttentionShape s,
               SeqLayout lay, float scale_log2, TileCounter sched) {
#if KB_GEMM_SM90A
  using L = LayoutOf<D, kPersistent>;
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  const uint32_t base = (ptx::SmemAddr(smem_raw) + 1023u) & ~1023u;
  const uint32_t bars = base + L::kBars;
  const auto q_full = [&](int b) { return bars + 8 * b; };
  const auto k_full = [&](int st) { return bars + 16 + 8 * st; };
  const auto k_empty = [&](int st) { return bars + 32 + 8 * st; };
  const auto v_full = [&](int st) { return bars + 48 + 8 * st; };
  const auto v_empty = [&](int st) { return bars + 64 + 8 * st; };
  // Persistent only: a Q buffer free again, and a two-slot ring of tile ids from the producer.
  const auto q_empty = [&](int b) { return bars + 80 + 8 * b; };
  const auto tile_full = [&](int i) { return bars + 96 + 8 * i; };
  const auto tile_empty = [&](int i) { return bars + 112 + 8 * i; };
  volatile int* tile_slot = reinterpret_cast<volatile int*>(smem_raw + (base - ptx::SmemAddr(smem_raw)) + L::kBars + 128);
  // Warp-uniform as far as ptxas can tell (a shuffle from lane 0), so the consumer's Q offset and
  // the wgmma descriptors derived from it stay in uniform registers.
  const int wgi = __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x / 128), 0);
  const int64_t total_tiles = static_cast<int64_t>(sched.tiles) * sched.pairs;

  // One tile's geometry: the block's work and what the producer and the consumers derive from it.
  struct Tile {
    BlockWork w;
    int64_t i0, shift, q_row0, q_z, kv_row0, kv_z;
    int n_tiles;
  };
  const bool packed = lay.cu_q != nullptr;
  const auto tile_of = [&](const BlockWork& w) {
    Tile t;
    t.w = w;
    t.i0 = w.m_block * kBlockM;
    const int64_t kv_head = w.h / (s.h / s.h_kv);
    t.shift = w.n_kv - w.n_q;
    const int64_t last_row = min(t.i0 + kBlockM, w.n_q) - 1;
    const int64_t key_end = s.causal ? min(w.n_kv, last_row + t.shift + 1) : w.n_kv;
    // TMA boxes: the fixed layout's maps are [B*H][N][d] (coordinates d, row, b*H + h); a packed one's
    // are [total][H][d] (d, h, packed row). A packed box may run past its sequence into the next
    // one's rows: those keys are masked below (key >= n_kv, so P = 0 against finite V), those query
    // rows are computed but never stored (row guards on n_q); past the last sequence TMA zero-fills.
    t.q_row0 = packed ? w.q0 + t.i0 : t.i0, t.q_z = packed ? w.h : w.b * s.h + w.h;
    t.kv_row0 = packed ? w.k0 : 0, t.kv_z = packed ? kv_head : w.b * s.h_kv + kv_head;
    t.n_tiles = static_cast<int>((key_end + kBlockN - 1) / kBlockN);
    return t;
  };
  const auto tma = [&](uint32_t dst, const CUtensorMap* map, int c, int64_t row, int64_t z, uint32_t bar) {
    if (packed) wg::TmaLoad3d(dst, map, c * kChunkCols, static_cast<int>(z), static_cast<int>(row), bar);
    else wg::TmaLoad3d(dst, map, c * kChunkCols, static_cast<int>(row), static_cast<int>(z), bar);
  };

  BlockWork first;
  if constexpr (kPersistent) {
    first = FixedWorkAt(s, lay, blockIdx.x, sched.tiles, sched.pairs);  // grid <= total_tiles
  } else {
    first = FindWork<kBlockM>(s, lay);  // every warp, the same answer; empty: the whole block leaves
    if (first.empty) return;
  }

  if (threadIdx.x == 0) {
    for (int b = 0; b < 2; ++b) ptx::MbarInit(q_full(b), 1);
    for (int st = 0; st < kStages; ++st) {
      ptx::MbarInit(k_full(st), 1);
      ptx::MbarInit(v_full(st), 1);
      ptx::MbarInit(k_empty(st), kConsumers * 4);  // one arrival per consumer warp
      ptx::MbarInit(v_empty(st), kConsumers * 4);
    }
    if constexpr (kPersistent) {
      for (int i = 0; i < 2; ++i) {
        ptx::MbarInit(q_empty(i), kConsumers * 4);
        ptx::MbarInit(tile_full(i), 1);
        ptx::MbarInit(tile_empty(i), kConsumers * 4);
      }
    }
    ptx::FenceBarrierInit();
  }
  __syncthreads();

  if (wgi == 0) {
    ptx::SetMaxNRegDec<24>();
    if (threadIdx.x == 0) {
      // Loads tile t's Q into buffer qb and its K/V tiles; kv counts the K/V tiles loaded before it
      // (stage, parity).
      const auto produce = [&](const Tile& t, int kv, int qb) {
        ptx::MbarArriveExpectTx(q_full(qb), L::kQBytes);
        for (int c = 0; c < L::kChunks; ++c)
          tma(base + qb * L::kQBytes + c * kBlockM * 128, &map_q, c, t.q_row0, t.q_z, q_full(qb));
        for (int j = 0; j < t.n_tiles; ++j) {
          const int g = kv + j, st = g % kStages;
          const uint32_t parity = ((g / kStages) & 1) ^ 1;  // first pass over the stages: returns at once
          const int64_t row = t.kv_row0 + static_cast<int64_t>(j) * kBlockN;
          ptx::MbarWait(k_empty(st), parity);
          ptx::MbarArriveExpectTx(k_full(st), L::kTileBytes);
          for (int c = 0; c < L::kChunks; ++c)
            tma(base + L::kK + st * L::kTileBytes + c * L::kTileChunkBytes, &map_k, c, row, t.kv_z, k_full(st));
          ptx::MbarWait(v_empty(st), parity);
          ptx::MbarArriveExpectTx(v_full(st), L::kTileBytes);
          for (int c = 0; c < L::kChunks; ++c)
            tma(base + L::kV + st * L::kTileBytes + c * L::kTileChunkBytes, &map_v, c, row, t.kv_z, v_full(st));
        }
      };
      if constexpr (kPersistent) {
        // The first wave's tiles are the block indices; later ones come from the counter, in the
        // launch order a non-persistent grid would run them (causal: longest first).
        int kv = 0;
        for (int n = 0;; ++n) {
          const int64_t id = n == 0 ? blockIdx.x : gridDim.x + static_cast<int64_t>(atomicAdd(sched.next_and_done, 1u));
          ptx::MbarWait(tile_empty(n & 1), ((n >> 1) & 1) ^ 1);
          tile_slot[n & 1] = id < total_tiles ? static_cast<int>(id) : -1;
          ptx::MbarArrive(tile_full(n & 1));
          if (id >= total_tiles) break;
          const Tile t = tile_of(n == 0 ? first : FixedWorkAt(s, lay, id, sched.tiles, sched.pairs));
          // Buffer n % 2 is free once the consumers' last S of tile n - 2 has read it.
          ptx::MbarWait(q_empty(n & 1), ((n >> 1) & 1) ^ 1);
          produce(t, kv, n & 1);
          kv += t.n_tiles;
        }
        __threadfence();
        if (atomicAdd(sched.next_and_done + 1, 1u) == gridDim.x - 1) {  // every block is done fetching
          sched.next_and_done[0] = 0;
          sched.next_and_done[1] = 0;
        }
      } else {
        produce(tile_of(first), 0, 0);
      }
    }
    return;
  }

  ptx::SetMaxNRegInc<240>();
  const int consumer = wgi - 1;
  const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32;
  const uint32_t q_base = base + consumer * 64 * 128;  // this warpgroup's 64 rows in every Q chunk
  // Descriptors as a base plus an offset (shared addresses < 256 KB: the 14-bit start field never
  // carries), so a wgmma's operands cost one uniform add each instead of an encode.
  const uint64_t q_desc = ptx::DescKMajorSw128(q_base), k_desc = ptx::DescKMajorSw128(base + L::kK);
  const uint64_t v_desc = ptx::DescMnMajorSw128(base + L::kV, L::kTileChunkBytes);

  // Ping-pong (FA3): the two warpgroups take turns issuing their wgmmas, each turn opened by the
  // other's arrival on a named barrier (ids 1 and 2; 256 threads: one warpgroup syncs, the other
  // arrives), so one warpgroup's softmax runs while the other's GEMMs own the tensor cores.
  // Consumer 0 goes first: consumer 1 arrives once up front; so that every arrival is matched,
  // consumer 1 skips its last arrival (one tile: n_tiles + 1 turns), or consumer 0 syncs once more
  // at the end (persistent: consumer 1 does not know its last turn when it takes it).
  int turns_left = 0;
  const auto begin_turn = [&] {
    if constexpr (kPingPong) asm volatile("bar.sync %0, 256;\n" ::"r"(1 + consumer) : "memory");
  };
  const auto end_turn = [&] {
    if constexpr (kPingPong)
      if (kPersistent || consumer == 0 || --turns_left > 0) asm volatile("bar.arrive %0, 256;\n" ::"r"(2 - consumer) : "memory");
  };
  if constexpr (kPingPong)
    if (consumer == 1) asm volatile("bar.arrive %0, 256;\n" ::"r"(1) : "memory");

  // What the masks and the stores need of a tile, for this thread's two rows (in the sequence).
  struct Rows {
    int64_t row0, row1, first_row, shift, n_q, n_kv;
    int n_tiles;
  };
  const auto rows_of = [&](const Tile& tl) {
    Rows r;
    r.first_row = tl.i0 + consumer * 64;  // this warpgroup's first query row
    r.row0 = r.first_row + warp * 16 + (lane >> 2), r.row1 = r.row0 + 8;
    r.shift = tl.shift, r.n_q = tl.w.n_q, r.n_kv = tl.w.n_kv;
    // From lane 0: the key loop's bound, and so its counter and the K/V stages, provably
    // warp-uniform (else the wgmma descriptors' offsets are built in vector registers at each).
    r.n_tiles = __shfl_sync(0xffffffffu, tl.n_tiles, 0);
    return r;
  };
  // Tile n of this block (n = 0, 1, ...); false past the last.
  const auto fetch = [&](int n, Tile* out) {
    if constexpr (kPersistent) {
      ptx::MbarWait(tile_full(n & 1), (n >> 1) & 1);
      const int id = tile_slot[n & 1];
      __syncwarp();
      if (lane == 0) ptx::MbarArrive(tile_empty(n & 1));
      if (id < 0) return false;
      *out = tile_of(n == 0 ? first : FixedWorkAt(s, lay, id, sched.tiles, sched.pairs));
      return true;
    } else {
      if (n > 0) return false;
      *out = tile_of(first);
      return true;
    }
  };

  float acc[D / 2];
  float sc[64];
  uint32_t pf[kBlockN / 16][4];
  float m0 = -INFINITY, m1 = -INFINITY, l0 = 0.f, l1 = 0.f;

  // S = Q K_g^T for the block's g-th K/V tile, Q from buffer qb: issued and committed, not waited for.
  const auto q_desc_of = [&](int qb) { return q_desc + ((qb * L::kQBytes) >> 4); };
  const auto issue_s = [&](int g, uint64_t qd) {
    const int st = g % kStages;
    ptx::MbarWait(k_full(st), (g / kStages) & 1);
    __syncwarp();  // the .aligned wgmma instructions need the warp converged
#pragma unroll
    for (int i = 0; i < 64; ++i) sc[i] = 0.f;
    wg::FenceRegs(sc);
    wg::FenceRegs(acc);
    wg::FenceRegs(pf);
    ptx::WgmmaFence();  // orders every register write above before the wgmmas below read them
#pragma unroll
    for (int ks = 0; ks < D / 16; ++ks) {
      // 16 more d = 32 more bytes along a 128-byte swizzled row; every 4 steps the next 64-column chunk.
      const uint32_t off = (ks % 4) * 32;
      Gemm1<T, D>(sc, qd + (((ks / 4) * kBlockM * 128 + off) >> 4),
                  k_desc + ((st * L::kTileBytes + (ks / 4) * L::kTileChunkBytes + off) >> 4));
    }
    ptx::WgmmaCommit();
  };
  // O += P V_g, issued and committed, not waited for (P stays in pf until it completes).
  const auto issue_pv = [&](int g) {
    const int st = g % kStages;
    ptx::MbarWait(v_full(st), (g / kStages) & 1);
    __syncwarp();
    ptx::WgmmaFence();  // pf and acc were last written before issue_s's fence; this one states it here
#pragma unroll
    for (int kk = 0; kk < kBlockN / 16; ++kk)
      // 16 more keys = 16 more 128-byte rows of every chunk; chunks kTileChunkBytes apart (the LBO).
      Gemm2<T, D>(acc, pf[kk], v_desc + ((st * L::kTileBytes + kk * 16 * 128) >> 4));
    ptx::WgmmaCommit();
  };
  // S of K/V tile g done: its K stage goes back, and after a tile's last S its Q buffer (persistent).
  const auto s_done = [&](int g, bool last_of_tile, int qb) {
    if (lane == 0) {
      ptx::MbarArrive(k_empty(g % kStages));
      if (kPersistent && last_of_tile) ptx::MbarArrive(q_empty(qb));
    }
  };
  Tile cur;  // the query tile whose K/V tiles the loop below consumes
  // S of key tile j of the current tile again (the softmax's stale-maximum path overwrote it, and K's
  // stage may already hold another tile): mma.sync from Q and K in global memory, whose m16n8k16
  // accumulators are the wgmma's S layout (rows g and g + 8 of the warp, keys 8 tt + 2 (lane % 4)).
  const auto recompute_s = [&](const Rows& r, int j) {
    const BlockWork& w = cur.w;
    const T* qh = q + w.b * lay.q_batch + w.h * lay.q_head + w.q0 * lay.q_row;
    // From fields the loop keeps live anyway (Tile's kv_z and w.k0 made live cost the wgmma
    // descriptors their uniform registers); 32-bit divisions: 64-bit ones are subroutine calls.
    const int64_t kv_head = static_cast<int>(w.h) / (static_cast<int>(s.h) / static_cast<int>(s.h_kv));
    const int64_t k0 = lay.cu_k != nullptr ? lay.cu_k[w.b] : 0;
    const T* kh = k + w.b * lay.kv_batch + kv_head * lay.kv_head + (k0 + static_cast<int64_t>(j) * kBlockN) * lay.kv_row;
    // Rows past n_q had S = 0 (TMA's zero fill): their fragments are read from row 0 and zeroed,
    // not branched around, so that the warp stays converged (else ptxas no longer proves the key
    // loop's counters uniform and builds every wgmma descriptor in vector registers).
    const bool ok0 = r.row0 < r.n_q, ok1 = r.row1 < r.n_q;
    const uint32_t* q0r = reinterpret_cast<const uint32_t*>(qh + (ok0 ? r.row0 : 0) * lay.q_row) + (lane & 3);
    const uint32_t* q1r = reinterpret_cast<const uint32_t*>(qh + (ok1 ? r.row1 : 0) * lay.q_row) + (lane & 3);
#pragma unroll
    for (int tt = 0; tt < 16; ++tt) {
      const uint32_t* kr = reinterpret_cast<const uint32_t*>(kh + (tt * 8 + (lane >> 2)) * lay.kv_row) + (lane & 3);
      float c[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll 1
      for (int ks = 0; ks < D / 16; ++ks) {  // 16 d = 8 words; a lane's pairs at words 4 + (lane % 4)
        const uint32_t a[4] = {ok0 ? __ldg(q0r + 8 * ks) : 0u, ok1 ? __ldg(q1r + 8 * ks) : 0u,
                               ok0 ? __ldg(q0r + 8 * ks + 4) : 0u, ok1 ? __ldg(q1r + 8 * ks + 4) : 0u};
        Mma<T>(c, a, __ldg(kr + 8 * ks), __ldg(kr + 8 * ks + 4));
      }
#pragma unroll
      for (int e = 0; e < 4; ++e) sc[4 * tt + e] = c[e];
    }
  };
  // S -> exp2(S * scale_log2 - b) in place (b0 for the scores of row0, b1 for row1's) and this lane's
  // partial sums of the two rows, as trees.
  const auto exp2_sums = [&](float b0, float b1, float* ps0, float* ps1) {
    float t0[16], t1[16];
#pragma unroll
    for (int tt = 0; tt < 16; ++tt) {
      sc[4 * tt] = cuda::FastExp2(fmaf(sc[4 * tt], scale_log2, -b0));
      sc[4 * tt + 1] = cuda::FastExp2(fmaf(sc[4 * tt + 1], scale_log2, -b0));
      sc[4 * tt + 2] = cuda::FastExp2(fmaf(sc[4 * tt + 2], scale_log2, -b1));
      sc[4 * tt + 3] = cuda::FastExp2(fmaf(sc[4 * tt + 3], scale_log2, -b1));
      t0[tt] = sc[4 * tt] + sc[4 * tt + 1], t1[tt] = sc[4 * tt + 2] + sc[4 * tt + 3];
    }
    *ps0 = Tree16(t0, [](float a, float b) { return a + b; });
    *ps1 = Tree16(t1, [](float a, float b) { return a + b; });
  };
  // Turns S (key tile j of the tile r) into exp2(S - m) in place, sets the factors the running sums
  // and O must be scaled by, and returns false when they are 1 (O needs no rescale).
  // Past a row's first tile, unmasked tiles first try the running maxima as they are (no new
  // maxima: FA4 rescales lazily, this skips the maxima too): exponentials of scores above them are
  // > 1, which bf16 P, the f32 sums and O hold exactly as well as long as they stay small. If a
  // lane's partial sum of a row passes kMaxPartial (or is not finite), the warp recomputes S and
  // takes the exact path. On an H200 7-8% off B8 H16 N4096 d128 (attention README).
  const auto softmax = [&](const Rows& r, int j, float* alpha0, float* alpha1) -> bool {
    const int64_t j0 = static_cast<int64_t>(j) * kBlockN;
    const bool masked = j0 + kBlockN > r.n_kv || (s.causal && j0 + kBlockN - 1 > r.first_row + r.shift);
    if (j > 0 && !masked) {
      float ps0, ps1;
      exp2_sums(m0 * scale_log2, m1 * scale_log2, &ps0, &ps1);
      // The vote passed through lane 0, so that ptxas sees a uniform branch (as for n_tiles).
      const int small = __all_sync(0xffffffffu, ps0 <= kMaxPartial && ps1 <= kMaxPartial);  // NaN fails too
      if (__shfl_sync(0xffffffffu, small, 0)) {
        l0 += ps0, l1 += ps1;
        *alpha0 = 1.f, *alpha1 = 1.f;
        return false;
      }
      recompute_s(r, j);
    }
    if (masked) {
#pragma unroll
      for (int tt = 0; tt < 16; ++tt)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int64_t key = j0 + tt * 8 + 2 * (lane & 3) + (e & 1);
          const int64_t i = e < 2 ? r.row0 : r.row1;
          if (key >= r.n_kv || (s.causal && key > i + r.shift)) sc[4 * tt + e] = -INFINITY;
        }
    }
    // Row maxima and sums as trees (depth 5, not a chain of 16): with one warp of a warpgroup on
    // each scheduler, the softmax is latency-bound, and the maxima gate every exponential.
    float t0[16], t1[16];
#pragma unroll
    for (int tt = 0; tt < 16; ++tt) t0[tt] = fmaxf(sc[4 * tt], sc[4 * tt + 1]), t1[tt] = fmaxf(sc[4 * tt + 2], sc[4 * tt + 3]);
    float tm0 = Tree16(t0, [](float a, float b) { return fmaxf(a, b); });
    float tm1 = Tree16(t1, [](float a, float b) { return fmaxf(a, b); });
#pragma unroll
    for (int off = 1; off <= 2; off <<= 1) {
      tm0 = fmaxf(tm0, __shfl_xor_sync(0xffffffffu, tm0, off));
      tm1 = fmaxf(tm1, __shfl_xor_sync(0xffffffffu, tm1, off));
    }
    const float mn0 = fmaxf(m0, tm0), mn1 = fmaxf(m1, tm1);
    // A row with no visible key so far keeps m = -inf (padding rows): use 0 so no NaN appears.
    const float b0 = mn0 == -INFINITY ? 0.f : mn0 * scale_log2, b1 = mn1 == -INFINITY ? 0.f : mn1 * scale_log2;
    *alpha0 = cuda::FastExp2(m0 * scale_log2 - b0), *alpha1 = cuda::FastExp2(m1 * scale_log2 - b1);
    m0 = mn0, m1 = mn1;
    float ps0, ps1;
    exp2_sums(b0, b1, &ps0, &ps1);
    // Row sums stay per lane (a quad's four partial sums) until the end.
    l0 = l0 * *alpha0 + ps0;
    l1 = l1 * *alpha1 + ps1;
    return true;
  };
  // P = S rounded to pairs in the A-fragment layout: k step kk is score tiles 2kk and 2kk+1.
  const auto to_p = [&] {
#pragma unroll
    for (int kk = 0; kk < kBlockN / 16; ++kk) {
      pf[kk][0] = Pack2<T>(sc[8 * kk], sc[8 * kk + 1]);
      pf[kk][1] = Pack2<T>(sc[8 * kk + 2], sc[8 * kk + 3]);
      pf[kk][2] = Pack2<T>(sc[8 * kk + 4], sc[8 * kk + 5]);
      pf[kk][3] = Pack2<T>(sc[8 * kk + 6], sc[8 * kk + 7]);
    }
  };
  // O / l and the log-sum-exp of tile tl, from its final maxima and (per lane) sums.
  const auto store = [&](const Tile& tl, const Rows& r, float fm0, float fm1, float fl0, float fl1) {
#pragma unroll
    for (int off = 1; off <= 2; off <<= 1) {
      fl0 += __shfl_xor_sync(0xffffffffu, fl0, off);
      fl1 += __shfl_xor_sync(0xffffffffu, fl1, off);
    }
    const float inv0 = fl0 > 0.f ? 1.f / fl0 : 0.f, inv1 = fl1 > 0.f ? 1.f / fl1 : 0.f;
    // Stores only the sequence's rows: a packed tile's rows past n_q belong to the next sequence.
    const BlockWork& w = tl.w;
    T* oh = o + w.b * lay.q_batch + w.h * lay.q_head + w.q0 * lay.q_row;
    T* o0 = oh + r.row0 * lay.q_row;
    T* o1 = oh + r.row1 * lay.q_row;
    float* lse_h = lse + w.b * lay.lse_batch + w.h * lay.lse_head + w.q0;
#pragma unroll
    for (int i = 0; i < D / 8; ++i) {
      const int col = i * 8 + 2 * (lane & 3);
      if (r.row0 < r.n_q) *reinterpret_cast<uint32_t*>(o0 + col) = Pack2<T>(acc[4 * i] * inv0, acc[4 * i + 1] * inv0);
      if (r.row1 < r.n_q) *reinterpret_cast<uint32_t*>(o1 + col) = Pack2<T>(acc[4 * i + 2] * inv1, acc[4 * i + 3] * inv1);
    }
    if ((lane & 3) == 0) {
      constexpr float kLn2 = 0.69314718055994531f;
      if (r.row0 < r.n_q) lse_h[r.row0] = (fm0 * scale_log2 + log2f(fl0)) * kLn2;
      if (r.row1 < r.n_q) lse_h[r.row1] = (fm1 * scale_log2 + log2f(fl1)) * kLn2;
    }
  };

  // One stream of K/V tiles across the block's query tiles: g counts the K/V tiles consumed before
  // the current tile (the producer's stage order), n the tiles (Q buffer n % 2, phase (n / 2) % 2).
  if (fetch(0, &cur)) {
    Rows r = rows_of(cur);
    if constexpr (!kPersistent) turns_left = cur.n_tiles + 1;
    int kv = 0, n = 0;
    float alpha0, alpha1;
#pragma unroll
    for (int i = 0; i < D / 2; ++i) acc[i] = 0.f;
    ptx::MbarWait(q_full(0), 0);
    begin_turn();
    uint64_t qd = q_desc_of(0);
    issue_s(0, qd);
    end_turn();
    ptx::WgmmaWait<0>();
    wg::FenceRegs(sc);
    s_done(0, r.n_tiles == 1, 0);
    softmax(r, 0, &alpha0, &alpha1);
    to_p();
    for (;;) {
      // FA3's intra-warpgroup overlap: S_j = Q K_j^T is issued before O += P_{j-1} V_{j-1}, so the
      // softmax of S_j (exp2 on the SFU) runs while the tensor cores still work on P_{j-1} V_{j-1}.
      for (int j = 1; j < r.n_tiles; ++j) {
        begin_turn();
        issue_s(kv + j, qd);
        issue_pv(kv + j - 1);
        end_turn();
        ptx::WgmmaWait<1>();  // S_j is done (groups complete in order); P_{j-1} V_{j-1} may not be
        wg::FenceRegs(sc);
        s_done(kv + j, j == r.n_tiles - 1, n & 1);
        const bool rescale = softmax(r, j, &alpha0, &alpha1);
        ptx::WgmmaWait<0>();  // P_{j-1} V_{j-1} is done: O may be rescaled and pf overwritten
        wg::FenceRegs(acc);
        wg::FenceRegs(pf);
        if (lane == 0) ptx::MbarArrive(v_empty((kv + j - 1) % kStages));
        if (rescale)
#pragma unroll
          for (int i = 0; i < D / 8; ++i) {
            acc[4 * i] *= alpha0, acc[4 * i + 1] *= alpha0;
            acc[4 * i + 2] *= alpha1, acc[4 * i + 3] *= alpha1;
          }
        to_p();
      }
      // The tile's last P V goes out beside the next tile's first S (its Q in the other buffer),
      // so that S's softmax runs under the P V and neither waits alone at the tile boundary.
      const int last = kv + r.n_tiles - 1;
      Tile next;
      const bool more = fetch(n + 1, &next);
      const Rows done = r;
      const float fm0 = m0, fm1 = m1, fl0 = l0, fl1 = l1;
      wg::FenceRegs(acc);
      wg::FenceRegs(pf);
      if (more) {
        const int qb = (n + 1) & 1;
        r = rows_of(next);
        ptx::MbarWait(q_full(qb), ((n + 1) >> 1) & 1);
        begin_turn();
        qd = q_desc_of(qb);
        issue_s(last + 1, qd);
        issue_pv(last);
        end_turn();
        ptx::WgmmaWait<1>();
        wg::FenceRegs(sc);
        s_done(last + 1, r.n_tiles == 1, qb);
        m0 = -INFINITY, m1 = -INFINITY, l0 = 0.f, l1 = 0.f;
        softmax(r, 0, &alpha0, &alpha1);
      } else {
        begin_turn();
        issue_pv(last);
        end_turn();
      }
      ptx::WgmmaWait<0>();
      wg::FenceRegs(acc);
      wg::FenceRegs(pf);
      if (lane == 0) ptx::MbarArrive(v_empty(last % kStages));
      store(cur, done, fm0, fm1, fl0, fl1);
      if (!more) break;
#pragma unroll
      for (int i = 0; i < D / 2; ++i) acc[i] = 0.f;
      to_p();
      cur = next;
      kv = last + 1;
      ++n;
    }
  }
  if constexpr (kPersistent && kPingPong)
    if (consumer == 0) begin_turn();  // matches consumer 1's last arrival
#endif  // KB_GEMM_SM90A
}

// ---- host: tensor maps ----------------------------------------------------------------------------
// A 3D tensor of 2-byte elements, d contiguous, then dims n1 and n2 (strides in elements), boxes of
// 64 d x box1 x box2 with 128B swizzle. The fixed layout: [heads][rows][d], box 64 x box_rows x 1;
// the packed one: [total][H][d], box 64 x 1 x box_rows. Either box lands in shared memory as
// box_rows rows of 64 halves, so the kernel's tiles do not depend on which.
int EncodeMap(CUtensorMap* map, const void* data, Dtype dtype, uint64_t d, uint64_t n1, uint64_t stride1, uint64_t n2,
              uint64_t stride2, uint32_t box1, uint32_t box2) {
  const cuda::EncodeTiledFn encode = cuda::EncodeTiled();
  if (encode == nullptr) return static_cast<int>(cudaErrorNotSupported);
  const cuuint64_t dims[3] = {d, n1, n2};
  const cuuint64_t strides[2] = {stride1 * 2, stride2 * 2};
  const cuuint32_t box[3] = {static_cast<cuuint32_t>(kChunkCols), box1, box2};
  const cuuint32_t element_strides[3] = {1, 1, 1};
  const CUresult r = encode(map, dtype == Dtype::kF16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 3,
                            const_cast<void*>(data), dims, strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                            CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return r == CUDA_SUCCESS ? 0 : static_cast<int>(cudaErrorInvalidValue);
}

// total_q / total_kv: 0 for the fixed layout; the packed rows otherwise (lay.cu_q set).
template <typename T, int D, bool kPingPong, bool kPersistent>
int LaunchWgmma(const AttnArgs& a, const SeqLayout& lay, int64_t total_q, int64_t total_kv, cudaStream_t st) {
  const AttentionShape& s = a.s;
  CUtensorMap mq, mk, mv;
  dim3 grid;
  TileCounter sched;
  if (lay.cu_q == nullptr) {
    const uint64_t bh = s.b * s.h, bh_kv = s.b * s.h_kv;
    if (const int e = EncodeMap(&mq, a.q, a.dtype, D, s.n_q, D, bh, s.n_q * D, kBlockM, 1); e != 0) return e;
    if (const int e = EncodeMap(&mk, a.k, a.dtype, D, s.n_kv, D, bh_kv, s.n_kv * D, kBlockN, 1); e != 0) return e;
    if (const int e = EncodeMap(&mv, a.v, a.dtype, D, s.n_kv, D, bh_kv, s.n_kv * D, kBlockN, 1); e != 0) return e;
    grid = dim3(static_cast<unsigned>(cuda::CeilDiv(s.n_q, kBlockM)), static_cast<unsigned>(s.b * s.h));
    if constexpr (kPersistent) {
      // One block an SM (Layout's shared memory holds one), walking the tiles in launch order.
      int sms = 0;
      KB_CUDA_TRY(cuda::SmCount(&sms));
      sched.tiles = static_cast<int>(grid.x), sched.pairs = static_cast<int>(grid.y);
      const int64_t total = static_cast<int64_t>(grid.x) * grid.y;
      void* ws = nullptr;
      KB_CUDA_TRY(cuda::GetWorkspace(cuda::WorkspaceSlot::kAttentionTileCounter, 2 * sizeof(unsigned), st, &ws));
      sched.next_and_done = static_cast<unsigned*>(ws);
      grid = dim3(static_cast<unsigned>(std::min<int64_t>(total, sms)));
    }
  } else {
    if (const int e = EncodeMap(&mq, a.q, a.dtype, D, s.h, D, total_q, s.h * D, 1, kBlockM); e != 0) return e;
    if (const int e = EncodeMap(&mk, a.k, a.dtype, D, s.h_kv, D, total_kv, s.h_kv * D, 1, kBlockN); e != 0) return e;
    if (const int e = EncodeMap(&mv, a.v, a.dtype, D, s.h_kv, D, total_kv, s.h_kv * D, 1, kBlockN); e != 0) return e;
    grid = dim3(static_cast<unsigned>(s.h), static_cast<unsigned>(PackedTiles(total_q, s.b, kBlockM)));
  }
  constexpr int kSmem = LayoutOf<D, kPersistent>::kSmem;
  const auto kernel = FlashWgmma<T, D, kPingPong, kPersistent>;
  KB_CUDA_TRY(cuda::AllowDynamicSmem(reinterpret_cast<const void*>(kernel), kSmem));
  kernel<<<grid, kThreads, kSmem, st>>>(mq, mk, mv, static_cast<const T*>(a.q), static_cast<const T*>(a.k),
                                        static_cast<T*>(a.o), a.lse, s, lay,
                                        static_cast<float>(s.scale * 1.4426950408889634), sched);
  KB_LAUNCH_CHECK();
  return 0;
}

template <bool kPingPong>
int RunWgmma(const Problem& p, std::span<const Tensor> t, void* stream) {
  const AttnArgs a = ArgsOf(p, t);
  const cudaStream_t st = cuda::AsStream(stream);
  // TMA needs 16-byte aligned bases; cudaMalloc'd tensors are. An offset view goes to the SIMT rung.
  for (const void* ptr : {a.q, a.k, a.v, static_cast<const void*>(a.o)})
    if (!cuda::Aligned16(ptr)) return RunAttentionFlashSimt(p, t, stream);
  return DispatchHalf(a.dtype, [&](auto tag) {
    using T = decltype(tag);
    if (a.s.d == 64) return LaunchWgmma<T, 64, kPingPong, true>(a, FixedLayout(a.s), 0, 0, st);
    if (a.s.d == 128) return LaunchWgmma<T, 128, kPingPong, true>(a, FixedLayout(a.s), 0, 0, st);
    return static_cast<int>(cudaErrorInvalidValue);  // skip_reason refuses it
  });
}

std::string SkipWgmma(const Problem& p) {
  const AttentionShape s = ShapeOf(p);
  if (std::string why = HeadDimSkip(s, {64, 128}); !why.empty()) return why;
  if (std::string why = SizeSkip(s); !why.empty()) return why;
  if (s.n_q > INT_MAX || s.n_kv > INT_MAX) return "TMA coordinates are 32-bit: N must be < 2^31";
  std::string why;
  const int cc = gemm::CurrentComputeCapability(&why);
  if (cc == 0) return why;
  if (cc != 90)
    return "needs an sm_90 (Hopper) device: wgmma, TMA and setmaxnreg are built only as sm_90a machine code, which runs "
           "on compute capability 9.0 alone; this device is " +
           std::to_string(cc / 10) + "." + std::to_string(cc % 10);
  return "";
}

template <bool kPingPong>
std::vector<LaunchInfo> LaunchesWgmma(const Problem& p) {
  const bool f16 = p.dtype == Dtype::kF16, d64 = p.dim("d") == 64;
  const void* f = f16 ? (d64 ? (const void*)&FlashWgmma<__half, 64, kPingPong, true>
                             : (const void*)&FlashWgmma<__half, 128, kPingPong, true>)
                      : (d64 ? (const void*)&FlashWgmma<__nv_bfloat16, 64, kPingPong, true>
                             : (const void*)&FlashWgmma<__nv_bfloat16, 128, kPingPong, true>);
  return {{std::string("FlashWgmma<d=") + (d64 ? "64>" : "128>"), f, kThreads, d64 ? LayoutOf<64, true>::kSmem : LayoutOf<128, true>::kSmem}};
}

}  // namespace

int LaunchFlashWgmmaPacked(const AttnArgs& a, const SeqLayout& lay, int64_t total_q, int64_t total_kv, cudaStream_t st) {
  if (PackedTiles(total_q, a.s.b, kBlockM) <= 0) return 0;
  return DispatchHalf(a.dtype, [&](auto tag) {
    using T = decltype(tag);
    if (a.s.d == 64) return LaunchWgmma<T, 64, true, false>(a, lay, total_q, total_kv, st);
    if (a.s.d == 128) return LaunchWgmma<T, 128, true, false>(a, lay, total_q, total_kv, st);
    return static_cast<int>(cudaErrorInvalidValue);
  });
}

std::vector<LaunchInfo> FlashWgmmaLaunches(const Problem& p) { return LaunchesWgmma<true>(p); }

void AddAttentionFlashWgmmaVariant(OpDef& op) {
  op.variants.push_back({
      .name = "cuda_v4_flash_wgmma",
      .description = "Hopper: TMA producer warpgroup, two ping-ponging wgmma consumer warpgroups, P in registers.",
      .backend = Backend::kCuda,
      .dtypes = {Dtype::kBF16, Dtype::kF16},
      .min_compute_capability = 90,
      .skip_reason = SkipWgmma,
      .run_cuda = RunWgmma<true>,
      .launches = LaunchesWgmma<true>,
  });
}

}  // namespace kbench::kernels::attention
