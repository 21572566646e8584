// fp8_gemm on Hopper tensor cores (sm_90a): the GEMM ladder's TMA + mbarrier + warp-specialized wgmma
// structure (kernels/gemm/gemm/gemm_wgmma.cu) with E4M3 operands. What changes for FP8:
//   - wgmma.m64nNk32.f32.e4m3.e4m3: 32 k a step, twice the k of bf16 for the same 32 bytes of a
//     128-byte swizzled row, so a 128-byte k tile is 128 k (4 wgmmas), and both operands must be
//     K-major (no transpose for 8-bit types): B is stored [N, K], A [M, K].
//   - Promotion: the tensor cores add FP8 products into their accumulator with reduced precision (about
//     14 bits kept; DeepSeek-V3's report measured ~2% error at K = 4096 without help). Each 128-deep k
//     tile is summed into fresh accumulators (scale-d = 0 on its first wgmma) and then added into fp32
//     registers on the CUDA cores, as cuBLASLt without FAST_ACCUM and DeepSeek's kernels do. That
//     needs a second set of accumulators, so a consumer holds 64x128 (2 x 64 floats) rather than the
//     bf16 rung's 64x256.
//   - Block scales (fp8_gemm_block, DeepSeek-V3's recipe): the promotion multiplies each 128-k tile's
//     partial sums by scale_a of its row and k block times scale_b of its 128x128 weight block, so
//     they cost an FMA instead of an add a k tile. The consumer's k loop is then latency-bound (it
//     waits for its wgmmas, then promotes), so its scale loads and descriptors are kept off the
//     critical path (the loop's comments say how).
//   - The epilogue multiplies by scale_a * scale_b (read once from the device scalars) before
//     rounding to bf16; it goes out through 64x64 swizzled shared-memory boxes and TMA stores as in the
//     bf16 rung.
//
// Rungs:
//   cuda_wgmma_fp8  block tile 128x128x128 (bytes of k = k), 6 stages of 32 KiB, 384 threads (a TMA
//                   producer warpgroup and 2 consumers of 64x128), persistent over tiles grouped by 16
//                   tile rows. With block scales, two partial-sum sets used in turn, four k tiles a
//                   loop iteration: each set promoted while the other's wgmmas run (H200, 4096^3:
//                   124.0 us against 131.4 with k tiles in pairs), and each iteration's A scales
//                   loaded during the iteration before (2-7% off every block-scaled shape). Each
//                   tile's outputs wait packed to bf16 and are stored once the next tile's first two
//                   k tiles are issued, under their wgmmas (3-4% off 4096^3 and 4096x14336x4096). TMA
//                   zero-fills the edges (M = 1, N = 2112, K tails); its 16-byte row strides need
//                   K % 16 == 0 and N % 8 == 0 (skip_reason says so otherwise) and offset views run
//                   cuda_v1_simt.
//   cuda_wgmma_fp8_n256  block tile 128x256x128, 4 stages of 48 KiB: each consumer (64 x 256) runs the
//                   k tile as two 128-column halves through the same 64 partial-sum registers,
//                   promoting each; half the tiles, half the A traffic per FLOP of the 128x128 rung.
//                   Per-tensor scales: two k tiles (256 k) a promotion, 8 wgmmas a wait instead of 4,
//                   so each consumer drains its wgmma queue and adds its partial sums half as often
//                   (an odd k-tile count gets one more tile past K, zero-filled by TMA): on the H200,
//                   4096^3 from 111.7 to 99.6 us (cuBLASLt 103.4 in the same run), the output's relative
//                   L2 error 0.001672 against 0.001666 (bf16 rounding dominates it; GEMM_README.md).
//                   Block scales change every 128 k, so that op still promotes every k tile.
//   cuda_wgmma_fp8_m192  fp8_gemm_block only: block tile 192x128x128, 4 stages of 40 KiB, 512 threads
//                   (a producer and 3 consumers of 64x128, setmaxnreg 32 / 160), one partial-sum set a
//                   consumer: it waits for its k tile and promotes it while the other two consumers'
//                   wgmmas keep the tensor cores busy; a tile's outputs are stored under the next
//                   tile's first k tile, as in the 128x128 rung (4-9% off every shape). On the H200
//                   the best rung at 4096 x 2112 x 7168 and 8192^3; worse where 192-row tiles
//                   quantize badly (4096^3: 704 tiles on 132 SMs) and at K = 14336 (GEMM_README.md).
// Only sm_90a machine code exists for the kernels; elsewhere their bodies are empty and skip_reason refuses.
#include <cuda.h>  // CUtensorMap and its enums (types only; the function comes from the entry point)
#include <cuda_bf16.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/occupancy.cuh"
#include "core/cuda/tensor_map.cuh"
#include "core/cuda/vec.cuh"
#include "gemm/gemm/gemm_cuda.cuh"
#include "gemm/gemm/gemm_ptx.cuh"
#include "quant/fp8_gemm/fp8_cuda.cuh"

