// gemm for decode shapes (M <= 64): the GEMV end of the ladder. With M = 1 every element of B is used
// once: 2NK FLOPs on NK elements, I = 1 FLOP/B in bf16 (0.5 in fp32), far left of any ridge, so the
// time is B's bytes over memory bandwidth and neither tiling nor tensor cores help (chapter 5:
// "GEMV ... only fewer weight bytes make it faster"). What a GEMV kernel can do is keep enough bytes
// in flight to saturate HBM (Little's law: ~4-5 MB on an H100/H200) and read each byte of B once.
//
// Rung:
//   cuda_gemv   each thread streams one 16-byte column group of B (8 bf16 / 4 floats) down a slice
//               of K with several 16-byte loads in flight (L1 bypassed: B is read once), holding up
//               to 8 rows of C for those columns in registers; the 64 k-slices of a block are summed
//               with warp shuffles and one shared-memory pass, in a fixed order (deterministic).
//               M > 8 re-reads B once per 8 rows (mostly from L2 when B fits); M > 64 skips, the
//               tiled rungs own those shapes. Without 16-byte alignment (N not a multiple of the
//               vector width, or an offset tensor) a thread takes one column and a warp 32
//               consecutive columns.
//   cuda_gemv_split_k  the same math, but a warp reads 512 contiguous bytes of one row of B (four whole
//               lines) and K is split across blocks, the splits added by the last block to finish
//               in a fixed order (GemvSplitK below); for M <= 2 the loads roll (the next batch,
//               with its elements of A, issued before this one is used). Unaligned rows run
//               cuda_gemv's scalar kernel.
#include <algorithm>
#include <string>
#include <type_traits>
#include <vector>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/occupancy.cuh"
#include "core/cuda/vec.cuh"
#include "core/cuda/warp_reduce.cuh"
#include "core/cuda/workspace.cuh"
#include "gemm/gemm/gemm_cuda.cuh"

