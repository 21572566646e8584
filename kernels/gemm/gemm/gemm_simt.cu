// gemm on CUDA cores (fp32 FMA): the SIMT half of the GEMM ladder (the series' chapter 5). Each rung
// keeps the arithmetic of the one before and changes where the operands come from; what it moves is
// the intensity against the level that limits it (figures for 4096^3 fp32: 137.4 GFLOP, 192 MiB
// compulsory traffic, I = 683 FLOP/B against an fp32 ridge near 10).
//
// Rungs:
//   cuda_v1_naive          one thread per C element, A and B read from global memory for every FMA:
//                          2 loads per FMA, I = 0.25 FLOP/B of cache traffic; L1/L2 absorb most of
//                          the 512 GiB of logical reads but the load:FMA ratio caps it at 1-3%.
//   cuda_v2_smem_tile      32x32 tiles staged in shared memory: global reads drop to MNK(1/32+1/32)
//                          floats (I = 8), but each FMA still needs 2 shared loads (I = 0.25 against
//                          shared memory), so shared-memory bandwidth becomes the wall (10-20%).
//   cuda_v3_register_block 128x128 block tile, 8x8 outputs per thread kept in registers: per k step a
//                          thread reads 16 values and does 64 FMAs (shared I = 2, 8x fewer LDS);
//                          ~128 registers, 25% occupancy, latency hidden by ILP instead of threads.
//   cuda_v4_vec_transpose  the same tiling with 16-byte global loads and A stored transposed in
//                          shared memory, so the inner loop reads A and B as float4 (4 LDS.128 per
//                          64 FFMA) from conflict-free addresses, and each thread's 8x8 block split
//                          into four 4x4 quadrants 64 apart so a warp's B reads are contiguous.
//   cuda_v5_cp_async       v4 fed by a 4-stage cp.async pipeline of 16-deep k tiles (and blocks
//                          rasterized in groups of 8 tile rows for L2 reuse): global -> shared copies
//                          bypass registers and run 3 tiles ahead, one __syncthreads per 16 k steps;
//                          A is transposed by 4-byte copies, B moves in 16-byte copies.
// All rungs predicate their loads (zeros outside A and B) and guard their stores, so any M, N, K
// works; v4/v5 use 16-byte accesses only when K and N are multiples of 4 and the tensors are 16-byte
// aligned, and otherwise the same tiling with 4-byte accesses. v1-v3 also take bf16 storage (widened
// to fp32 in the inner loop); v4/v5 are fp32 rungs.
#include <string>
#include <vector>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/occupancy.cuh"
#include "core/cuda/vec.cuh"
#include "gemm/gemm/gemm_cuda.cuh"
#include "gemm/gemm/gemm_ptx.cuh"

