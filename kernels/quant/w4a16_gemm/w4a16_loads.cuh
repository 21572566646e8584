// The global loads of the w4a16 tensor-core GEMV kernels (w4a16_mma_kernel.cuh, w4a16_mma_lean.cuh).
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

namespace kbench::kernels::w4a16 {

// A streamed-once weight load: not kept in L1, where A's fragments are reused. (L2's 256-byte
// prefetch hint on it measured no different at M = 1: 15.23 against 15.42 us.)
__device__ __forceinline__ uint4 LoadStream(const uint4* p) {
  uint4 v;
  asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];\n"
      : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
      : "l"(p));
  return v;
}

// The same, volatile: requested where the code puts it (a ring's refill after a chunk's math), not
// moved across the mmas, which are volatile asm too.
__device__ __forceinline__ uint4 LoadStreamInOrder(const uint4* p) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

// A's B fragments: volatile, so that they stay in program order with the mmas instead of being
// hoisted for every chunk of a batch at once, which costs the registers that hold the weights in
// flight.
__device__ __forceinline__ uint4 LoadA(const __nv_bfloat16* p) {
  uint4 v;
  asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

// One bf16 (a scale or a zero point) as its raw bits, in program order like the others.
__device__ __forceinline__ uint32_t LoadBf16Bits(const __nv_bfloat16* p) {
  unsigned short v;
  asm volatile("ld.global.nc.u16 %0, [%1];\n" : "=h"(v) : "l"(p));
  return v;
}

}  // namespace kbench::kernels::w4a16
