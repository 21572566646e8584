// The gemm op's device reference in fp64, and the registration of the whole CUDA GEMM ladder.
//
// The reference: C[M,N] = A[M,K] * B[K,N] with f32 or bf16 inputs widened to double and one double
// accumulator per element, summed in ascending k like the CPU reference (gemm_ref.cc). Products of two
// floats are exact in double (24 + 24 < 53 mantissa bits), so the fused multiply-add the compiler
// emits rounds exactly like the CPU's multiply-then-add: the two references agree to the bit. It
// exists because the CPU reference needs minutes at 8192^3; 16x16 tiles in shared memory keep it to
// a fraction of a second there without making it anything but obviously correct.
#include <algorithm>
#include <string>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/vec.cuh"
#include "gemm/gemm/gemm.h"
#include "gemm/gemm/gemm_cuda.cuh"

namespace kbench::kernels {
namespace gemm {
namespace {

using cuda::CeilDiv;
using cuda::ToFloat;

constexpr int kRefTile = 16;
constexpr unsigned kMaxGridY = 65535;

// Block (16, 16): one thread per C element of a 16x16 tile; blockIdx.y strides over tile rows so any
// M fits the grid.
template <typename T>
__global__ void __launch_bounds__(kRefTile * kRefTile)
    GemmReferenceF64(const T* __restrict__ a, const T* __restrict__ b, double* __restrict__ c, int64_t m, int64_t n,
                     int64_t k) {
  __shared__ double as[kRefTile][kRefTile];
  __shared__ double bs[kRefTile][kRefTile];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t col = static_cast<int64_t>(blockIdx.x) * kRefTile + tx;
  const int64_t tiles_m = (m + kRefTile - 1) / kRefTile;
  for (int64_t tile_m = blockIdx.y; tile_m < tiles_m; tile_m += gridDim.y) {
    const int64_t row = tile_m * kRefTile + ty;
    double acc = 0.0;
    for (int64_t k0 = 0; k0 < k; k0 += kRefTile) {
      as[ty][tx] = row < m && k0 + tx < k ? static_cast<double>(ToFloat(a[row * k + k0 + tx])) : 0.0;
      bs[ty][tx] = k0 + ty < k && col < n ? static_cast<double>(ToFloat(b[(k0 + ty) * n + col])) : 0.0;
      __syncthreads();
#pragma unroll
      for (int kk = 0; kk < kRefTile; ++kk) acc += as[ty][kk] * bs[kk][tx];
      __syncthreads();
    }
    if (row < m && col < n) c[row * n + col] = acc;
  }
}

int RunGemmReferenceF64(const Problem& p, std::span<const Tensor> inputs, std::span<double* const> outputs, void* stream) {
  const int64_t m = p.dim("M"), n = p.dim("N"), k = p.dim("K");
  const cudaStream_t s = cuda::AsStream(stream);
  if (outputs.empty() || inputs.size() < 2) return static_cast<int>(cudaErrorInvalidValue);
  if (m <= 0 || n <= 0) return 0;
  if (k <= 0) return static_cast<int>(cudaMemsetAsync(outputs[0], 0, static_cast<size_t>(m * n) * sizeof(double), s));  // +0.0
  const dim3 grid(static_cast<unsigned>(CeilDiv(n, kRefTile)),
                  static_cast<unsigned>(std::min<int64_t>(CeilDiv(m, kRefTile), kMaxGridY)));
  const dim3 block(kRefTile, kRefTile);
  return cuda::DispatchDtype(p.dtype, [&](auto tag) {
    using T = decltype(tag);
    GemmReferenceF64<T><<<grid, block, 0, s>>>(static_cast<const T*>(inputs[0].data), static_cast<const T*>(inputs[1].data),
                                               outputs[0], m, n, k);
    KB_LAUNCH_CHECK();
    return 0;
  });
}

}  // namespace
}  // namespace gemm

// The ladder in teaching order: fp32 SIMT rungs and their cuBLAS baselines, the decode path, then
// the bf16 tensor-core rungs and theirs.
void AddGemmCudaVariants(OpDef& op) {
  op.gpu_reference = gemm::RunGemmReferenceF64;
  gemm::AddGemmSimtVariants(op);
  gemm::AddGemmCublasFp32Variants(op);
  gemm::AddGemmGemvVariant(op);
  gemm::AddGemmTensorCoreVariants(op);
  gemm::AddGemmWgmmaVariant(op);
  gemm::AddGemmCublasBf16Variants(op);
}

}  // namespace kbench::kernels