namespace kbench::kernels::gemm {
namespace {

using cuda::CeilDiv;
using cuda::FromFloat;
using cuda::ToFloat;

// ---- v1: one thread per C element ---------------------------------------------------------------
constexpr int kV1BlockX = 32, kV1BlockY = 8;  // a warp covers 32 columns: B and C accesses coalesce

template <typename T>
__global__ void __launch_bounds__(kV1BlockX * kV1BlockY)
    GemmV1Naive(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c, int64_t m, int64_t n, int64_t k) {
  const int64_t col = static_cast<int64_t>(blockIdx.x) * kV1BlockX + threadIdx.x;
  const int64_t row = static_cast<int64_t>(blockIdx.y) * kV1BlockY + threadIdx.y;
  if (row >= m || col >= n) return;
  float acc = 0.0f;
  for (int64_t kk = 0; kk < k; ++kk) acc += ToFloat(a[row * k + kk]) * ToFloat(b[kk * n + col]);
  c[row * n + col] = FromFloat<T>(acc);
}

// ---- v2: 32x32 shared-memory tiles --------------------------------------------------------------
constexpr int kV2Tile = 32;

template <typename T>
__global__ void __launch_bounds__(kV2Tile * kV2Tile)
    GemmV2SmemTile(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c, int64_t m, int64_t n, int64_t k) {
  __shared__ float as[kV2Tile][kV2Tile];
  __shared__ float bs[kV2Tile][kV2Tile];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t row = static_cast<int64_t>(blockIdx.y) * kV2Tile + ty;
  const int64_t col = static_cast<int64_t>(blockIdx.x) * kV2Tile + tx;
  float acc = 0.0f;
  for (int64_t k0 = 0; k0 < k; k0 += kV2Tile) {
    // Out-of-range elements load as 0 and add nothing; every thread still reaches both barriers.
    as[ty][tx] = row < m && k0 + tx < k ? ToFloat(a[row * k + k0 + tx]) : 0.0f;
    bs[ty][tx] = k0 + ty < k && col < n ? ToFloat(b[(k0 + ty) * n + col]) : 0.0f;
    __syncthreads();
    // as[ty][kk] is one address per warp (broadcast), bs[kk][tx] 32 consecutive words: no conflicts,
    // but two shared loads per FMA.
#pragma unroll
    for (int kk = 0; kk < kV2Tile; ++kk) acc += as[ty][kk] * bs[kk][tx];
    __syncthreads();
  }
  if (row < m && col < n) c[row * n + col] = FromFloat<T>(acc);
}

// ---- v3..v5: 128x128 block tile, 8x8 per thread --------------------------------------------------
constexpr int kBM = 128, kBN = 128, kBK = 8;
constexpr int kTileThreads = 256;  // 16 x 16 threads, 8 x 8 outputs each
constexpr int kAPad = 4;           // transposed A rows of 132 floats: conflict-free transposing stores
// v5's k tile is 16 deep (v3/v4: 8): one barrier per 16 k steps (1024 FMAs a thread) instead of 8.
// 4 stages of 16.3 KiB (dynamic shared memory, opted in over 48 KiB), 2 blocks per SM. On an H200
// at 4096^3: 3290 us, against 3375 us with 3 such stages (same run) and 3410 us with 8-deep tiles.
constexpr int kV5BK = 16;
constexpr int kV5Stages = 4;
constexpr int kV5GroupM = 8;       // tile rows per rasterization group (v5)

template <typename T>
__global__ void __launch_bounds__(kTileThreads)
    GemmV3RegisterBlock(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c, int64_t m, int64_t n, int64_t k) {
  __shared__ float as[kBM][kBK];  // as A is stored: k contiguous
  __shared__ float bs[kBK][kBN];
  const int tid = threadIdx.x;
  const int tr = tid / 16, tc = tid % 16;  // this thread's outputs: rows tr*8.., columns tc*8..
  const int64_t rm = static_cast<int64_t>(blockIdx.y) * kBM, cn = static_cast<int64_t>(blockIdx.x) * kBN;
  float acc[8][8] = {};
  for (int64_t k0 = 0; k0 < k; k0 += kBK) {
#pragma unroll
    for (int i = 0; i < kBM * kBK / kTileThreads; ++i) {
      const int e = tid + kTileThreads * i;
      // A tile 128 x 8: a warp reads 4 rows x 8 consecutive k.
      const int ar = e / kBK, ak = e % kBK;
      const int64_t gr = rm + ar, gk = k0 + ak;
      as[ar][ak] = gr < m && gk < k ? ToFloat(a[gr * k + gk]) : 0.0f;
      // B tile 8 x 128: a warp reads 32 consecutive columns of one row.
      const int bk = e / kBN, bc = e % kBN;
      const int64_t gbk = k0 + bk, gc = cn + bc;
      bs[bk][bc] = gbk < k && gc < n ? ToFloat(b[gbk * n + gc]) : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kBK; ++kk) {
      // 16 scalar loads for 64 FMAs. as[tr*8+i][kk] is a broadcast (2 rows per warp); bs[kk][tc*8+j]
      // has lanes 32 bytes apart, a 4-way bank conflict v4 removes.
      float ar[8], br[8];
#pragma unroll
      for (int i = 0; i < 8; ++i) ar[i] = as[tr * 8 + i][kk];
#pragma unroll
      for (int j = 0; j < 8; ++j) br[j] = bs[kk][tc * 8 + j];
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] += ar[i] * br[j];
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int64_t row = rm + tr * 8 + i;
    if (row >= m) break;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const int64_t col = cn + tc * 8 + j;
      if (col < n) c[row * n + col] = FromFloat<T>(acc[i][j]);
    }
  }
}

// Four consecutive floats of row r of a rows x cols row-major matrix, from column c0 (a multiple of
// 4); zeros outside it. kVec: one 16-byte load (cols % 4 == 0 and the base 16-byte aligned, so the
// four are all inside or all outside).
template <bool kVec>
__device__ __forceinline__ void Load4(const float* __restrict__ p, int64_t rows, int64_t cols, int64_t r, int64_t c0,
                                      float (&v)[4]) {
  if constexpr (kVec) {
    float4 x = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (r < rows && c0 < cols) x = *reinterpret_cast<const float4*>(p + r * cols + c0);
    v[0] = x.x, v[1] = x.y, v[2] = x.z, v[3] = x.w;
  } else {
#pragma unroll
    for (int j = 0; j < 4; ++j) v[j] = r < rows && c0 + j < cols ? p[r * cols + c0 + j] : 0.0f;
  }
}

template <bool kVec>
__device__ __forceinline__ void Store4(float* __restrict__ p, int64_t rows, int64_t cols, int64_t r, int64_t c0,
                                       const float* v) {
  if (r >= rows) return;
  if constexpr (kVec) {
    if (c0 < cols) *reinterpret_cast<float4*>(p + r * cols + c0) = make_float4(v[0], v[1], v[2], v[3]);
  } else {
#pragma unroll
    for (int j = 0; j < 4; ++j)
      if (c0 + j < cols) p[r * cols + c0 + j] = v[j];
  }
}

// The inner loop of v4 and v5 on one k tile: as[k][m] (transposed A) and bs[k][n]. Thread (ty, tx)
// owns rows {ty*4 + i, 64 + ty*4 + i} and columns {tx*4 + j, 64 + tx*4 + j}: each read is a float4,
// A's two addresses per warp broadcast and B's 16 lanes read 256 contiguous bytes.
template <int kK = kBK>
__device__ __forceinline__ void OuterProducts(const float (*as)[kBM + kAPad], const float (*bs)[kBN], int ty, int tx,
                                              float (&acc)[8][8]) {
#pragma unroll
  for (int kk = 0; kk < kK; ++kk) {
    const float4 a0 = *reinterpret_cast<const float4*>(&as[kk][ty * 4]);
    const float4 a1 = *reinterpret_cast<const float4*>(&as[kk][64 + ty * 4]);
    const float4 b0 = *reinterpret_cast<const float4*>(&bs[kk][tx * 4]);
    const float4 b1 = *reinterpret_cast<const float4*>(&bs[kk][64 + tx * 4]);
    const float ar[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
    const float br[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
      for (int j = 0; j < 8; ++j) acc[i][j] += ar[i] * br[j];
  }
}

template <bool kVec>
__device__ __forceinline__ void StoreQuadrants(float* __restrict__ c, int64_t m, int64_t n, int64_t rm, int64_t cn, int ty,
                                               int tx, const float (&acc)[8][8]) {
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int64_t row = rm + (i < 4 ? ty * 4 + i : 64 + ty * 4 + (i - 4));
    Store4<kVec>(c, m, n, row, cn + tx * 4, &acc[i][0]);
    Store4<kVec>(c, m, n, row, cn + 64 + tx * 4, &acc[i][4]);
  }
}

// ---- v4: 16-byte loads, A transposed in shared memory ------------------------------------------
template <bool kVec>
__global__ void __launch_bounds__(kTileThreads, 2)
    SgemmV4VecTranspose(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int64_t m,
                        int64_t n, int64_t k) {
  __shared__ __align__(16) float as[kBK][kBM + kAPad];  // as[k][m]
  __shared__ __align__(16) float bs[kBK][kBN];
  const int tid = threadIdx.x, ty = tid / 16, tx = tid % 16;
  const int64_t rm = static_cast<int64_t>(blockIdx.y) * kBM, cn = static_cast<int64_t>(blockIdx.x) * kBN;
  // One 4-float chunk of each tile per thread: A row tid/2, k (tid%2)*4; B row tid/32, column (tid%32)*4.
  const int a_row = tid >> 1, a_k = (tid & 1) * 4;
  const int b_k = tid >> 5, b_col = (tid & 31) * 4;
  float acc[8][8] = {};
  for (int64_t k0 = 0; k0 < k; k0 += kBK) {
    float av[4], bv[4];
    Load4<kVec>(a, m, k, rm + a_row, k0 + a_k, av);
    Load4<kVec>(b, k, n, k0 + b_k, cn + b_col, bv);
    // Transposing stores: lanes of a warp hit 16 rows x 2 k's; with 132-float rows the two k halves
    // land 16 banks apart, so the 32 stores of one instruction use 32 different banks.
#pragma unroll
    for (int j = 0; j < 4; ++j) as[a_k + j][a_row] = av[j];
    *reinterpret_cast<float4*>(&bs[b_k][b_col]) = make_float4(bv[0], bv[1], bv[2], bv[3]);
    __syncthreads();
    OuterProducts(as, bs, ty, tx, acc);
    __syncthreads();
  }
  StoreQuadrants<kVec>(c, m, n, rm, cn, ty, tx, acc);
}

// ---- v5: cp.async multi-stage pipeline ----------------------------------------------------------
template <int kK, int kStages>
constexpr int V5SmemBytes() { return kStages * kK * ((kBM + kAPad) + kBN) * static_cast<int>(sizeof(float)); }

template <bool kVec, int kK, int kStages>
__global__ void __launch_bounds__(kTileThreads, 2)
    SgemmV5CpAsync(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int64_t m, int64_t n,
                   int64_t k) {
  static_assert(kK % 8 == 0);
  extern __shared__ __align__(16) float v5_smem[];
  auto* as = reinterpret_cast<float (*)[kK][kBM + kAPad]>(v5_smem);  // as[stage][k][m]
  auto* bs = reinterpret_cast<float (*)[kK][kBN]>(v5_smem + kStages * kK * (kBM + kAPad));
  const int tid = threadIdx.x, ty = tid / 16, tx = tid % 16;
  // Grouped rasterization: consecutive blocks walk kV5GroupM tile rows down one tile column, so the
  // blocks resident at once share a few B columns and A rows in L2 instead of sweeping all of B (at
  // 4096^3 f32 both operands are 64 MiB, more than the L2) once per row of tiles.
  const int tiles_m = gridDim.y, tiles_n = gridDim.x;
  const int id = blockIdx.y * tiles_n + blockIdx.x, per_group = kV5GroupM * tiles_n;
  const int first_m = id / per_group * kV5GroupM, group_m = min(tiles_m - first_m, kV5GroupM);
  const int tm = first_m + id % per_group % group_m, tn = id % per_group / group_m;
  const int64_t rm = static_cast<int64_t>(tm) * kBM, cn = static_cast<int64_t>(tn) * kBN;
  const int k_tiles = static_cast<int>((k + kK - 1) / kK);

  // Issues the copies of k tile `kt` into `stage`; they complete in the background. Element e = tid +
  // 256 i of a tile keeps the same k (A) or column (B) for every i, so each thread's source pointers
  // are fixed up front and only the tile's k offset moves.
  //
  // A: 4-byte copies, which can transpose (a 16-byte copy moves 4 consecutive k of one row, and the
  // transposed layout wants them 132 floats apart). A warp reads 4 rows x 8 k (4 full sectors) and
  // writes 32 different banks (k*132 + row = 4k + row mod 32).
  const int a_k = tid & 7, a_row = tid >> 3;  // rows a_row + 32 i
  const float* a_src = a + (rm + a_row) * k + a_k;
  const int b_k = kVec ? tid >> 5 : tid >> 7;  // scalar path: rows b_k + 2 i
  const int b_col = kVec ? (tid & 31) * 4 : tid & 127;
  const float* b_src = b + static_cast<int64_t>(b_k) * n + cn + b_col;
  const auto load_tile = [&](int stage, int kt) {
    const int64_t k0 = static_cast<int64_t>(kt) * kK;
    // A in rounds of 32 rows x 8 k (the conflict-free pattern above), kK / 8 rounds of k per 32 rows.
#pragma unroll
    for (int i = 0; i < kBM * kK / kTileThreads; ++i) {
      const int dk = 8 * (i % (kK / 8)), dr = 32 * (i / (kK / 8));
      const bool ok = rm + a_row + dr < m && k0 + dk + a_k < k;
      ptx::CpAsync4(ptx::SmemAddr(&as[stage][a_k + dk][a_row + dr]), ok ? a_src + dr * k + k0 + dk : a, ok);
    }
    if constexpr (kVec) {
#pragma unroll
      for (int i = 0; i < kK / 8; ++i) {  // 8 rows of B a round
        const bool ok = k0 + b_k + 8 * i < k && cn + b_col < n;
        ptx::CpAsync16(ptx::SmemAddr(&bs[stage][b_k + 8 * i][b_col]), ok ? b_src + (k0 + 8 * i) * n : b, ok);
      }
    } else {
#pragma unroll
      for (int i = 0; i < kK * kBN / kTileThreads; ++i) {
        const bool ok = k0 + b_k + 2 * i < k && cn + b_col < n;
        ptx::CpAsync4(ptx::SmemAddr(&bs[stage][b_k + 2 * i][b_col]), ok ? b_src + (k0 + 2 * i) * n : b, ok);
      }
    }
  };

  // Prologue: tiles 0 .. S-2 in flight. A group is committed even when there is no tile left, so
  // "at most S-2 groups pending" below always means "tile kt has landed".
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < k_tiles) load_tile(s, s);
    ptx::CpAsyncCommit();
  }
  float acc[8][8] = {};
  for (int kt = 0; kt < k_tiles; ++kt) {
    ptx::CpAsyncWait<kStages - 2>();
    // One barrier per tile: it publishes tile kt to every thread and also tells the issuing threads
    // that everyone finished tile kt-1, whose stage the next copies overwrite.
    __syncthreads();
    const int next = kt + kStages - 1;
    if (next < k_tiles) load_tile(next % kStages, next);
    ptx::CpAsyncCommit();
    const int st = kt % kStages;
    OuterProducts<kK>(as[st], bs[st], ty, tx, acc);
  }
  StoreQuadrants<kVec>(c, m, n, rm, cn, ty, tx, acc);
}