namespace kbench::kernels::gemm {
namespace {

using cuda::CeilDiv;
using cuda::FromFloat;
using cuda::ToFloat;

constexpr int kGemvThreads = 256;
constexpr int kGemvWarps = kGemvThreads / 32;
constexpr int64_t kGemvMaxM = 64;

// Column groups per block: 4 groups of 16 bytes (a warp reads 8 rows x 64 contiguous bytes) on the
// vector path; 32 single columns (a warp reads 32 consecutive elements of one row) otherwise.
template <int kVec>
constexpr int ColumnGroups() {
  return kVec > 1 ? 4 : 32;
}

// kVec elements of B starting at p, as loaded: kVec > 1 is one 16-byte load that skips L1 (.nc:
// read-only for the kernel's lifetime; L1::no_allocate: streamed once, keep L1 for A). Kept raw
// until used: 4 registers a load in flight where widened floats would take 8 in bf16.
template <typename T, int kVec>
struct RawB {
  uint32_t r[kVec > 1 ? 4 : 1];
};

template <typename T, int kVec>
__device__ __forceinline__ void LoadB(const T* p, RawB<T, kVec>& raw) {
  if constexpr (kVec == 1) {
    raw.r[0] = __float_as_uint(ToFloat(*p));  // the scalar path widens at once: one register either way
  } else {
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(raw.r[0]), "=r"(raw.r[1]), "=r"(raw.r[2]), "=r"(raw.r[3])
                 : "l"(p));
  }
}

template <typename T, int kVec>
__device__ __forceinline__ void WidenB(const RawB<T, kVec>& raw, float (&v)[kVec]) {
  if constexpr (kVec == 1 || sizeof(T) == 4) {
#pragma unroll
    for (int i = 0; i < kVec; ++i) v[i] = __uint_as_float(raw.r[i]);
  } else {
    // bf16 is the high half of a float: widening is a shift or a mask.
#pragma unroll
    for (int i = 0; i < 4; ++i)
      v[2 * i] = __uint_as_float(raw.r[i] << 16), v[2 * i + 1] = __uint_as_float(raw.r[i] & 0xffff0000u);
  }
}

// Blocks an SM should hold: with one row of C a thread fits 64 registers without spilling, so 4
// blocks (a whole 448-block M = 1 grid in one wave on 132 SMs, ~128 KB of loads in flight per SM);
// two rows fit 3 blocks (85 registers).
template <int kRows>
constexpr int GemvMinBlocks() {
  return kRows == 1 ? 4 : kRows == 2 ? 3 : 1;
}

// Block: kCg column groups x kKs k-slices; slice s takes rows s, s + kKs, s + 2 kKs, ... of B.
// Grid: x over column groups, y over blocks of kRows rows of C.
template <typename T, int kVec, int kRows>
__global__ void __launch_bounds__(kGemvThreads, GemvMinBlocks<kRows>())
    GemmGemv(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c, int64_t m, int64_t n, int64_t k) {
  constexpr int kCg = ColumnGroups<kVec>();
  constexpr int kKs = kGemvThreads / kCg;
  // Loads in flight per thread, bounded by registers (the scalar path moves 4x fewer bytes per load
  // but is only the fallback for unaligned rows).
  constexpr int kUnroll = kRows <= 2 && kVec > 1 ? 8 : 4;
  __shared__ float partial[kGemvWarps][kCg][kRows * kVec];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int cg = lane % kCg;
  const int ks = warp * (32 / kCg) + lane / kCg;
  const int64_t col0 = (static_cast<int64_t>(blockIdx.x) * kCg + cg) * kVec;
  const int64_t m0 = static_cast<int64_t>(blockIdx.y) * kRows;
  const int rows = static_cast<int>(m - m0 < kRows ? m - m0 : kRows);  // rows of C this block writes

  float acc[kRows][kVec] = {};
  // The vector path has n % kVec == 0, so a group is wholly inside or wholly outside.
  if (col0 < n) {
    const T* bcol = b + col0;
    const T* arow = a + m0 * k;
    // One step: kUnroll rows of B loaded first (independent 16-byte loads in flight), then used.
    const auto step = [&](int64_t kk, int count) {
      RawB<T, kVec> raw[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u)
        if (u < count) LoadB<T, kVec>(bcol + (kk + static_cast<int64_t>(u) * kKs) * n, raw[u]);
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        if (u >= count) break;
        float bv[kVec];
        WidenB<T, kVec>(raw[u], bv);
#pragma unroll
        for (int r = 0; r < kRows; ++r) {
          // A is tiny and shared by every thread: cached loads, mostly L1 hits.
          const float av = r < rows ? ToFloat(arow[r * k + kk + static_cast<int64_t>(u) * kKs]) : 0.0f;
#pragma unroll
          for (int v = 0; v < kVec; ++v) acc[r][v] += av * bv[v];
        }
      }
    };
    int64_t kk = ks;
    for (; kk + static_cast<int64_t>(kUnroll - 1) * kKs < k; kk += static_cast<int64_t>(kUnroll) * kKs) step(kk, kUnroll);
    if (kk < k) step(kk, static_cast<int>((k - kk + kKs - 1) / kKs));  // the last 1 .. kUnroll-1 rows
  }

  // Sum the k-slices: first the 32 / kCg slices inside a warp (lanes kCg apart hold the same
  // columns), then the warps through shared memory. Fixed order: the same bits every run.
#pragma unroll
  for (int r = 0; r < kRows; ++r)
#pragma unroll
    for (int v = 0; v < kVec; ++v)
#pragma unroll
      for (int off = kCg; off < 32; off <<= 1) acc[r][v] += __shfl_xor_sync(cuda::kFullWarp, acc[r][v], off);
  if (lane < kCg) {
#pragma unroll
    for (int r = 0; r < kRows; ++r)
#pragma unroll
      for (int v = 0; v < kVec; ++v) partial[warp][lane][r * kVec + v] = acc[r][v];
  }
  __syncthreads();
  for (int e = threadIdx.x; e < kCg * kRows * kVec; e += kGemvThreads) {
    const int g = e / (kRows * kVec), rv = e % (kRows * kVec), r = rv / kVec, v = rv % kVec;
    float s = 0.0f;
#pragma unroll
    for (int w = 0; w < kGemvWarps; ++w) s += partial[w][g][rv];
    const int64_t col = (static_cast<int64_t>(blockIdx.x) * kCg + g) * kVec + v;
    if (r < rows && col < n) c[(m0 + r) * n + col] = FromFloat<T>(s);
  }
}