namespace kbench::kernels::fp8 {
namespace {

namespace ptx = gemm::ptx;

constexpr int kBM = 128, kBK = 128;  // kBK in elements = bytes
constexpr int kConsumers = 2;
constexpr int kThreads = 128 * (1 + kConsumers);
constexpr int kABytes = kBM * kBK;             // 16 KiB: 128 rows of 128 bytes
constexpr int kHalfBytes = 128 * kBK;          // 16 KiB: 128 rows of B
constexpr int kCBox = 64;                      // C store box: 64 x 64 bf16
constexpr int kCBoxBytes = kCBox * kCBox * 2;  // 8 KiB; two a consumer, stored in turn
constexpr int kCBytes = kConsumers * 2 * kCBoxBytes;
static_assert(kABytes % 1024 == 0 && kHalfBytes % 1024 == 0, "tiles must start on 1024-byte boundaries");

// The block tile is 128 x (128 kHalves): kHalves = 1 is cuda_wgmma_fp8; kHalves = 2
// (cuda_wgmma_fp8_n256) gives each consumer 64 x 256, computed as two 128-column halves a k tile
// into the same 64 partial-sum registers (acc 128 + part 64 fit the 232 a consumer has; two part
// sets would not), halving the tiles and the A traffic per FLOP.
template <int kHalves>
struct Tile {
  static constexpr int kBN = 128 * kHalves;
  static constexpr int kStages = kHalves == 1 ? 6 : 4;
  static constexpr int kBBytes = kBN * kBK;
  static constexpr int kStageBytes = kABytes + kBBytes;
  static constexpr int kSmemBytes = kStages * kStageBytes + kCBytes + 2 * kStages * 8 + 1024;
  static_assert(kSmemBytes <= 227 * 1024, "stages and C boxes must fit an SM's shared memory");
  static_assert(kStageBytes % 1024 == 0, "tiles must start on 1024-byte boundaries");
};

#if KB_GEMM_SM90A
constexpr int kProducerRegs = 40, kConsumerRegs = 232;
constexpr int kGroupM = 16;

__device__ __forceinline__ void TileOf(int id, int tiles_m, int tiles_n, int* tm, int* tn) {
  const int per_group = kGroupM * tiles_n;
  const int first_m = (id / per_group) * kGroupM;
  const int group_m = min(tiles_m - first_m, kGroupM);
  const int in_group = id % per_group;
  *tm = first_m + in_group % group_m;
  *tn = in_group / group_m;
}

// d[64] (+)= A(64x32 E4M3, K-major, desc_a) * B(32x128 E4M3, K-major, desc_b); accumulate = 0 starts
// from zero (the first k step of a promotion block). Accumulator layout as the bf16 rung's: warp w of
// the warpgroup owns rows 16w..16w+15; d[4j], d[4j+1] are row 16w + lane/4, columns 8j + 2(lane%4) and
// +1; d[4j+2], d[4j+3] the same columns 8 rows lower. FP8 wgmma has no transpose immediates: both
// operands must be K-major.
__device__ __forceinline__ void WgmmaM64N128K32E4m3(float (&d)[64], uint64_t desc_a, uint64_t desc_b, int accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 "
      "{"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, "
      "%24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, "
      "%46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
      "}, "
      "%64, %65, p, 1, 1;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),
        "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),
        "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
        "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]),
        "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]),
        "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]),
        "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "l"(desc_a), "l"(desc_b), "r"(accumulate));
}

// Pins the accumulators at this point (see gemm_wgmma.cu's FenceAccumulators).
__device__ __forceinline__ void Pin(float (&d)[64]) {
#pragma unroll
  for (int i = 0; i < 64; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// A consumer's k tile of 128 x 128 bytes: waits for the stage and issues its four m64n128k32 wgmmas
// into p as one committed group (the caller waits for it and frees the stage).
template <int kStageBytes>
__device__ __forceinline__ void IssueKTile(float (&p)[64], uint32_t full_bar, int stage, uint32_t phase,
                                           uint64_t desc_a0, uint64_t desc_b0) {
  ptx::MbarWait(full_bar + 8 * stage, phase);
  __syncwarp();
  const uint64_t doff = static_cast<uint32_t>(stage * kStageBytes) >> 4;
  Pin(p);
  ptx::WgmmaFence();
#pragma unroll
  for (int kk = 0; kk < kBK / 32; ++kk) WgmmaM64N128K32E4m3(p, desc_a0 + doff + 2 * kk, desc_b0 + doff + 2 * kk, kk);
  ptx::WgmmaCommit();
}

// The producer thread of both kernels: each of the block's tiles (kBM x kBN, persistent stride
// gridDim.x), k tile by k tile, into the stage ring (A then B a stage) once the consumers free it.
template <int kStages, int kStageBytes, int kABytesOfStage, int kTileM, int kTileN>
__device__ __forceinline__ void ProduceTiles(const CUtensorMap* tma_a, const CUtensorMap* tma_b, uint32_t base,
                                             uint32_t full_bar, uint32_t empty_bar, int tiles, int tiles_m,
                                             int tiles_n, int k_tiles) {
  int stage = 0;
  uint32_t phase = 0;
  for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    int tm, tn;
    TileOf(tile, tiles_m, tiles_n, &tm, &tn);
    for (int kt = 0; kt < k_tiles; ++kt) {
      ptx::MbarWait(empty_bar + 8 * stage, phase ^ 1);
      const uint32_t full = full_bar + 8 * stage;
      ptx::MbarArriveExpectTx(full, kStageBytes);
      const uint32_t sa = base + stage * kStageBytes;
      ptx::TmaLoad2d(sa, tma_a, kt * kBK, tm * kTileM, full);
      ptx::TmaLoad2d(sa + kABytesOfStage, tma_b, kt * kBK, tn * kTileN, full);
      if (++stage == kStages) stage = 0, phase ^= 1;
    }
  }
}

// A consumer's 64 x (64 kBoxes) outputs as bf16 through its two 64x64 swizzled C boxes (one stored
// by TMA while the next fills) to rows row0.. and columns col0.. of C. pair(j, h) is the packed bf16
// pair of this thread at row r0 (h = 0) or r0 + 8 (h = 1), columns 8j + 2(lane%4) and +1.
template <int kBoxes, typename Pair>
__device__ __forceinline__ void StoreCBoxes(const Pair& pair, uint32_t boxes, const CUtensorMap* tma_c, int col0,
                                            int row0, int consumer, int t, int lane, int r0) {
#pragma unroll
  for (int q = 0; q < kBoxes; ++q) {
    const uint32_t box = boxes + (q % 2) * kCBoxBytes;
    if (t == 0) ptx::BulkWaitRead<1>();
    ptx::NamedBarrier(1 + consumer, 128);
#pragma unroll
    for (int u = 0; u < kCBox / 8; ++u) {
      const int j = q * (kCBox / 8) + u;
      const uint32_t at = ((u ^ (lane / 4)) * 16) + 4 * (lane % 4);
      ptx::StsB32(box + r0 * 128 + at, pair(j, 0));
      ptx::StsB32(box + (r0 + 8) * 128 + at, pair(j, 1));
    }
    ptx::FenceProxyAsyncShared();
    ptx::NamedBarrier(1 + consumer, 128);
    if (t == 0) {
      ptx::TmaStore2d(tma_c, col0 + q * kCBox, row0, box);
      ptx::BulkCommit();
    }
  }
}

// The accumulators (d layout of WgmmaM64N128K32E4m3) times `scale`, rounded as they are stored.
template <int kBoxes, int kAcc>
__device__ __forceinline__ void StoreAccumulators(const float (&acc)[kAcc], float scale, uint32_t boxes,
                                                  const CUtensorMap* tma_c, int col0, int row0, int consumer, int t,
                                                  int lane, int r0) {
  const auto pair = [&](int j, int h) {
    return cuda::PackBf16x2(scale * acc[4 * j + 2 * h], scale * acc[4 * j + 2 * h + 1]);
  };
  StoreCBoxes<kBoxes>(pair, boxes, tma_c, col0, row0, consumer, t, lane, r0);
}

// The accumulators times `scale` as pair(j, h) above, packed[2j + h], to be stored later.
template <int kAcc>
__device__ __forceinline__ void PackAccumulators(const float (&acc)[kAcc], float scale, uint32_t (&packed)[kAcc / 2]) {
#pragma unroll
  for (int j = 0; j < kAcc / 4; ++j) {
    packed[2 * j] = cuda::PackBf16x2(scale * acc[4 * j], scale * acc[4 * j + 1]);
    packed[2 * j + 1] = cuda::PackBf16x2(scale * acc[4 * j + 2], scale * acc[4 * j + 3]);
  }
}

// Outputs already packed: packed[2j + h] is pair(j, h) above.
template <int kBoxes>
__device__ __forceinline__ void StorePacked(const uint32_t (&packed)[kBoxes * 16], uint32_t boxes,
                                            const CUtensorMap* tma_c, int col0, int row0, int consumer, int t,
                                            int lane, int r0) {
  const auto pair = [&](int j, int h) { return packed[2 * j + h]; };
  StoreCBoxes<kBoxes>(pair, boxes, tma_c, col0, row0, consumer, t, lane, r0);
}
#endif  // KB_GEMM_SM90A

// Shared memory (base rounded up to 1024): stage s holds A at s*32K and B at s*32K + 16K; consumer c's
// two C boxes follow the stages; then kStages "full" and kStages "empty" mbarriers.
// kPair: per-tensor scales promoted every 256 k (128x256 tile); kBlockScaled: fp8_gemm_block's loops.
template <int kHalves, bool kPair, bool kBlockScaled>
__global__ void __launch_bounds__(kThreads, 1)
    Fp8GemmWgmma(const __grid_constant__ CUtensorMap tma_a, const __grid_constant__ CUtensorMap tma_b,
                 const __grid_constant__ CUtensorMap tma_c, const float* __restrict__ scale_a,
                 const float* __restrict__ scale_b, int m, int n, int k, int k_blocks) {
#if KB_GEMM_SM90A
  using T = Tile<kHalves>;
  constexpr int kBN = T::kBN, kStages = T::kStages, kStageBytes = T::kStageBytes;
  static_assert(!kPair || kStages >= 3, "a pair holds two stages; the producer needs another to run ahead");
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  const uint32_t base = (ptx::SmemAddr(smem_raw) + 1023u) & ~1023u;
  const uint32_t c_boxes = base + kStages * kStageBytes;
  const uint32_t full_bar = c_boxes + kCBytes;
  const uint32_t empty_bar = full_bar + 8 * kStages;
  const int tiles_m = (m + kBM - 1) / kBM, tiles_n = (n + kBN - 1) / kBN;
  const int tiles = tiles_m * tiles_n;
  int k_tiles = (k + kBK - 1) / kBK;
  // One more k tile wholly past K (zero-filled by TMA) where k tiles go in pairs: per-tensor scales
  // promoted every 256 k, and the block-scaled 128x128 tile's two partial-sum sets.
  if constexpr (kPair || (kBlockScaled && kHalves == 1)) k_tiles += k_tiles % 2;
  // Warp-uniform as far as ptxas can tell (a shuffle from lane 0), so what derives from it (the
  // consumer's shared-memory offsets, its wgmma descriptors) stays in uniform registers.
  const int wg = __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x / 128), 0);

  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      ptx::MbarInit(full_bar + 8 * s, 1);
      ptx::MbarInit(empty_bar + 8 * s, kConsumers * 4);  // one arrival per consumer warp
    }
    ptx::FenceBarrierInit();
  }
  __syncthreads();

  if (wg == 0) {
    ptx::SetMaxNRegDec<kProducerRegs>();
    if (threadIdx.x == 0)
      ProduceTiles<kStages, kStageBytes, kABytes, kBM, kBN>(&tma_a, &tma_b, base, full_bar, empty_bar, tiles, tiles_m,
                                                            tiles_n, k_tiles);
  } else {
    ptx::SetMaxNRegInc<kConsumerRegs>();
    const int consumer = wg - 1;
    const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32;
    // Per-tensor: one factor in the epilogue. Block scales (k_blocks > 0): each k tile's partial sums
    // are promoted with scale_a of their row and 128-k block times scale_b of the tile's 128x128
    // block (the block tile is exactly one 128-column block of B), and the epilogue multiplies by 1.
    const float scale = kBlockScaled ? 1.0f : *scale_a * *scale_b;
    const int r0 = warp * 16 + lane / 4;  // and r0 + 8: this thread's accumulator rows in its 64
    const int n_blocks = (n + 127) / 128;
    float acc[64 * kHalves], part[64];
    int stage = 0;
    uint32_t phase = 0;
    // The block-scaled loops are latency-bound (a consumer waits for its wgmmas, then promotes), so
    // every instruction in them counts: wgmma descriptors are one base a consumer plus a stage
    // offset (shared addresses < 256 KB: the 14-bit start field never carries into the next).
    const uint64_t desc_a0 = ptx::DescKMajorSw128(base + consumer * (64 * 128));
    const uint64_t desc_b0 = ptx::DescKMajorSw128(base + kABytes);
    // The block-scaled 128x128 loop stores a tile's outputs under the next tile's first k tiles
    // (kDefer): packed to bf16 pairs at the tile's end (half acc's registers, so that acc and two
    // partial-sum sets fit beside them), then flush(), once the next tile's first two k tiles are
    // issued, stores them and zeroes acc. With no tile after it the tensor cores idled through each
    // store; on the H200 this took 3-4% off 4096^3 and 4096x14336x4096 (GEMM_README.md).
    constexpr bool kDefer = kBlockScaled && kHalves == 1;
    int prev_tm = -1, prev_tn = 0;
    uint32_t packed[32 * kHalves];
    const auto flush = [&]() {
      if (prev_tm >= 0)
        StorePacked<kBN / kCBox>(packed, c_boxes + consumer * 2 * kCBoxBytes, &tma_c, prev_tn * kBN,
                                 prev_tm * kBM + consumer * 64, consumer, t, lane, r0);
#pragma unroll
      for (int i = 0; i < 64 * kHalves; ++i) acc[i] = 0.0f;
    };
    for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
      int tm, tn;
      TileOf(tile, tiles_m, tiles_n, &tm, &tn);
      if constexpr (!kDefer) {
#pragma unroll
        for (int i = 0; i < 64 * kHalves; ++i) acc[i] = 0.0f;
      }
      if constexpr (kBlockScaled) {
        // Scales of this thread's two rows (clamped to the last row and block: those outputs are
        // never stored). A's: pointers stepped by m a k tile, loaded ahead into renamed registers
        // (a set a k tile of the loop's iteration: four for the 128x128 loop, two for the 128x256
        // one), since copying a loaded register makes the loop wait for the load where the copy
        // lands, often right after it. B's: 32 k tiles held one a
        // lane and shuffled out, since a uniform load is moved into a uniform register right where
        // it is loaded, stalling the loop on its round trip. Loads are clamped, never predicated: a
        // predicated load's default also makes the next use wait. On the H200 these took 3-4% off
        // the 128x256 rung's block-scaled time (GEMM_README.md).
        const int row = tm * kBM + consumer * 64 + r0;
        const float* pa0 = scale_a + min(row, m - 1);
        const float* pa1 = scale_a + min(row + 8, m - 1);
        const float* pb[kHalves];
        float bl[kHalves], nbl[kHalves];
#pragma unroll
        for (int h = 0; h < kHalves; ++h) {
          pb[h] = scale_b + static_cast<int64_t>(min(tn * kHalves + h, n_blocks - 1)) * k_blocks;
          bl[h] = __ldg(pb[h] + min(lane, k_blocks - 1));
          nbl[h] = __ldg(pb[h] + min(32 + lane, k_blocks - 1));
        }
        // B's scale of k tile kt for block h; after a chunk's last k tile the next chunk moves in.
        const auto b_scale = [&](int kt, int h) {
          const float b = __shfl_sync(0xffffffffu, bl[h], kt & 31);
          if ((kt & 31) == 31) {
            bl[h] = nbl[h];
            nbl[h] = __ldg(pb[h] + min(kt + 33 + lane, k_blocks - 1));
          }
          return b;
        };
        const int64_t step = m;
        const auto bump = [&](int kt) {  // A's scale pointers to k block min(kt, k_blocks - 1)
          if (kt < k_blocks) pa0 += step, pa1 += step;
        };
        if constexpr (kHalves == 1) {
          // 128 x 128: two partial-sum sets (acc 64 + 2 x 64 registers) used in turn: a set is
          // promoted under the other's wgmmas (wgmma.wait_group 1), then refilled with the next k
          // tile. Nothing is in flight across the loop's back edge: ptxas serializes every
          // wgmma of a loop that carries one in flight into the next iteration (C7514), where
          // straight-line code with the same sets compiles overlapped. k_tiles is even (above);
          // the padded tile past K sums to zero and reuses the last block's (finite) scales.
          float part2[64];
          int rstage = stage;  // the stage the next promotion releases
          const auto issue = [&](float(&p)[64]) {
            IssueKTile<kStageBytes>(p, full_bar, stage, phase, desc_a0, desc_b0);
            if (++stage == kStages) stage = 0, phase ^= 1;
          };
          const auto promote = [&](float(&p)[64], int kt, float a0, float a1) {
            Pin(p);
            if (lane == 0) ptx::MbarArrive(empty_bar + 8 * rstage);
            if (++rstage == kStages) rstage = 0;
            const float b = b_scale(kt, 0);
            const float s0 = a0 * b, s1 = a1 * b;
#pragma unroll
            for (int i = 0; i < 64; ++i) acc[i] = fmaf(i % 4 < 2 ? s0 : s1, p[i], acc[i]);
          };
          // Four k tiles an iteration, the two sets alternating: the tensor cores wait on a
          // promotion once an iteration (after the last wait_group 0), not once a pair. On the H200
          // this took 4-6% off the pairs loop; eight an iteration was slower again (GEMM_README.md).
          // An iteration's A scales are loaded during the iteration before (c, then n copied into c
          // at the back edge, by when the loads have landed): loaded in their own iteration, the
          // first promotions waited on them (Nsight Compute: 12% of the warp samples on the scale
          // product), and loading them ahead took 2-7% off every block-scaled shape.
          constexpr int kUnroll = 4;
          float c0[kUnroll], c1[kUnroll];
          c0[0] = __ldg(pa0), c1[0] = __ldg(pa1);
#pragma unroll
          for (int j = 1; j < kUnroll; ++j) {
            bump(j);
            c0[j] = __ldg(pa0), c1[j] = __ldg(pa1);
          }
          // kFirst: the tile's first iteration, which stores the tile before's outputs once its own
          // first two k tiles are issued; peeled from the loops so that `packed` is dead inside them.
          const auto quad = [&]<bool kFirst>(int kt) {
            float n0[kUnroll], n1[kUnroll];
            const auto load_next = [&]() {
#pragma unroll
              for (int j = 0; j < kUnroll; ++j) {
                bump(kt + kUnroll + j);
                n0[j] = __ldg(pa0), n1[j] = __ldg(pa1);
              }
            };
            if constexpr (!kFirst) load_next();
            issue(part);
            issue(part2);
            if constexpr (kFirst) {
              flush();
              load_next();
            }
#pragma unroll
            for (int j = 0; j < kUnroll; j += 2) {
              ptx::WgmmaWait<1>();
              promote(part, kt + j, c0[j], c1[j]);
              if (j + 2 < kUnroll) {
                issue(part);
                ptx::WgmmaWait<1>();
              } else {
                ptx::WgmmaWait<0>();
              }
              promote(part2, kt + j + 1, c0[j + 1], c1[j + 1]);
              if (j + 2 < kUnroll) issue(part2);
            }
#pragma unroll
            for (int j = 0; j < kUnroll; ++j) c0[j] = n0[j], c1[j] = n1[j];
          };
          // The last pair where k_tiles % 4 == 2: scales c[0], c[1].
          const auto pair = [&]<bool kFirst>(int kt) {
            issue(part);
            issue(part2);
            if constexpr (kFirst) flush();
            ptx::WgmmaWait<1>();
            promote(part, kt, c0[0], c1[0]);
            ptx::WgmmaWait<0>();
            promote(part2, kt + 1, c0[1], c1[1]);
          };
          int kt = 0;
          if (k_tiles >= kUnroll) {
            quad.template operator()<true>(0);
            kt = kUnroll;
          } else {
            pair.template operator()<true>(0);
            kt = 2;
          }
          for (; kt + kUnroll <= k_tiles; kt += kUnroll) quad.template operator()<false>(kt);
          for (; kt < k_tiles; kt += 2) pair.template operator()<false>(kt);
        } else {
          // 128 x 256: one partial-sum set (acc 128 + 64 registers), so each half of a k tile is
          // waited for and promoted before the next is issued.
          const auto k_tile = [&](int kt, float a0, float a1) {
            float b[kHalves];
#pragma unroll
            for (int h = 0; h < kHalves; ++h) b[h] = b_scale(kt, h);
            ptx::MbarWait(full_bar + 8 * stage, phase);
            __syncwarp();
            const uint64_t doff = static_cast<uint32_t>(stage * kStageBytes) >> 4;
#pragma unroll
            for (int h = 0; h < kHalves; ++h) {
              Pin(part);
              ptx::WgmmaFence();
#pragma unroll
              for (int kk = 0; kk < kBK / 32; ++kk)
                WgmmaM64N128K32E4m3(part, desc_a0 + doff + 2 * kk, desc_b0 + doff + h * (kHalfBytes >> 4) + 2 * kk,
                                    kk);
              ptx::WgmmaCommit();
              ptx::WgmmaWait<0>();
              Pin(part);
              if (h == kHalves - 1 && lane == 0) ptx::MbarArrive(empty_bar + 8 * stage);
              const float s0 = a0 * b[h], s1 = a1 * b[h];
              float* dst = acc + 64 * h;
#pragma unroll
              for (int i = 0; i < 64; ++i) dst[i] = fmaf(i % 4 < 2 ? s0 : s1, part[i], dst[i]);
            }
            if (++stage == kStages) stage = 0, phase ^= 1;
          };
          float x0 = __ldg(pa0), x1 = __ldg(pa1);
          for (int kt = 0; kt < k_tiles; kt += 2) {
            bump(kt + 1);
            const float y0 = __ldg(pa0), y1 = __ldg(pa1);
            k_tile(kt, x0, x1);
            if (kt + 1 >= k_tiles) break;
            bump(kt + 2);
            x0 = __ldg(pa0), x1 = __ldg(pa1);
            k_tile(kt + 1, y0, y1);
          }
        }
      } else if constexpr (kPair) {
        // Per-tensor: two k tiles (256 k) summed by the tensor cores before each promotion, so a
        // consumer issues 8 wgmmas a wait instead of 4 and promotes half as often (k_tiles is even).
        for (int kt = 0; kt < k_tiles; kt += 2) {
          const int stage2 = stage + 1 == kStages ? 0 : stage + 1;
          const uint32_t phase2 = stage + 1 == kStages ? phase ^ 1 : phase;
          ptx::MbarWait(full_bar + 8 * stage, phase);
          ptx::MbarWait(full_bar + 8 * stage2, phase2);
          __syncwarp();
          const uint32_t sa = base + stage * kStageBytes + consumer * (64 * 128);
          const uint32_t sa2 = base + stage2 * kStageBytes + consumer * (64 * 128);
#pragma unroll
          for (int h = 0; h < kHalves; ++h) {
            const uint32_t sb = base + stage * kStageBytes + kABytes + h * kHalfBytes;
            const uint32_t sb2 = base + stage2 * kStageBytes + kABytes + h * kHalfBytes;
            Pin(part);
            ptx::WgmmaFence();
#pragma unroll
            for (int kk = 0; kk < kBK / 32; ++kk)
              WgmmaM64N128K32E4m3(part, ptx::DescKMajorSw128(sa + kk * 32), ptx::DescKMajorSw128(sb + kk * 32), kk);
#pragma unroll
            for (int kk = 0; kk < kBK / 32; ++kk)
              WgmmaM64N128K32E4m3(part, ptx::DescKMajorSw128(sa2 + kk * 32), ptx::DescKMajorSw128(sb2 + kk * 32), 1);
            ptx::WgmmaCommit();
            ptx::WgmmaWait<0>();
            Pin(part);
            if (h == kHalves - 1 && lane == 0) {
              ptx::MbarArrive(empty_bar + 8 * stage);
              ptx::MbarArrive(empty_bar + 8 * stage2);
            }
            float* dst = acc + 64 * h;
#pragma unroll
            for (int i = 0; i < 64; ++i) dst[i] += part[i];
          }
          stage = stage2 + 1 == kStages ? 0 : stage2 + 1;
          phase = stage2 + 1 == kStages ? phase2 ^ 1 : phase2;
        }
      } else {
        // Per-tensor, 128 x 128: one k tile a promotion.
        for (int kt = 0; kt < k_tiles; ++kt) {
          ptx::MbarWait(full_bar + 8 * stage, phase);
          __syncwarp();
          const uint32_t sa = base + stage * kStageBytes + consumer * (64 * 128);
#pragma unroll
          for (int h = 0; h < kHalves; ++h) {
            const uint32_t sb = base + stage * kStageBytes + kABytes + h * kHalfBytes;
            Pin(part);
            ptx::WgmmaFence();
#pragma unroll
            for (int kk = 0; kk < kBK / 32; ++kk)  // 32 k = 32 bytes along both operands' swizzled rows
              WgmmaM64N128K32E4m3(part, ptx::DescKMajorSw128(sa + kk * 32), ptx::DescKMajorSw128(sb + kk * 32), kk);
            ptx::WgmmaCommit();
            ptx::WgmmaWait<0>();
            Pin(part);
            if (h == kHalves - 1 && lane == 0) ptx::MbarArrive(empty_bar + 8 * stage);
            // Promotion: this k tile's partial sums join the fp32 accumulators on the CUDA cores.
            float* dst = acc + 64 * h;
#pragma unroll
            for (int i = 0; i < 64; ++i) dst[i] += part[i];
          }
          if (++stage == kStages) stage = 0, phase ^= 1;
        }
      }
      if constexpr (kDefer) {
        PackAccumulators(acc, scale, packed);
        prev_tm = tm, prev_tn = tn;
      } else {
        StoreAccumulators<kBN / kCBox>(acc, scale, c_boxes + consumer * 2 * kCBoxBytes, &tma_c, tn * kBN,
                                       tm * kBM + consumer * 64, consumer, t, lane, r0);
      }
    }
    if constexpr (kDefer) flush();
    if (t == 0) ptx::BulkWaitAll();
  }
