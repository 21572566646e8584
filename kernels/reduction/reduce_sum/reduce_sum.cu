// reduce_sum on CUDA: out[0] = sum_i x[i] over N elements of f32 or bf16, accumulated and returned in
// f32. The reduction in its purest form (the series' chapter 4): N reads, one write, and all the
// difficulty is in combining partial sums across threads and blocks.
//
// Rungs:
//   cuda_v1_atomic    every thread atomicAdds its element into out (zeroed first): all N atomics
//                     serialize on one address in L2, and the float sum depends on their arrival
//                     order, so the result is not bitwise reproducible. One float chain of N
//                     additions: it skips N above kReduceSumMaxChain (2^16), where that chain's
//                     rounding is more than the op's tolerance allows (reduce_sum_ref.cc).
//   cuda_v2_two_pass  deterministic two-level reduction, no atomics: a first kernel on a grid fixed by
//                     N (at most 2048 blocks, so the same on every GPU) reads 16-byte vectors with 4
//                     independent accumulators per thread, reduces each block by warp shuffles and
//                     writes one partial per block to the workspace; a second one-block kernel sums
//                     the partials in a fixed order. Same input, same bits, every run.
#include "core/cuda/cuda_check.cuh"
#include "core/cuda/vec.cuh"
#include "core/cuda/warp_reduce.cuh"
#include "core/cuda/workspace.cuh"
#include "reduction/reduce_sum/reduce_sum.h"
#include "reduction/reduce_sum/reduce_sum_ref.h"

#include <string>
#include <vector>

namespace kbench::kernels {
namespace {

using cuda::BlockSum;
using cuda::CeilDiv;
using cuda::kVec16;
using cuda::LoadFloats;
using cuda::ToFloat;

constexpr int kBlock = 256;
constexpr int kUnroll = 4;          // independent accumulators (loads in flight) per thread
constexpr int kMaxPartials = 2048;  // first-pass blocks: about one wave on an H100/H200
constexpr int kFinalBlock = 1024;

// --- v1: one atomic per element ----------------------------------------------------------------------
template <typename T>
__global__ void __launch_bounds__(kBlock) ReduceSumAtomic(const T* __restrict__ x, float* __restrict__ out, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(out, ToFloat(x[i]));
}

// --- v2: block partials, then one block over the partials --------------------------------------------
template <typename T, int kW>
__global__ void __launch_bounds__(kBlock)
    ReduceSumPartials(const T* __restrict__ x, int64_t n, float* __restrict__ partials) {
  const int64_t nvec = n / kW;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  float acc[kUnroll] = {};
  int64_t i = first;
  for (; i + (kUnroll - 1) * stride < nvec; i += kUnroll * stride) {
    float v[kUnroll][kW];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) LoadFloats<T, kW>(x + (i + u * stride) * kW, v[u]);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
#pragma unroll
      for (int k = 0; k < kW; ++k) acc[u] += v[u][k];
    }
  }
  for (; i < nvec; i += stride) {
    float v[kW];
    LoadFloats<T, kW>(x + i * kW, v);
#pragma unroll
    for (int k = 0; k < kW; ++k) acc[0] += v[k];
  }
  const int64_t t = nvec * kW + first;  // n % kW leftovers, one per leading thread
  if (kW > 1 && first < kW && t < n) acc[1] += ToFloat(x[t]);
  const float block_sum = BlockSum((acc[0] + acc[1]) + (acc[2] + acc[3]));
  if (threadIdx.x == 0) partials[blockIdx.x] = block_sum;
}

__global__ void __launch_bounds__(kFinalBlock)
    ReduceSumFinal(const float* __restrict__ partials, int count, float* __restrict__ out) {
  float s = 0.0f;
  for (int i = threadIdx.x; i < count; i += kFinalBlock) s += partials[i];
  s = BlockSum(s);
  if (threadIdx.x == 0) out[0] = s;
}

// First-pass grid: depends on N and the access width only, so the summation order does too.
int64_t PartialBlocks(int64_t n, int width) {
  return std::clamp<int64_t>(CeilDiv(std::max<int64_t>(n / width, 1), kBlock), 1, kMaxPartials);
}

