// gemm on tensor cores, bf16 in, fp32 accumulate, bf16 out: the Ampere-style half of the series'
// chapter 6. The tile structure of the SIMT rungs stays (a 128x128 block tile staged in shared memory);
// what changes is who owns the accumulator: an mma is a warp-wide instruction whose operands and
// accumulators are "fragments" spread over the 32 lanes in a layout the hardware fixes. Tensor cores
// move the ridge from ~10 to ~156 (A100) / ~295 (H100) FLOP/B, so a 128x128 tile (I = 32 against DRAM)
// is back on the memory slope: the rungs below must feed the units, not compute faster.
//
// Rungs:
//   cuda_wmma      nvcuda::wmma 16x16x16 fragments, loaded from a padded shared tile by
//                  load_matrix_sync; 8 warps with 64x32 warp tiles, one stage (load, barrier,
//                  compute, barrier). The API hides the fragment layout, and with it the cost of
//                  loading fragments and the chance to overlap loads with math (cuBLAS 50-70%).
//   cuda_mma_sync  mma.sync.m16n8k16 with explicit fragments: ldmatrix(.trans) loads each 8x8 tile for
//                  the whole warp in one instruction, straight into the fragment layout; shared
//                  memory is XOR-swizzled so those 8 rows of 16 bytes hit 8 different bank groups
//                  (unswizzled, rows of 128 or more bytes are an 8-way conflict); a cp.async
//                  pipeline of 4 stages (3 on an A100) keeps k tiles of 64 in flight (one barrier
//                  per 128 mma a warp), and fragments are double-buffered (step ks + 1 loads while
//                  step ks's mmas issue); 128x256x64 block tile, 8 warps of 64x64. The warp tile
//                  sets the ratio of fragment loads to mmas: 64x64 takes 8 ldmatrix.x4 per 32 mma
//                  (64x32 took 6 per 16), which is what lets the tensor cores stay fed (an mma
//                  occupies them ~8 cycles, during which the warp issues ~8 other instructions).
//                  128 accumulators a thread: one block of 8 warps per SM.
//                  The epilogue stages C in shared memory and writes whole 512-byte row segments
//                  (16-byte stores) where the fragments would give 8 rows x 16 bytes per store.
// Edges: loads are predicated (zero-filled by cp.async's source size, or by scalar loads when a row
// of A or B is not 16-byte aligned: K or N not a multiple of 8, or an offset tensor), stores guarded,
// so every M, N, K runs.
#include <mma.h>

#include <string>
#include <vector>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/occupancy.cuh"
#include "core/cuda/vec.cuh"
#include "gemm/gemm/gemm_cuda.cuh"
#include "gemm/gemm/gemm_ptx.cuh"

