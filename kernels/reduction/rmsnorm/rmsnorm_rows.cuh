// The block-per-row RMSNorm kernel shared by rmsnorm (cuda_v5_vec16) and add_rmsnorm (both rungs):
// 16-byte loads, the row kept in registers when it fits (core/cuda/rows.cuh), float accumulation, a
// two-level warp-shuffle block reduction, and the weight read as 16-byte vectors (the same weight
// serves every row, so after the first rows it comes from L2). With kAddResidual it first forms
// h = x + residual, rounded to the dtype and stored as residual_out, and normalizes h: the fused
// residual add + RMSNorm that reads 2 and writes 2 tensors instead of reading 3 and writing 2.
#pragma once

#include <string>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/rows.cuh"
#include "core/cuda/vec.cuh"
#include "core/cuda/warp_reduce.cuh"

namespace kbench::kernels::cuda {
namespace {  // internal linkage: every .cu that includes this gets its own copy of the kernels

template <typename T, int kW, int kPacks, bool kAddResidual>
__global__ void __launch_bounds__(kRowBlock, 1)
    RmsnormRowKernel(const T* __restrict__ x, const T* __restrict__ residual, const T* __restrict__ weight,
                     T* __restrict__ out, T* __restrict__ residual_out, int64_t cols, float eps) {
  const int64_t base = static_cast<int64_t>(blockIdx.x) * cols;
  const T* xr = x + base;
  T* orow = out + base;
  // Pack p of the row as floats: x, or with kAddResidual h = x + residual as stored (rounded to T),
  // written once to residual_out.
  const auto load = [&](int64_t p, float (&v)[kW]) {
    LoadFloats<T, kW>(xr + p * kW, v);
    if constexpr (kAddResidual) {
      float r[kW];
      LoadFloats<T, kW>(residual + base + p * kW, r);
#pragma unroll
      for (int k = 0; k < kW; ++k) v[k] = RoundTo<T>(v[k] + r[k]);
      StoreFloats<T, kW>(residual_out + base + p * kW, v);
    }
  };
  const auto scale_store = [&](int64_t p, float (&v)[kW], float inv_rms) {
    float w[kW];
    LoadFloats<T, kW>(weight + p * kW, w);
#pragma unroll
    for (int k = 0; k < kW; ++k) v[k] = v[k] * inv_rms * w[k];
    StoreFloats<T, kW>(orow + p * kW, v);
  };
  float sum_sq = 0.0f;
  if constexpr (kPacks > 0) {
    // The plan guarantees packs <= kPacks * blockDim.x <= 2^13: 32-bit pack indices.
    const int packs = static_cast<int>(cols / kW);
    float v[kPacks][kW];
#pragma unroll
    for (int j = 0; j < kPacks; ++j) {
      const int p = threadIdx.x + j * blockDim.x;
      if (p < packs) {
        load(p, v[j]);
#pragma unroll
        for (int k = 0; k < kW; ++k) sum_sq += v[j][k] * v[j][k];
      }
    }
    const float inv_rms = rsqrtf(BlockSum(sum_sq) / static_cast<float>(cols) + eps);
#pragma unroll
    for (int j = 0; j < kPacks; ++j) {
      const int p = threadIdx.x + j * blockDim.x;
      if (p < packs) scale_store(p, v[j], inv_rms);
    }
  } else {
    // Row too wide for registers: accumulate, then read it again (h from residual_out, as stored).
    const int64_t packs = cols / kW;
    for (int64_t p = threadIdx.x; p < packs; p += blockDim.x) {
      float v[kW];
      load(p, v);
#pragma unroll
      for (int k = 0; k < kW; ++k) sum_sq += v[k] * v[k];
    }
    const float inv_rms = rsqrtf(BlockSum(sum_sq) / static_cast<float>(cols) + eps);
    const T* src = kAddResidual ? residual_out + base : xr;
    for (int64_t p = threadIdx.x; p < packs; p += blockDim.x) {
      float v[kW];
      LoadFloats<T, kW>(src + p * kW, v);
      scale_store(p, v, inv_rms);
    }
  }
}

template <typename T>
using RmsnormRowFn = void (*)(const T*, const T*, const T*, T*, T*, int64_t, float);

template <typename T, bool kAddResidual>
struct RmsnormRowLaunch {
  RmsnormRowFn<T> kernel = nullptr;
  RowPlan plan;
  std::string name;
};

// The instantiation and block size for rows of `cols` elements (vec_ok: all row pointers 16-byte aligned).
template <typename T, bool kAddResidual>
RmsnormRowLaunch<T, kAddResidual> PickRmsnormRow(int64_t cols, bool vec_ok) {
  RmsnormRowLaunch<T, kAddResidual> l;
  l.plan = PlanRow(cols, kVec16<T>, vec_ok);
  if (l.plan.width == 1) {
    l.kernel = PickPacks<kRowCacheFloats>(l.plan.packs, [](auto k) -> RmsnormRowFn<T> {
      return &RmsnormRowKernel<T, 1, decltype(k)::value, kAddResidual>;
    });
  } else {
    l.kernel = PickPacks<kRowCacheFloats / kVec16<T>>(l.plan.packs, [](auto k) -> RmsnormRowFn<T> {
      return &RmsnormRowKernel<T, kVec16<T>, decltype(k)::value, kAddResidual>;
    });
  }
  l.name = std::string(kAddResidual ? "AddRmsnormRow" : "RmsnormRow") + "<" + TypeName<T>() + ",w" +
           std::to_string(l.plan.width) + (l.plan.packs ? ",regs" + std::to_string(l.plan.packs) : ",loop") + ">";
  return l;
}

// Launches one block per row; residual/residual_out are used only with kAddResidual.
template <typename T, bool kAddResidual>
int LaunchRmsnormRows(const T* x, const T* residual, const T* weight, T* out, T* residual_out, int64_t rows,
                      int64_t cols, float eps, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return 0;
  bool vec_ok = Aligned16(x) && Aligned16(weight) && Aligned16(out);
  if (kAddResidual) vec_ok = vec_ok && Aligned16(residual) && Aligned16(residual_out);
  const auto l = PickRmsnormRow<T, kAddResidual>(cols, vec_ok);
  l.kernel<<<static_cast<unsigned>(rows), l.plan.threads, 0, stream>>>(x, residual, weight, out, residual_out, cols,
                                                                        eps);
  KB_LAUNCH_CHECK();
  return 0;
}

}  // namespace
}  // namespace kbench::kernels::cuda