// ---- launchers ----------------------------------------------------------------------------------
// 16-byte paths of v4/v5: every row of A, B and C starts on a 16-byte boundary.
bool VecOk(const GemmArgs& g) {
  return g.k % 4 == 0 && g.n % 4 == 0 && Aligned(g.a, 16) && Aligned(g.b, 16) && Aligned(g.c, 16);
}

template <typename T>
int LaunchV1(const GemmArgs& g, cudaStream_t s) {
  const dim3 grid(static_cast<unsigned>(CeilDiv(g.n, kV1BlockX)), static_cast<unsigned>(CeilDiv(g.m, kV1BlockY)));
  GemmV1Naive<T><<<grid, dim3(kV1BlockX, kV1BlockY), 0, s>>>(static_cast<const T*>(g.a), static_cast<const T*>(g.b),
                                                              static_cast<T*>(g.c), g.m, g.n, g.k);
  KB_LAUNCH_CHECK();
  return 0;
}

template <typename T>
int LaunchV2(const GemmArgs& g, cudaStream_t s) {
  const dim3 grid(static_cast<unsigned>(CeilDiv(g.n, kV2Tile)), static_cast<unsigned>(CeilDiv(g.m, kV2Tile)));
  GemmV2SmemTile<T><<<grid, dim3(kV2Tile, kV2Tile), 0, s>>>(static_cast<const T*>(g.a), static_cast<const T*>(g.b),
                                                             static_cast<T*>(g.c), g.m, g.n, g.k);
  KB_LAUNCH_CHECK();
  return 0;
}