namespace kbench::kernels::gemm {
namespace {

using bf16 = __nv_bfloat16;
using cuda::CeilDiv;

constexpr int kThreads = 256;  // 8 warps: 2 along M x 4 along N, warp tile 64 x 32
constexpr int kBM = 128, kBN = 128, kBK = 32;
constexpr int kWarpM = 64, kWarpN = 32;
constexpr int kGroupM = 8;  // block rasterization: 8 tile rows share their B tiles in L2

// Tile (tm, tn) of linear block `id`, grouped so that consecutive blocks cover kGroupM tile rows of
// one tile column: the blocks resident at once read a few columns of B and rows of A, which stay in
// L2, instead of sweeping all of B for every row of tiles.
__device__ __forceinline__ void GroupedTile(int id, int tiles_m, int tiles_n, int* tm, int* tn) {
  const int per_group = kGroupM * tiles_n;
  const int first_m = (id / per_group) * kGroupM;
  const int group_m = min(tiles_m - first_m, kGroupM);
  const int in_group = id % per_group;
  *tm = first_m + in_group % group_m;
  *tn = in_group / group_m;
}

// Eight consecutive bf16 of row r of a rows x cols row-major matrix, from column c0 (a multiple of
// 8), as 16 raw bytes; zeros outside the matrix. vec: the matrix's rows start 16-byte aligned (base
// aligned and cols % 8 == 0), so an in-range chunk is one 16-byte load.
__device__ __forceinline__ uint4 LoadChunk8(const bf16* __restrict__ p, int64_t rows, int64_t cols, int64_t r, int64_t c0,
                                            bool vec) {
  uint4 out = make_uint4(0, 0, 0, 0);
  if (r >= rows || c0 >= cols) return out;
  const bf16* src = p + r * cols + c0;
  if (vec) return *reinterpret_cast<const uint4*>(src);
  const auto* raw = reinterpret_cast<const unsigned short*>(src);
  uint32_t w[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const uint32_t lo = c0 + 2 * j < cols ? raw[2 * j] : 0u;
    const uint32_t hi = c0 + 2 * j + 1 < cols ? raw[2 * j + 1] : 0u;
    w[j] = lo | (hi << 16);
  }
  return make_uint4(w[0], w[1], w[2], w[3]);
}

// Writes a pair of results (columns col, col + 1 of one row). paired: one 4-byte store (C 4-byte
// aligned, N even, so col even and col < N imply col + 1 < N).
__device__ __forceinline__ void StorePair(bf16* __restrict__ c, int64_t m, int64_t n, int64_t row, int64_t col, float v0,
                                          float v1, bool paired) {
  if (row >= m || col >= n) return;
  if (paired) {
    *reinterpret_cast<__nv_bfloat162*>(c + row * n + col) = __floats2bfloat162_rn(v0, v1);
  } else {
    c[row * n + col] = __float2bfloat16_rn(v0);
    if (col + 1 < n) c[row * n + col + 1] = __float2bfloat16_rn(v1);
  }
}

// ---- cuda_wmma ----------------------------------------------------------------------------------
constexpr int kWmmaPad = 8;  // rows of 40 / 136 bf16: 16-byte multiples that shift banks each row

__global__ void __launch_bounds__(kThreads)
    GemmWmma(const bf16* __restrict__ a, const bf16* __restrict__ b, bf16* __restrict__ c, int m, int n, int k, bool a_vec,
             bool b_vec, bool c_paired) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  using namespace nvcuda;
  // load_matrix_sync / store_matrix_sync need 32-byte aligned tile starts.
  __shared__ __align__(32) bf16 as[kBM][kBK + kWmmaPad];
  __shared__ __align__(32) bf16 bs[kBK][kBN + kWmmaPad];
  __shared__ __align__(32) float scratch[kThreads / 32][16 * 16];  // one 16x16 tile per warp, for the epilogue
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int wm = warp / 4, wn = warp % 4;
  int tm, tn;
  GroupedTile(blockIdx.x, (m + kBM - 1) / kBM, (n + kBN - 1) / kBN, &tm, &tn);
  const int64_t bm = static_cast<int64_t>(tm) * kBM, bn = static_cast<int64_t>(tn) * kBN;

  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[kWarpM / 16][kWarpN / 16];
#pragma unroll
  for (int i = 0; i < kWarpM / 16; ++i)
#pragma unroll
    for (int j = 0; j < kWarpN / 16; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

  for (int64_t k0 = 0; k0 < k; k0 += kBK) {
    // A tile 128 x 32 and B tile 32 x 128: 512 chunks of 8 each, two per thread.
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const int e = tid + kThreads * i;
      const int ar = e >> 2, ac = (e & 3) * 8;
      *reinterpret_cast<uint4*>(&as[ar][ac]) = LoadChunk8(a, m, k, bm + ar, k0 + ac, a_vec);
      const int br = e >> 4, bc = (e & 15) * 8;
      *reinterpret_cast<uint4*>(&bs[br][bc]) = LoadChunk8(b, k, n, k0 + br, bn + bc, b_vec);
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kBK; kk += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, bf16, wmma::row_major> af[kWarpM / 16];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, bf16, wmma::row_major> bfr[kWarpN / 16];
#pragma unroll
      for (int i = 0; i < kWarpM / 16; ++i) wmma::load_matrix_sync(af[i], &as[wm * kWarpM + i * 16][kk], kBK + kWmmaPad);
#pragma unroll
      for (int j = 0; j < kWarpN / 16; ++j) wmma::load_matrix_sync(bfr[j], &bs[kk][wn * kWarpN + j * 16], kBN + kWmmaPad);
#pragma unroll
      for (int i = 0; i < kWarpM / 16; ++i)
#pragma unroll
        for (int j = 0; j < kWarpN / 16; ++j) wmma::mma_sync(acc[i][j], af[i], bfr[j], acc[i][j]);
    }
    __syncthreads();
  }