template <typename T, int kVec, int kRows>
int LaunchGemvAs(const GemmArgs& g, cudaStream_t s) {
  constexpr int kCg = ColumnGroups<kVec>();
  const dim3 grid(static_cast<unsigned>(CeilDiv(CeilDiv(g.n, kVec), kCg)), static_cast<unsigned>(CeilDiv(g.m, kRows)));
  GemmGemv<T, kVec, kRows><<<grid, kGemvThreads, 0, s>>>(static_cast<const T*>(g.a), static_cast<const T*>(g.b),
                                                          static_cast<T*>(g.c), g.m, g.n, g.k);
  KB_LAUNCH_CHECK();
  return 0;
}

// Rows of C per thread: the fewest that cover M (each extra row costs registers), at most 8.
int RowsFor(int64_t m) { return m <= 1 ? 1 : m <= 2 ? 2 : m <= 4 ? 4 : 8; }

template <typename T>
bool VecOk(const GemmArgs& g) {
  return g.n % cuda::kVec16<T> == 0 && Aligned(g.b, 16);
}

template <typename T, int kVec>
int LaunchGemvVec(const GemmArgs& g, cudaStream_t s) {
  switch (RowsFor(g.m)) {
    case 1: return LaunchGemvAs<T, kVec, 1>(g, s);
    case 2: return LaunchGemvAs<T, kVec, 2>(g, s);
    case 4: return LaunchGemvAs<T, kVec, 4>(g, s);
    default: return LaunchGemvAs<T, kVec, 8>(g, s);
  }
}

template <typename T>
int LaunchGemv(const GemmArgs& g, cudaStream_t s) {
  return VecOk<T>(g) ? LaunchGemvVec<T, cuda::kVec16<T>>(g, s) : LaunchGemvVec<T, 1>(g, s);
}

// ---- cuda_gemv_split_k ----------------------------------------------------------------------------
// A warp reads 512 contiguous bytes of one row of B (32 lanes x 16 bytes: four whole 128-byte lines)
// where cuda_gemv's warp reads 8 rows x 64 bytes; a block covers 32 * kVec columns, its 8 warps take
// interleaved rows of one slice of K, and K is split across blocks (grid.z) until the grid fills the
// device several times over. Each split's block sums its warps in shared memory and writes a float
// partial; the last block of a column group to finish (a counter in global memory) adds the splits
// in split order, so the result is the same bits every run, and resets the counter for the next
// launch. The partials are 2 x splits x M x N x 4 bytes of traffic, about 1% of B's at M = 1.
constexpr int kSplitThreads = 256, kSplitWarps = kSplitThreads / 32;

