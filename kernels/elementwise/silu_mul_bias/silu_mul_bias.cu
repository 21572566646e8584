// silu_mul_bias on CUDA: out[r,c] = silu(x[r,c] + b[c]) * y[r,c], silu(z) = z / (1 + e^-z); f32 or
// bf16 storage, float arithmetic. The fusion lesson (the series' chapter 3): the op's floor is 3
// tensor passes (read x and y, write out; b is one row), and anything more is traffic.
//
// Rungs:
//   cuda_v1_unfused  three kernels, as an eager framework runs them: tmp = x + b, tmp = silu(tmp) in
//                    place, out = tmp * y. tmp (rows x cols in the dtype) lives in the variant's own
//                    workspace (core/cuda/workspace.cuh), allocated once per size: 7 passes instead
//                    of 3 (14 B instead of 6 B per bf16 element; 16 B when b is a full tensor, as
//                    in the series), each kernel itself 16-byte vectorized, so the gap to v2 is the
//                    extra traffic (and rounding of tmp to the dtype, as the unfused framework code
//                    does).
//   cuda_v2_fused    one kernel, 16-byte accesses: each thread owns one vector of columns, keeps its
//                    b in registers and walks rows, so b is read once per thread, not once per row.
//                    Scalar accesses when cols is not a multiple of the vector width or a pointer is
//                    unaligned.
#include "core/cuda/cuda_check.cuh"
#include "core/cuda/vec.cuh"
#include "core/cuda/workspace.cuh"
#include "elementwise/silu_mul_bias/silu_mul_bias.h"

#include <string>
#include <vector>

