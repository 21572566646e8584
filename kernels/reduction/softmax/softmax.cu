// softmax on CUDA, over cols: out[r,c] = exp(x[r,c] - m_r) / sum_c exp(x[r,c] - m_r), m_r the row max;
// f32 or bf16 storage, float arithmetic. Memory-bound: the rungs differ in how many times a row is
// read (the family's table: kernels/reduction/README.md).
//
// Rungs:
//   cuda_v1_three_pass  one block per row, three passes over the row: the max, the sum of
//                       exp(x - max), then the normalized write. x is read three times.
//   cuda_v2_online      one block per row, online softmax: one pass keeps a running max m and a sum
//                       l rescaled whenever m grows (l' = l * e^(m - m') + sum e^(x - m')), the
//                       threads' (m, l) states combine as m = max m_t, l = sum l_t e^(m_t - m); then
//                       one writing pass. x is read twice.
//   cuda_v3_warp_row    one warp per row, the row held in registers (16-byte loads when cols is a
//                       multiple of the vector width): x read once, no shared memory, no barrier;
//                       rows wider than 4096 (128 values per lane) skip. With scalar loads (cols not
//                       a multiple of the width, or unaligned pointers) a lane holds at most 64
//                       values; wider such rows run v2's kernel instead.
//   cuda_v4_block_pipelined  block per row, but blocks stay resident for many rows and load row i+1
//                       while they reduce and write row i, rows held as raw 16-byte words
//                       (core/cuda/row_pipeline.cuh): x read once, and the block's max and sum cost
//                       two barriers each instead of v3's 195 registers (1 warp in 8 resident).
//                       exp is evaluated once per element (ex2.approx after one FMA, a few ulp, far
//                       inside the tolerance) and held as floats for the write: the SFU runs at 1/8
//                       of the FMA rate, and evaluating it twice was measured as the bottleneck.
//                       Rows that do not fit 4 packs a thread (or odd widths) run v2's kernel.
//   cuda_v5_cp_async_ring  v4 with the next rows in a shared-memory ring that cp.async fills
//                       (ForEachRowRing, rmsnorm v7's ring): kRingStages (4) rows a block in flight.
//                       Same fallback.
//   cuda_v6_one_barrier v5 with one barrier a row instead of four (two block reductions): each thread
//                       exponentiates against its own max (max.bf16x2 on the raw words), the (max,
//                       sum) pairs merge with a rescale by shuffles in a warp and one cross-warp
//                       exchange that every thread reads whole. At the fixed geometry its ring is 3
//                       rows deep, so 9 blocks share an SM instead of 6 (V6Stages). Same fallback.
#include "core/cuda/cuda_check.cuh"
#include "core/cuda/fast_exp2.cuh"
#include "core/cuda/row_pipeline.cuh"
#include "core/cuda/rows.cuh"
#include "core/cuda/vec.cuh"
#include "core/cuda/warp_reduce.cuh"
#include "reduction/softmax/softmax.h"

#include <climits>
#include <cmath>
#include <string>
#include <vector>

