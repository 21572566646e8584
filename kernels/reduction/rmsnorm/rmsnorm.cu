// rmsnorm on CUDA: out[r,c] = x[r,c] / sqrt(mean_c(x[r,c]^2) + 1e-6) * weight[c]; f32 or bf16
// storage, float accumulation. About 1 FLOP per byte: memory-bound, and the rungs differ in how the
// row's sum of squares is formed (the family's table: kernels/reduction/README.md).
//
// Rungs:
//   cuda_v1_naive        one thread per row: a serial chain of `cols` dependent adds per thread, and
//                        the 32 threads of a warp read 32 different rows (uncoalesced).
//   cuda_v2_smem_tree    one 256-thread block per row, coalesced strided loads; partial sums reduced by
//                        a shared-memory tree (8 levels, a __syncthreads per level; sequential
//                        addressing, so no bank conflicts).
//   cuda_v3_warp_shuffle one block per row; __shfl_xor_sync reduces inside each warp in registers,
//                        shared memory only carries the 8 warp partials: 2 barriers instead of 9.
//   cuda_v4_warp_row     one warp per row, the row held in registers (cols <= 1024, i.e. at most 32
//                        values per lane): no shared memory and no barrier at all. Wider rows skip.
//   cuda_v5_vec16        one block per row with 16-byte loads and stores, the row kept in registers
//                        when it fits (else read twice), weight read as 16-byte vectors; falls back
//                        to scalar accesses when cols is not a multiple of the vector width.
//   cuda_v6_pipelined    v5's math, but a block stays resident for many rows and loads row i+1 while it
//                        reduces and writes row i, holding rows as raw 16-byte words
//                        (core/cuda/row_pipeline.cuh): loads in flight through every phase. One
//                        barrier a row: every thread adds the warps' partials itself. The weight is
//                        loaded once per kernel and kept raw in registers. Rows that do not fit 4
//                        packs a thread (or unaligned / odd widths) run v5's kernel.
//   cuda_v7_cp_async_ring v6 with the next rows in a shared-memory ring that cp.async fills
//                        (ForEachRowRing): a slot is refilled as soon as its row is in registers, so
//                        kRingStages (4) rows a block are in flight through each row's work where
//                        registers held 1, and none of them costs a register. No barrier guards the
//                        ring (each thread reads back only what it copied). Same fallback as v6.
#include "core/cuda/cuda_check.cuh"
#include "core/cuda/row_pipeline.cuh"
#include "core/cuda/vec.cuh"
#include "core/cuda/warp_reduce.cuh"
#include "reduction/rmsnorm/rmsnorm.h"
#include "reduction/rmsnorm/rmsnorm_ref.h"
#include "reduction/rmsnorm/rmsnorm_rows.cuh"

#include <climits>
#include <string>
#include <vector>

