// 2^x on the SFU alone: ex2.approx.ftz (2 ulp; inputs below -126 give 0, -inf gives 0). CUDA's exp2f
// without --use_fast_math wraps the same instruction in a range check and two conditional
// multiplies (4 instructions), which in the softmax of an attention or softmax kernel, one exp an
// element, are as many issue slots as the math itself. FlashAttention builds with fast math for this.
#pragma once

namespace kbench::kernels::cuda {

__device__ __forceinline__ float FastExp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

}  // namespace kbench::kernels::cuda