#endif  // KB_GEMM_SM90A
}

// ---- cuda_wgmma_fp8_m192 (block scales): 192x128 tiles, three consumer warpgroups of 64 x 128 with
// one partial-sum set each (acc 64 + part 64), so a consumer's promotion runs under the other two's
// wgmmas instead of under its own second set; setmaxnreg 32 for the producer and 160 for each
// consumer fill the SM's 65536 registers. 4 stages of 40 KiB (A 24 KiB, B 16 KiB).
namespace m192 {
constexpr int kBM = 192, kConsumers = 3, kThreads = 128 * (1 + kConsumers), kStages = 4;
constexpr int kABytes = kBM * kBK, kBBytes = 128 * kBK, kStageBytes = kABytes + kBBytes;
constexpr int kCBytes = kConsumers * 2 * kCBoxBytes;
constexpr int kSmemBytes = kStages * kStageBytes + kCBytes + 2 * kStages * 8 + 1024;
static_assert(kSmemBytes <= 227 * 1024 && kStageBytes % 1024 == 0 && kABytes % 1024 == 0);
}  // namespace m192

__global__ void __launch_bounds__(m192::kThreads, 1)
    Fp8GemmWgmmaM192(const __grid_constant__ CUtensorMap tma_a, const __grid_constant__ CUtensorMap tma_b,
                   const __grid_constant__ CUtensorMap tma_c, const float* __restrict__ scale_a,
                   const float* __restrict__ scale_b, int m, int n, int k, int k_blocks) {
#if KB_GEMM_SM90A
  constexpr int kStages = m192::kStages, kStageBytes = m192::kStageBytes, kABytes = m192::kABytes;
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  const uint32_t base = (ptx::SmemAddr(smem_raw) + 1023u) & ~1023u;
  const uint32_t c_boxes = base + kStages * kStageBytes;
  const uint32_t full_bar = c_boxes + m192::kCBytes;
  const uint32_t empty_bar = full_bar + 8 * kStages;
  const int tiles_m = (m + m192::kBM - 1) / m192::kBM, tiles_n = (n + 127) / 128;
  const int tiles = tiles_m * tiles_n;
  const int k_tiles = (k + kBK - 1) / kBK;
  const int wg = __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x / 128), 0);
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      ptx::MbarInit(full_bar + 8 * s, 1);
      ptx::MbarInit(empty_bar + 8 * s, m192::kConsumers * 4);
    }
    ptx::FenceBarrierInit();
  }
  __syncthreads();
  if (wg == 0) {
    ptx::SetMaxNRegDec<32>();
    if (threadIdx.x == 0)
      ProduceTiles<kStages, kStageBytes, kABytes, m192::kBM, 128>(&tma_a, &tma_b, base, full_bar, empty_bar, tiles,
                                                                  tiles_m, tiles_n, k_tiles);
  } else {
    ptx::SetMaxNRegInc<160>();
    const int consumer = wg - 1;
    const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32;
    const int r0 = warp * 16 + lane / 4;
    const int n_blocks = (n + 127) / 128;
    float acc[64], part[64];
    int stage = 0;
    uint32_t phase = 0;
    const uint64_t desc_a0 = ptx::DescKMajorSw128(base + consumer * (64 * 128));
    const uint64_t desc_b0 = ptx::DescKMajorSw128(base + kABytes);
    // The tile before's outputs, stored under the next tile's first k tile (below), and acc zeroed.
    int prev_tm = -1, prev_tn = 0;
    uint32_t packed[32];
    const auto flush = [&]() {
      if (prev_tm >= 0)
        StorePacked<128 / kCBox>(packed, c_boxes + consumer * 2 * kCBoxBytes, &tma_c, prev_tn * 128,
                                 prev_tm * m192::kBM + consumer * 64, consumer, t, lane, r0);
#pragma unroll
      for (int i = 0; i < 64; ++i) acc[i] = 0.0f;
    };
    for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
      int tm, tn;
      TileOf(tile, tiles_m, tiles_n, &tm, &tn);
      const int row = tm * m192::kBM + consumer * 64 + r0;
      const float* pa0 = scale_a + min(row, m - 1);
      const float* pa1 = scale_a + min(row + 8, m - 1);
      const float* pb = scale_b + static_cast<int64_t>(min(tn, n_blocks - 1)) * k_blocks;
      float bl = __ldg(pb + min(lane, k_blocks - 1)), nbl = __ldg(pb + min(32 + lane, k_blocks - 1));
      const int64_t step = m;
      const auto bump = [&](int kt) {
        if (kt < k_blocks) pa0 += step, pa1 += step;
      };
      // The k tile issued last: waited for, its stage released, promoted with scales a0 * b, a1 * b.
      const auto promote = [&](float a0, float a1, float b) {
        ptx::WgmmaWait<0>();
        Pin(part);
        if (lane == 0) ptx::MbarArrive(empty_bar + 8 * stage);
        if (++stage == kStages) stage = 0, phase ^= 1;
        const float s0 = a0 * b, s1 = a1 * b;
#pragma unroll
        for (int i = 0; i < 64; ++i) acc[i] = fmaf(i % 4 < 2 ? s0 : s1, part[i], acc[i]);
      };
      const auto k_tile = [&](int kt, float a0, float a1) {
        const float b = __shfl_sync(0xffffffffu, bl, kt & 31);
        if ((kt & 31) == 31) {
          bl = nbl;
          nbl = __ldg(pb + min(kt + 33 + lane, k_blocks - 1));
        }
        IssueKTile<kStageBytes>(part, full_bar, stage, phase, desc_a0, desc_b0);
        promote(a0, a1, b);
      };
      float x0 = __ldg(pa0), x1 = __ldg(pa1);
      // The first k tile issued, then the tile before's outputs stored under it (packed at the end
      // of the tile before, as in the 128x128 loop), then its promotion: k_tile's steps, split
      // around the store. With the store after the last promotion instead, the tensor cores idled
      // through it; on the H200 this took 4-9% off every block-scaled shape (GEMM_README.md).
      {
        bump(1);
        const float y0 = __ldg(pa0), y1 = __ldg(pa1);
        const float b = __shfl_sync(0xffffffffu, bl, 0);
        IssueKTile<kStageBytes>(part, full_bar, stage, phase, desc_a0, desc_b0);
        flush();
        promote(x0, x1, b);
        x0 = y0, x1 = y1;
      }
      for (int kt = 1; kt < k_tiles; kt += 2) {
        bump(kt + 1);
        const float y0 = __ldg(pa0), y1 = __ldg(pa1);
        k_tile(kt, x0, x1);
        if (kt + 1 >= k_tiles) break;
        bump(kt + 2);
        x0 = __ldg(pa0), x1 = __ldg(pa1);
        k_tile(kt + 1, y0, y1);
      }
      PackAccumulators(acc, 1.0f, packed);  // block scales were applied in the promotion
      prev_tm = tm, prev_tn = tn;
    }
    flush();
    if (t == 0) ptx::BulkWaitAll();
  }
