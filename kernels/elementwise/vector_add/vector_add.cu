// vector_add on CUDA: out[i] = x[i] + y[i], added in float and stored in the dtype (f32 or bf16).
// 3 elements moved per FLOP: every rung is memory-bound and judged by the bandwidth it reaches.
//
// Rungs:
//   cuda_v1_naive        one element per thread, grid = ceil(N / 256). The five-line kernel: each
//                        thread moves 4 (f32) or 2 (bf16) bytes per access, so few bytes are in
//                        flight per thread and a bf16 warp load fills only two 32-byte sectors.
//   cuda_v2_vec16        one 16-byte vector per thread (float4 / 8 x bf16): a warp access moves
//                        512 B, a quarter (f32) or an eighth (bf16) of the instructions. N % width
//                        elements go through a scalar tail; a pointer that is not 16-byte aligned
//                        falls back to scalar accesses (same kernel, width 1).
//   cuda_v3_grid_stride  16-byte vectors in a grid-stride loop on a grid of one wave (SM count x
//                        resident blocks per SM), 4 vectors loaded before any is stored: the loads
//                        of a thread overlap (ILP), there is no partial last wave and no block churn.
#include "core/cuda/cuda_check.cuh"
#include "core/cuda/vec.cuh"
#include "elementwise/vector_add/vector_add.h"

#include <string>
#include <vector>