  // The accumulator layout is opaque: each fragment goes through shared memory, then every lane
  // converts 8 values (row lane/2, columns (lane%2)*8 ..) and writes them with guards.
  float* tile = scratch[warp];
  const int r = lane >> 1, c0 = (lane & 1) * 8;
#pragma unroll
  for (int i = 0; i < kWarpM / 16; ++i) {
#pragma unroll
    for (int j = 0; j < kWarpN / 16; ++j) {
      wmma::store_matrix_sync(tile, acc[i][j], 16, wmma::mem_row_major);
      __syncwarp();
      const int64_t row = bm + wm * kWarpM + i * 16 + r;
      const int64_t col = bn + wn * kWarpN + j * 16 + c0;
#pragma unroll
      for (int e = 0; e < 8; e += 2) StorePair(c, m, n, row, col + e, tile[r * 16 + c0 + e], tile[r * 16 + c0 + e + 1], c_paired);
      __syncwarp();  // the next store_matrix_sync overwrites the tile
    }
  }
#endif
}

// ---- cuda_mma_sync ------------------------------------------------------------------------------
constexpr int kMmaBN = 256, kMmaBK = 64, kMmaWarpN = 64;  // block tile 128 x 256 x 64, warp tile 64 x 64
constexpr int kAStageBytes = kBM * kMmaBK * 2;            // 128 rows of 128 bytes
constexpr int kBStageBytes = kMmaBK * kMmaBN * 2;         // 64 rows of 512 bytes
template <int kStages>
constexpr int MmaSmemBytes() { return kStages * (kAStageBytes + kBStageBytes); }  // 144 KiB at 3: opted in

// Byte offset of 16-byte chunk `chunk` of row `row`, XOR-swizzled so that ldmatrix's 8 rows of one
// chunk column fall in 8 different 16-byte bank groups.
// A (128-byte rows, 8 chunks): every row starts on the same banks; the chunk is XORed with row % 8.
__device__ __forceinline__ uint32_t ASwizzle(int row, int chunk) {
  return static_cast<uint32_t>(row * (kMmaBK * 2) + ((chunk ^ (row & 7)) << 4));
}
// B (512-byte rows, 32 chunks): every row starts on the same banks; the low 3 bits of the chunk are
// XORed with row % 8.
__device__ __forceinline__ uint32_t BSwizzle(int row, int chunk) {
  return static_cast<uint32_t>(row * (kMmaBN * 2) + ((chunk ^ (row & 7)) << 4));
}

// Fragments are double-buffered: those of k step ks + 1 are loaded (ldmatrix) before the mmas of step
// ks are issued, and step 0 of the next k tile before the last step of this one, so a warp always has
// mmas to issue while its next fragments are on their way (CUTLASS's sm80 mainloop order). Loading a
// step's fragments and then waiting on them before its 32 mmas measured 8-10% slower on an H200.
template <bool kAsync, int kStages, bool kStagedC>
__global__ void __launch_bounds__(kThreads, 1)
    GemmMmaSync(const bf16* __restrict__ a, const bf16* __restrict__ b, bf16* __restrict__ c, int m, int n, int k,
                bool c_paired) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  extern __shared__ __align__(128) unsigned char smem[];
  const uint32_t sa = ptx::SmemAddr(smem);             // kStages A tiles
  const uint32_t sb = sa + kStages * kAStageBytes;      // then kStages B tiles
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int wm = warp / 4, wn = warp % 4;
  int tm, tn;
  GroupedTile(blockIdx.x, (m + kBM - 1) / kBM, (n + kMmaBN - 1) / kMmaBN, &tm, &tn);
  const int bm = tm * kBM, bn = tn * kMmaBN;
  const int k_tiles = (k + kMmaBK - 1) / kMmaBK;

