// The magic-number dequantization of the w4a16 rungs (the format in w4a16_gemm.h): two 4-bit codes
// to the exact bf16 pair (q - zero) in three instructions (a shift, lop3, one bf16x2 subtraction).
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

namespace kbench::kernels::w4a16 {

// (x & 0x000f000f) | 0x43004300 in one instruction: the codes in bits 0-3 and 16-19 of x become the
// low mantissa bits of two bf16 values 128 + q.
__device__ __forceinline__ uint32_t MagicPair(uint32_t x) {
  uint32_t r;
  asm("lop3.b32 %0, %1, %2, %3, 0xEA;\n" : "=r"(r) : "r"(x), "r"(0x000f000fu), "r"(0x43004300u));
  return r;
}

__device__ __forceinline__ uint32_t HSub2(uint32_t x, uint32_t y) {
  __nv_bfloat162 a = *reinterpret_cast<__nv_bfloat162*>(&x), b = *reinterpret_cast<__nv_bfloat162*>(&y);
  __nv_bfloat162 d = __hsub2(a, b);
  return *reinterpret_cast<uint32_t*>(&d);
}

// Both halves the bf16 of v (whole numbers 128..143 here: exact).
__device__ __forceinline__ uint32_t PackBf16Pair(float v) {
  const uint32_t h = __bfloat16_as_ushort(__float2bfloat16_rn(v));
  return h | (h << 16);
}

__device__ __forceinline__ float LowBf16(uint32_t v) { return __uint_as_float(v << 16); }
__device__ __forceinline__ float HighBf16(uint32_t v) { return __uint_as_float(v & 0xffff0000u); }

}  // namespace kbench::kernels::w4a16
