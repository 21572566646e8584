// The silu_and_mul kernel, shared by silu_and_mul's rungs and by the unfused rung of
// silu_mul_fp8_quant (which writes its bf16 output to a workspace): out[r,c] = silu(x[r,0,c]) *
// x[r,1,c]. kW 1: one element a thread; kW 8: one 16-byte load from each half and one 16-byte store a
// thread. blockDim.x across a row's columns, blockIdx.y over rows (a row pointer computed once per
// row, no division per element).
#pragma once

#include <cuda_bf16.h>

#include <algorithm>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/vec.cuh"

namespace kbench::kernels::cuda {
namespace {  // internal linkage: every .cu that includes this gets its own copy of the kernel

using bf16 = __nv_bfloat16;
constexpr int kSiluAndMulBlock = 256;

__device__ __forceinline__ float SiluMul(float g, float u) { return g / (1.0f + __expf(-g)) * u; }

// kW 1: one element a thread; kW 8: 16 bytes of each half a thread.
template <int kW>
__global__ void __launch_bounds__(kSiluAndMulBlock)
    SiluAndMulKernel(const bf16* __restrict__ x, bf16* __restrict__ out, int64_t rows, int64_t d) {
  const int64_t c = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * kW;
  if (c >= d) return;  // no barrier in this kernel
  for (int64_t r = blockIdx.y; r < rows; r += gridDim.y) {
    const bf16* xr = x + r * 2 * d;
    float g[kW], u[kW];
    LoadFloats<bf16, kW>(xr + c, g);
    LoadFloats<bf16, kW>(xr + d + c, u);
#pragma unroll
    for (int k = 0; k < kW; ++k) g[k] = SiluMul(g[k], u[k]);
    StoreFloats<bf16, kW>(out + r * d + c, g);
  }
}

// Columns covered once by blockIdx.x; rows by blockIdx.y, one row a block up to 65535 rows (past
// that, blocks loop). A thread's one trip, no loop: with a wave of blocks looping over rows (one
// load pair in flight a thread, then its math and store, then the next) an H200 reached 86% of
// copy at 8192x2x4096; a block a row keeps every warp's loads independent, as vector_add's v2 does.
template <int kW>
int LaunchSiluAndMulAs(const bf16* x, bf16* out, int64_t rows, int64_t d, cudaStream_t s) {
  const int64_t gx = CeilDiv(CeilDiv(d, kW), kSiluAndMulBlock);
  const int64_t gy = std::clamp<int64_t>(rows, 1, 65535);
  const dim3 grid(static_cast<unsigned>(gx), static_cast<unsigned>(gy));
  SiluAndMulKernel<kW><<<grid, kSiluAndMulBlock, 0, s>>>(x, out, rows, d);
  KB_LAUNCH_CHECK();
  return 0;
}

inline bool SiluAndMulVecOk(const bf16* x, const bf16* out, int64_t d) {
  return d % 8 == 0 && Aligned16(x) && Aligned16(out);
}

// The vectorized kernel when d and the pointers allow it, else the scalar one.
inline int LaunchSiluAndMul(const bf16* x, bf16* out, int64_t rows, int64_t d, bool allow_vec, cudaStream_t s) {
  if (rows <= 0 || d <= 0) return 0;
  return allow_vec && SiluAndMulVecOk(x, out, d) ? LaunchSiluAndMulAs<8>(x, out, rows, d, s)
                                                 : LaunchSiluAndMulAs<1>(x, out, rows, d, s);
}

}  // namespace
}  // namespace kbench::kernels::cuda