#endif  // KB_GEMM_SM90A
}

// ---- host ----------------------------------------------------------------------------------------
// A row-major rows x cols tensor of `elem` bytes an element, boxes of box_cols x box_rows, 128B swizzle.
int EncodeMap(CUtensorMap* map, CUtensorMapDataType type, int elem, const void* data, uint64_t rows, uint64_t cols,
              uint32_t box_rows, uint32_t box_cols) {
  return cuda::EncodeRowMajor2d(map, type, elem, data, rows, cols, box_rows, box_cols, CU_TENSOR_MAP_SWIZZLE_128B);
}

template <int kHalves>
int RunWgmma(const Problem& p, std::span<const Tensor> t, void* stream) {
  using T = Tile<kHalves>;
  constexpr int kBN = T::kBN, kSmemBytes = T::kSmemBytes;
  const Fp8Args g = ArgsOf(p, t);
  const cudaStream_t s = cuda::AsStream(stream);
  int rc = 0;
  if (HandleDegenerate(g, s, &rc)) return rc;
  if (!cuda::Aligned16(g.a) || !cuda::Aligned16(g.b) || !cuda::Aligned16(g.c)) return LaunchFp8Simt(g, s);
  CUtensorMap map_a, map_b, map_c;
  if (const int e = EncodeMap(&map_a, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, g.a, g.m, g.k, kBM, kBK); e != 0) return e;
  if (const int e = EncodeMap(&map_b, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, g.b, g.n, g.k, kBN, kBK); e != 0) return e;
  if (const int e = EncodeMap(&map_c, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, g.c, g.m, g.n, kCBox, kCBox); e != 0)
    return e;
  int sms = 0;
  KB_CUDA_TRY(cuda::SmCount(&sms));
  const int64_t tiles = cuda::CeilDiv(g.m, kBM) * cuda::CeilDiv(g.n, kBN);
  const unsigned grid = static_cast<unsigned>(std::min<int64_t>(tiles, sms));
  // Per-tensor scales on the 128x256 tile: promoted every 256 k (block scales change every 128).
  auto kernel = g.k_blocks > 0 ? &Fp8GemmWgmma<kHalves, false, true> : &Fp8GemmWgmma<kHalves, kHalves == 2, false>;
  KB_CUDA_TRY(cuda::AllowDynamicSmem(reinterpret_cast<const void*>(kernel), kSmemBytes));
  kernel<<<grid, kThreads, kSmemBytes, s>>>(map_a, map_b, map_c, g.scale_a, g.scale_b, static_cast<int>(g.m),
                                            static_cast<int>(g.n), static_cast<int>(g.k),
                                            static_cast<int>(g.k_blocks));
  KB_LAUNCH_CHECK();
  return 0;
}