namespace kbench::kernels {
namespace {

using cuda::CeilDiv;
using cuda::kVec16;
using cuda::LoadFloats;
using cuda::StoreFloats;

constexpr int kBlock = 256;
constexpr int kV3Unroll = 4;
constexpr int kV3BlocksPerSm = 2048 / kBlock;  // a full SM of 256-thread blocks

// --- v1: one element per thread --------------------------------------------------------------------
template <typename T>
__global__ void __launch_bounds__(kBlock)
    VectorAddV1(const T* __restrict__ x, const T* __restrict__ y, T* __restrict__ out, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = cuda::FromFloat<T>(cuda::ToFloat(x[i]) + cuda::ToFloat(y[i]));
}

// --- v2: one kW-wide vector per thread, scalar tail --------------------------------------------------
template <typename T, int kW>
__global__ void __launch_bounds__(kBlock)
    VectorAddV2(const T* __restrict__ x, const T* __restrict__ y, T* __restrict__ out, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t nvec = n / kW;
  if (i < nvec) {
    float a[kW], b[kW];
    LoadFloats<T, kW>(x + i * kW, a);
    LoadFloats<T, kW>(y + i * kW, b);
#pragma unroll
    for (int k = 0; k < kW; ++k) a[k] += b[k];
    StoreFloats<T, kW>(out + i * kW, a);
  }
  // The n % kW leftover elements: one each for the first threads of the grid.
  const int64_t t = nvec * kW + i;
  if (kW > 1 && i < kW && t < n) out[t] = cuda::FromFloat<T>(cuda::ToFloat(x[t]) + cuda::ToFloat(y[t]));
}

// --- v3: grid-stride over vectors, kV3Unroll vectors in flight per thread ----------------------------
template <typename T, int kW>
__global__ void __launch_bounds__(kBlock)
    VectorAddV3(const T* __restrict__ x, const T* __restrict__ y, T* __restrict__ out, int64_t n) {
  const int64_t nvec = n / kW;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  int64_t i = first;
  // All loads of an iteration are issued before its stores, so a thread has kV3Unroll x 2 vectors in
  // flight; __restrict__ lets the compiler keep them in that order.
  for (; i + (kV3Unroll - 1) * stride < nvec; i += kV3Unroll * stride) {
    float a[kV3Unroll][kW], b[kV3Unroll][kW];
#pragma unroll
    for (int u = 0; u < kV3Unroll; ++u) {
      LoadFloats<T, kW>(x + (i + u * stride) * kW, a[u]);
      LoadFloats<T, kW>(y + (i + u * stride) * kW, b[u]);
    }
#pragma unroll
    for (int u = 0; u < kV3Unroll; ++u) {
#pragma unroll
      for (int k = 0; k < kW; ++k) a[u][k] += b[u][k];
      StoreFloats<T, kW>(out + (i + u * stride) * kW, a[u]);
    }
  }
  for (; i < nvec; i += stride) {
    float a[kW], b[kW];
    LoadFloats<T, kW>(x + i * kW, a);
    LoadFloats<T, kW>(y + i * kW, b);
#pragma unroll
    for (int k = 0; k < kW; ++k) a[k] += b[k];
    StoreFloats<T, kW>(out + i * kW, a);
  }
  const int64_t t = nvec * kW + first;
  if (kW > 1 && first < kW && t < n) out[t] = cuda::FromFloat<T>(cuda::ToFloat(x[t]) + cuda::ToFloat(y[t]));
}

// --- launchers ---------------------------------------------------------------------------------------
struct Args {
  const void* x;
  const void* y;
  void* out;
  int64_t n;
};

Args ArgsOf(const Problem& p, std::span<const Tensor> t) { return {t[0].data, t[1].data, t[2].data, p.dim("N")}; }

bool VecOk(const Args& a) { return cuda::Aligned16(a.x) && cuda::Aligned16(a.y) && cuda::Aligned16(a.out); }

template <typename T>
int LaunchV1(const Args& a, cudaStream_t s) {
  if (a.n <= 0) return 0;
  VectorAddV1<T><<<static_cast<unsigned>(CeilDiv(a.n, kBlock)), kBlock, 0, s>>>(
      static_cast<const T*>(a.x), static_cast<const T*>(a.y), static_cast<T*>(a.out), a.n);
  KB_LAUNCH_CHECK();
  return 0;
}

template <typename T, int kW>
int LaunchV2As(const Args& a, cudaStream_t s) {
  // Enough threads for every vector and for the tail (which the first kW threads take).
  const int64_t threads = std::max<int64_t>(a.n / kW, kW);
  VectorAddV2<T, kW><<<static_cast<unsigned>(CeilDiv(threads, kBlock)), kBlock, 0, s>>>(
      static_cast<const T*>(a.x), static_cast<const T*>(a.y), static_cast<T*>(a.out), a.n);
  KB_LAUNCH_CHECK();
  return 0;
}

template <typename T>
int LaunchV2(const Args& a, cudaStream_t s) {
  if (a.n <= 0) return 0;
  return VecOk(a) ? LaunchV2As<T, kVec16<T>>(a, s) : LaunchV2As<T, 1>(a, s);
}

template <typename T, int kW>
int LaunchV3As(const Args& a, cudaStream_t s) {
  unsigned grid = 0;
  KB_CUDA_TRY(cuda::WaveGrid(std::max<int64_t>(a.n / kW, kW), kBlock, kV3BlocksPerSm, &grid));
  VectorAddV3<T, kW><<<grid, kBlock, 0, s>>>(static_cast<const T*>(a.x), static_cast<const T*>(a.y),
                                              static_cast<T*>(a.out), a.n);
  KB_LAUNCH_CHECK();
  return 0;
}

template <typename T>
int LaunchV3(const Args& a, cudaStream_t s) {
  if (a.n <= 0) return 0;
  return VecOk(a) ? LaunchV3As<T, kVec16<T>>(a, s) : LaunchV3As<T, 1>(a, s);
}

// --- registration ------------------------------------------------------------------------------------
// run_cuda for a launcher template L<T>(args, stream).
template <int (*L32)(const Args&, cudaStream_t), int (*L16)(const Args&, cudaStream_t)>
int Run(const Problem& p, std::span<const Tensor> t, void* stream) {
  const Args a = ArgsOf(p, t);
  return cuda::DispatchDtype(p.dtype, [&](auto tag) {
    return sizeof(tag) == 4 ? L32(a, cuda::AsStream(stream)) : L16(a, cuda::AsStream(stream));
  });
}

template <typename T>
LaunchInfo Info(const char* name, const void* func) {
  return {.kernel_name = std::string(name) + "<" + cuda::TypeName<T>() + ">", .func = func, .block_threads = kBlock};
}

std::vector<LaunchInfo> LaunchesV1(const Problem& p) {
  if (p.dtype == Dtype::kBF16) return {Info<__nv_bfloat16>("VectorAddV1", (const void*)&VectorAddV1<__nv_bfloat16>)};
  return {Info<float>("VectorAddV1", (const void*)&VectorAddV1<float>)};
}

std::vector<LaunchInfo> LaunchesV2(const Problem& p) {
  if (p.dtype == Dtype::kBF16)
    return {Info<__nv_bfloat16>("VectorAddV2", (const void*)&VectorAddV2<__nv_bfloat16, kVec16<__nv_bfloat16>>)};
  return {Info<float>("VectorAddV2", (const void*)&VectorAddV2<float, kVec16<float>>)};
}

std::vector<LaunchInfo> LaunchesV3(const Problem& p) {
  if (p.dtype == Dtype::kBF16)
    return {Info<__nv_bfloat16>("VectorAddV3", (const void*)&VectorAddV3<__nv_bfloat16, kVec16<__nv_bfloat16>>)};
  return {Info<float>("VectorAddV3", (const void*)&VectorAddV3<float, kVec16<float>>)};
}

std::string NoSkip(const Problem&) { return ""; }

}  // namespace

void AddVectorAddCudaVariants(OpDef& op) {
  op.variants.push_back({
      .name = "cuda_v1_naive",
      .description = "One element per thread.",
      .backend = Backend::kCuda,
      .dtypes = {Dtype::kF32, Dtype::kBF16},
      .skip_reason = NoSkip,
      .run_cuda = Run<LaunchV1<float>, LaunchV1<__nv_bfloat16>>,
      .launches = LaunchesV1,
  });
  op.variants.push_back({
      .name = "cuda_v2_vec16",
      .description = "One 16-byte vector per thread, scalar tail.",
      .backend = Backend::kCuda,
      .dtypes = {Dtype::kF32, Dtype::kBF16},
      .skip_reason = NoSkip,
      .run_cuda = Run<LaunchV2<float>, LaunchV2<__nv_bfloat16>>,
      .launches = LaunchesV2,
  });
  op.variants.push_back({
      .name = "cuda_v3_grid_stride",
      .description = "16-byte vectors in a grid-stride loop over one wave of blocks, 4 in flight per thread.",
      .backend = Backend::kCuda,
      .dtypes = {Dtype::kF32, Dtype::kBF16},
      .skip_reason = NoSkip,
      .run_cuda = Run<LaunchV3<float>, LaunchV3<__nv_bfloat16>>,
      .launches = LaunchesV3,
  });
}

}  // namespace kbench::kernels