  // 16-byte chunks of each tile per thread, e = tid + 256 i: A (4 a thread) rows e/8 (a warp: 4 rows
  // x 128 bytes), B (8 a thread) rows e/32 (a warp: one row of 512 bytes). Out-of-range chunks become
  // zeros. K and N are multiples of 8 on the cp.async path: a chunk is wholly inside or outside.
  // Otherwise (unaligned rows) synchronous scalar loads: the stage is free (every thread passed the
  // barrier after its last use) and the stores are published by the barriers before its use.
  const auto copy_chunk = [&](uint32_t dst, const bf16* src, int64_t rows, int64_t cols, int64_t r, int64_t c) {
    if constexpr (kAsync) {
      const bool ok = r < rows && c < cols;
      ptx::CpAsync16(dst, ok ? src + r * cols + c : src, ok);
    } else {
      const uint4 v = LoadChunk8(src, rows, cols, r, c, false);
      asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"r"(dst), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
                   : "memory");
    }
  };
  const auto load_tile = [&](int stage, int kt) {
    const int k0 = kt * kMmaBK;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int e = tid + kThreads * i;
      const int ar = e >> 3, achunk = e & 7;
      copy_chunk(sa + stage * kAStageBytes + ASwizzle(ar, achunk), a, m, k, bm + ar, k0 + achunk * 8);
    }
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const int e = tid + kThreads * i;
      const int br = e >> 5, bchunk = e & 31;
      copy_chunk(sb + stage * kBStageBytes + BSwizzle(br, bchunk), b, k, n, k0 + br, bn + bchunk * 8);
    }
  };
  // Fragments of k step ks (16 wide) of the tile in `stage`. Lane l addresses row (l % 16) and chunk
  // (l / 16) of a 16x16 block: matrices 0..3 are rows 0-7/8-15 x k 0-7, then rows 0-7/8-15 x k 8-15,
  // the order of mma's a0..a3 (and, with .trans on B's [k][n] rows, b0/b1 of two adjacent 8-column
  // tiles).
  struct Frags {
    uint32_t a[kWarpM / 16][4];
    uint32_t b[kMmaWarpN / 16][4];
  };
  const auto load_frags = [&](int stage, int ks, Frags& f) {
    const uint32_t sa_st = sa + stage * kAStageBytes, sb_st = sb + stage * kBStageBytes;
#pragma unroll
    for (int i = 0; i < kWarpM / 16; ++i)
      ptx::LdMatrixX4(sa_st + ASwizzle(wm * kWarpM + i * 16 + (lane & 15), ks * 2 + (lane >> 4)), f.a[i]);
#pragma unroll
    for (int j = 0; j < kMmaWarpN / 16; ++j)
      ptx::LdMatrixX4Trans(sb_st + BSwizzle(ks * 16 + (lane & 15), (wn * kMmaWarpN + j * 16) / 8 + (lane >> 4)), f.b[j]);
  };
  float acc[kWarpM / 16][kMmaWarpN / 8][4] = {};  // 4 x 8 tiles of 16 x 8
  const auto mmas = [&](const Frags& f) {
#pragma unroll
    for (int i = 0; i < kWarpM / 16; ++i)
#pragma unroll
      for (int j = 0; j < kMmaWarpN / 8; ++j) ptx::MmaBf16(acc[i][j], f.a[i], f.b[j / 2][(j % 2) * 2], f.b[j / 2][(j % 2) * 2 + 1]);
  };
  constexpr int kSteps = kMmaBK / 16;

  // All kStages stages filled first; tile kt + kStages goes into tile kt's stage once every warp has
  // its last fragments of tile kt in registers (the barrier in the last step).