std::string SkipWgmma(const Problem& p) {
  if (std::string why = gemm::Int32DimsSkip(p); !why.empty()) return why;
  if (p.dim("K") % 16 != 0 || p.dim("N") % 8 != 0)
    return "TMA needs row strides that are multiples of 16 bytes: K % 16 == 0 (E4M3) and N % 8 == 0 (bf16 C) (K = " +
           std::to_string(p.dim("K")) + ", N = " + std::to_string(p.dim("N")) + "); cuda_v1_simt handles these shapes";
  std::string why;
  const int cc = gemm::CurrentComputeCapability(&why);
  if (cc == 0) return why;
  if (cc != 90)
    return "needs an sm_90 (Hopper) device: FP8 wgmma, TMA and setmaxnreg are built only as sm_90a machine code; "
           "this device is " +
           std::to_string(cc / 10) + "." + std::to_string(cc % 10);
  return "";
}

int RunWgmmaM192(const Problem& p, std::span<const Tensor> t, void* stream) {
  const Fp8Args g = ArgsOf(p, t);
  const cudaStream_t s = cuda::AsStream(stream);
  int rc = 0;
  if (HandleDegenerate(g, s, &rc)) return rc;
  if (g.k_blocks == 0) return static_cast<int>(cudaErrorInvalidValue);  // skip_reason refuses it
  if (!cuda::Aligned16(g.a) || !cuda::Aligned16(g.b) || !cuda::Aligned16(g.c)) return LaunchFp8Simt(g, s);
  CUtensorMap map_a, map_b, map_c;
  if (const int e = EncodeMap(&map_a, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, g.a, g.m, g.k, m192::kBM, kBK); e != 0) return e;
  if (const int e = EncodeMap(&map_b, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, g.b, g.n, g.k, 128, kBK); e != 0) return e;
  if (const int e = EncodeMap(&map_c, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, g.c, g.m, g.n, kCBox, kCBox); e != 0)
    return e;
  int sms = 0;
  KB_CUDA_TRY(cuda::SmCount(&sms));
  const int64_t tiles = cuda::CeilDiv(g.m, m192::kBM) * cuda::CeilDiv(g.n, 128);
  const unsigned grid = static_cast<unsigned>(std::min<int64_t>(tiles, sms));
  KB_CUDA_TRY(cuda::AllowDynamicSmem(reinterpret_cast<const void*>(&Fp8GemmWgmmaM192), m192::kSmemBytes));
  Fp8GemmWgmmaM192<<<grid, m192::kThreads, m192::kSmemBytes, s>>>(map_a, map_b, map_c, g.scale_a, g.scale_b,
                                                           static_cast<int>(g.m), static_cast<int>(g.n),
                                                           static_cast<int>(g.k), static_cast<int>(g.k_blocks));
  KB_LAUNCH_CHECK();
  return 0;
}