template <typename T, int kRows>
__global__ void __launch_bounds__(kSplitThreads, GemvMinBlocks<kRows>())
    GemvSplitK(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c, float* __restrict__ partials,
               unsigned* __restrict__ counters, int64_t m, int64_t n, int64_t k, int64_t k_per_split) {
  constexpr int kVec = cuda::kVec16<T>;
  constexpr int kCols = 32 * kVec;                // columns of a block
  constexpr int kUnroll = kRows <= 2 ? 8 : 4;      // 16-byte loads in flight per thread
  __shared__ float red[kSplitWarps][kCols];
  __shared__ bool last;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int64_t col0 = static_cast<int64_t>(blockIdx.x) * kCols + lane * kVec;
  const int64_t m0 = static_cast<int64_t>(blockIdx.y) * kRows;
  const int rows = static_cast<int>(m - m0 < kRows ? m - m0 : kRows);
  const int64_t k_begin = static_cast<int64_t>(blockIdx.z) * k_per_split;
  const int64_t k_end = k_begin + k_per_split < k ? k_begin + k_per_split : k;

  float acc[kRows][kVec] = {};
  if (col0 < n) {  // n % kVec == 0: a lane's 16 bytes are wholly inside or outside
    const T* arow = a + m0 * k;
    // Loads rows kk, kk + 8, ... of this split, one per element of raw (the warp's rows of B).
    const auto issue = [&](auto& raw, int64_t kk) {
      constexpr int kN = std::extent_v<std::remove_reference_t<decltype(raw)>>;
#pragma unroll
      for (int u = 0; u < kN; ++u)
        if (kk + u * kSplitWarps < k_end) LoadB<T, kVec>(b + (kk + u * kSplitWarps) * n + col0, raw[u]);
    };
    // Adds those rows times A's elements to acc.
    const auto use = [&](const auto& raw, int64_t kk) {
      constexpr int kN = std::extent_v<std::remove_reference_t<decltype(raw)>>;
#pragma unroll
      for (int u = 0; u < kN; ++u) {
        if (kk + u * kSplitWarps >= k_end) break;
        float bv[kVec];
        WidenB<T, kVec>(raw[u], bv);
#pragma unroll
        for (int r = 0; r < kRows; ++r) {
          const float av = r < rows ? ToFloat(arow[r * k + kk + u * kSplitWarps]) : 0.0f;  // a broadcast, L1
#pragma unroll
          for (int v = 0; v < kVec; ++v) acc[r][v] += av * bv[v];
        }
      }
    };
    if constexpr (kRows <= 2) {
      // Rolling prefetch: batch i + 1 (kUnroll / 2 rows) is loaded before batch i is used, so a warp
      // never sits with no loads in flight while it does its FMAs (loading kUnroll rows, then using
      // them, left each warp idle on memory during its math: 35.4 against 33.1 us at 1x14336x4096 on
      // an H200). A's elements for a batch are loaded with its rows of B, and rows past the split are
      // zeros in both, so the FMAs run with no branch and no load latency of their own (A loaded
      // where it was used, each row behind a bounds branch: 32.7-32.9 against 31.8-31.9 us). With
      // more rows of C a batch is only 2 loads and the batches below measured faster (M = 16: 177
      // against 223 us). Two buffers used in turn (a third measured no faster).
      constexpr int kHalf = kUnroll / 2;
      constexpr int64_t kStep = static_cast<int64_t>(kHalf) * kSplitWarps;
      const auto load = [&](RawB<T, kVec>(&raw)[kHalf], float(&av)[kRows][kHalf], int64_t kk) {
#pragma unroll
        for (int u = 0; u < kHalf; ++u) {
          const int64_t row = kk + u * kSplitWarps;
          const bool in = row < k_end;
#pragma unroll
          for (int i = 0; i < 4; ++i) raw[u].r[i] = 0u;
          if (in) LoadB<T, kVec>(b + row * n + col0, raw[u]);
#pragma unroll
          for (int r = 0; r < kRows; ++r) av[r][u] = in && r < rows ? ToFloat(arow[r * k + row]) : 0.0f;
        }
      };
      const auto fma = [&](const RawB<T, kVec>(&raw)[kHalf], const float(&av)[kRows][kHalf]) {
#pragma unroll
        for (int u = 0; u < kHalf; ++u) {
          float bv[kVec];
          WidenB<T, kVec>(raw[u], bv);
#pragma unroll
          for (int r = 0; r < kRows; ++r)
#pragma unroll
            for (int v = 0; v < kVec; ++v) acc[r][v] = fmaf(av[r][u], bv[v], acc[r][v]);
        }
      };
      RawB<T, kVec> r0[kHalf], r1[kHalf];
      float a0[kRows][kHalf], a1[kRows][kHalf];
      int64_t kk = k_begin + warp;
      load(r0, a0, kk);
      while (kk < k_end) {
        load(r1, a1, kk + kStep);
        fma(r0, a0);
        kk += kStep;
        if (kk >= k_end) break;
        load(r0, a0, kk + kStep);
        fma(r1, a1);
        kk += kStep;
      }
    } else {
      for (int64_t kk = k_begin + warp; kk < k_end; kk += static_cast<int64_t>(kUnroll) * kSplitWarps) {
        RawB<T, kVec> raw[kUnroll];
        issue(raw, kk);
        use(raw, kk);
      }
    }
  }

  // The block's sum per row of C, warps in a fixed order; one row at a time keeps shared memory small.
  const bool split = gridDim.z > 1;
#pragma unroll
  for (int r = 0; r < kRows; ++r) {  // unrolled, so acc stays in registers; rows is block-uniform
    if (r >= rows) break;
#pragma unroll
    for (int v = 0; v < kVec; ++v) red[warp][lane * kVec + v] = acc[r][v];
    __syncthreads();
    for (int e = threadIdx.x; e < kCols; e += kSplitThreads) {
      const int64_t col = static_cast<int64_t>(blockIdx.x) * kCols + e;
      float sum = 0.0f;
#pragma unroll
      for (int w = 0; w < kSplitWarps; ++w) sum += red[w][e];
      if (col < n) {
        if (split) partials[(static_cast<int64_t>(blockIdx.z) * m + m0 + r) * n + col] = sum;
        else c[(m0 + r) * n + col] = FromFloat<T>(sum);
      }
    }
    __syncthreads();
  }
  if (!split) return;

  // Publish this split's partials (every thread fences its own stores before thread 0 counts the
  // block in), then let the last block of the column group add them up.
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned* counter = counters + static_cast<int64_t>(blockIdx.y) * gridDim.x + blockIdx.x;
    last = atomicAdd(counter, 1u) == gridDim.z - 1;
    if (last) *counter = 0;  // every split has arrived: ready for the next launch
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  for (int e = threadIdx.x; e < rows * kCols; e += kSplitThreads) {
    const int r = e / kCols;
    const int64_t col = static_cast<int64_t>(blockIdx.x) * kCols + e % kCols;
    if (col >= n) continue;
    float sum = 0.0f;
    for (unsigned z = 0; z < gridDim.z; ++z) sum += __ldcg(partials + (static_cast<int64_t>(z) * m + m0 + r) * n + col);
    c[(m0 + r) * n + col] = FromFloat<T>(sum);
  }
}

