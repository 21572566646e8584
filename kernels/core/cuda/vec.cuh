// Element types of the CUDA variants and 16-byte vector access. f32 and bf16 (__nv_bfloat16) are
// stored as themselves and widened to float for arithmetic; a 16-byte access moves 4 floats or 8
// bf16 in one instruction (512 B per warp), so memory-bound kernels issue 4-8x fewer loads and keep
// more bytes in flight per thread.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "core/dtype.h"

namespace kbench::kernels::cuda {

// Elements of T in one 16-byte vector: 4 for float, 8 for bf16.
template <typename T>
inline constexpr int kVec16 = static_cast<int>(16 / sizeof(T));

__device__ __forceinline__ float ToFloat(float v) { return v; }
__device__ __forceinline__ float ToFloat(__nv_bfloat16 v) { return __bfloat162float(v); }

template <typename T>
__device__ __forceinline__ T FromFloat(float v);
template <>
__device__ __forceinline__ float FromFloat<float>(float v) { return v; }
template <>
__device__ __forceinline__ __nv_bfloat16 FromFloat<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

// Rounds a float to T and back: the value a kernel stores and a later kernel reads.
template <typename T>
__device__ __forceinline__ float RoundTo(float v) { return ToFloat(FromFloat<T>(v)); }

// Two floats rounded to bf16 in one 32-bit word, the first in the low half (memory order).
__device__ __forceinline__ uint32_t PackBf16x2(float lo, float hi) {
  const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
  return static_cast<uint32_t>(__bfloat16_as_ushort(h.x)) | (static_cast<uint32_t>(__bfloat16_as_ushort(h.y)) << 16);
}

// A 16-byte word as kVec16<T> floats (4 f32, or 8 bf16: a bf16 is the high half of a float, so
// widening is a shift or a mask, no conversion instruction).
template <typename T>
__device__ __forceinline__ void WidenPack(const uint4& raw, float (&f)[kVec16<T>]) {
  if constexpr (sizeof(T) == 4) {
    f[0] = __uint_as_float(raw.x), f[1] = __uint_as_float(raw.y);
    f[2] = __uint_as_float(raw.z), f[3] = __uint_as_float(raw.w);
  } else {
    f[0] = __uint_as_float(raw.x << 16), f[1] = __uint_as_float(raw.x & 0xffff0000u);
    f[2] = __uint_as_float(raw.y << 16), f[3] = __uint_as_float(raw.y & 0xffff0000u);
    f[4] = __uint_as_float(raw.z << 16), f[5] = __uint_as_float(raw.z & 0xffff0000u);
    f[6] = __uint_as_float(raw.w << 16), f[7] = __uint_as_float(raw.w & 0xffff0000u);
  }
}

// Loads N consecutive elements at p and widens them to float. N == 1 is a scalar access; otherwise
// N * sizeof(T) must be 16 and p 16-byte aligned (one 128-bit load).
template <typename T, int N>
__device__ __forceinline__ void LoadFloats(const T* p, float (&f)[N]) {
  static_assert(N == 1 || N * sizeof(T) == 16, "a vector access is 16 bytes");
  if constexpr (N == 1) {
    f[0] = ToFloat(*p);
  } else {
    WidenPack<T>(*reinterpret_cast<const uint4*>(p), f);
  }
}

// Rounds N floats to T and stores them at p (same access rules as LoadFloats).
template <typename T, int N>
__device__ __forceinline__ void StoreFloats(T* p, const float (&f)[N]) {
  static_assert(N == 1 || N * sizeof(T) == 16, "a vector access is 16 bytes");
  if constexpr (N == 1) {
    *p = FromFloat<T>(f[0]);
  } else {
    uint4 raw;
    if constexpr (sizeof(T) == 4) {
      raw = make_uint4(__float_as_uint(f[0]), __float_as_uint(f[1]), __float_as_uint(f[2]), __float_as_uint(f[3]));
    } else {
      raw = make_uint4(PackBf16x2(f[0], f[1]), PackBf16x2(f[2], f[3]), PackBf16x2(f[4], f[5]), PackBf16x2(f[6], f[7]));
    }
    // Inline PTX: one 128-bit store, which the compiler otherwise sometimes splits into four.
    asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(raw.x), "r"(raw.y), "r"(raw.z), "r"(raw.w)
                 : "memory");
  }
}

// Calls f(T{}) with T = float or __nv_bfloat16 for the problem's dtype and returns its result (an
// int cudaError_t); any other dtype is cudaErrorInvalidValue (variants declare only these two).
template <typename F>
int DispatchDtype(Dtype d, F&& f) {
  switch (d) {
    case Dtype::kF32: return f(float{});
    case Dtype::kBF16: return f(__nv_bfloat16{});
    default: return static_cast<int>(cudaErrorInvalidValue);
  }
}

// Short dtype name for kernel names in LaunchInfo.
template <typename T>
inline const char* TypeName() {
  return sizeof(T) == 4 ? "f32" : "bf16";
}

}  // namespace kbench::kernels::cuda
