// fp8_quant on CUDA: bf16 -> FP8 E4M3, per-token dynamic scale (scales[r] = max|x[r,:]| / 448) or a
// per-tensor static one (flag static_scale). 2 B read and 1 B written an element: memory-bound, and
// the rungs differ in how often the row crosses the memory bus.
//
// Rungs:
//   cuda_v1_two_kernel  what a straightforward port does: one kernel reduces each row's absmax into
//                       scales (a block per row), a second re-reads x and writes q = x / scale. x
//                       is read twice (at 8192x4096, 64 MB of x is past what L2 keeps between the
//                       kernels): ~5 B an element instead of 3.
//   cuda_v2_one_pass    one kernel, a block per row: the row's 16-byte packs are held in registers
//                       (core/cuda/rows.cuh's plan) through the block max, then scaled and stored as
//                       8-byte E4M3 packs. One read of x. Rows too wide for registers re-read their
//                       row (from L1/L2) in a loop; odd widths and unaligned pointers take scalar paths.
//   cuda_v3_ring        v2's pass with resident blocks walking rows through a cp.async shared-memory
//                       ring (core/cuda/row_pipeline.cuh, as rmsnorm's v7): kRingStages rows a block in
//                       flight through each row's max and stores, one barrier a row. Rows that do
//                       not fit 4 packs a thread run v2.
// With static_scale no rung reduces: v1's first kernel only copies the scale into scales.
#include <climits>
#include <string>
#include <vector>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/row_pipeline.cuh"
#include "core/cuda/rows.cuh"
#include "core/cuda/vec.cuh"
#include "core/cuda/warp_reduce.cuh"
#include "quant/common/fp8.cuh"
#include "quant/common/quant_inputs.h"
#include "quant/common/quant_rows.cuh"
#include "quant/fp8_quant/fp8_quant.h"