// fp8_gemm_block's problems have the dim K_blocks.
bool IsBlockScaled(const Problem& p) {
  return std::any_of(p.dims.begin(), p.dims.end(), [](const auto& d) { return d.first == "K_blocks"; });
}

std::string SkipWgmmaM192(const Problem& p) {
  if (!IsBlockScaled(p)) return "block scales only: per-tensor problems promote every 256 k on cuda_wgmma_fp8_n256";
  return SkipWgmma(p);
}

std::vector<LaunchInfo> LaunchesWgmmaM192(const Problem&) {
  return {{"Fp8GemmWgmmaM192<192x128x128,4 stages,3 consumers,block scales>", (const void*)&Fp8GemmWgmmaM192,
           m192::kThreads, m192::kSmemBytes}};
}

std::vector<LaunchInfo> LaunchesWgmma(const Problem& p) {
  if (IsBlockScaled(p))
    return {{"Fp8GemmWgmma<128x128x128,6 stages,block scales,4 k tiles an iteration>",
             (const void*)&Fp8GemmWgmma<1, false, true>, kThreads, Tile<1>::kSmemBytes}};
  return {{"Fp8GemmWgmma<128x128x128,6 stages,promoted>", (const void*)&Fp8GemmWgmma<1, false, false>, kThreads,
           Tile<1>::kSmemBytes}};
}