dim3 TileGrid(const GemmArgs& g) {
  return dim3(static_cast<unsigned>(CeilDiv(g.n, kBN)), static_cast<unsigned>(CeilDiv(g.m, kBM)));
}

template <typename T>
int LaunchV3(const GemmArgs& g, cudaStream_t s) {
  GemmV3RegisterBlock<T><<<TileGrid(g), kTileThreads, 0, s>>>(static_cast<const T*>(g.a), static_cast<const T*>(g.b),
                                                               static_cast<T*>(g.c), g.m, g.n, g.k);
  KB_LAUNCH_CHECK();
  return 0;
}

int LaunchV4(const GemmArgs& g, cudaStream_t s) {
  const auto* a = static_cast<const float*>(g.a);
  const auto* b = static_cast<const float*>(g.b);
  auto* c = static_cast<float*>(g.c);
  if (VecOk(g)) {
    SgemmV4VecTranspose<true><<<TileGrid(g), kTileThreads, 0, s>>>(a, b, c, g.m, g.n, g.k);
  } else {
    SgemmV4VecTranspose<false><<<TileGrid(g), kTileThreads, 0, s>>>(a, b, c, g.m, g.n, g.k);
  }
  KB_LAUNCH_CHECK();
  return 0;
}

// v5's k tile depth per path: the 4-byte fallback keeps 8-deep tiles (16 deep, its extra copy
// addresses spill; ptxas, sm_90a).
template <bool kVec>
constexpr int V5Depth() { return kVec ? kV5BK : kBK; }

