// layernorm on CUDA: out[r,c] = (x[r,c] - mean_r) / sqrt(var_r + 1e-5) * gamma[c] + beta[c], with the
// population variance over cols; f32 or bf16 storage, float statistics. Memory-bound like rmsnorm,
// with two statistics per row instead of one (the family's table: kernels/reduction/README.md).
//
// Rungs:
//   cuda_v1_two_pass       one 256-thread block per row, scalar loads: a pass for the mean, a second
//                          for the sum of squared deviations (numerically safe, but x is read three
//                          times counting the normalizing pass, with a block reduction after each).
//   cuda_v2_welford_vec16  one block per row, 16-byte loads, the row kept in registers when it fits:
//                          each thread runs Welford's single-pass update (count, mean, M2) one 16-byte
//                          pack at a time, the threads' states combine with Chan's formula (two
//                          warp-shuffle block sums), then the row is normalized from registers:
//                          x read once.
//                          Scalar accesses when cols is not a multiple of the vector width.
//   cuda_v3_pipelined      block per row with blocks resident for many rows: row i+1 loads while row
//                          i is reduced and written, rows held as raw 16-byte words
//                          (core/cuda/row_pipeline.cuh). With the row in registers the two-pass
//                          statistics cost no extra memory traffic: the mean, then the sum of
//                          squared deviations from it (no per-pack division, nothing cancels).
//                          When every thread holds exactly 4 packs (4096/8192 bf16, 2048/4096 f32 at
//                          128/256 threads), each thread's (mean, M2) comes from one pass of sums of
//                          deviations from its first value (bounded cancellation, see the kernel);
//                          each warp sums the pairs' deviations from one thread's mean and the block
//                          merges the warps' pairs with Chan's formula: one reduction and one barrier
//                          a row instead of two block sums.
//                          Rows that do not fit 4 packs a thread (or odd widths) run v2's kernel.
//   cuda_v4_cp_async_ring  v3 with the next rows in a shared-memory ring that cp.async fills
//                          (ForEachRowRing): kRingStages rows a block in flight. Same fallback.
#include "core/cuda/cuda_check.cuh"
#include "core/cuda/row_pipeline.cuh"
#include "core/cuda/rows.cuh"
#include "core/cuda/vec.cuh"
#include "core/cuda/warp_reduce.cuh"
#include "reduction/layernorm/layernorm.h"
#include "reduction/layernorm/layernorm_ref.h"

#include <climits>
#include <string>
#include <vector>

