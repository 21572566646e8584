// The fp8_gemm CUDA ladder's registration, its fp64 device reference and its first rung:
//   cuda_v1_simt  16x16 output tiles through shared memory, E4M3 widened to f32 on load
//                 (__nv_cvt_fp8_to_halfraw), one f32 FMA per product on the CUDA cores: what FP8
//                 storage alone buys without FP8 tensor cores. Any shape, any alignment.
// The wgmma rung is in fp8_gemm_wgmma.cu, the cuBLASLt baselines in fp8_gemm_cublaslt.cu. The same
// rungs serve fp8_gemm_block (fp8_gemm_block_op.cc): Fp8Args::k_blocks > 0 selects block scales.
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/cuda/cuda_check.cuh"
#include "quant/common/ref_tile_f64.cuh"
#include "quant/fp8_gemm/fp8_cuda.cuh"
#include "quant/fp8_gemm/fp8_gemm.h"

namespace kbench::kernels {
namespace fp8 {
namespace {

constexpr int kTile = 16;
constexpr unsigned kMaxGridY = 65535;

__device__ __forceinline__ float E4m3ToFloat(uint8_t v) {
  const __half_raw h = __nv_cvt_fp8_to_halfraw(static_cast<__nv_fp8_storage_t>(v), __NV_E4M3);
  return __half2float(__half(h));
}

// Block (16, 16): thread (x, y) of tile (tile_n, tile_m) computes C[row][col]; A's rows and B's rows
// (both K-major) are staged 16 k at a time, widened to f32. k_blocks > 0: block scales, applied to
// each 128-k partial sum as (scale_a * scale_b) * partial.
__global__ void __launch_bounds__(kTile* kTile)
    Fp8GemmTiled(const uint8_t* __restrict__ a, const uint8_t* __restrict__ b, const float* __restrict__ scale_a,
                 const float* __restrict__ scale_b, __nv_bfloat16* __restrict__ c, int64_t m, int64_t n, int64_t k,
                 int64_t k_blocks) {
  __shared__ float as[kTile][kTile + 1];
  __shared__ float bs[kTile][kTile + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t col = static_cast<int64_t>(blockIdx.x) * kTile + tx;
  const int64_t brow = static_cast<int64_t>(blockIdx.x) * kTile + ty;  // the B row this thread loads
  const int64_t tiles_m = (m + kTile - 1) / kTile;
  for (int64_t tile_m = blockIdx.y; tile_m < tiles_m; tile_m += gridDim.y) {
    const int64_t row = tile_m * kTile + ty;
    float acc = 0, part = 0;
    for (int64_t k0 = 0; k0 < k; k0 += kTile) {
      const int64_t kk = k0 + tx;
      as[ty][tx] = row < m && kk < k ? E4m3ToFloat(a[row * k + kk]) : 0.0f;
      bs[tx][ty] = brow < n && kk < k ? E4m3ToFloat(b[brow * k + kk]) : 0.0f;  // bs[k][n]
      __syncthreads();
#pragma unroll
      for (int q = 0; q < kTile; ++q) part += as[ty][q] * bs[q][tx];
      __syncthreads();
      if (k_blocks > 0 && ((k0 + kTile) % 128 == 0 || k0 + kTile >= k)) {
        const int64_t kb = k0 / 128;
        if (row < m && col < n) acc += (scale_a[kb * m + row] * scale_b[(col / 128) * k_blocks + kb]) * part;
        part = 0;
      }
    }
    if (row < m && col < n)
      c[row * n + col] = __float2bfloat16_rn(k_blocks > 0 ? acc : part * (*scale_a * *scale_b));
  }
}

dim3 TiledGrid(int64_t m, int64_t n) {
  return dim3(static_cast<unsigned>(cuda::CeilDiv(n, kTile)),
              static_cast<unsigned>(std::min<int64_t>(cuda::CeilDiv(m, kTile), kMaxGridY)));
}

// ---- fp64 device reference ----------------------------------------------------------------------
// Every E4M3 value is a multiple of 2^-9 below 2^9, so each product is a multiple of 2^-18 below 2^18
// and every partial sum of up to 2^13 of them a multiple of 2^-18 below 2^31: 49 bits, exact in
// double whatever the order. Register tiles (quant/common/ref_tile_f64.cuh): 8192^3 is 5.5 * 10^11
// fp64 FMAs, which one output a thread, two shared loads an FMA, took past a request's time; block
// scales multiply each 128-k partial sum in double, as the CPU does.
using quant::kRefK;
using quant::kRefMicro;
using quant::kRefThreads;
using quant::kRefTile;
static_assert(128 % kRefK == 0, "a shared-memory step never crosses a 128-k scale block");

__global__ void __launch_bounds__(kRefThreads* kRefThreads)
    Fp8ReferenceF64(const uint8_t* __restrict__ a, const uint8_t* __restrict__ b, const float* __restrict__ scale_a,
                    const float* __restrict__ scale_b, double* __restrict__ c, int64_t m, int64_t n, int64_t k,
                    int64_t k_blocks) {
  __shared__ quant::RefTiles tiles;
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * kRefThreads + tx;
  const int64_t n0 = static_cast<int64_t>(blockIdx.x) * kRefTile;
  const int64_t tiles_m = (m + kRefTile - 1) / kRefTile;
  for (int64_t tile_m = blockIdx.y; tile_m < tiles_m; tile_m += gridDim.y) {
    const int64_t m0 = tile_m * kRefTile;
    double acc[kRefMicro][kRefMicro] = {}, part[kRefMicro][kRefMicro] = {};
    for (int64_t k0 = 0; k0 < k; k0 += kRefK) {
#pragma unroll
      for (int i = 0; i < kRefTile * kRefK / (kRefThreads * kRefThreads); ++i) {
        const int e = tid + i * kRefThreads * kRefThreads, r = e / kRefK, q = e % kRefK;
        const int64_t arow = m0 + r, brow = n0 + r, kk = k0 + q;
        tiles.a[r][q] = arow < m && kk < k ? static_cast<double>(E4m3ToFloat(a[arow * k + kk])) : 0.0;
        tiles.b[q][r] = brow < n && kk < k ? static_cast<double>(E4m3ToFloat(b[brow * k + kk])) : 0.0;
      }
      __syncthreads();
      quant::RefAccumulate(tiles, tx, ty, part);
      __syncthreads();
      if (k_blocks > 0 && ((k0 + kRefK) % 128 == 0 || k0 + kRefK >= k)) {
        const int64_t kb = k0 / 128;
#pragma unroll
        for (int i = 0; i < kRefMicro; ++i)
#pragma unroll
          for (int j = 0; j < kRefMicro; ++j) {
            const int64_t row = min(m0 + ty + kRefThreads * i, m - 1), col = min(n0 + tx + kRefThreads * j, n - 1);
            acc[i][j] += static_cast<double>(scale_a[kb * m + row]) *
                         static_cast<double>(scale_b[(col / 128) * k_blocks + kb]) * part[i][j];
            part[i][j] = 0.0;
          }
      }
    }
    if (k_blocks > 0)
      quant::RefStore(acc, 1.0, c, m0, n0, m, n, tx, ty);
    else
      quant::RefStore(part, static_cast<double>(*scale_a) * static_cast<double>(*scale_b), c, m0, n0, m, n, tx, ty);
  }
}

}  // namespace

int RunFp8ReferenceF64(const Problem& p, std::span<const Tensor> in, std::span<double* const> out, void* stream) {
  const int64_t m = p.dim("M"), n = p.dim("N"), k = p.dim("K");
  const cudaStream_t s = cuda::AsStream(stream);
  if (out.empty() || in.size() < 4) return static_cast<int>(cudaErrorInvalidValue);
  if (m <= 0 || n <= 0) return 0;
  if (k <= 0) return static_cast<int>(cudaMemsetAsync(out[0], 0, static_cast<size_t>(m * n) * sizeof(double), s));
  const dim3 grid(static_cast<unsigned>(cuda::CeilDiv(n, kRefTile)),
                  static_cast<unsigned>(std::min<int64_t>(cuda::CeilDiv(m, kRefTile), kMaxGridY)));
  Fp8ReferenceF64<<<grid, dim3(kRefThreads, kRefThreads), 0, s>>>(
      static_cast<const uint8_t*>(in[0].data), static_cast<const uint8_t*>(in[1].data),
      static_cast<const float*>(in[2].data), static_cast<const float*>(in[3].data), out[0], m, n, k,
      std::max<int64_t>(p.dim("K_blocks"), 0));
  KB_LAUNCH_CHECK();
  return 0;
}

namespace {

int RunSimt(const Problem& p, std::span<const Tensor> t, void* stream) {
  const Fp8Args g = ArgsOf(p, t);
  const cudaStream_t s = cuda::AsStream(stream);
  int rc = 0;
  if (HandleDegenerate(g, s, &rc)) return rc;
  return LaunchFp8Simt(g, s);
}

std::vector<LaunchInfo> LaunchesSimt(const Problem&) {
  return {{"Fp8GemmTiled", (const void*)&Fp8GemmTiled, kTile * kTile, 0}};
}

}  // namespace

int LaunchFp8Simt(const Fp8Args& g, cudaStream_t s) {
  Fp8GemmTiled<<<TiledGrid(g.m, g.n), dim3(kTile, kTile), 0, s>>>(g.a, g.b, g.scale_a, g.scale_b,
                                                                   static_cast<__nv_bfloat16*>(g.c), g.m, g.n, g.k,
                                                                   g.k_blocks);
  KB_LAUNCH_CHECK();
  return 0;
}

void AddFp8SimtVariant(OpDef& op) {
  op.variants.push_back({
      .name = "cuda_v1_simt",
      .description = "16x16 tiles in shared memory, E4M3 widened to f32, CUDA-core FMAs.",
      .backend = Backend::kCuda,
      .dtypes = {Dtype::kFP8E4M3},
      .run_cuda = RunSimt,
      .launches = LaunchesSimt,
  });
}

}  // namespace fp8

void AddFp8GemmCudaVariants(OpDef& op) {
  op.gpu_reference = fp8::RunFp8ReferenceF64;
  fp8::AddFp8SimtVariant(op);
  fp8::AddFp8WgmmaVariant(op);
  fp8::AddFp8CublasLtVariant(op, /*block=*/false);
}

void AddFp8GemmBlockCudaVariants(OpDef& op) {
  op.gpu_reference = fp8::RunFp8ReferenceF64;
  fp8::AddFp8SimtVariant(op);
  fp8::AddFp8WgmmaVariant(op);
  fp8::AddFp8CublasLtVariant(op, /*block=*/true);
}

}  // namespace kbench::kernels