struct SplitPlan {
  dim3 grid;
  int64_t k_per_split = 0;
};

// Splits of K so that the grid is one full wave (every SM holding as many blocks as fit, each with
// up to 32 KB of loads in flight), slices of at least 64 rows, a multiple of the 8 warps.
template <typename T>
SplitPlan PlanSplit(const void* kernel, int64_t m, int64_t n, int64_t k, int rows_per_block) {
  const int64_t col_blocks = CeilDiv(n, 32 * cuda::kVec16<T>), row_blocks = CeilDiv(m, rows_per_block);
  const int64_t want = std::clamp<int64_t>(cuda::ResidentBlocks(kernel, kSplitThreads, 0) / (col_blocks * row_blocks), 1,
                                           std::max<int64_t>(1, k / 64));
  SplitPlan plan;
  plan.k_per_split = cuda::RoundUp(CeilDiv(k, want), kSplitWarps);
  plan.grid = dim3(static_cast<unsigned>(col_blocks), static_cast<unsigned>(row_blocks),
                   static_cast<unsigned>(CeilDiv(k, plan.k_per_split)));
  return plan;
}

template <typename T, int kRows>
int LaunchSplitAs(const GemmArgs& g, cudaStream_t s) {
  const SplitPlan plan = PlanSplit<T>(reinterpret_cast<const void*>(&GemvSplitK<T, kRows>), g.m, g.n, g.k, kRows);
  float* partials = nullptr;
  unsigned* counters = nullptr;
  if (plan.grid.z > 1) {
    // Counters in a buffer of their own: only ever counters, zero when allocated and left at zero by
    // every launch, whichever problem used them last.
    void* ws = nullptr;
    KB_CUDA_TRY(cuda::GetWorkspace(cuda::WorkspaceSlot::kGemvSplitKCounters,
                                   size_t{plan.grid.x} * plan.grid.y * sizeof(unsigned), s, &ws));
    counters = static_cast<unsigned*>(ws);
    KB_CUDA_TRY(cuda::GetWorkspace(cuda::WorkspaceSlot::kGemvSplitKPartials,
                                   size_t{plan.grid.z} * g.m * g.n * sizeof(float), s, &ws));
    partials = static_cast<float*>(ws);
  }
  GemvSplitK<T, kRows><<<plan.grid, kSplitThreads, 0, s>>>(static_cast<const T*>(g.a), static_cast<const T*>(g.b),
                                                           static_cast<T*>(g.c), partials, counters, g.m, g.n, g.k,
                                                           plan.k_per_split);
  KB_LAUNCH_CHECK();
  return 0;
}