namespace kbench::kernels {
namespace {

using cuda::CeilDiv;
using cuda::kVec16;
using cuda::LoadFloats;
using cuda::StoreFloats;

constexpr int kBlock = 256;
constexpr int kBlocksPerSm = 2048 / kBlock;

__device__ __forceinline__ float Silu(float z) { return z / (1.0f + expf(-z)); }

// --- 2-D launch geometry of the column-owning kernels (fused, and v1's bias add) ------------------
// blockDim = (bx, by): bx threads across the column vectors of a row (narrow rows leave no idle
// lanes), by rows; the grid covers the columns once and enough rows for one wave, looping over the rest.
struct Geometry {
  dim3 grid, block;
};

cudaError_t ColumnGeometry(int64_t rows, int64_t cols, int width, Geometry* g) {
  const int64_t groups = CeilDiv(cols, width);
  const int bx = static_cast<int>(std::min<int64_t>(kBlock, cuda::RoundUp(groups, 32)));
  const int by = kBlock / bx;
  int sms = 0;
  if (const cudaError_t e = cuda::SmCount(&sms); e != cudaSuccess) return e;
  const int64_t gx = CeilDiv(groups, bx);
  const int64_t wave_y = std::max<int64_t>(1, int64_t{sms} * kBlocksPerSm / gx);
  const int64_t gy = std::min<int64_t>({CeilDiv(rows, by), wave_y, 65535});
  g->block = dim3(bx, by);
  g->grid = dim3(static_cast<unsigned>(gx), static_cast<unsigned>(std::max<int64_t>(gy, 1)));
  return cudaSuccess;
}

// --- v2: fused --------------------------------------------------------------------------------------
template <typename T, int kW>
__global__ void __launch_bounds__(kBlock)
    SiluMulBiasFused(const T* __restrict__ x, const T* __restrict__ y, const T* __restrict__ b, T* __restrict__ out,
                     int64_t rows, int64_t cols) {
  const int64_t c = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * kW;
  if (c >= cols) return;  // no barrier in this kernel
  float bias[kW];
  LoadFloats<T, kW>(b + c, bias);
  const int64_t row_stride = static_cast<int64_t>(gridDim.y) * blockDim.y;
  for (int64_t r = static_cast<int64_t>(blockIdx.y) * blockDim.y + threadIdx.y; r < rows; r += row_stride) {
    const int64_t off = r * cols + c;
    float xv[kW], yv[kW];
    LoadFloats<T, kW>(x + off, xv);
    LoadFloats<T, kW>(y + off, yv);
#pragma unroll
    for (int k = 0; k < kW; ++k) xv[k] = Silu(xv[k] + bias[k]) * yv[k];
    StoreFloats<T, kW>(out + off, xv);
  }
}

// --- v1: three kernels ------------------------------------------------------------------------------
template <typename T, int kW>
__global__ void __launch_bounds__(kBlock)
    AddBias(const T* __restrict__ x, const T* __restrict__ b, T* __restrict__ tmp, int64_t rows, int64_t cols) {
  const int64_t c = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * kW;
  if (c >= cols) return;
  float bias[kW];
  LoadFloats<T, kW>(b + c, bias);
  const int64_t row_stride = static_cast<int64_t>(gridDim.y) * blockDim.y;
  for (int64_t r = static_cast<int64_t>(blockIdx.y) * blockDim.y + threadIdx.y; r < rows; r += row_stride) {
    float v[kW];
    LoadFloats<T, kW>(x + r * cols + c, v);
#pragma unroll
    for (int k = 0; k < kW; ++k) v[k] += bias[k];
    StoreFloats<T, kW>(tmp + r * cols + c, v);
  }
}

// out = silu(a) (kMul false; in place when out == a, hence no __restrict__) or out = a * m.
template <typename T, int kW, bool kMul>
__global__ void __launch_bounds__(kBlock) FlatMap(const T* a, const T* m, T* out, int64_t n) {
  const int64_t nvec = n / kW;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const auto apply = [&](int64_t e, float (&v)[kW]) {
    if constexpr (kMul) {
      float w[kW];
      LoadFloats<T, kW>(m + e, w);
#pragma unroll
      for (int k = 0; k < kW; ++k) v[k] *= w[k];
    } else {
#pragma unroll
      for (int k = 0; k < kW; ++k) v[k] = Silu(v[k]);
    }
  };
  for (int64_t i = first; i < nvec; i += stride) {
    float v[kW];
    LoadFloats<T, kW>(a + i * kW, v);
    apply(i * kW, v);
    StoreFloats<T, kW>(out + i * kW, v);
  }
  const int64_t t = nvec * kW + first;  // n % kW leftovers, one per leading thread
  if (kW > 1 && first < kW && t < n) {
    float v[1] = {cuda::ToFloat(a[t])};
    if constexpr (kMul) v[0] *= cuda::ToFloat(m[t]);
    else v[0] = Silu(v[0]);
    out[t] = cuda::FromFloat<T>(v[0]);
  }
}

// --- launchers ---------------------------------------------------------------------------------------
struct Args {
  const void *x, *y, *b;
  void* out;
  int64_t rows, cols;
};

template <typename T, int kW>
int LaunchFusedAs(const Args& a, cudaStream_t s) {
  Geometry g;
  KB_CUDA_TRY(ColumnGeometry(a.rows, a.cols, kW, &g));
  SiluMulBiasFused<T, kW><<<g.grid, g.block, 0, s>>>(static_cast<const T*>(a.x), static_cast<const T*>(a.y),
                                                      static_cast<const T*>(a.b), static_cast<T*>(a.out), a.rows,
                                                      a.cols);
  KB_LAUNCH_CHECK();
  return 0;
}

template <typename T>
int LaunchV2(const Args& a, cudaStream_t s) {
  const bool vec_ok = a.cols % kVec16<T> == 0 && cuda::Aligned16(a.x) && cuda::Aligned16(a.y) &&
                      cuda::Aligned16(a.b) && cuda::Aligned16(a.out);
  return vec_ok ? LaunchFusedAs<T, kVec16<T>>(a, s) : LaunchFusedAs<T, 1>(a, s);
}

template <typename T, int kW>
int LaunchAddBiasAs(const Args& a, T* tmp, cudaStream_t s) {
  Geometry g;
  KB_CUDA_TRY(ColumnGeometry(a.rows, a.cols, kW, &g));
  AddBias<T, kW><<<g.grid, g.block, 0, s>>>(static_cast<const T*>(a.x), static_cast<const T*>(a.b), tmp, a.rows,
                                             a.cols);
  KB_LAUNCH_CHECK();
  return 0;
}

template <typename T, int kW, bool kMul>
int LaunchFlatAs(const T* in, const T* m, T* out, int64_t n, cudaStream_t s) {
  unsigned grid = 0;
  KB_CUDA_TRY(cuda::WaveGrid(std::max<int64_t>(n / kW, kW), kBlock, kBlocksPerSm, &grid));
  FlatMap<T, kW, kMul><<<grid, kBlock, 0, s>>>(in, m, out, n);
  KB_LAUNCH_CHECK();
  return 0;
}

template <typename T>
int LaunchV1(const Args& a, cudaStream_t s) {
  const int64_t n = a.rows * a.cols;
  void* ws = nullptr;
  KB_CUDA_TRY(cuda::GetWorkspace(cuda::WorkspaceSlot::kSiluMulBiasTmp, static_cast<size_t>(n) * sizeof(T), s, &ws));
  T* tmp = static_cast<T*>(ws);  // cudaMalloc'd: 16-byte aligned
  const bool add_vec = a.cols % kVec16<T> == 0 && cuda::Aligned16(a.x) && cuda::Aligned16(a.b);
  if (const int e = add_vec ? LaunchAddBiasAs<T, kVec16<T>>(a, tmp, s) : LaunchAddBiasAs<T, 1>(a, tmp, s); e != 0)
    return e;
  if (const int e = LaunchFlatAs<T, kVec16<T>, false>(tmp, nullptr, tmp, n, s); e != 0) return e;
  const T* y = static_cast<const T*>(a.y);
  T* out = static_cast<T*>(a.out);
  const bool mul_vec = cuda::Aligned16(y) && cuda::Aligned16(out);
  return mul_vec ? LaunchFlatAs<T, kVec16<T>, true>(tmp, y, out, n, s) : LaunchFlatAs<T, 1, true>(tmp, y, out, n, s);
}

// --- registration ------------------------------------------------------------------------------------
template <int (*L32)(const Args&, cudaStream_t), int (*L16)(const Args&, cudaStream_t)>
int Run(const Problem& p, std::span<const Tensor> t, void* stream) {
  const Args a{t[0].data, t[1].data, t[2].data, t[3].data, p.dim("rows"), p.dim("cols")};
  if (a.rows <= 0 || a.cols <= 0) return 0;  // nothing to write
  return cuda::DispatchDtype(p.dtype, [&](auto tag) {
    return sizeof(tag) == 4 ? L32(a, cuda::AsStream(stream)) : L16(a, cuda::AsStream(stream));
  });
}

template <typename T>
std::vector<LaunchInfo> Launches(int rung, const Problem& p) {
  const std::string type = cuda::TypeName<T>();
  const bool vec = p.dim("cols") % kVec16<T> == 0;
  const int w = vec ? kVec16<T> : 1;
  const std::string tw = "<" + type + ",w" + std::to_string(w) + ">";
  if (rung == 2) {
    return {{"SiluMulBiasFused" + tw,
             vec ? (const void*)&SiluMulBiasFused<T, kVec16<T>> : (const void*)&SiluMulBiasFused<T, 1>, kBlock, 0}};
  }
  const std::string tv = "<" + type + ",w" + std::to_string(kVec16<T>) + ">";
  return {{"AddBias" + tw, vec ? (const void*)&AddBias<T, kVec16<T>> : (const void*)&AddBias<T, 1>, kBlock, 0},
          {"SiluInPlace" + tv, (const void*)&FlatMap<T, kVec16<T>, false>, kBlock, 0},
          {"Mul" + tv, (const void*)&FlatMap<T, kVec16<T>, true>, kBlock, 0}};
}

template <int kRung>
std::vector<LaunchInfo> LaunchesOf(const Problem& p) {
  return p.dtype == Dtype::kBF16 ? Launches<__nv_bfloat16>(kRung, p) : Launches<float>(kRung, p);
}

std::string NoSkip(const Problem&) { return ""; }

}  // namespace

void AddSiluMulBiasCudaVariants(OpDef& op) {
  const std::vector<Dtype> dtypes = {Dtype::kF32, Dtype::kBF16};
  op.variants.push_back({
      .name = "cuda_v1_unfused",
      .description = "Three vectorized kernels through a workspace tensor: 7 passes instead of 3.",
      .backend = Backend::kCuda,
      .dtypes = dtypes,
      .skip_reason = NoSkip,
      .run_cuda = Run<LaunchV1<float>, LaunchV1<__nv_bfloat16>>,
      .launches = LaunchesOf<1>,
  });
  op.variants.push_back({
      .name = "cuda_v2_fused",
      .description = "One fused kernel, 16-byte accesses, bias kept in registers.",
      .backend = Backend::kCuda,
      .dtypes = dtypes,
      .skip_reason = NoSkip,
      .run_cuda = Run<LaunchV2<float>, LaunchV2<__nv_bfloat16>>,
      .launches = LaunchesOf<2>,
  });
}

}  // namespace kbench::kernels
