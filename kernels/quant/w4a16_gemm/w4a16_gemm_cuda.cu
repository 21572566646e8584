// The w4a16_gemm CUDA ladder's registration, its fp64 device reference, and the two rungs that end in
// cuBLAS:
//   cuda_v1_dequant_then_gemm  what a naive port does: one kernel writes the dequantized weights to
//                              memory as bf16 [N, K] (a workspace, reading 0.5 and writing 2 bytes a
//                              weight), then cuBLAS reads them back (2 more): 4.5 bytes of traffic a
//                              weight against the 0.5 the format exists for.
//   cublas_bf16 (baseline)     cuBLAS on W_bf16, the same weights stored in bf16: what serving the
//                              model unquantized costs, on the same M, N, K in the same job.
// Both use the GEMM family's strict settings: fp32 compute, split-K partials reduced in fp32.
// The GEMV rungs (M <= 8) are in w4a16_gemv.cu.
#include <cublas_v2.h>
#include <cuda_bf16.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <string>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/vec.cuh"
#include "core/cuda/workspace.cuh"
#include "quant/common/ref_tile_f64.cuh"
#include "quant/w4a16_gemm/w4a16_cuda.cuh"
#include "quant/w4a16_gemm/w4a16_gemm.h"

namespace kbench::kernels {
namespace w4a16 {
namespace {

using bf16 = __nv_bfloat16;
constexpr size_t kCublasWorkspace = size_t{32} << 20;

int BlasError(cublasStatus_t s) {
  if (s == CUBLAS_STATUS_SUCCESS) return 0;
  if (s == CUBLAS_STATUS_ALLOC_FAILED) return static_cast<int>(cudaErrorMemoryAllocation);
  if (s == CUBLAS_STATUS_NOT_SUPPORTED || s == CUBLAS_STATUS_ARCH_MISMATCH)
    return static_cast<int>(cudaErrorNotSupported);
  if (s == CUBLAS_STATUS_INVALID_VALUE) return static_cast<int>(cudaErrorInvalidValue);
  return static_cast<int>(cudaErrorUnknown);
}

struct DeviceBlas {
  std::mutex mu;  // the handle's stream and workspace are per call
  cublasHandle_t handle = nullptr;
  void* workspace = nullptr;
};

// The current device's handle, created on first use (outside stream capture: the correctness run).
int GetBlas(DeviceBlas** out) {
  static std::mutex mu;
  static auto* devices = new std::map<int, DeviceBlas*>();  // never destroyed (driver teardown order)
  int device = 0;
  KB_CUDA_TRY(cudaGetDevice(&device));
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = devices->find(device); it != devices->end()) {
    *out = it->second;
    return 0;
  }
  auto* d = new DeviceBlas();
  if (const int e = BlasError(cublasCreate(&d->handle)); e != 0) return e;
  KB_CUDA_TRY(cudaMalloc(&d->workspace, kCublasWorkspace));
  (*devices)[device] = d;
  *out = d;
  return 0;
}

}  // namespace

int CublasBf16Nt(const void* a, const void* b, void* c, int64_t m, int64_t n, int64_t k, cudaStream_t s) {
  DeviceBlas* d = nullptr;
  if (const int e = GetBlas(&d); e != 0) return e;
  std::lock_guard<std::mutex> lock(d->mu);
  constexpr auto kStrict =
      static_cast<cublasMath_t>(CUBLAS_DEFAULT_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION);
  if (const int e = BlasError(cublasSetStream(d->handle, s)); e != 0) return e;
  if (const int e = BlasError(cublasSetWorkspace(d->handle, d->workspace, kCublasWorkspace)); e != 0) return e;
  if (const int e = BlasError(cublasSetMathMode(d->handle, kStrict)); e != 0) return e;
  const float alpha = 1.0f, beta = 0.0f;
  // Row-major C[M,N] = A B^T is column-major C^T[N,M] = B^T... : B stored [N,K] row-major is a
  // column-major K x N matrix, used transposed; A [M,K] row-major is column-major K x M, used as is.
  return BlasError(cublasGemmEx(d->handle, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(m),
                                static_cast<int>(k), &alpha, b, CUDA_R_16BF, static_cast<int>(k), a, CUDA_R_16BF,
                                static_cast<int>(k), &beta, c, CUDA_R_16BF, static_cast<int>(n), CUBLAS_COMPUTE_32F,
                                CUBLAS_GEMM_DEFAULT));
}

namespace {

// One thread per packed word: its 8 weights, dequantized with shifts and masks, stored as one
// 16-byte vector of bf16 (the workspace is 256-byte aligned and K % 8 == 0). blockIdx.y walks rows,
// so no thread divides by the row length. (q - zero) * scale is exact in bf16 for the op's inputs
// and rounded once otherwise.
__global__ void DequantToBf16(const uint32_t* __restrict__ w, const bf16* __restrict__ scales,
                              const bf16* __restrict__ zeros, bf16* __restrict__ out, int64_t n, int64_t k) {
  const int64_t words = k / kW4PerWord, groups = (k + kW4Group - 1) / kW4Group;
  const int64_t word = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (word >= words) return;
  for (int64_t row = blockIdx.y; row < n; row += gridDim.y) {
    const uint32_t packed = w[row * words + word];
    const int64_t g = row * groups + word * kW4PerWord / kW4Group;
    const float s = __bfloat162float(scales[g]), z = __bfloat162float(zeros[g]);
    uint32_t v[kW4PerWord / 2];
#pragma unroll
    for (int j = 0; j < kW4PerWord; j += 2)
      v[j / 2] = cuda::PackBf16x2((static_cast<float>((packed >> (4 * W4Nibble(j))) & 0xfu) - z) * s,
                                  (static_cast<float>((packed >> (4 * W4Nibble(j + 1))) & 0xfu) - z) * s);
    *reinterpret_cast<uint4*>(out + row * k + word * kW4PerWord) = make_uint4(v[0], v[1], v[2], v[3]);
  }
}

std::string SkipInt32(const Problem& p) {
  for (const char* d : {"M", "N", "K"})
    if (p.dim(d) > INT32_MAX) return std::string(d) + " exceeds 2^31-1 (cuBLAS takes int dims)";
  return "";
}

}  // namespace

int LaunchW4DequantThenGemm(const W4Args& g, cudaStream_t s) {
  void* deq = nullptr;
  KB_CUDA_TRY(cuda::GetWorkspace(cuda::WorkspaceSlot::kW4a16Dequantized, static_cast<size_t>(g.n * g.k * 2), s, &deq));
  const dim3 grid(static_cast<unsigned>(cuda::CeilDiv(g.k / kW4PerWord, 256)),
                  static_cast<unsigned>(std::min<int64_t>(g.n, 65535)));
  DequantToBf16<<<grid, 256, 0, s>>>(g.w, static_cast<const bf16*>(g.scales), static_cast<const bf16*>(g.zeros),
                                     static_cast<bf16*>(deq), g.n, g.k);
  KB_LAUNCH_CHECK();
  return CublasBf16Nt(g.a, deq, g.c, g.m, g.n, g.k, s);
}

namespace {

int RunDequantThenGemm(const Problem& p, std::span<const Tensor> t, void* stream) {
  const W4Args g = ArgsOf(p, t);
  const cudaStream_t s = cuda::AsStream(stream);
  int rc = 0;
  if (HandleDegenerate(g, s, &rc)) return rc;
  return LaunchW4DequantThenGemm(g, s);
}

int RunBaseline(const Problem& p, std::span<const Tensor> t, void* stream) {
  const W4Args g = ArgsOf(p, t);
  const cudaStream_t s = cuda::AsStream(stream);
  int rc = 0;
  if (HandleDegenerate(g, s, &rc)) return rc;
  return CublasBf16Nt(g.a, g.w_bf16, g.c, g.m, g.n, g.k, s);
}

std::vector<LaunchInfo> LaunchesDequant(const Problem&) {
  return {{"DequantToBf16", (const void*)&DequantToBf16, 256, 0}};
}
std::vector<LaunchInfo> NoOwnKernels(const Problem&) { return {}; }

// ---- fp64 device reference ----------------------------------------------------------------------
using quant::kRefK;
using quant::kRefThreads;
using quant::kRefTile;

// Thread (tx, ty) computes C rows m0 + ty + 16i and columns n0 + tx + 16j (i, j < 4), the weights
// dequantized in the tile loads exactly as the CPU reference does; each element summed in ascending
// k like it, so the two agree to rounding (quant/common/ref_tile_f64.cuh).
__global__ void __launch_bounds__(kRefThreads* kRefThreads)
    W4a16ReferenceF64(const bf16* __restrict__ a, const uint32_t* __restrict__ w, const bf16* __restrict__ scales,
                      const bf16* __restrict__ zeros, double* __restrict__ c, int64_t m, int64_t n, int64_t k) {
  __shared__ quant::RefTiles tiles;
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * kRefThreads + tx;
  const int64_t words = k / kW4PerWord, groups = (k + kW4Group - 1) / kW4Group;
  const int64_t n0 = static_cast<int64_t>(blockIdx.x) * kRefTile;
  const int64_t tiles_m = (m + kRefTile - 1) / kRefTile;
  for (int64_t tile_m = blockIdx.y; tile_m < tiles_m; tile_m += gridDim.y) {
    const int64_t m0 = tile_m * kRefTile;
    double acc[quant::kRefMicro][quant::kRefMicro] = {};
    for (int64_t k0 = 0; k0 < k; k0 += kRefK) {
#pragma unroll
      for (int i = 0; i < kRefTile * kRefK / (kRefThreads * kRefThreads); ++i) {
        const int e = tid + i * kRefThreads * kRefThreads, r = e / kRefK, q = e % kRefK;
        const int64_t row = m0 + r, wrow = n0 + r, kk = k0 + q;
        tiles.a[r][q] = row < m && kk < k ? static_cast<double>(__bfloat162float(a[row * k + kk])) : 0.0;
        double v = 0.0;
        if (wrow < n && kk < k) {
          const uint32_t word = w[wrow * words + kk / kW4PerWord];
          const int64_t g = wrow * groups + kk / kW4Group;
          v = (static_cast<double>((word >> (4 * W4Nibble(static_cast<int>(kk % kW4PerWord)))) & 0xfu) -
               static_cast<double>(__bfloat162float(zeros[g]))) *
              static_cast<double>(__bfloat162float(scales[g]));
        }
        tiles.b[q][r] = v;
      }
      __syncthreads();
      quant::RefAccumulate(tiles, tx, ty, acc);
      __syncthreads();
    }
    quant::RefStore(acc, 1.0, c, m0, n0, m, n, tx, ty);
  }
}

int RunReferenceF64(const Problem& p, std::span<const Tensor> in, std::span<double* const> out, void* stream) {
  const int64_t m = p.dim("M"), n = p.dim("N"), k = p.dim("K");
  const cudaStream_t s = cuda::AsStream(stream);
  if (out.empty() || in.size() < 4) return static_cast<int>(cudaErrorInvalidValue);
  if (m <= 0 || n <= 0) return 0;
  if (k <= 0) return static_cast<int>(cudaMemsetAsync(out[0], 0, static_cast<size_t>(m * n) * sizeof(double), s));
  const dim3 grid(static_cast<unsigned>(cuda::CeilDiv(n, kRefTile)),
                  static_cast<unsigned>(std::min<int64_t>(cuda::CeilDiv(m, kRefTile), 65535)));
  W4a16ReferenceF64<<<grid, dim3(kRefThreads, kRefThreads), 0, s>>>(
      static_cast<const bf16*>(in[0].data), static_cast<const uint32_t*>(in[1].data),
      static_cast<const bf16*>(in[2].data), static_cast<const bf16*>(in[3].data), out[0], m, n, k);
  KB_LAUNCH_CHECK();
  return 0;
}

}  // namespace

void AddW4a16DequantVariants(OpDef& op) {
  op.variants.push_back({
      .name = "cuda_v1_dequant_then_gemm",
      .description = "Dequantize W to bf16 in memory, then cuBLAS: the naive port, 4.5 bytes a weight.",
      .backend = Backend::kCuda,
      .dtypes = {Dtype::kBF16},
      .min_compute_capability = 80,
      .skip_reason = SkipInt32,
      .run_cuda = RunDequantThenGemm,
      .launches = LaunchesDequant,
  });
}

void AddW4a16BaselineVariants(OpDef& op) {
  op.variants.push_back({
      .name = "cublas_bf16",
      .description = "cuBLAS GemmEx on the same weights in bf16 (W_bf16): the unquantized model's cost.",
      .backend = Backend::kCuda,
      .dtypes = {Dtype::kBF16},
      .min_compute_capability = 80,
      .is_baseline = true,
      .skip_reason = SkipInt32,
      .run_cuda = RunBaseline,
      .launches = NoOwnKernels,
  });
}

}  // namespace w4a16

void AddW4a16GemmCudaVariants(OpDef& op) {
  op.gpu_reference = w4a16::RunReferenceF64;
  w4a16::AddW4a16DequantVariants(op);
  w4a16::AddW4a16GemvVariants(op);
  w4a16::AddW4a16MmaGemvVariant(op);
  w4a16::AddW4a16MarlinVariant(op);
  w4a16::AddW4a16WgmmaVariant(op);
  w4a16::AddW4a16BaselineVariants(op);
}

}  // namespace kbench::kernels