// fp8_gemm's (per-tensor) problems take the 256-k promotion.
std::vector<LaunchInfo> LaunchesWgmmaN256(const Problem& p) {
  if (IsBlockScaled(p))
    return {{"Fp8GemmWgmma<128x256x128,4 stages,block scales per 128 k>",
             (const void*)&Fp8GemmWgmma<2, false, true>, kThreads, Tile<2>::kSmemBytes}};
  return {{"Fp8GemmWgmma<128x256x128,4 stages,promoted per 256 k>", (const void*)&Fp8GemmWgmma<2, true, false>,
           kThreads, Tile<2>::kSmemBytes}};
}

}  // namespace

void AddFp8WgmmaVariant(OpDef& op) {
  op.variants.push_back({
      .name = "cuda_wgmma_fp8",
      .description = "Hopper: TMA, mbarriers, warp-specialized FP8 wgmma, partial sums promoted to fp32 per 128 k.",
      .backend = Backend::kCuda,
      .dtypes = {Dtype::kFP8E4M3},
      .min_compute_capability = 90,
      .skip_reason = SkipWgmma,
      .run_cuda = RunWgmma<1>,
      .launches = LaunchesWgmma,
  });
  op.variants.push_back({
      .name = "cuda_wgmma_fp8_n256",
      .description = "cuda_wgmma_fp8 with 128x256 block tiles: each consumer computes two 128-column halves a k tile; "
                     "per-tensor scales promoted every 256 k, block scales every 128.",
      .backend = Backend::kCuda,
      .dtypes = {Dtype::kFP8E4M3},
      .min_compute_capability = 90,
      .skip_reason = SkipWgmma,
      .run_cuda = RunWgmma<2>,
      .launches = LaunchesWgmmaN256,
  });
  if (op.name == "fp8_gemm_block")
    op.variants.push_back({
        .name = "cuda_wgmma_fp8_m192",
        .description = "cuda_wgmma_fp8 with 192x128 tiles and three consumer warpgroups, one partial-sum set each "
                       "(block scales only).",
        .backend = Backend::kCuda,
        .dtypes = {Dtype::kFP8E4M3},
        .min_compute_capability = 90,
        .skip_reason = SkipWgmmaM192,
        .run_cuda = RunWgmmaM192,
        .launches = LaunchesWgmmaM192,
    });
}

}  // namespace kbench::kernels::fp8