template <bool kVec>
int LaunchV5As(const GemmArgs& g, cudaStream_t s) {
  constexpr int kSmem = V5SmemBytes<V5Depth<kVec>(), kV5Stages>();
  const auto kernel = SgemmV5CpAsync<kVec, V5Depth<kVec>(), kV5Stages>;
  if constexpr (kSmem > 48 * 1024)
    KB_CUDA_TRY(cuda::AllowDynamicSmem(reinterpret_cast<const void*>(kernel), kSmem));
  kernel<<<TileGrid(g), kTileThreads, kSmem, s>>>(static_cast<const float*>(g.a), static_cast<const float*>(g.b),
                                                  static_cast<float*>(g.c), g.m, g.n, g.k);
  KB_LAUNCH_CHECK();
  return 0;
}

int LaunchV5(const GemmArgs& g, cudaStream_t s) { return VecOk(g) ? LaunchV5As<true>(g, s) : LaunchV5As<false>(g, s); }

// ---- registration -------------------------------------------------------------------------------
using Launcher = int (*)(const GemmArgs&, cudaStream_t);

template <Launcher kF32, Launcher kBf16>
int Run(const Problem& p, std::span<const Tensor> t, void* stream) {
  const GemmArgs g = ArgsOf(p, t);
  const cudaStream_t s = cuda::AsStream(stream);
  int rc = 0;
  if (HandleDegenerate(g, s, &rc)) return rc;
  if (p.dtype == Dtype::kF32) return kF32(g, s);
  if constexpr (kBf16 != nullptr) {
    if (p.dtype == Dtype::kBF16) return kBf16(g, s);
  }
  return static_cast<int>(cudaErrorInvalidValue);  // skip_reason refuses other dtypes
}

