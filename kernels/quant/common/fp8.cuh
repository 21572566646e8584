// Device side of the quant family: floats to FP8 E4M3 (round to nearest even, saturating at +-448:
// cvt.rn.satfinite, one instruction per pair on sm_89+, emulated by cuda_fp8.h on sm_80), and the
// per-token scale rule every rung shares, so that a zero row gives scale 0 and q 0 everywhere.
#pragma once

#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace kbench::kernels::quant {

inline constexpr float kFp8MaxF = 448.0f;

// The per-token scale written out, and the factor a row is multiplied by: 448 / absmax, 0 for an
// all-zero row (never 0 * inf = NaN).
__device__ __forceinline__ float ScaleOf(float absmax) { return absmax / kFp8MaxF; }
__device__ __forceinline__ float InvScaleOf(float absmax) { return absmax > 0.0f ? kFp8MaxF / absmax : 0.0f; }
// The factor for a given scale (static, or the two-kernel rung's stored one): 1 / scale, 0 for 0.
__device__ __forceinline__ float InvOfScale(float scale) { return scale > 0.0f ? 1.0f / scale : 0.0f; }

__device__ __forceinline__ uint8_t ToFp8(float v) {
  return static_cast<uint8_t>(__nv_cvt_float_to_fp8(v, __NV_SATFINITE, __NV_E4M3));
}

// Two values as two E4M3 bytes, the first in the low byte (memory order).
__device__ __forceinline__ uint32_t ToFp8x2(float a, float b) {
  return static_cast<uint32_t>(__nv_cvt_float2_to_fp8x2(make_float2(a, b), __NV_SATFINITE, __NV_E4M3));
}

// Eight values times inv as eight E4M3 bytes (one 8-byte store).
__device__ __forceinline__ uint2 ToFp8x8(const float (&v)[8], float inv) {
  uint2 r;
  r.x = ToFp8x2(v[0] * inv, v[1] * inv) | (ToFp8x2(v[2] * inv, v[3] * inv) << 16);
  r.y = ToFp8x2(v[4] * inv, v[5] * inv) | (ToFp8x2(v[6] * inv, v[7] * inv) << 16);
  return r;
}

__device__ __forceinline__ void StoreFp8x8(uint8_t* p, uint2 v) {
  asm volatile("st.global.v2.b32 [%0], {%1, %2};" ::"l"(p), "r"(v.x), "r"(v.y) : "memory");
}

// Largest |v| of a pack (a tree: log2 kW dependent steps).
template <int kW>
__device__ __forceinline__ float AbsMax(const float (&v)[kW]) {
  float t[kW];
#pragma unroll
  for (int k = 0; k < kW; ++k) t[k] = fabsf(v[k]);
#pragma unroll
  for (int w = kW / 2; w >= 1; w /= 2)
#pragma unroll
    for (int k = 0; k < w; ++k) t[k] = fmaxf(t[k], t[k + w]);
  return t[0];
}

// kW values times inv stored as E4M3 at p: one 8-byte store for a pack of 8 (p 8-byte aligned),
// else one byte.
template <int kW>
__device__ __forceinline__ void StoreQ(uint8_t* p, const float (&v)[kW], float inv) {
  static_assert(kW == 1 || kW == 8, "a pack is 1 or 8 elements");
  if constexpr (kW == 8) {
    StoreFp8x8(p, ToFp8x8(v, inv));
  } else {
    *p = ToFp8(v[0] * inv);
  }
}

}  // namespace kbench::kernels::quant