#pragma unroll
  for (int s = 0; s < kStages; ++s) {
    if (s < k_tiles) load_tile(s, s);
    ptx::CpAsyncCommit();
  }
  ptx::CpAsyncWait<kStages - 1>();
  __syncthreads();
  Frags f[2];
  load_frags(0, 0, f[0]);
  for (int kt = 0; kt < k_tiles; ++kt) {
    const int st = kt % kStages;
#pragma unroll
    for (int ks = 0; ks < kSteps; ++ks) {
      if (ks + 1 < kSteps) {
        load_frags(st, ks + 1, f[(ks + 1) & 1]);
      } else {
        ptx::CpAsyncWait<kStages - 2>();  // tile kt + 1 has landed
        __syncthreads();                   // and no warp reads tile kt's stage any more
        if (kt + kStages < k_tiles) load_tile(st, kt + kStages);
        ptx::CpAsyncCommit();
        if (kt + 1 < k_tiles) load_frags((kt + 1) % kStages, 0, f[(ks + 1) & 1]);
      }
      mmas(f[ks & 1]);
    }
  }

  // Accumulator fragment of a 16x8 tile: lane l holds rows l/4 and l/4 + 8, columns 2(l%4), +1.
  if constexpr (kStagedC) {
    // C through shared memory (the stages are free now): the warps' bf16 pairs into a padded
    // 128x256 tile (rows of 528 bytes, so the 8 rows one store instruction touches start 4 banks
    // apart), then 16-byte stores, a warp writing 512 contiguous bytes of one row. Needs N % 8 == 0
    // and C 16-byte aligned (the launcher checks).
    constexpr int kCStride = kMmaBN * 2 + 16;
    static_assert(kBM * kCStride <= kStages * (kAStageBytes + kBStageBytes), "the C tile fits the stages");
    ptx::CpAsyncWait<0>();  // only empty groups are left, but nothing may land after the barrier
    __syncthreads();        // every warp has read its last fragments
#pragma unroll
    for (int i = 0; i < kWarpM / 16; ++i) {
      const int r0 = wm * kWarpM + i * 16 + (lane >> 2);
#pragma unroll
      for (int j = 0; j < kMmaWarpN / 8; ++j) {
        const int c0 = wn * kMmaWarpN + j * 8 + 2 * (lane & 3);
        ptx::StsB32(sa + r0 * kCStride + c0 * 2, cuda::PackBf16x2(acc[i][j][0], acc[i][j][1]));
        ptx::StsB32(sa + (r0 + 8) * kCStride + c0 * 2, cuda::PackBf16x2(acc[i][j][2], acc[i][j][3]));
      }
    }
    __syncthreads();
#pragma unroll 4
    for (int e = tid; e < kBM * (kMmaBN / 8); e += kThreads) {
      const int r = e / (kMmaBN / 8), chunk = e % (kMmaBN / 8);
      const int64_t row = bm + r, col = bn + chunk * 8;
      if (row < m && col < n) *reinterpret_cast<uint4*>(c + row * n + col) = ptx::LdsV4(sa + r * kCStride + chunk * 16);
    }
  } else {
#pragma unroll
    for (int i = 0; i < kWarpM / 16; ++i) {
      const int64_t row = bm + wm * kWarpM + i * 16 + (lane >> 2);
#pragma unroll
      for (int j = 0; j < kMmaWarpN / 8; ++j) {
        const int64_t col = bn + wn * kMmaWarpN + j * 8 + 2 * (lane & 3);
        StorePair(c, m, n, row, col, acc[i][j][0], acc[i][j][1], c_paired);
        StorePair(c, m, n, row + 8, col, acc[i][j][2], acc[i][j][3], c_paired);
      }
    }
  }
#endif
}

// ---- launchers ----------------------------------------------------------------------------------
unsigned TileCount(const GemmArgs& g) { return static_cast<unsigned>(CeilDiv(g.m, kBM) * CeilDiv(g.n, kBN)); }

bool CPaired(const GemmArgs& g) { return g.n % 2 == 0 && Aligned(g.c, 4); }

int LaunchWmma(const GemmArgs& g, cudaStream_t s) {
  GemmWmma<<<TileCount(g), kThreads, 0, s>>>(
      static_cast<const bf16*>(g.a), static_cast<const bf16*>(g.b), static_cast<bf16*>(g.c), static_cast<int>(g.m),
      static_cast<int>(g.n), static_cast<int>(g.k), g.k % 8 == 0 && Aligned(g.a, 16), g.n % 8 == 0 && Aligned(g.b, 16),
      CPaired(g));
  KB_LAUNCH_CHECK();
  return 0;
}

bool MmaAsyncOk(const GemmArgs& g) { return g.k % 8 == 0 && g.n % 8 == 0 && Aligned(g.a, 16) && Aligned(g.b, 16); }

template <bool kAsync, int kStages, bool kStagedC>
int LaunchMmaAs(const GemmArgs& g, cudaStream_t s) {
  constexpr int kSmem = MmaSmemBytes<kStages>();
  const auto kernel = GemmMmaSync<kAsync, kStages, kStagedC>;
  // Over the 48 KiB default: opt in (once per device and kernel; legal while a stream is captured).
  KB_CUDA_TRY(cuda::AllowDynamicSmem(reinterpret_cast<const void*>(kernel), kSmem));
  const unsigned tiles = static_cast<unsigned>(CeilDiv(g.m, kBM) * CeilDiv(g.n, kMmaBN));
  kernel<<<tiles, kThreads, kSmem, s>>>(static_cast<const bf16*>(g.a), static_cast<const bf16*>(g.b),
                                        static_cast<bf16*>(g.c), static_cast<int>(g.m), static_cast<int>(g.n),
                                        static_cast<int>(g.k), CPaired(g));
  KB_LAUNCH_CHECK();
  return 0;
}