namespace kbench::kernels {
namespace {

using cuda::BlockSum;
using cuda::FromFloat;
using cuda::kRowBlock;
using cuda::kVec16;
using cuda::LoadFloats;
using cuda::StoreFloats;
using cuda::ToFloat;

constexpr float kEps = static_cast<float>(kLayernormEps);
constexpr int kV1Block = 256;

// --- v1: two-pass statistics ---------------------------------------------------------------------------
template <typename T>
__global__ void __launch_bounds__(kV1Block)
    LayernormV1(const T* __restrict__ x, const T* __restrict__ gamma, const T* __restrict__ beta, T* __restrict__ out,
                int64_t cols) {
  const T* xr = x + static_cast<int64_t>(blockIdx.x) * cols;
  T* orow = out + static_cast<int64_t>(blockIdx.x) * cols;
  float sum = 0.0f;
  for (int64_t c = threadIdx.x; c < cols; c += kV1Block) sum += ToFloat(xr[c]);
  const float mean = BlockSum(sum) / static_cast<float>(cols);
  float sq = 0.0f;
  for (int64_t c = threadIdx.x; c < cols; c += kV1Block) {
    const float d = ToFloat(xr[c]) - mean;
    sq += d * d;
  }
  const float rstd = rsqrtf(BlockSum(sq) / static_cast<float>(cols) + kEps);
  for (int64_t c = threadIdx.x; c < cols; c += kV1Block)
    orow[c] = FromFloat<T>((ToFloat(xr[c]) - mean) * rstd * ToFloat(gamma[c]) + ToFloat(beta[c]));
}

// --- v2: Welford, vectorized, row in registers --------------------------------------------------------
struct Welford {
  float n, mean, m2;  // count, running mean, sum of squared deviations from it
};

// Chan et al.'s merge of two partial states; an empty side leaves the other unchanged. Counts are
// small integers, so the fast division (2 ulp) is as good as the IEEE one here, at a tenth the cost.
__device__ __forceinline__ Welford Merge(const Welford& a, const Welford& b) {
  const float n = a.n + b.n;
  if (n == 0.0f) return a;
  const float d = b.mean - a.mean, fb = __fdividef(b.n, n);
  return {n, a.mean + d * fb, a.m2 + b.m2 + d * d * a.n * fb};
}

// Welford's update, one pack at a time: the pack's own mean and M2 come from registers (exact
// enough over kW values), then one merge. Per element it would be a division and a dependent
// chain through the running mean per value; per pack the chain is kW times shorter.
template <int kW>
__device__ __forceinline__ void Update(Welford& w, const float (&v)[kW]) {
  float sum = 0.0f;
#pragma unroll
  for (int k = 0; k < kW; ++k) sum += v[k];
  const float mean = sum * (1.0f / kW);
  float m2 = 0.0f;
#pragma unroll
  for (int k = 0; k < kW; ++k) m2 += (v[k] - mean) * (v[k] - mean);
  w = Merge(w, {static_cast<float>(kW), mean, m2});
}

// Mean and rstd of the row, returned to every thread (every thread must call it). Chan's formula
// for many partitions at once: mean = sum_t n_t mean_t / n, M2 = sum_t (M2_t + n_t (mean_t - mean)^2);
// each thread's M2 is about its own mean, so nothing cancels, and the block needs two plain float
// sums (warp shuffles, one shared slot per warp) instead of pairwise merges with divisions.
__device__ __forceinline__ float2 BlockStats(const Welford& w, int64_t cols) {
  const float mean = BlockSum(w.n * w.mean) / static_cast<float>(cols);
  const float d = w.mean - mean;
  const float m2 = BlockSum(w.m2 + w.n * d * d);
  return make_float2(mean, rsqrtf(m2 / static_cast<float>(cols) + kEps));
}

template <typename T, int kW, int kPacks>
__global__ void __launch_bounds__(kRowBlock, 1)
    LayernormV2(const T* __restrict__ x, const T* __restrict__ gamma, const T* __restrict__ beta, T* __restrict__ out,
                int64_t cols) {
  const T* xr = x + static_cast<int64_t>(blockIdx.x) * cols;
  T* orow = out + static_cast<int64_t>(blockIdx.x) * cols;
  const auto normalize_store = [&](int64_t p, float (&v)[kW], float2 stats) {
    float g[kW], b[kW];
    LoadFloats<T, kW>(gamma + p * kW, g);
    LoadFloats<T, kW>(beta + p * kW, b);
#pragma unroll
    for (int k = 0; k < kW; ++k) v[k] = (v[k] - stats.x) * stats.y * g[k] + b[k];
    StoreFloats<T, kW>(orow + p * kW, v);
  };
  Welford w{0.0f, 0.0f, 0.0f};
  if constexpr (kPacks > 0) {
    const int packs = static_cast<int>(cols / kW);  // <= kPacks * blockDim.x (the plan)
    float v[kPacks][kW];
#pragma unroll
    for (int j = 0; j < kPacks; ++j) {
      const int p = threadIdx.x + j * blockDim.x;
      if (p < packs) {
        LoadFloats<T, kW>(xr + p * kW, v[j]);
        Update<kW>(w, v[j]);
      }
    }
    const float2 stats = BlockStats(w, cols);
#pragma unroll
    for (int j = 0; j < kPacks; ++j) {
      const int p = threadIdx.x + j * blockDim.x;
      if (p < packs) normalize_store(p, v[j], stats);
    }
  } else {
    // Row too wide for registers: Welford over the row, then read it again to normalize.
    const int64_t packs = cols / kW;
    for (int64_t p = threadIdx.x; p < packs; p += blockDim.x) {
      float v[kW];
      LoadFloats<T, kW>(xr + p * kW, v);
      Update<kW>(w, v);
    }
    const float2 stats = BlockStats(w, cols);
    for (int64_t p = threadIdx.x; p < packs; p += blockDim.x) {
      float v[kW];
      LoadFloats<T, kW>(xr + p * kW, v);
      normalize_store(p, v, stats);
    }
  }
}

template <typename T>
using V2Fn = void (*)(const T*, const T*, const T*, T*, int64_t);

template <typename T>
struct V2Launch {
  V2Fn<T> kernel;
  cuda::RowPlan plan;
};

template <typename T>
V2Launch<T> PickV2(int64_t cols, bool vec_ok) {
  V2Launch<T> l;
  l.plan = cuda::PlanRow(cols, kVec16<T>, vec_ok);
  if (l.plan.width == 1) {
    l.kernel = cuda::PickPacks<cuda::kRowCacheFloats>(
        l.plan.packs, [](auto k) -> V2Fn<T> { return &LayernormV2<T, 1, decltype(k)::value>; });
  } else {
    l.kernel = cuda::PickPacks<cuda::kRowCacheFloats / kVec16<T>>(
        l.plan.packs, [](auto k) -> V2Fn<T> { return &LayernormV2<T, kVec16<T>, decltype(k)::value>; });
  }
  return l;
}


// --- v3: pipelined rows, statistics from registers -----------------------------------------------------
constexpr int kV3MaxThreads = 256;

// Mean and M2 of the block's values when every thread holds n of them with the given mean and
// M2. In each warp, plain sums: relative to lane 0's mean P, a thread adds a = mean - P and Q =
// M2 + n a^2 (its squared deviations from P), and the warp's M2 = sum Q - n (sum a)^2 / 32. P is
// one of the 32 thread means, so (P - warp mean)^2 is at most 31/32 of the means' summed squared
// deviations (Samuelson), sum Q <= 32 M2, and at most 5 bits cancel, as in the thread's own
// one-pass sums. Two shuffles and two adds a step where Chan's merge of (mean, M2) pairs takes
// two shuffles and five dependent flops. Then one barrier and Chan's merge of the warps' pairs
// (equal counts: means average, M2 gains d^2 n / 2), read and merged by every thread in the same
// order: the same bits everywhere, no second shuffle tree.
template <int kThreads>
__device__ __forceinline__ float2 BlockMeanM2(cuda::WarpPartials<float2>& partials, unsigned parity, float mean,
                                              float m2, float n) {
  constexpr int kWarps = kThreads / 32;
  static_assert(kWarps > 0 && (kWarps & (kWarps - 1)) == 0, "the warps' merge tree needs a power of two");
  const float pivot = __shfl_sync(cuda::kFullWarp, mean, 0);
  float a = mean - pivot;
  float q = fmaf(n * a, a, m2);
#pragma unroll
  for (int off = 1; off < 32; off <<= 1) {  // xor butterfly: every lane ends with the same bits
    a += __shfl_xor_sync(cuda::kFullWarp, a, off);
    q += __shfl_xor_sync(cuda::kFullWarp, q, off);
  }
  const float wa = a * (1.0f / 32.0f);
  const float2* warps =
      cuda::PostWarpPartial(partials, parity, make_float2(pivot + wa, fmaxf(fmaf(-n * a, wa, q), 0.0f)));
  n *= 32.0f;
  float2 v[kWarps];
#pragma unroll
  for (int w = 0; w < kWarps; ++w) v[w] = warps[w];
#pragma unroll
  for (int h = kWarps / 2; h >= 1; h /= 2) {
#pragma unroll
    for (int i = 0; i < h; ++i) {
      const float d = v[i + h].x - v[i].x;
      v[i] = make_float2(0.5f * (v[i].x + v[i + h].x), (v[i].y + v[i + h].y) + d * d * (0.5f * n));
    }
    n *= 2.0f;
  }
  return v[0];
}

// kStages 0: the next row in registers (v3); else a cp.async ring of kStages rows (v4).
template <typename T, int kPacks, int kStages, int kThreads>
__global__ void __launch_bounds__(kThreads ? kThreads : kV3MaxThreads, cuda::FixedMinBlocks<kThreads, kStages, kPacks>())
    LayernormV3(const T* __restrict__ x, const T* __restrict__ gamma, const T* __restrict__ beta, T* __restrict__ out,
                int64_t rows, int64_t any_cols) {
  constexpr int kW = kVec16<T>;
  const int64_t cols = cuda::RowCols<kPacks, kThreads, kW>(any_cols);
  const int packs = static_cast<int>(cols / kW);  // <= kPacks * blockDim.x (PipelinePacks)
  const float inv_cols = 1.0f / static_cast<float>(cols);
  // gamma and beta packs are the same for every row: loaded once, kept raw in registers.
  uint4 g_raw[kPacks], b_raw[kPacks];
  cuda::LoadRawPacks<kPacks>(gamma, packs, g_raw);
  cuda::LoadRawPacks<kPacks>(beta, packs, b_raw);
  [[maybe_unused]] __shared__ cuda::WarpPartials<float2> partials;
  [[maybe_unused]] unsigned parity = 0;
  cuda::ForEachRowStaged<T, kPacks, kStages>(x, rows, cols, packs, [&](int64_t r, const uint4(&row)[kPacks]) {
    float mean, rstd;
    if constexpr (kThreads > 0) {
      // Every thread holds exactly kPacks full packs. Its own (mean, M2) in one pass, from sums of
      // deviations from its first value p: S1 = sum(v - p), S2 = sum((v - p)^2), mean = p + S1/n,
      // M2 = S2 - S1^2/n. No wait for a mean before the squares, and little to cancel: p is one of
      // the n values, so (p - mean)^2 <= (n - 1) M2 / n (Samuelson), S2 <= n M2, and M2 keeps all
      // but log2(n) of float's bits (n = 32 in bf16, 16 in f32). Then the block merges the pairs
      // (BlockMeanM2): one reduction and one barrier a row instead of two block sums (four barriers).
      constexpr float kMine = kPacks * kW;
      float first[kW];
      cuda::WidenPack<T>(row[0], first);
      const float pivot = first[0];
      float s1 = 0.0f, s2 = 0.0f;
      cuda::ForEachPackSlot<T>(row, packs, [&](int j, int, const float(&v)[kW]) {
        float q1 = 0.0f, q2 = 0.0f;  // a chain per pack; the packs' chains are independent
#pragma unroll
        for (int k = 0; k < kW; ++k) {
          if (j == 0 && k == 0) continue;  // the pivot itself: d = 0 (the compiler cannot fold v - v)
          const float d = v[k] - pivot;
          q1 += d;
          q2 = fmaf(d, d, q2);
        }
        s1 += q1;
        s2 += q2;
      });
      const float dm = s1 * (1.0f / kMine);
      const float2 stats =
          BlockMeanM2<kThreads>(partials, parity++, pivot + dm, fmaxf(fmaf(-s1, dm, s2), 0.0f), kMine);
      mean = stats.x;
      rstd = rsqrtf(stats.y * inv_cols + kEps);
    } else {
      // Any geometry: the exact two-pass statistics from registers, as two block sums.
      float sum = 0.0f;
      cuda::ForEachPack<T>(row, packs, [&](int, const float(&v)[kW]) {
        sum += cuda::PackReduce<kW>(v, [](float a, float b) { return a + b; });
      });
      mean = BlockSum(sum) * inv_cols;
      float m2 = 0.0f;
      cuda::ForEachPack<T>(row, packs, [&](int, const float(&v)[kW]) {
        float q = 0.0f;  // a chain of fmas per pack: 2 instructions a value
#pragma unroll
        for (int k = 0; k < kW; ++k) q = fmaf(v[k] - mean, v[k] - mean, q);
        m2 += q;
      });
      rstd = rsqrtf(BlockSum(m2) * inv_cols + kEps);
    }
    // (v - mean) * rstd as one fma: v * rstd - mean * rstd. The product rounds once; where v is
    // near a large mean the error is an ulp of mean * rstd, far below bf16's or f32's tolerance.
    const float shift = -mean * rstd;
    T* orow = out + r * cols;
    cuda::ForEachPackSlot<T>(row, packs, [&](int j, int p, float(&v)[kW]) {
      float g[kW], b[kW];
      cuda::WidenPack<T>(cuda::Opaque(g_raw[j]), g);
      cuda::WidenPack<T>(cuda::Opaque(b_raw[j]), b);
#pragma unroll
      for (int k = 0; k < kW; ++k) v[k] = fmaf(fmaf(v[k], rstd, shift), g[k], b[k]);
      StoreFloats<T, kW>(orow + static_cast<int64_t>(p) * kW, v);
    });
  });
}

template <typename T>
using V3Fn = void (*)(const T*, const T*, const T*, T*, int64_t, int64_t);

// The v3/v4 instantiation for cols, or nullptr (then v2 runs); *threads and *packs get its plan.
template <typename T, int kStages>
V3Fn<T> PickV3(int64_t cols, bool vec_ok, int* threads, int* packs) {
  return cuda::PickPipelined(cols, kVec16<T>, vec_ok, threads, packs, [](auto kPacks, auto kThreads) -> V3Fn<T> {
    return &LayernormV3<T, kPacks, kStages, kThreads>;
  });
}

// --- launchers ---------------------------------------------------------------------------------------
struct Args {
  const void *x, *gamma, *beta;
  void* out;
  int64_t rows, cols;
};

template <typename T>
int LaunchV1(const Args& a, cudaStream_t s) {
  LayernormV1<T><<<static_cast<unsigned>(a.rows), kV1Block, 0, s>>>(
      static_cast<const T*>(a.x), static_cast<const T*>(a.gamma), static_cast<const T*>(a.beta),
      static_cast<T*>(a.out), a.cols);
  KB_LAUNCH_CHECK();
  return 0;
}

template <typename T>
int LaunchV2(const Args& a, cudaStream_t s) {
  const bool vec_ok =
      cuda::Aligned16(a.x) && cuda::Aligned16(a.gamma) && cuda::Aligned16(a.beta) && cuda::Aligned16(a.out);
  const auto l = PickV2<T>(a.cols, vec_ok);
  l.kernel<<<static_cast<unsigned>(a.rows), l.plan.threads, 0, s>>>(
      static_cast<const T*>(a.x), static_cast<const T*>(a.gamma), static_cast<const T*>(a.beta),
      static_cast<T*>(a.out), a.cols);
  KB_LAUNCH_CHECK();
  return 0;
}

template <typename T, int kStages>
int LaunchV3(const Args& a, cudaStream_t s) {
  int threads = 0, packs = 0;
  const bool vec_ok =
      cuda::Aligned16(a.x) && cuda::Aligned16(a.gamma) && cuda::Aligned16(a.beta) && cuda::Aligned16(a.out);
  const auto k = PickV3<T, kStages>(a.cols, vec_ok, &threads, &packs);
  if (k == nullptr) return LaunchV2<T>(a, s);
  return cuda::LaunchPipelined<kStages>(k, threads, packs, a.rows, s, static_cast<const T*>(a.x),
                                        static_cast<const T*>(a.gamma), static_cast<const T*>(a.beta),
                                        static_cast<T*>(a.out), a.rows, a.cols);
}

// --- registration ------------------------------------------------------------------------------------
template <int (*L32)(const Args&, cudaStream_t), int (*L16)(const Args&, cudaStream_t)>
int Run(const Problem& p, std::span<const Tensor> t, void* stream) {
  const Args a{t[0].data, t[1].data, t[2].data, t[3].data, p.dim("rows"), p.dim("cols")};
  if (a.rows <= 0 || a.cols <= 0) return 0;  // nothing to write
  return cuda::DispatchDtype(p.dtype, [&](auto tag) {
    return sizeof(tag) == 4 ? L32(a, cuda::AsStream(stream)) : L16(a, cuda::AsStream(stream));
  });
}

template <typename T>
std::vector<LaunchInfo> Launches(int rung, const Problem& p) {
  const std::string type = cuda::TypeName<T>();
  if (rung == 1) return {{"LayernormV1<" + type + ">", (const void*)&LayernormV1<T>, kV1Block, 0}};
  if (rung == 3) {
    int threads = 0, packs = 0;
    if (const auto k = PickV3<T, 0>(p.dim("cols"), true, &threads, &packs))
      return {{"LayernormV3<" + type + ",pipelined>", (const void*)k, threads, 0}};
  }
  if (rung == 4) {
    int threads = 0, packs = 0;
    if (const auto k = PickV3<T, cuda::kRingStages>(p.dim("cols"), true, &threads, &packs))
      return {{"LayernormV3<" + type + ",ring" + std::to_string(cuda::kRingStages) + ">", (const void*)k, threads,
               cuda::RingBytes(cuda::kRingStages, packs, threads)}};
  }
  const auto l = PickV2<T>(p.dim("cols"), true);
  return {{"LayernormV2<" + type + ",w" + std::to_string(l.plan.width) +
               (l.plan.packs ? ",regs" + std::to_string(l.plan.packs) : std::string(",loop")) + ">",
           (const void*)l.kernel, l.plan.threads, 0}};
}

template <int kRung>
std::vector<LaunchInfo> LaunchesOf(const Problem& p) {
  return p.dtype == Dtype::kBF16 ? Launches<__nv_bfloat16>(kRung, p) : Launches<float>(kRung, p);
}

std::string RowGridSkip(const Problem& p) {
  return p.dim("rows") > INT_MAX ? "rows over 2^31-1: one block per row exceeds gridDim.x" : "";
}

}  // namespace

void AddLayernormCudaVariants(OpDef& op) {
  const std::vector<Dtype> dtypes = {Dtype::kF32, Dtype::kBF16};
  op.variants.push_back({
      .name = "cuda_v1_two_pass",
      .description = "Block per row, scalar loads, two-pass statistics.",
      .backend = Backend::kCuda,
      .dtypes = dtypes,
      .skip_reason = RowGridSkip,
      .run_cuda = Run<LaunchV1<float>, LaunchV1<__nv_bfloat16>>,
      .launches = LaunchesOf<1>,
  });
  op.variants.push_back({
      .name = "cuda_v2_welford_vec16",
      .description = "Block per row, 16-byte loads, Welford per thread, Chan's merge.",
      .backend = Backend::kCuda,
      .dtypes = dtypes,
      .skip_reason = RowGridSkip,
      .run_cuda = Run<LaunchV2<float>, LaunchV2<__nv_bfloat16>>,
      .launches = LaunchesOf<2>,
  });
  op.variants.push_back({
      .name = "cuda_v3_pipelined",
      .description = "Resident blocks, next row loaded while this one is reduced (register pipeline).",
      .backend = Backend::kCuda,
      .dtypes = dtypes,
      .skip_reason = RowGridSkip,
      .run_cuda = Run<LaunchV3<float, 0>, LaunchV3<__nv_bfloat16, 0>>,
      .launches = LaunchesOf<3>,
  });
  op.variants.push_back({
      .name = "cuda_v4_cp_async_ring",
      .description = "v3 with the next rows in a cp.async shared-memory ring.",
      .backend = Backend::kCuda,
      .dtypes = dtypes,
      .skip_reason = RowGridSkip,
      .run_cuda = Run<LaunchV3<float, cuda::kRingStages>, LaunchV3<__nv_bfloat16, cuda::kRingStages>>,
      .launches = LaunchesOf<4>,
  });
}

}  // namespace kbench::kernels
