// Warp and block reductions. Inside a warp, __shfl_xor_sync reduces 32 values in 5 register steps
// with no shared memory and no barrier; across warps, each warp leaves one partial in shared memory
// and every warp reduces those (at most 32) partials again: two barriers per block reduction instead
// of one per level of a shared-memory tree. The xor butterfly gives every lane the same bits (a + b
// == b + a exactly), so all threads agree on the result and the order is fixed: deterministic.
#pragma once

#include <cuda_runtime.h>

#include <cmath>

namespace kbench::kernels::cuda {

inline constexpr unsigned kFullWarp = 0xffffffffu;

__device__ __forceinline__ float WarpSum(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(kFullWarp, v, offset);
  return v;
}

__device__ __forceinline__ float WarpMax(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v = fmaxf(v, __shfl_xor_sync(kFullWarp, v, offset));
  return v;
}

// Sum over the block, returned to every thread. Every thread of the block must call it (it holds
// barriers), and blockDim.x must be a multiple of 32. Safe to call repeatedly in one kernel: the
// first barrier keeps a call from overwriting partials the previous call is still reading.
__device__ __forceinline__ float BlockSum(float v) {
  __shared__ float partial[32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  v = WarpSum(v);
  __syncthreads();
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  return WarpSum(lane < warps ? partial[lane] : 0.0f);
}

// Max over the block, returned to every thread (same rules as BlockSum).
__device__ __forceinline__ float BlockMax(float v) {
  __shared__ float partial[32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  v = WarpMax(v);
  __syncthreads();
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  return WarpMax(lane < warps ? partial[lane] : -INFINITY);
}

// The cross-warp step of a reduction that runs once per row in a loop, with one barrier where
// BlockSum/BlockMax take two: lane 0 of every warp posts its warp's partial, one barrier, and the
// caller reads all warps' partials (then reduces them across lanes, e.g. lane w taking warp w's).
// Calls alternate between the two slot sets by `parity` (the caller's row count), so a call never
// overwrites slots the previous call's readers may still read: a thread passes this call's barrier
// only after its reads of the previous call, and the call before that used the other set.
// kWarps bounds the block's warps: a ring kernel that fills an SM's shared memory to its last KB
// (softmax v6) sizes the slots to its own block.
template <typename P, int kWarps = 32>
struct WarpPartials {
  P slot[2][kWarps];
};

template <typename P, int kWarps>
__device__ __forceinline__ const P* PostWarpPartial(WarpPartials<P, kWarps>& partials, unsigned parity, P mine) {
  P* set = partials.slot[parity & 1];
  if ((threadIdx.x & 31) == 0) set[threadIdx.x >> 5] = mine;
  __syncthreads();
  return set;
}

// Sum over the block for a kernel that reduces once or more per row in a loop, blocks of at most
// kMaxWarps warps: shuffles in each warp, one barrier (PostWarpPartial; `parity` counts the calls),
// then every thread adds all the warps' partials itself, in warp order (the same bits in every
// thread). BlockSum's second barrier and second shuffle tree are about ten more dependent steps on
// the row's critical path.
template <int kMaxWarps = 8>
__device__ __forceinline__ float BlockSumOneBarrier(WarpPartials<float>& partials, unsigned parity, float v) {
  const float* p = PostWarpPartial(partials, parity, WarpSum(v));
  const int warps = blockDim.x >> 5;
  float s = p[0];
#pragma unroll
  for (int w = 1; w < kMaxWarps; ++w)
    if (w < warps) s += p[w];
  return s;
}

}  // namespace kbench::kernels::cuda
