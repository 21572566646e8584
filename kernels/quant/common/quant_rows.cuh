// The per-token quantization of bf16 rows shared by the quant family's CUDA rungs: fp8_quant's
// cuda_v2_one_pass, and the quantize step of the unfused rungs of rmsnorm_fp8_quant and
// silu_mul_fp8_quant (which run it on their bf16 intermediate). A block per row; the row's packs
// (16 bytes of bf16) are held in registers (core/cuda/rows.cuh's plan) through the block max, then
// scaled and stored as 8-byte E4M3 packs: x is read once. Rows too wide for registers re-read the
// row in a loop (mostly from L1/L2); odd widths and unaligned pointers take scalar accesses.
#pragma once

#include <cuda_bf16.h>

#include <string>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/rows.cuh"
#include "core/cuda/vec.cuh"
#include "core/cuda/warp_reduce.cuh"
#include "core/op.h"
#include "quant/common/fp8.cuh"

namespace kbench::kernels::quant {
namespace {  // internal linkage: every .cu that includes this gets its own copy of the kernels

using Bf16 = __nv_bfloat16;

// One quantization problem: x[rows, cols] bf16 to q[rows, cols] E4M3 and scales[rows] f32; with
// is_static the scale is *scale for every row (and copied into scales).
struct QuantArgs {
  const Bf16* x;
  const float* scale;
  uint8_t* q;
  float* scales;
  int64_t rows, cols;
  bool is_static;
};

inline bool Aligned8(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 7u) == 0; }

// 16-byte loads of x and 8-byte stores of q are possible for every row.
inline bool VecOk(const QuantArgs& a) { return a.cols % 8 == 0 && cuda::Aligned16(a.x) && Aligned8(a.q); }

// Max over the block with one barrier (the rows loops of the ring kernels): warp maxima posted,
// every thread folds them itself (same bits everywhere). Blocks of at most kMaxWarps warps.
template <int kMaxWarps = 8>
__device__ __forceinline__ float BlockMaxOneBarrier(cuda::WarpPartials<float>& partials, unsigned parity, float v) {
  const float* p = cuda::PostWarpPartial(partials, parity, cuda::WarpMax(v));
  const int warps = blockDim.x >> 5;
  float m = p[0];
#pragma unroll
  for (int w = 1; w < kMaxWarps; ++w)
    if (w < warps) m = fmaxf(m, p[w]);
  return m;
}

template <int kW, int kPacks, bool kStatic>
__global__ void __launch_bounds__(cuda::kRowBlock)
    QuantRowKernel(const Bf16* __restrict__ x, const float* __restrict__ scale, uint8_t* __restrict__ q,
                   float* __restrict__ scales, int64_t cols) {
  const int64_t r = blockIdx.x;
  const Bf16* xr = x + r * cols;
  uint8_t* qr = q + r * cols;
  float m = 0.0f;
  if constexpr (kPacks > 0) {
    const int packs = static_cast<int>(cols / kW);  // <= kPacks * blockDim.x (the plan)
    float v[kPacks][kW];
#pragma unroll
    for (int j = 0; j < kPacks; ++j) {
      const int p = threadIdx.x + j * blockDim.x;
      if (p < packs) {
        cuda::LoadFloats<Bf16, kW>(xr + static_cast<int64_t>(p) * kW, v[j]);
        if constexpr (!kStatic) m = fmaxf(m, AbsMax(v[j]));
      }
    }
    float s = 0.0f, inv = 0.0f;
    if constexpr (kStatic) {
      s = *scale, inv = InvOfScale(s);
    } else {
      m = cuda::BlockMax(m);
      s = ScaleOf(m), inv = InvScaleOf(m);
    }
    if (threadIdx.x == 0) scales[r] = s;
#pragma unroll
    for (int j = 0; j < kPacks; ++j) {
      const int p = threadIdx.x + j * blockDim.x;
      if (p < packs) StoreQ<kW>(qr + static_cast<int64_t>(p) * kW, v[j], inv);
    }
  } else {
    const int64_t packs = cols / kW;
    if constexpr (!kStatic) {
      for (int64_t p = threadIdx.x; p < packs; p += blockDim.x) {
        float v[kW];
        cuda::LoadFloats<Bf16, kW>(xr + p * kW, v);
        m = fmaxf(m, AbsMax(v));
      }
      m = cuda::BlockMax(m);
    }
    const float s = kStatic ? *scale : ScaleOf(m);
    const float inv = kStatic ? InvOfScale(s) : InvScaleOf(m);
    if (threadIdx.x == 0) scales[r] = s;
    for (int64_t p = threadIdx.x; p < packs; p += blockDim.x) {
      float v[kW];
      cuda::LoadFloats<Bf16, kW>(xr + p * kW, v);
      StoreQ<kW>(qr + p * kW, v, inv);
    }
  }
}

using QuantRowFn = void (*)(const Bf16*, const float*, uint8_t*, float*, int64_t);

struct QuantRowPick {
  QuantRowFn kernel = nullptr;
  cuda::RowPlan plan;
  std::string name;
};

template <bool kStatic>
QuantRowPick PickQuantRowAs(int64_t cols, bool vec_ok) {
  QuantRowPick l;
  l.plan = cuda::PlanRow(cols, 8, vec_ok);
  if (l.plan.width == 1) {
    l.kernel = cuda::PickPacks<cuda::kRowCacheFloats>(
        l.plan.packs, [](auto k) -> QuantRowFn { return &QuantRowKernel<1, decltype(k)::value, kStatic>; });
  } else {
    l.kernel = cuda::PickPacks<cuda::kRowCacheFloats / 8>(
        l.plan.packs, [](auto k) -> QuantRowFn { return &QuantRowKernel<8, decltype(k)::value, kStatic>; });
  }
  l.name = std::string("QuantRow<w") + std::to_string(l.plan.width) +
           (l.plan.packs ? ",regs" + std::to_string(l.plan.packs) : ",loop") + (kStatic ? ",static>" : ">");
  return l;
}

inline QuantRowPick PickQuantRow(int64_t cols, bool vec_ok, bool is_static) {
  return is_static ? PickQuantRowAs<true>(cols, vec_ok) : PickQuantRowAs<false>(cols, vec_ok);
}

// One block per row (rows <= INT_MAX: the rungs' skip_reason says so).
inline int LaunchQuantRows(const QuantArgs& a, cudaStream_t s) {
  if (a.rows <= 0) return 0;
  const QuantRowPick l = PickQuantRow(a.cols, VecOk(a), a.is_static);
  l.kernel<<<static_cast<unsigned>(a.rows), l.plan.threads, 0, s>>>(a.x, a.scale, a.q, a.scales, a.cols);
  KB_LAUNCH_CHECK();
  return 0;
}

inline LaunchInfo QuantRowsLaunch(int64_t cols, bool is_static) {
  const QuantRowPick l = PickQuantRow(cols, true, is_static);
  return {l.name, reinterpret_cast<const void*>(l.kernel), l.plan.threads, 0};
}

}  // namespace
}  // namespace kbench::kernels::quant