namespace kbench::kernels {
namespace {

using cuda::BlockSum;
using cuda::CeilDiv;
using cuda::FromFloat;
using cuda::ToFloat;
using cuda::WarpSum;

constexpr float kEps = static_cast<float>(kRmsnormEps);
constexpr int kV1Block = 128;
constexpr int kTreeBlock = 256;  // v2, v3: power of two for the tree
constexpr int kV4Block = 128;    // v4: 4 rows per block
constexpr int kV4MaxCols = 1024;

// --- v1: one thread per row --------------------------------------------------------------------------
template <typename T>
__global__ void __launch_bounds__(kV1Block)
    RmsnormV1(const T* __restrict__ x, const T* __restrict__ w, T* __restrict__ out, int64_t rows, int64_t cols) {
  const int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const T* xr = x + r * cols;
  float sum_sq = 0.0f;
  for (int64_t c = 0; c < cols; ++c) sum_sq += ToFloat(xr[c]) * ToFloat(xr[c]);
  const float inv_rms = rsqrtf(sum_sq / static_cast<float>(cols) + kEps);
  for (int64_t c = 0; c < cols; ++c) out[r * cols + c] = FromFloat<T>(ToFloat(xr[c]) * inv_rms * ToFloat(w[c]));
}

// --- v2: block per row, shared-memory tree -----------------------------------------------------------
template <typename T>
__global__ void __launch_bounds__(kTreeBlock)
    RmsnormV2(const T* __restrict__ x, const T* __restrict__ w, T* __restrict__ out, int64_t cols) {
  __shared__ float partial[kTreeBlock];
  const T* xr = x + static_cast<int64_t>(blockIdx.x) * cols;
  T* orow = out + static_cast<int64_t>(blockIdx.x) * cols;
  float sum_sq = 0.0f;
  for (int64_t c = threadIdx.x; c < cols; c += kTreeBlock) sum_sq += ToFloat(xr[c]) * ToFloat(xr[c]);
  partial[threadIdx.x] = sum_sq;
  __syncthreads();
  // Sequential addressing: active threads read consecutive words, conflict-free; one barrier a level.
  for (int active = kTreeBlock / 2; active > 0; active >>= 1) {
    if (threadIdx.x < active) partial[threadIdx.x] += partial[threadIdx.x + active];
    __syncthreads();
  }
  const float inv_rms = rsqrtf(partial[0] / static_cast<float>(cols) + kEps);
  for (int64_t c = threadIdx.x; c < cols; c += kTreeBlock) orow[c] = FromFloat<T>(ToFloat(xr[c]) * inv_rms * ToFloat(w[c]));
}

// --- v3: block per row, warp shuffle + one shared slot per warp --------------------------------------
template <typename T>
__global__ void __launch_bounds__(kTreeBlock)
    RmsnormV3(const T* __restrict__ x, const T* __restrict__ w, T* __restrict__ out, int64_t cols) {
  const T* xr = x + static_cast<int64_t>(blockIdx.x) * cols;
  T* orow = out + static_cast<int64_t>(blockIdx.x) * cols;
  float sum_sq = 0.0f;
  for (int64_t c = threadIdx.x; c < cols; c += kTreeBlock) sum_sq += ToFloat(xr[c]) * ToFloat(xr[c]);
  const float inv_rms = rsqrtf(BlockSum(sum_sq) / static_cast<float>(cols) + kEps);
  for (int64_t c = threadIdx.x; c < cols; c += kTreeBlock) orow[c] = FromFloat<T>(ToFloat(xr[c]) * inv_rms * ToFloat(w[c]));
}

// --- v4: warp per row, row in registers (kPerLane values per lane) ------------------------------------
template <typename T, int kPerLane>
__global__ void __launch_bounds__(kV4Block)
    RmsnormV4(const T* __restrict__ x, const T* __restrict__ w, T* __restrict__ out, int64_t rows, int64_t cols) {
  const int lane = threadIdx.x & 31;
  const int64_t r = static_cast<int64_t>(blockIdx.x) * (kV4Block / 32) + (threadIdx.x >> 5);
  if (r >= rows) return;  // a whole warp leaves together; no block barrier follows
  const T* xr = x + r * cols;
  float v[kPerLane];
  float sum_sq = 0.0f;
#pragma unroll
  for (int j = 0; j < kPerLane; ++j) {
    const int64_t c = lane + 32 * j;
    v[j] = c < cols ? ToFloat(xr[c]) : 0.0f;
    sum_sq += v[j] * v[j];
  }
  const float inv_rms = rsqrtf(WarpSum(sum_sq) / static_cast<float>(cols) + kEps);
#pragma unroll
  for (int j = 0; j < kPerLane; ++j) {
    const int64_t c = lane + 32 * j;
    if (c < cols) out[r * cols + c] = FromFloat<T>(v[j] * inv_rms * ToFloat(w[c]));
  }
}

template <typename T>
using V4Fn = void (*)(const T*, const T*, T*, int64_t, int64_t);

template <typename T>
V4Fn<T> PickV4(int64_t cols) {
  const int64_t per_lane = CeilDiv(cols, 32);
  if (per_lane <= 1) return &RmsnormV4<T, 1>;
  if (per_lane <= 2) return &RmsnormV4<T, 2>;
  if (per_lane <= 4) return &RmsnormV4<T, 4>;
  if (per_lane <= 8) return &RmsnormV4<T, 8>;
  if (per_lane <= 16) return &RmsnormV4<T, 16>;
  return &RmsnormV4<T, 32>;
}

int PerLaneBucket(int64_t cols) {
  int b = 1;
  while (b < CeilDiv(cols, 32)) b *= 2;
  return b;
}


// --- v6: pipelined rows, raw packs in registers --------------------------------------------------------
constexpr int kV6MaxThreads = 256;

// kStages 0: the next row in registers (v6); else a cp.async ring of kStages rows (v7).
template <typename T, int kPacks, int kStages, int kThreads>
__global__ void __launch_bounds__(kThreads ? kThreads : kV6MaxThreads, cuda::FixedMinBlocks<kThreads, kStages>())
    RmsnormV6(const T* __restrict__ x, const T* __restrict__ w, T* __restrict__ out, int64_t rows, int64_t any_cols) {
  constexpr int kW = cuda::kVec16<T>;
  const int64_t cols = cuda::RowCols<kPacks, kThreads, kW>(any_cols);
  const int packs = static_cast<int>(cols / kW);  // <= kPacks * blockDim.x (PipelinePacks)
  // The weight packs a thread scales with are the same for every row: loaded once, kept raw (4
  // registers a pack), instead of an L1 round trip per pack per row that the store waits on.
  uint4 w_raw[kPacks];
  cuda::LoadRawPacks<kPacks>(w, packs, w_raw);
  __shared__ cuda::WarpPartials<float> partials;
  unsigned parity = 0;
  cuda::ForEachRowStaged<T, kPacks, kStages>(x, rows, cols, packs, [&](int64_t r, const uint4(&row)[kPacks]) {
    float sum_sq = 0.0f;
    cuda::ForEachPack<T>(row, packs, [&](int, const float(&v)[kW]) {
      float sq[kW];
#pragma unroll
      for (int k = 0; k < kW; ++k) sq[k] = v[k] * v[k];
      sum_sq += cuda::PackReduce<kW>(sq, [](float a, float b) { return a + b; });
    });
    const float inv_rms =
        rsqrtf(cuda::BlockSumOneBarrier(partials, parity++, sum_sq) / static_cast<float>(cols) + kEps);
    T* orow = out + r * cols;
    cuda::ForEachPackSlot<T>(row, packs, [&](int j, int p, float(&v)[kW]) {
      float wv[kW];
      cuda::WidenPack<T>(cuda::Opaque(w_raw[j]), wv);
#pragma unroll
      for (int k = 0; k < kW; ++k) v[k] = v[k] * inv_rms * wv[k];
      cuda::StoreFloats<T, kW>(orow + static_cast<int64_t>(p) * kW, v);
    });
  });
}

template <typename T>
using V6Fn = void (*)(const T*, const T*, T*, int64_t, int64_t);

// The v6/v7 instantiation for cols, or nullptr (then v5 runs); *threads and *packs get its plan.
template <typename T, int kStages>
V6Fn<T> PickV6(int64_t cols, bool vec_ok, int* threads, int* packs) {
  return cuda::PickPipelined(cols, cuda::kVec16<T>, vec_ok, threads, packs, [](auto kPacks, auto kThreads) -> V6Fn<T> {
    return &RmsnormV6<T, kPacks, kStages, kThreads>;
  });
}

// --- launchers ---------------------------------------------------------------------------------------
struct Args {
  const void* x;
  const void* w;
  void* out;
  int64_t rows, cols;
};

template <typename T>
int LaunchV1(const Args& a, cudaStream_t s) {
  RmsnormV1<T><<<static_cast<unsigned>(CeilDiv(a.rows, kV1Block)), kV1Block, 0, s>>>(
      static_cast<const T*>(a.x), static_cast<const T*>(a.w), static_cast<T*>(a.out), a.rows, a.cols);
  KB_LAUNCH_CHECK();
  return 0;
}

template <typename T>
int LaunchV2(const Args& a, cudaStream_t s) {
  RmsnormV2<T><<<static_cast<unsigned>(a.rows), kTreeBlock, 0, s>>>(
      static_cast<const T*>(a.x), static_cast<const T*>(a.w), static_cast<T*>(a.out), a.cols);
  KB_LAUNCH_CHECK();
  return 0;
}

template <typename T>
int LaunchV3(const Args& a, cudaStream_t s) {
  RmsnormV3<T><<<static_cast<unsigned>(a.rows), kTreeBlock, 0, s>>>(
      static_cast<const T*>(a.x), static_cast<const T*>(a.w), static_cast<T*>(a.out), a.cols);
  KB_LAUNCH_CHECK();
  return 0;
}

template <typename T>
int LaunchV4(const Args& a, cudaStream_t s) {
  if (a.cols > kV4MaxCols) return static_cast<int>(cudaErrorInvalidValue);  // skip_reason says so
  PickV4<T>(a.cols)<<<static_cast<unsigned>(CeilDiv(a.rows, kV4Block / 32)), kV4Block, 0, s>>>(
      static_cast<const T*>(a.x), static_cast<const T*>(a.w), static_cast<T*>(a.out), a.rows, a.cols);
  KB_LAUNCH_CHECK();
  return 0;
}

template <typename T>
int LaunchV5(const Args& a, cudaStream_t s) {
  return cuda::LaunchRmsnormRows<T, false>(static_cast<const T*>(a.x), nullptr, static_cast<const T*>(a.w),
                                           static_cast<T*>(a.out), nullptr, a.rows, a.cols, kEps, s);
}

template <typename T, int kStages>
int LaunchV6(const Args& a, cudaStream_t s) {
  int threads = 0, packs = 0;
  const auto k = PickV6<T, kStages>(a.cols, cuda::Aligned16(a.x) && cuda::Aligned16(a.w) && cuda::Aligned16(a.out),
                                    &threads, &packs);
  if (k == nullptr) return LaunchV5<T>(a, s);
  return cuda::LaunchPipelined<kStages>(k, threads, packs, a.rows, s, static_cast<const T*>(a.x),
                                        static_cast<const T*>(a.w), static_cast<T*>(a.out), a.rows, a.cols);
}

// --- registration ------------------------------------------------------------------------------------
template <int (*L32)(const Args&, cudaStream_t), int (*L16)(const Args&, cudaStream_t)>
int Run(const Problem& p, std::span<const Tensor> t, void* stream) {
  const Args a{t[0].data, t[1].data, t[2].data, p.dim("rows"), p.dim("cols")};
  if (a.rows <= 0 || a.cols <= 0) return 0;  // nothing to write
  return cuda::DispatchDtype(p.dtype, [&](auto tag) {
    return sizeof(tag) == 4 ? L32(a, cuda::AsStream(stream)) : L16(a, cuda::AsStream(stream));
  });
}

template <typename T>
std::vector<LaunchInfo> Launches(int rung, const Problem& p) {
  const auto name = [](const char* k) { return std::string(k) + "<" + cuda::TypeName<T>() + ">"; };
  const int64_t cols = p.dim("cols");
  switch (rung) {
    case 1: return {{name("RmsnormV1"), (const void*)&RmsnormV1<T>, kV1Block, 0}};
    case 2: return {{name("RmsnormV2"), (const void*)&RmsnormV2<T>, kTreeBlock, 0}};
    case 3: return {{name("RmsnormV3"), (const void*)&RmsnormV3<T>, kTreeBlock, 0}};
    case 4:
      if (cols > kV4MaxCols) return {};
      return {{"RmsnormV4<" + std::string(cuda::TypeName<T>()) + ",perlane" + std::to_string(PerLaneBucket(cols)) + ">",
               (const void*)PickV4<T>(cols), kV4Block, 0}};
    case 6: {
      int threads = 0, packs = 0;
      if (const auto k = PickV6<T, 0>(cols, true, &threads, &packs))
        return {{"RmsnormV6<" + std::string(cuda::TypeName<T>()) + ",pipelined>", (const void*)k, threads, 0}};
      return Launches<T>(5, p);
    }
    case 7: {
      int threads = 0, packs = 0;
      if (const auto k = PickV6<T, cuda::kRingStages>(cols, true, &threads, &packs))
        return {{"RmsnormV6<" + std::string(cuda::TypeName<T>()) + ",ring" + std::to_string(cuda::kRingStages) + ">",
                 (const void*)k, threads, cuda::RingBytes(cuda::kRingStages, packs, threads)}};
      return Launches<T>(5, p);
    }
    default: {
      const auto l = cuda::PickRmsnormRow<T, false>(cols, true);
      return {{l.name, (const void*)l.kernel, l.plan.threads, 0}};
    }
  }
}

template <int kRung>
std::vector<LaunchInfo> LaunchesOf(const Problem& p) {
  return p.dtype == Dtype::kBF16 ? Launches<__nv_bfloat16>(kRung, p) : Launches<float>(kRung, p);
}

// Block-per-row rungs put a row in gridDim.x.
std::string RowGridSkip(const Problem& p) {
  return p.dim("rows") > INT_MAX ? "rows over 2^31-1: one block per row exceeds gridDim.x" : "";
}

std::string V4Skip(const Problem& p) {
  if (p.dim("cols") > kV4MaxCols)
    return "cols " + std::to_string(p.dim("cols")) +
           " > 1024: one warp per row keeps at most 32 values per lane in registers (see cuda_v5_vec16)";
  return "";
}

std::string NoSkip(const Problem&) { return ""; }

}  // namespace

void AddRmsnormCudaVariants(OpDef& op) {
  const std::vector<Dtype> dtypes = {Dtype::kF32, Dtype::kBF16};
  op.variants.push_back({
      .name = "cuda_v1_naive",
      .description = "One thread per row.",
      .backend = Backend::kCuda,
      .dtypes = dtypes,
      .skip_reason = NoSkip,
      .run_cuda = Run<LaunchV1<float>, LaunchV1<__nv_bfloat16>>,
      .launches = LaunchesOf<1>,
  });
  op.variants.push_back({
      .name = "cuda_v2_smem_tree",
      .description = "Block per row, shared-memory tree reduction.",
      .backend = Backend::kCuda,
      .dtypes = dtypes,
      .skip_reason = RowGridSkip,
      .run_cuda = Run<LaunchV2<float>, LaunchV2<__nv_bfloat16>>,
      .launches = LaunchesOf<2>,
  });
  op.variants.push_back({
      .name = "cuda_v3_warp_shuffle",
      .description = "Block per row, warp-shuffle reduction.",
      .backend = Backend::kCuda,
      .dtypes = dtypes,
      .skip_reason = RowGridSkip,
      .run_cuda = Run<LaunchV3<float>, LaunchV3<__nv_bfloat16>>,
      .launches = LaunchesOf<3>,
  });
  op.variants.push_back({
      .name = "cuda_v4_warp_row",
      .description = "Warp per row, row in registers (cols <= 1024).",
      .backend = Backend::kCuda,
      .dtypes = dtypes,
      .skip_reason = V4Skip,
      .run_cuda = Run<LaunchV4<float>, LaunchV4<__nv_bfloat16>>,
      .launches = LaunchesOf<4>,
  });
  op.variants.push_back({
      .name = "cuda_v5_vec16",
      .description = "Block per row, 16-byte loads, row in registers.",
      .backend = Backend::kCuda,
      .dtypes = dtypes,
      .skip_reason = RowGridSkip,
      .run_cuda = Run<LaunchV5<float>, LaunchV5<__nv_bfloat16>>,
      .launches = LaunchesOf<5>,
  });
  op.variants.push_back({
      .name = "cuda_v6_pipelined",
      .description = "Resident blocks, next row loaded while this one is reduced (register pipeline).",
      .backend = Backend::kCuda,
      .dtypes = dtypes,
      .skip_reason = RowGridSkip,
      .run_cuda = Run<LaunchV6<float, 0>, LaunchV6<__nv_bfloat16, 0>>,
      .launches = LaunchesOf<6>,
  });
  op.variants.push_back({
      .name = "cuda_v7_cp_async_ring",
      .description = "v6 with the next rows in a cp.async shared-memory ring.",
      .backend = Backend::kCuda,
      .dtypes = dtypes,
      .skip_reason = RowGridSkip,
      .run_cuda = Run<LaunchV6<float, cuda::kRingStages>, LaunchV6<__nv_bfloat16, cuda::kRingStages>>,
      .launches = LaunchesOf<7>,
  });
}

}  // namespace kbench::kernels