namespace kbench::kernels {
namespace {

using bf16 = __nv_bfloat16;
using quant::QuantArgs;

// --- v1: absmax kernel, then a quantize kernel ---------------------------------------------------
constexpr int kV1Block = 256;

template <int kW>
__global__ void __launch_bounds__(kV1Block)
    RowAbsmax(const bf16* __restrict__ x, const float* __restrict__ scale, float* __restrict__ scales, int64_t cols,
              bool is_static) {
  const int64_t r = blockIdx.x;
  if (is_static) {
    if (threadIdx.x == 0) scales[r] = *scale;
    return;
  }
  const bf16* xr = x + r * cols;
  float m = 0.0f;
  for (int64_t p = threadIdx.x; p < cols / kW; p += blockDim.x) {
    float v[kW];
    cuda::LoadFloats<bf16, kW>(xr + p * kW, v);
    m = fmaxf(m, quant::AbsMax(v));
  }
  m = cuda::BlockMax(m);
  if (threadIdx.x == 0) scales[r] = quant::ScaleOf(m);
}

template <int kW>
__global__ void __launch_bounds__(kV1Block)
    RowQuantize(const bf16* __restrict__ x, const float* __restrict__ scales, uint8_t* __restrict__ q, int64_t cols) {
  const int64_t r = blockIdx.x;
  const float inv = quant::InvOfScale(scales[r]);
  for (int64_t p = threadIdx.x; p < cols / kW; p += blockDim.x) {
    float v[kW];
    cuda::LoadFloats<bf16, kW>(x + r * cols + p * kW, v);
    quant::StoreQ<kW>(q + r * cols + p * kW, v, inv);
  }
}

template <int kW>
int LaunchV1As(const QuantArgs& a, cudaStream_t s) {
  const unsigned grid = static_cast<unsigned>(a.rows);
  RowAbsmax<kW><<<grid, kV1Block, 0, s>>>(a.x, a.scale, a.scales, a.cols, a.is_static);
  KB_LAUNCH_CHECK();
  RowQuantize<kW><<<grid, kV1Block, 0, s>>>(a.x, a.scales, a.q, a.cols);
  KB_LAUNCH_CHECK();
  return 0;
}

int LaunchV1(const QuantArgs& a, cudaStream_t s) {
  return quant::VecOk(a) ? LaunchV1As<8>(a, s) : LaunchV1As<1>(a, s);
}

// --- v2: one pass, block per row (quant_rows.cuh) -------------------------------------------------
int LaunchV2(const QuantArgs& a, cudaStream_t s) { return quant::LaunchQuantRows(a, s); }

// --- v3: one pass, resident blocks, cp.async ring -------------------------------------------------
template <int kPacks, int kStages, int kThreads, bool kStatic>
__global__ void __launch_bounds__(kThreads ? kThreads : 256, cuda::FixedMinBlocks<kThreads, kStages>())
    Fp8QuantRing(const bf16* __restrict__ x, const float* __restrict__ scale, uint8_t* __restrict__ q,
                 float* __restrict__ scales, int64_t rows, int64_t any_cols) {
  constexpr int kW = 8;
  const int64_t cols = cuda::RowCols<kPacks, kThreads, kW>(any_cols);
  const int packs = static_cast<int>(cols / kW);
  __shared__ cuda::WarpPartials<float> partials;
  unsigned parity = 0;
  const float static_s = kStatic ? *scale : 0.0f;
  cuda::ForEachRowStaged<bf16, kPacks, kStages>(x, rows, cols, packs, [&](int64_t r, const uint4(&row)[kPacks]) {
    float s = static_s, inv = quant::InvOfScale(static_s);
    if constexpr (!kStatic) {
      float m = 0.0f;
      cuda::ForEachPack<bf16>(row, packs, [&](int, const float(&v)[kW]) { m = fmaxf(m, quant::AbsMax(v)); });
      m = quant::BlockMaxOneBarrier(partials, parity++, m);
      s = quant::ScaleOf(m);
      inv = quant::InvScaleOf(m);
    }
    if (threadIdx.x == 0) scales[r] = s;
    uint8_t* qr = q + r * cols;
    cuda::ForEachPack<bf16>(row, packs, [&](int p, const float(&v)[kW]) {
      quant::StoreFp8x8(qr + static_cast<int64_t>(p) * kW, quant::ToFp8x8(v, inv));
    });
  });
}

using RingFn = void (*)(const bf16*, const float*, uint8_t*, float*, int64_t, int64_t);

template <bool kStatic>
RingFn PickRing(int64_t cols, bool vec_ok, int* threads, int* packs) {
  return cuda::PickPipelined(cols, 8, vec_ok, threads, packs, [](auto kPacks, auto kThreads) -> RingFn {
    return &Fp8QuantRing<kPacks, cuda::kRingStages, kThreads, kStatic>;
  });
}

int LaunchV3(const QuantArgs& a, cudaStream_t s) {
  int threads = 0, packs = 0;
  const RingFn k = a.is_static ? PickRing<true>(a.cols, quant::VecOk(a), &threads, &packs)
                               : PickRing<false>(a.cols, quant::VecOk(a), &threads, &packs);
  if (k == nullptr) return LaunchV2(a, s);
  return cuda::LaunchPipelined<cuda::kRingStages>(k, threads, packs, a.rows, s, a.x, a.scale, a.q, a.scales, a.rows,
                                                  a.cols);
}

// --- registration ----------------------------------------------------------------------------------
template <int (*L)(const QuantArgs&, cudaStream_t)>
int Run(const Problem& p, std::span<const Tensor> t, void* stream) {
  const QuantArgs a{.x = static_cast<const bf16*>(t[0].data),
                    .scale = static_cast<const float*>(t[1].data),
                    .q = static_cast<uint8_t*>(t[2].data),
                    .scales = static_cast<float*>(t[3].data),
                    .rows = p.dim("rows"),
                    .cols = p.dim("cols"),
                    .is_static = p.has_flag(quant::kStaticScaleFlag)};
  if (a.rows <= 0) return 0;  // nothing to write
  if (a.cols <= 0) {  // no elements: every row's scale is still defined (0, or the static one)
    return quant::LaunchQuantRows(a, cuda::AsStream(stream));
  }
  if (p.dtype != Dtype::kBF16) return static_cast<int>(cudaErrorInvalidValue);
  return L(a, cuda::AsStream(stream));
}

std::vector<LaunchInfo> Launches(int rung, const Problem& p) {
  const bool vec = p.dim("cols") % 8 == 0;
  const bool st = p.has_flag(quant::kStaticScaleFlag);
  switch (rung) {
    case 1:
      return {{vec ? "RowAbsmax<w8>" : "RowAbsmax<w1>", vec ? (const void*)&RowAbsmax<8> : (const void*)&RowAbsmax<1>,
               kV1Block, 0},
              {vec ? "RowQuantize<w8>" : "RowQuantize<w1>",
               vec ? (const void*)&RowQuantize<8> : (const void*)&RowQuantize<1>, kV1Block, 0}};
    case 3: {
      int threads = 0, packs = 0;
      if (const RingFn k = st ? PickRing<true>(p.dim("cols"), true, &threads, &packs)
                              : PickRing<false>(p.dim("cols"), true, &threads, &packs))
        return {{std::string("Fp8QuantRing<ring") + std::to_string(cuda::kRingStages) + (st ? ",static>" : ">"),
                 (const void*)k, threads, cuda::RingBytes(cuda::kRingStages, packs, threads)}};
      return Launches(2, p);
    }
    default: return {quant::QuantRowsLaunch(p.dim("cols"), st)};
  }
}

template <int kRung>
std::vector<LaunchInfo> LaunchesOf(const Problem& p) {
  return Launches(kRung, p);
}

std::string RowGridSkip(const Problem& p) {
  return p.dim("rows") > INT_MAX ? "rows over 2^31-1: one block per row exceeds gridDim.x" : "";
}

}  // namespace

void AddFp8QuantCudaVariants(OpDef& op) {
  op.variants.push_back({
      .name = "cuda_v1_two_kernel",
      .description = "Row absmax kernel, then a quantize kernel that re-reads x.",
      .backend = Backend::kCuda,
      .dtypes = {Dtype::kBF16},
      .skip_reason = RowGridSkip,
      .run_cuda = Run<LaunchV1>,
      .launches = LaunchesOf<1>,
  });
  op.variants.push_back({
      .name = "cuda_v2_one_pass",
      .description = "One kernel, block per row, the row in registers through the max.",
      .backend = Backend::kCuda,
      .dtypes = {Dtype::kBF16},
      .skip_reason = RowGridSkip,
      .run_cuda = Run<LaunchV2>,
      .launches = LaunchesOf<2>,
  });
  op.variants.push_back({
      .name = "cuda_v3_ring",
      .description = "One pass, resident blocks, next rows in a cp.async shared-memory ring.",
      .backend = Backend::kCuda,
      .dtypes = {Dtype::kBF16},
      .skip_reason = RowGridSkip,
      .run_cuda = Run<LaunchV3>,
      .launches = LaunchesOf<3>,
  });
}

}  // namespace kbench::kernels