template <typename T>
int LaunchSplit(const GemmArgs& g, cudaStream_t s) {
  if (!VecOk<T>(g)) return LaunchGemvVec<T, 1>(g, s);  // unaligned rows: cuda_gemv's scalar kernel
  switch (RowsFor(g.m)) {
    case 1: return LaunchSplitAs<T, 1>(g, s);
    case 2: return LaunchSplitAs<T, 2>(g, s);
    case 4: return LaunchSplitAs<T, 4>(g, s);
    default: return LaunchSplitAs<T, 8>(g, s);
  }
}

template <bool kSplitK>
int RunGemv(const Problem& p, std::span<const Tensor> t, void* stream) {
  const GemmArgs g = ArgsOf(p, t);
  const cudaStream_t s = cuda::AsStream(stream);
  int rc = 0;
  if (HandleDegenerate(g, s, &rc)) return rc;
  if (g.m > kGemvMaxM) return static_cast<int>(cudaErrorInvalidValue);  // skip_reason says so
  return cuda::DispatchDtype(p.dtype, [&](auto tag) {
    return kSplitK ? LaunchSplit<decltype(tag)>(g, s) : LaunchGemv<decltype(tag)>(g, s);
  });
}

template <typename T, int kVec>
const void* GemvKernel(int rows) {
  switch (rows) {
    case 1: return (const void*)&GemmGemv<T, kVec, 1>;
    case 2: return (const void*)&GemmGemv<T, kVec, 2>;
    case 4: return (const void*)&GemmGemv<T, kVec, 4>;
    default: return (const void*)&GemmGemv<T, kVec, 8>;
  }
}

template <typename T>
const void* SplitKernel(int rows) {
  switch (rows) {
    case 1: return (const void*)&GemvSplitK<T, 1>;
    case 2: return (const void*)&GemvSplitK<T, 2>;
    case 4: return (const void*)&GemvSplitK<T, 4>;
    default: return (const void*)&GemvSplitK<T, 8>;
  }
}

template <typename T>
std::vector<LaunchInfo> GemvLaunches(const Problem& p, bool split_k) {
  const int rows = RowsFor(p.dim("M"));
  const bool vec = p.dim("N") % cuda::kVec16<T> == 0;
  if (split_k && vec)
    return {{std::string("GemvSplitK<") + cuda::TypeName<T>() + ",rows" + std::to_string(rows) + ">", SplitKernel<T>(rows),
             kSplitThreads, 0}};
  const std::string name = std::string("GemmGemv<") + cuda::TypeName<T>() + (vec ? ",vec16" : ",scalar") + ",rows" +
                           std::to_string(rows) + ">";
  return {{name, vec ? GemvKernel<T, cuda::kVec16<T>>(rows) : GemvKernel<T, 1>(rows), kGemvThreads, 0}};
}

template <bool kSplitK>
std::vector<LaunchInfo> LaunchesGemv(const Problem& p) {
  return p.dtype == Dtype::kBF16 ? GemvLaunches<__nv_bfloat16>(p, kSplitK) : GemvLaunches<float>(p, kSplitK);
}

std::string SkipGemv(const Problem& p) {
  if (std::string why = DtypeSkip(p, {Dtype::kF32, Dtype::kBF16}); !why.empty()) return why;
  if (p.dim("M") > kGemvMaxM)
    return "M = " + std::to_string(p.dim("M")) + " > 64: a decode (GEMV-like) rung; it would re-read B once per 8 "
           "rows of C, the tiled rungs own these shapes";
  return "";
}

}  // namespace

void AddGemmGemvVariant(OpDef& op) {
  op.variants.push_back({
      .name = "cuda_gemv",
      .description = "Decode shapes (M <= 64): B streamed once with 16-byte loads.",
      .backend = Backend::kCuda,
      .dtypes = {Dtype::kF32, Dtype::kBF16},
      .skip_reason = SkipGemv,
      .run_cuda = RunGemv<false>,
      .launches = LaunchesGemv<false>,
  });
  op.variants.push_back({
      .name = "cuda_gemv_split_k",
      .description = "cuda_gemv with whole-line row reads per warp and K split across blocks.",
      .backend = Backend::kCuda,
      .dtypes = {Dtype::kF32, Dtype::kBF16},
      .skip_reason = SkipGemv,
      .run_cuda = RunGemv<true>,
      .launches = LaunchesGemv<true>,
  });
}

}  // namespace kbench::kernels::gemm