template <int (*kLaunch)(const GemmArgs&, cudaStream_t)>
int RunBf16(const Problem& p, std::span<const Tensor> t, void* stream) {
  const GemmArgs g = ArgsOf(p, t);
  const cudaStream_t s = cuda::AsStream(stream);
  int rc = 0;
  if (HandleDegenerate(g, s, &rc)) return rc;
  if (p.dtype != Dtype::kBF16) return static_cast<int>(cudaErrorInvalidValue);  // skip_reason refuses it
  return kLaunch(g, s);
}

std::string SkipTensorCore(const Problem& p) {
  if (std::string why = DtypeSkip(p, {Dtype::kBF16}); !why.empty()) return why;
  if (std::string why = Int32DimsSkip(p); !why.empty()) return why;
  return "";
}

}  // namespace

// Stages of the cp.async ring the device's shared memory holds: 4 (192 KiB) on Hopper, where it
// measured 4% faster than 3; 3 (144 KiB) on an A100 (163 KiB a block at most).
int MmaStages() {
  int device = 0, optin = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
  return optin >= MmaSmemBytes<4>() ? 4 : 3;
}

int LaunchMmaSyncBf16(const GemmArgs& g, cudaStream_t s) {
  const bool four = MmaStages() == 4;
  if (MmaAsyncOk(g) && Aligned(g.c, 16))
    return four ? LaunchMmaAs<true, 4, true>(g, s) : LaunchMmaAs<true, 3, true>(g, s);
  if (MmaAsyncOk(g)) return four ? LaunchMmaAs<true, 4, false>(g, s) : LaunchMmaAs<true, 3, false>(g, s);
  return four ? LaunchMmaAs<false, 4, false>(g, s) : LaunchMmaAs<false, 3, false>(g, s);
}

namespace {

std::vector<LaunchInfo> LaunchesWmma(const Problem&) { return {{"GemmWmma", (const void*)&GemmWmma, kThreads, 0}}; }

std::vector<LaunchInfo> LaunchesMmaSync(const Problem& p) {
  const bool async = p.dim("K") % 8 == 0 && p.dim("N") % 8 == 0;
  const int stages = MmaStages();
  // Tensors from the worker are 16-byte aligned: with N % 8 == 0 the launcher takes the staged-C kernel.
  const void* f = async ? (stages == 4 ? (const void*)&GemmMmaSync<true, 4, true> : (const void*)&GemmMmaSync<true, 3, true>)
                        : (stages == 4 ? (const void*)&GemmMmaSync<false, 4, false>
                                       : (const void*)&GemmMmaSync<false, 3, false>);
  return {{std::string(async ? "GemmMmaSync<cp.async," : "GemmMmaSync<scalar loads,") + std::to_string(stages) +
               " stages>",
           f, kThreads, stages == 4 ? MmaSmemBytes<4>() : MmaSmemBytes<3>()}};
}

}  // namespace

void AddGemmTensorCoreVariants(OpDef& op) {
  op.variants.push_back({
      .name = "cuda_wmma",
      .description = "Tensor cores through nvcuda::wmma fragments.",
      .backend = Backend::kCuda,
      .dtypes = {Dtype::kBF16},
      .min_compute_capability = 80,
      .skip_reason = SkipTensorCore,
      .run_cuda = RunBf16<LaunchWmma>,
      .launches = LaunchesWmma,
  });
  op.variants.push_back({
      .name = "cuda_mma_sync",
      .description = "mma.sync with ldmatrix, swizzled shared memory and a cp.async pipeline.",
      .backend = Backend::kCuda,
      .dtypes = {Dtype::kBF16},
      .min_compute_capability = 80,
      .skip_reason = SkipTensorCore,
      .run_cuda = RunBf16<LaunchMmaSyncBf16>,
      .launches = LaunchesMmaSync,
  });
}

}  // namespace kbench::kernels::gemm