std::string TypeName(Dtype d) { return d == Dtype::kBF16 ? "bf16" : "f32"; }

// launches() describes the kernel a launch with cudaMalloc'd (aligned) tensors uses.
std::vector<LaunchInfo> Launches(int rung, const Problem& p) {
  const bool bf16 = p.dtype == Dtype::kBF16;
  const bool vec = p.dim("K") % 4 == 0 && p.dim("N") % 4 == 0;
  const std::string t = "<" + TypeName(p.dtype) + ">";
  const std::string v = vec ? "<vec16>" : "<scalar>";
  switch (rung) {
    case 1:
      return {{"GemmV1Naive" + t, bf16 ? (const void*)&GemmV1Naive<__nv_bfloat16> : (const void*)&GemmV1Naive<float>,
               kV1BlockX * kV1BlockY, 0}};
    case 2:
      return {{"GemmV2SmemTile" + t,
               bf16 ? (const void*)&GemmV2SmemTile<__nv_bfloat16> : (const void*)&GemmV2SmemTile<float>,
               kV2Tile * kV2Tile, 0}};
    case 3:
      return {{"GemmV3RegisterBlock" + t,
               bf16 ? (const void*)&GemmV3RegisterBlock<__nv_bfloat16> : (const void*)&GemmV3RegisterBlock<float>,
               kTileThreads, 0}};
    case 4:
      return {{"SgemmV4VecTranspose" + v,
               vec ? (const void*)&SgemmV4VecTranspose<true> : (const void*)&SgemmV4VecTranspose<false>, kTileThreads, 0}};
    default:
      return {{"SgemmV5CpAsync" + v,
               vec ? (const void*)&SgemmV5CpAsync<true, V5Depth<true>(), kV5Stages>
                   : (const void*)&SgemmV5CpAsync<false, V5Depth<false>(), kV5Stages>,
               kTileThreads,
               vec ? V5SmemBytes<V5Depth<true>(), kV5Stages>() : V5SmemBytes<V5Depth<false>(), kV5Stages>()}};
  }
}