// --- launchers ---------------------------------------------------------------------------------------
template <typename T>
int LaunchV1(const void* x, float* out, int64_t n, cudaStream_t s) {
  KB_CUDA_TRY(cudaMemsetAsync(out, 0, sizeof(float), s));
  if (n <= 0) return 0;
  ReduceSumAtomic<T><<<static_cast<unsigned>(CeilDiv(n, kBlock)), kBlock, 0, s>>>(static_cast<const T*>(x), out, n);
  KB_LAUNCH_CHECK();
  return 0;
}

template <typename T, int kW>
int LaunchV2As(const T* x, float* out, int64_t n, cudaStream_t s) {
  const int64_t blocks = PartialBlocks(n, kW);
  void* ws = nullptr;
  KB_CUDA_TRY(cuda::GetWorkspace(cuda::WorkspaceSlot::kReduceSumPartials, kMaxPartials * sizeof(float), s, &ws));
  float* partials = static_cast<float*>(ws);
  ReduceSumPartials<T, kW><<<static_cast<unsigned>(blocks), kBlock, 0, s>>>(x, n, partials);
  KB_LAUNCH_CHECK();
  ReduceSumFinal<<<1, kFinalBlock, 0, s>>>(partials, static_cast<int>(blocks), out);
  KB_LAUNCH_CHECK();
  return 0;
}

template <typename T>
int LaunchV2(const void* x, float* out, int64_t n, cudaStream_t s) {
  if (n <= 0) {
    KB_CUDA_TRY(cudaMemsetAsync(out, 0, sizeof(float), s));  // the empty sum
    return 0;
  }
  const T* xt = static_cast<const T*>(x);
  return cuda::Aligned16(x) ? LaunchV2As<T, kVec16<T>>(xt, out, n, s) : LaunchV2As<T, 1>(xt, out, n, s);
}

// --- registration ------------------------------------------------------------------------------------
using Launcher = int (*)(const void*, float*, int64_t, cudaStream_t);

template <Launcher L32, Launcher L16>
int Run(const Problem& p, std::span<const Tensor> t, void* stream) {
  float* out = static_cast<float*>(t[1].data);  // f32 whatever the input dtype
  return cuda::DispatchDtype(p.dtype, [&](auto tag) {
    return sizeof(tag) == 4 ? L32(t[0].data, out, p.dim("N"), cuda::AsStream(stream))
                            : L16(t[0].data, out, p.dim("N"), cuda::AsStream(stream));
  });
}

template <typename T>
std::vector<LaunchInfo> Launches(int rung) {
  const std::string type = cuda::TypeName<T>();
  if (rung == 1) return {{"ReduceSumAtomic<" + type + ">", (const void*)&ReduceSumAtomic<T>, kBlock, 0}};
  return {{"ReduceSumPartials<" + type + ",w" + std::to_string(kVec16<T>) + ">",
           (const void*)&ReduceSumPartials<T, kVec16<T>>, kBlock, 0},
          {"ReduceSumFinal", (const void*)&ReduceSumFinal, kFinalBlock, 0}};
}

template <int kRung>
std::vector<LaunchInfo> LaunchesOf(const Problem& p) {
  return p.dtype == Dtype::kBF16 ? Launches<__nv_bfloat16>(kRung) : Launches<float>(kRung);
}

std::string NoSkip(const Problem&) { return ""; }

std::string SkipLongChain(const Problem& p) {
  if (p.dim("N") <= kReduceSumMaxChain) return "";
  return "one float chain of N atomics: beyond N = 65536 its rounding exceeds the tolerance, which "
         "allows chains of 2^16 additions so that dropped elements fail";
}

}  // namespace

void AddReduceSumCudaVariants(OpDef& op) {
  const std::vector<Dtype> dtypes = {Dtype::kF32, Dtype::kBF16};
  op.variants.push_back({
      .name = "cuda_v1_atomic",
      .description = "One atomicAdd per element into one address.",
      .backend = Backend::kCuda,
      .dtypes = dtypes,
      .skip_reason = SkipLongChain,
      .run_cuda = Run<LaunchV1<float>, LaunchV1<__nv_bfloat16>>,
      .launches = LaunchesOf<1>,
  });
  op.variants.push_back({
      .name = "cuda_v2_two_pass",
      .description = "Deterministic two-pass reduction: block partials, then one block.",
      .backend = Backend::kCuda,
      .dtypes = dtypes,
      .skip_reason = NoSkip,
      .run_cuda = Run<LaunchV2<float>, LaunchV2<__nv_bfloat16>>,
      .launches = LaunchesOf<2>,
  });
}

}  // namespace kbench::kernels
