// add_rmsnorm on CUDA: the residual add fused with RMSNorm, as in a transformer block:
//   residual_out = x + residual (rounded to the dtype), out = rmsnorm(residual_out) * weight, eps 1e-6.
// Unfused it moves 5 tensors (add: read 2, write 1; norm: read 1, write 1); fused it moves 4 (read x
// and residual, write both outputs): 10 -> 8 bytes per element in bf16 (the series' chapter 4 and 9).
//
// Rungs:
//   cuda_v1_unfused  two kernels: a 16-byte vectorized add writing residual_out, then the block-per-row
//                    RMSNorm (reduction/rmsnorm/rmsnorm_rows.cuh) reading it back. The extra round trip of
//                    residual_out shows as lower utilization, since the cost model counts fused bytes.
//   cuda_v2_fused    one block per row: x and residual loaded as 16-byte vectors, h = x + residual
//                    rounded and stored once, kept in registers for the sum of squares and the scaling.
#include "core/cuda/cuda_check.cuh"
#include "core/cuda/vec.cuh"
#include "reduction/add_rmsnorm/add_rmsnorm.h"
#include "reduction/add_rmsnorm/add_rmsnorm_ref.h"
#include "reduction/rmsnorm/rmsnorm_rows.cuh"

#include <climits>
#include <string>
#include <vector>

namespace kbench::kernels {
namespace {

using cuda::kVec16;
using cuda::LoadFloats;
using cuda::StoreFloats;

constexpr float kEps = static_cast<float>(kAddRmsnormEps);
constexpr int kAddBlock = 256;
constexpr int kAddBlocksPerSm = 2048 / kAddBlock;

// --- v1, first kernel: residual_out = x + residual over all rows*cols elements (grid-stride) -----------
template <typename T, int kW>
__global__ void __launch_bounds__(kAddBlock)
    ResidualAdd(const T* __restrict__ x, const T* __restrict__ residual, T* __restrict__ h, int64_t n) {
  const int64_t nvec = n / kW;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (int64_t i = first; i < nvec; i += stride) {
    float a[kW], b[kW];
    LoadFloats<T, kW>(x + i * kW, a);
    LoadFloats<T, kW>(residual + i * kW, b);
#pragma unroll
    for (int k = 0; k < kW; ++k) a[k] += b[k];
    StoreFloats<T, kW>(h + i * kW, a);
  }
  const int64_t t = nvec * kW + first;  // n % kW leftovers, one per leading thread
  if (kW > 1 && first < kW && t < n)
    h[t] = cuda::FromFloat<T>(cuda::ToFloat(x[t]) + cuda::ToFloat(residual[t]));
}

// --- launchers ---------------------------------------------------------------------------------------
struct Args {
  const void *x, *residual, *weight;
  void *out, *residual_out;
  int64_t rows, cols;
};

template <typename T, int kW>
int LaunchAddAs(const Args& a, cudaStream_t s) {
  const int64_t n = a.rows * a.cols;
  unsigned grid = 0;
  KB_CUDA_TRY(cuda::WaveGrid(std::max<int64_t>(n / kW, kW), kAddBlock, kAddBlocksPerSm, &grid));
  ResidualAdd<T, kW><<<grid, kAddBlock, 0, s>>>(static_cast<const T*>(a.x), static_cast<const T*>(a.residual),
                                                 static_cast<T*>(a.residual_out), n);
  KB_LAUNCH_CHECK();
  return 0;
}

template <typename T>
int LaunchV1(const Args& a, cudaStream_t s) {
  const bool vec_ok = cuda::Aligned16(a.x) && cuda::Aligned16(a.residual) && cuda::Aligned16(a.residual_out);
  if (const int e = vec_ok ? LaunchAddAs<T, kVec16<T>>(a, s) : LaunchAddAs<T, 1>(a, s); e != 0) return e;
  return cuda::LaunchRmsnormRows<T, false>(static_cast<const T*>(a.residual_out), nullptr,
                                           static_cast<const T*>(a.weight), static_cast<T*>(a.out), nullptr, a.rows,
                                           a.cols, kEps, s);
}

template <typename T>
int LaunchV2(const Args& a, cudaStream_t s) {
  return cuda::LaunchRmsnormRows<T, true>(static_cast<const T*>(a.x), static_cast<const T*>(a.residual),
                                          static_cast<const T*>(a.weight), static_cast<T*>(a.out),
                                          static_cast<T*>(a.residual_out), a.rows, a.cols, kEps, s);
}

// --- registration ------------------------------------------------------------------------------------
template <int (*L32)(const Args&, cudaStream_t), int (*L16)(const Args&, cudaStream_t)>
int Run(const Problem& p, std::span<const Tensor> t, void* stream) {
  const Args a{t[0].data, t[1].data, t[2].data, t[3].data, t[4].data, p.dim("rows"), p.dim("cols")};
  if (a.rows <= 0 || a.cols <= 0) return 0;  // nothing to write
  return cuda::DispatchDtype(p.dtype, [&](auto tag) {
    return sizeof(tag) == 4 ? L32(a, cuda::AsStream(stream)) : L16(a, cuda::AsStream(stream));
  });
}

template <typename T>
std::vector<LaunchInfo> Launches(int rung, const Problem& p) {
  const int64_t cols = p.dim("cols");
  if (rung == 1) {
    const auto norm = cuda::PickRmsnormRow<T, false>(cols, true);
    return {{"ResidualAdd<" + std::string(cuda::TypeName<T>()) + ",w" + std::to_string(kVec16<T>) + ">",
             (const void*)&ResidualAdd<T, kVec16<T>>, kAddBlock, 0},
            {norm.name, (const void*)norm.kernel, norm.plan.threads, 0}};
  }
  const auto fused = cuda::PickRmsnormRow<T, true>(cols, true);
  return {{fused.name, (const void*)fused.kernel, fused.plan.threads, 0}};
}

template <int kRung>
std::vector<LaunchInfo> LaunchesOf(const Problem& p) {
  return p.dtype == Dtype::kBF16 ? Launches<__nv_bfloat16>(kRung, p) : Launches<float>(kRung, p);
}

std::string RowGridSkip(const Problem& p) {
  return p.dim("rows") > INT_MAX ? "rows over 2^31-1: one block per row exceeds gridDim.x" : "";
}

}  // namespace

void AddAddRmsnormCudaVariants(OpDef& op) {
  const std::vector<Dtype> dtypes = {Dtype::kF32, Dtype::kBF16};
  op.variants.push_back({
      .name = "cuda_v1_unfused",
      .description = "Add kernel, then block-per-row RMSNorm: 5 passes.",
      .backend = Backend::kCuda,
      .dtypes = dtypes,
      .skip_reason = RowGridSkip,
      .run_cuda = Run<LaunchV1<float>, LaunchV1<__nv_bfloat16>>,
      .launches = LaunchesOf<1>,
  });
  op.variants.push_back({
      .name = "cuda_v2_fused",
      .description = "One block per row, add and norm fused: 4 passes.",
      .backend = Backend::kCuda,
      .dtypes = dtypes,
      .skip_reason = RowGridSkip,
      .run_cuda = Run<LaunchV2<float>, LaunchV2<__nv_bfloat16>>,
      .launches = LaunchesOf<2>,
  });
}

}  // namespace kbench::kernels