namespace kbench::kernels {
namespace {

using cuda::BlockMax;
using cuda::BlockSum;
using cuda::CeilDiv;
using cuda::FromFloat;
using cuda::kVec16;
using cuda::LoadFloats;
using cuda::StoreFloats;
using cuda::ToFloat;

constexpr int kBlock = 256;         // v1, v2: threads per row
constexpr int kChunk = 4;           // v2: elements per online update
constexpr int kV3Block = 128;       // v3: 4 rows per block
constexpr int kV3MaxPerLane = 128;  // v3: values of a row one lane keeps in registers (16-byte loads)
constexpr int kV3MaxScalar = 64;    // v3 with scalar loads: one predicate per value costs registers too
constexpr int64_t kV3MaxCols = 32 * kV3MaxPerLane;

// --- v1: three passes ---------------------------------------------------------------------------------
template <typename T>
__global__ void __launch_bounds__(kBlock) SoftmaxV1(const T* __restrict__ x, T* __restrict__ out, int64_t cols) {
  const T* xr = x + static_cast<int64_t>(blockIdx.x) * cols;
  T* orow = out + static_cast<int64_t>(blockIdx.x) * cols;
  float m = -INFINITY;
  for (int64_t c = threadIdx.x; c < cols; c += kBlock) m = fmaxf(m, ToFloat(xr[c]));
  m = BlockMax(m);
  float l = 0.0f;
  for (int64_t c = threadIdx.x; c < cols; c += kBlock) l += expf(ToFloat(xr[c]) - m);
  const float inv_l = 1.0f / BlockSum(l);
  for (int64_t c = threadIdx.x; c < cols; c += kBlock) orow[c] = FromFloat<T>(expf(ToFloat(xr[c]) - m) * inv_l);
}

// --- v2: online (m, l), then one writing pass --------------------------------------------------------
struct MaxSum {
  float m, l;  // running max, and the sum of exp(x - m)
};

template <typename T>
__global__ void __launch_bounds__(kBlock) SoftmaxV2(const T* __restrict__ x, T* __restrict__ out, int64_t cols) {
  const T* xr = x + static_cast<int64_t>(blockIdx.x) * cols;
  T* orow = out + static_cast<int64_t>(blockIdx.x) * cols;
  MaxSum s{-INFINITY, 0.0f};
  // kChunk strided elements at a time: their loads and exps are independent, and the running sum is
  // rescaled once per chunk (when its max grows) instead of sitting in a per-element dependent chain.
  for (int64_t c0 = threadIdx.x; c0 < cols; c0 += kBlock * kChunk) {
    float v[kChunk];
    float chunk_max = -INFINITY;
#pragma unroll
    for (int u = 0; u < kChunk; ++u) {
      const int64_t c = c0 + u * kBlock;
      v[u] = c < cols ? ToFloat(xr[c]) : -INFINITY;
      chunk_max = fmaxf(chunk_max, v[u]);
    }
    const float m = fmaxf(s.m, chunk_max);  // finite: element c0 exists
    float add = 0.0f;
#pragma unroll
    for (int u = 0; u < kChunk; ++u) add += expf(v[u] - m);  // exp(-inf) = 0 for the missing ones
    s.l = s.l * expf(s.m - m) + add;                          // exp(-inf) = 0 on the first chunk
    s.m = m;
  }
  // Across threads: the block max first, then each thread rescales its own sum once and the sums
  // add up. The same result as merging (m, l) pairs pairwise, with one exp per thread instead of
  // two per merge step on the reduction's critical path.
  const float m = BlockMax(s.m);
  const float l = BlockSum(s.m == -INFINITY ? 0.0f : s.l * expf(s.m - m));
  s = {m, l};
  const float inv_l = 1.0f / s.l;
  for (int64_t c = threadIdx.x; c < cols; c += kBlock) orow[c] = FromFloat<T>(expf(ToFloat(xr[c]) - s.m) * inv_l);
}

// --- v3: warp per row, row in registers --------------------------------------------------------------
template <typename T, int kW, int kPacks>
__global__ void __launch_bounds__(kV3Block, 1)
    SoftmaxV3(const T* __restrict__ x, T* __restrict__ out, int64_t rows, int64_t cols) {
  // kPacks == 0 (a row wider than the registers hold) is never launched: skip_reason refuses it.
  if constexpr (kPacks == 0) return;
  const int lane = threadIdx.x & 31;
  const int64_t r = static_cast<int64_t>(blockIdx.x) * (kV3Block / 32) + (threadIdx.x >> 5);
  if (r >= rows) return;  // a whole warp leaves together; no block barrier follows
  // Per-lane base pointers: pack j of a lane is at a compile-time offset (j * 32 * kW elements).
  const T* xr = x + r * cols + lane * kW;
  T* orow = out + r * cols + lane * kW;
  const int packs = static_cast<int>(cols / kW);  // cols <= kV3MaxCols
  float v[kPacks > 0 ? kPacks : 1][kW];
  float m = -INFINITY;
#pragma unroll
  for (int j = 0; j < kPacks; ++j) {
    const int p = lane + 32 * j;
    if (p < packs) {
      LoadFloats<T, kW>(xr + j * 32 * kW, v[j]);
#pragma unroll
      for (int k = 0; k < kW; ++k) m = fmaxf(m, v[j][k]);
    }
  }
  m = cuda::WarpMax(m);
  float l = 0.0f;
#pragma unroll
  for (int j = 0; j < kPacks; ++j) {
    if (lane + 32 * j < packs) {
#pragma unroll
      for (int k = 0; k < kW; ++k) {
        v[j][k] = expf(v[j][k] - m);
        l += v[j][k];
      }
    }
  }
  const float inv_l = 1.0f / cuda::WarpSum(l);
#pragma unroll
  for (int j = 0; j < kPacks; ++j) {
    const int p = lane + 32 * j;
    if (p < packs) {
#pragma unroll
      for (int k = 0; k < kW; ++k) v[j][k] *= inv_l;
      StoreFloats<T, kW>(orow + j * 32 * kW, v[j]);
    }
  }
}

template <typename T>
using V3Fn = void (*)(const T*, T*, int64_t, int64_t);

template <typename T>
struct V3Launch {
  V3Fn<T> kernel;   // nullptr: the row does not fit in registers with scalar loads (use v2's kernel)
  int width, per_lane;
};

template <typename T>
V3Launch<T> PickV3(int64_t cols, bool vec_ok) {
  const int width = vec_ok && cols % kVec16<T> == 0 ? kVec16<T> : 1;
  int per_lane = 1;
  while (per_lane < CeilDiv(cols / width, 32)) per_lane *= 2;
  V3Fn<T> k;
  if (width == 1) {
    if (per_lane > kV3MaxScalar) return {nullptr, width, per_lane};
    k = cuda::PickPacks<kV3MaxScalar>(per_lane, [](auto p) -> V3Fn<T> { return &SoftmaxV3<T, 1, decltype(p)::value>; });
  } else {
    k = cuda::PickPacks<kV3MaxPerLane / kVec16<T>>(
        per_lane, [](auto p) -> V3Fn<T> { return &SoftmaxV3<T, kVec16<T>, decltype(p)::value>; });
  }
  return {k, width, per_lane};
}


// --- v4: block per row, pipelined rows -----------------------------------------------------------------
constexpr int kV4MaxThreads = 256;
constexpr float kLog2e = 1.4426950408889634f;

// 2^x by the SFU (cuda::FastExp2; exp(x - m) = 2^(x log2 e - m log2 e), one FMA in front).
using cuda::FastExp2;

// e = 2^(x log2 e - m_log2) for this thread's packs of a row (exp(x - m) with m_log2 = m log2 e, one
// FMA and one ex2 an element), kept as floats for the write; returns their sum. exp is evaluated once
// per element: ex2 runs at 1/8 of the FMA rate (16 a clock per SM), and evaluating it twice (for the
// sum, then for the write) cost ~60 us of a 156 us row sweep at 32768x4096.
template <typename T, int kPacks>
__device__ __forceinline__ float ExpPacks(const uint4 (&row)[kPacks], int packs, float m_log2,
                                          float (&e)[kPacks][kVec16<T>]) {
  constexpr int kW = kVec16<T>;
  float sum = 0.0f;
#pragma unroll
  for (int j = 0; j < kPacks; ++j) {
    if (threadIdx.x + j * blockDim.x < packs) {
      cuda::WidenPack<T>(row[j], e[j]);
#pragma unroll
      for (int k = 0; k < kW; ++k) e[j][k] = FastExp2(fmaf(e[j][k], kLog2e, -m_log2));
      sum += cuda::PackReduce<kW>(e[j], [](float a, float b) { return a + b; });
    }
  }
  return sum;
}

// Writes e * scale as this thread's packs of the output row orow.
template <typename T, int kPacks>
__device__ __forceinline__ void StoreScaledPacks(float (&e)[kPacks][kVec16<T>], int packs, float scale, T* orow) {
  constexpr int kW = kVec16<T>;
#pragma unroll
  for (int j = 0; j < kPacks; ++j) {
    const int p = threadIdx.x + j * blockDim.x;
    if (p < packs) {
#pragma unroll
      for (int k = 0; k < kW; ++k) e[j][k] *= scale;
      StoreFloats<T, kW>(orow + static_cast<int64_t>(p) * kW, e[j]);
    }
  }
}

// kStages 0: the next row in registers (v4); else a cp.async ring of kStages rows (v5).
template <typename T, int kPacks, int kStages, int kThreads>
__global__ void __launch_bounds__(kThreads ? kThreads : kV4MaxThreads, cuda::FixedMinBlocks<kThreads, kStages>())
    SoftmaxV4(const T* __restrict__ x, T* __restrict__ out, int64_t rows, int64_t any_cols) {
  constexpr int kW = kVec16<T>;
  const int64_t cols = cuda::RowCols<kPacks, kThreads, kW>(any_cols);
  const int packs = static_cast<int>(cols / kW);  // <= kPacks * blockDim.x (PipelinePacks)
  cuda::ForEachRowStaged<T, kPacks, kStages>(x, rows, cols, packs, [&](int64_t r, const uint4(&row)[kPacks]) {
    float m = -INFINITY;
    cuda::ForEachPack<T>(row, packs, [&](int, const float(&v)[kW]) {
      m = fmaxf(m, cuda::PackReduce<kW>(v, [](float a, float b) { return fmaxf(a, b); }));
    });
    m = BlockMax(m);
    float e[kPacks][kW];
    const float inv_l = 1.0f / BlockSum(ExpPacks<T>(row, packs, m * kLog2e, e));
    StoreScaledPacks<T>(e, packs, inv_l, out + r * cols);
  });
}

template <typename T>
using V4Fn = void (*)(const T*, T*, int64_t, int64_t);

// The v4/v5 instantiation for cols, or nullptr (then v2 runs); *threads and *packs get its plan.
template <typename T, int kStages>
V4Fn<T> PickV4(int64_t cols, bool vec_ok, int* threads, int* packs) {
  return cuda::PickPipelined(cols, kVec16<T>, vec_ok, threads, packs, [](auto kPacks, auto kThreads) -> V4Fn<T> {
    return &SoftmaxV4<T, kPacks, kStages, kThreads>;
  });
}

// --- v6: one barrier a row -------------------------------------------------------------------------
// The thread's max over its packs. bf16: max.bf16x2 on the raw words (exact: a max only picks one of
// its inputs), widened once at the end, instead of widening every element first.
template <typename T, int kPacks>
__device__ __forceinline__ float ThreadMax(const uint4 (&row)[kPacks], int packs) {
  if constexpr (sizeof(T) == 2) {
    const __nv_bfloat16 ninf = __ushort_as_bfloat16(0xff80);  // -inf
    __nv_bfloat162 m = __halves2bfloat162(ninf, ninf);
#pragma unroll
    for (int j = 0; j < kPacks; ++j) {
      if (threadIdx.x + j * blockDim.x < packs) {
        const auto* w = reinterpret_cast<const __nv_bfloat162*>(&row[j]);
        m = __hmax2(m, __hmax2(__hmax2(w[0], w[1]), __hmax2(w[2], w[3])));
      }
    }
    return fmaxf(__low2float(m), __high2float(m));
  } else {
    float m = -INFINITY;
    cuda::ForEachPack<T>(row, packs, [&](int, const float(&v)[kVec16<T>]) {
      m = fmaxf(m, cuda::PackReduce<kVec16<T>>(v, [](float a, float b) { return fmaxf(a, b); }));
    });
    return m;
  }
}

// Rows of v6's ring. At a fixed geometry (55 registers at 128 threads) 3 stages let 9 blocks share
// an SM's shared memory where 4 allow 6, so more rows are reduced at once: a softmax row is a longer
// dependent chain than an RMSNorm row, and the number of rows in progress, not bytes in flight, was
// what held it (H200, 32768x4096 bf16: 89.9-90.4% of copy at 8 blocks against 89.0-89.5% with 4
// stages; the 256-thread geometry follows untimed). The ninth block fits only because the cross-warp
// slots are sized to the block's 8 warps (128 bytes for both sets, not 32 warps' 512): 9 x (24 KB
// ring + 1 KB reserved + the slots) is just under the SM's 228 KB (the worker reports a theoretical
// occupancy of 36 warps of 64). The any-geometry instantiation (73 registers) keeps kRingStages.
template <int kThreads>
constexpr int V6Stages() {
  return kThreads != 0 ? 3 : cuda::kRingStages;
}

// Each thread exponentiates against its own max (available as soon as its packs are: no reduction
// on the path to the SFU), then (max, sum) pairs combine with a rescale: in the warp by shuffles,
// across warps through one exchange (PostWarpPartial) that every thread reads whole. The thread's
// outputs are e * 2^((m_t - m) log2 e) / l. Six extra ex2 a thread a row at 128 threads (its own
// rescale, the warp's, one a warp in the cross-warp merge) against 32 for the elements at 4096
// columns.
template <typename T, int kPacks, int kThreads, int kStages = V6Stages<kThreads>()>
__global__ void
__launch_bounds__(kThreads ? kThreads : kV4MaxThreads, cuda::FixedMinBlocks<kThreads, kStages, kPacks>())
    SoftmaxV6(const T* __restrict__ x, T* __restrict__ out, int64_t rows, int64_t any_cols) {
  constexpr int kW = kVec16<T>;
  __shared__ cuda::WarpPartials<float2, kV4MaxThreads / 32> partials;  // sized to the block: see V6Stages
  const int64_t cols = cuda::RowCols<kPacks, kThreads, kW>(any_cols);
  const int packs = static_cast<int>(cols / kW);  // <= kPacks * blockDim.x (PipelinePacks)
  const int warps = blockDim.x >> 5;
  unsigned parity = 0;
  // exp2((a - b) log2 e), 0 when a is -inf (a thread, warp or row with nothing above -inf).
  const auto rescale = [](float a, float b) { return a == -INFINITY ? 0.0f : FastExp2((a - b) * kLog2e); };
  cuda::ForEachRowRing<T, kPacks, kStages>(x, rows, cols, packs, [&](int64_t r, const uint4(&row)[kPacks]) {
    const float mt = ThreadMax<T, kPacks>(row, packs);
    float e[kPacks][kW];
    const float lt = ExpPacks<T>(row, packs, mt == -INFINITY ? 0.0f : mt * kLog2e, e);
    const float mw = cuda::WarpMax(mt);
    const float lw = cuda::WarpSum(lt * rescale(mt, mw));
    // Every thread merges all the warps' pairs itself (at most 8, in warp order): a few loads and
    // ex2 where shuffle trees would be ten more dependent steps on the row's critical path.
    const float2* p = cuda::PostWarpPartial(partials, parity++, make_float2(mw, lw));
    constexpr int kMaxWarps = kV4MaxThreads / 32;
    float m = p[0].x;
#pragma unroll
    for (int w = 1; w < kMaxWarps; ++w)
      if (w < warps) m = fmaxf(m, p[w].x);
    float l = p[0].y * rescale(p[0].x, m);
#pragma unroll
    for (int w = 1; w < kMaxWarps; ++w)
      if (w < warps) l += p[w].y * rescale(p[w].x, m);
    StoreScaledPacks<T>(e, packs, rescale(mt, m) / l, out + r * cols);
  });
}

// *stages gets the instantiation's ring depth (V6Stages).
template <typename T>
V4Fn<T> PickV6(int64_t cols, bool vec_ok, int* threads, int* packs, int* stages) {
  return cuda::PickPipelined(cols, kVec16<T>, vec_ok, threads, packs, [stages](auto kPacks, auto kThreads) -> V4Fn<T> {
    *stages = V6Stages<kThreads>();
    return &SoftmaxV6<T, kPacks, kThreads>;
  });
}

// --- launchers ---------------------------------------------------------------------------------------
struct Args {
  const void* x;
  void* out;
  int64_t rows, cols;
};

template <typename T>
int LaunchV1(const Args& a, cudaStream_t s) {
  SoftmaxV1<T><<<static_cast<unsigned>(a.rows), kBlock, 0, s>>>(static_cast<const T*>(a.x), static_cast<T*>(a.out),
                                                                  a.cols);
  KB_LAUNCH_CHECK();
  return 0;
}

template <typename T>
int LaunchV2(const Args& a, cudaStream_t s) {
  SoftmaxV2<T><<<static_cast<unsigned>(a.rows), kBlock, 0, s>>>(static_cast<const T*>(a.x), static_cast<T*>(a.out),
                                                                  a.cols);
  KB_LAUNCH_CHECK();
  return 0;
}

template <typename T>
int LaunchV3(const Args& a, cudaStream_t s) {
  if (a.cols > kV3MaxCols) return static_cast<int>(cudaErrorInvalidValue);  // skip_reason says so
  const auto l = PickV3<T>(a.cols, cuda::Aligned16(a.x) && cuda::Aligned16(a.out));
  if (l.kernel == nullptr) return LaunchV2<T>(a, s);  // wide row, scalar loads only: online block per row
  l.kernel<<<static_cast<unsigned>(CeilDiv(a.rows, kV3Block / 32)), kV3Block, 0, s>>>(
      static_cast<const T*>(a.x), static_cast<T*>(a.out), a.rows, a.cols);
  KB_LAUNCH_CHECK();
  return 0;
}

template <typename T, int kStages>
int LaunchV4(const Args& a, cudaStream_t s) {
  int threads = 0, packs = 0;
  const auto k = PickV4<T, kStages>(a.cols, cuda::Aligned16(a.x) && cuda::Aligned16(a.out), &threads, &packs);
  if (k == nullptr) return LaunchV2<T>(a, s);
  return cuda::LaunchPipelined<kStages>(k, threads, packs, a.rows, s, static_cast<const T*>(a.x),
                                        static_cast<T*>(a.out), a.rows, a.cols);
}

template <typename T>
int LaunchV6(const Args& a, cudaStream_t s) {
  int threads = 0, packs = 0, stages = 0;
  const auto k = PickV6<T>(a.cols, cuda::Aligned16(a.x) && cuda::Aligned16(a.out), &threads, &packs, &stages);
  if (k == nullptr) return LaunchV2<T>(a, s);
  return cuda::LaunchRing(k, stages, threads, packs, a.rows, s, static_cast<const T*>(a.x), static_cast<T*>(a.out),
                          a.rows, a.cols);
}

// --- registration ------------------------------------------------------------------------------------
template <int (*L32)(const Args&, cudaStream_t), int (*L16)(const Args&, cudaStream_t)>
int Run(const Problem& p, std::span<const Tensor> t, void* stream) {
  const Args a{t[0].data, t[1].data, p.dim("rows"), p.dim("cols")};
  if (a.rows <= 0 || a.cols <= 0) return 0;  // nothing to write
  return cuda::DispatchDtype(p.dtype, [&](auto tag) {
    return sizeof(tag) == 4 ? L32(a, cuda::AsStream(stream)) : L16(a, cuda::AsStream(stream));
  });
}

template <typename T>
std::vector<LaunchInfo> Launches(int rung, const Problem& p) {
  const std::string type = cuda::TypeName<T>();
  const int64_t cols = p.dim("cols");
  switch (rung) {
    case 1: return {{"SoftmaxV1<" + type + ">", (const void*)&SoftmaxV1<T>, kBlock, 0}};
    case 2: return {{"SoftmaxV2<" + type + ">", (const void*)&SoftmaxV2<T>, kBlock, 0}};
    case 4: {
      int threads = 0, packs = 0;
      if (const auto k = PickV4<T, 0>(cols, true, &threads, &packs))
        return {{"SoftmaxV4<" + type + ",pipelined>", (const void*)k, threads, 0}};
      return Launches<T>(2, p);
    }
    case 5: {
      int threads = 0, packs = 0;
      if (const auto k = PickV4<T, cuda::kRingStages>(cols, true, &threads, &packs))
        return {{"SoftmaxV4<" + type + ",ring" + std::to_string(cuda::kRingStages) + ">", (const void*)k, threads,
                 cuda::RingBytes(cuda::kRingStages, packs, threads)}};
      return Launches<T>(2, p);
    }
    case 6: {
      int threads = 0, packs = 0, stages = 0;
      if (const auto k = PickV6<T>(cols, true, &threads, &packs, &stages))
        return {{"SoftmaxV6<" + type + ",ring" + std::to_string(stages) + ">", (const void*)k, threads,
                 cuda::RingBytes(stages, packs, threads)}};
      return Launches<T>(2, p);
    }
    default: {
      if (cols > kV3MaxCols) return {};
      const auto l = PickV3<T>(cols, true);
      if (l.kernel == nullptr) return Launches<T>(2, p);
      return {{"SoftmaxV3<" + type + ",w" + std::to_string(l.width) + ",perlane" + std::to_string(l.per_lane) + ">",
               (const void*)l.kernel, kV3Block, 0}};
    }
  }
}

template <int kRung>
std::vector<LaunchInfo> LaunchesOf(const Problem& p) {
  return p.dtype == Dtype::kBF16 ? Launches<__nv_bfloat16>(kRung, p) : Launches<float>(kRung, p);
}

std::string RowGridSkip(const Problem& p) {
  return p.dim("rows") > INT_MAX ? "rows over 2^31-1: one block per row exceeds gridDim.x" : "";
}

std::string V3Skip(const Problem& p) {
  if (p.dim("cols") > kV3MaxCols)
    return "cols " + std::to_string(p.dim("cols")) +
           " > 4096: one warp per row keeps at most 128 values per lane in registers (see cuda_v2_online)";
  return "";
}

}  // namespace

void AddSoftmaxCudaVariants(OpDef& op) {
  const std::vector<Dtype> dtypes = {Dtype::kF32, Dtype::kBF16};
  op.variants.push_back({
      .name = "cuda_v1_three_pass",
      .description = "Block per row, three passes over the row.",
      .backend = Backend::kCuda,
      .dtypes = dtypes,
      .skip_reason = RowGridSkip,
      .run_cuda = Run<LaunchV1<float>, LaunchV1<__nv_bfloat16>>,
      .launches = LaunchesOf<1>,
  });
  op.variants.push_back({
      .name = "cuda_v2_online",
      .description = "Block per row, online softmax: one pass for (max, sum), one to write.",
      .backend = Backend::kCuda,
      .dtypes = dtypes,
      .skip_reason = RowGridSkip,
      .run_cuda = Run<LaunchV2<float>, LaunchV2<__nv_bfloat16>>,
      .launches = LaunchesOf<2>,
  });
  op.variants.push_back({
      .name = "cuda_v3_warp_row",
      .description = "Warp per row, row in registers (cols <= 4096).",
      .backend = Backend::kCuda,
      .dtypes = dtypes,
      .skip_reason = V3Skip,
      .run_cuda = Run<LaunchV3<float>, LaunchV3<__nv_bfloat16>>,
      .launches = LaunchesOf<3>,
  });
  op.variants.push_back({
      .name = "cuda_v4_block_pipelined",
      .description = "Resident blocks, next row loaded while this one is reduced (register pipeline).",
      .backend = Backend::kCuda,
      .dtypes = dtypes,
      .skip_reason = RowGridSkip,
      .run_cuda = Run<LaunchV4<float, 0>, LaunchV4<__nv_bfloat16, 0>>,
      .launches = LaunchesOf<4>,
  });
  op.variants.push_back({
      .name = "cuda_v5_cp_async_ring",
      .description = "v4 with the next rows in a cp.async shared-memory ring.",
      .backend = Backend::kCuda,
      .dtypes = dtypes,
      .skip_reason = RowGridSkip,
      .run_cuda = Run<LaunchV4<float, cuda::kRingStages>, LaunchV4<__nv_bfloat16, cuda::kRingStages>>,
      .launches = LaunchesOf<5>,
  });
  op.variants.push_back({
      .name = "cuda_v6_one_barrier",
      .description = "v5 with one barrier a row: per-thread maxima, (max, sum) pairs merged.",
      .backend = Backend::kCuda,
      .dtypes = dtypes,
      .skip_reason = RowGridSkip,
      .run_cuda = Run<LaunchV6<float>, LaunchV6<__nv_bfloat16>>,
      .launches = LaunchesOf<6>,
  });
}

}  // namespace kbench::kernels