template <int kRung>
std::vector<LaunchInfo> LaunchesOf(const Problem& p) {
  return Launches(kRung, p);
}

template <int kRowsPerBlock, bool kF32Only>
std::string Skip(const Problem& p) {
  if (std::string why = kF32Only ? DtypeSkip(p, {Dtype::kF32}) : DtypeSkip(p, {Dtype::kF32, Dtype::kBF16}); !why.empty())
    return why;
  return GridYSkip(p, kRowsPerBlock);
}

}  // namespace

void AddGemmSimtVariants(OpDef& op) {
  const std::vector<Dtype> both = {Dtype::kF32, Dtype::kBF16};
  op.variants.push_back({
      .name = "cuda_v1_naive",
      .description = "One thread per C element, operands from global memory.",
      .backend = Backend::kCuda,
      .dtypes = both,
      .skip_reason = Skip<kV1BlockY, false>,
      .run_cuda = Run<LaunchV1<float>, LaunchV1<__nv_bfloat16>>,
      .launches = LaunchesOf<1>,
  });
  op.variants.push_back({
      .name = "cuda_v2_smem_tile",
      .description = "32x32 shared-memory tiles.",
      .backend = Backend::kCuda,
      .dtypes = both,
      .skip_reason = Skip<kV2Tile, false>,
      .run_cuda = Run<LaunchV2<float>, LaunchV2<__nv_bfloat16>>,
      .launches = LaunchesOf<2>,
  });
  op.variants.push_back({
      .name = "cuda_v3_register_block",
      .description = "128x128 block tile, 8x8 outputs per thread in registers.",
      .backend = Backend::kCuda,
      .dtypes = both,
      .skip_reason = Skip<kBM, false>,
      .run_cuda = Run<LaunchV3<float>, LaunchV3<__nv_bfloat16>>,
      .launches = LaunchesOf<3>,
  });
  op.variants.push_back({
      .name = "cuda_v4_vec_transpose",
      .description = "v3 with 16-byte loads and A transposed in shared memory.",
      .backend = Backend::kCuda,
      .dtypes = {Dtype::kF32},
      .skip_reason = Skip<kBM, true>,
      .run_cuda = Run<LaunchV4, nullptr>,
      .launches = LaunchesOf<4>,
  });
  op.variants.push_back({
      .name = "cuda_v5_cp_async",
      .description = "v4 fed by a 4-stage cp.async pipeline.",
      .backend = Backend::kCuda,
      .dtypes = {Dtype::kF32},
      .min_compute_capability = 80,
      .skip_reason = Skip<kBM, true>,
      .run_cuda = Run<LaunchV5, nullptr>,
      .launches = LaunchesOf<5>,
  });
}

}  // namespace kbench::kernels::gemm
