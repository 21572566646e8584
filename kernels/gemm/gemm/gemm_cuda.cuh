// Shared pieces of the CUDA GEMM ladder (gemm_*.cu): the problem as the launchers see it, the launch
// contract every rung keeps (degenerate shapes, dtype and size checks, the device's compute
// capability for runtime skips), and each file's registration function. AddGemmCudaVariants
// (gemm_reference.cu) calls those in ladder order and sets the op's fp64 device reference.
//
// The contract of every launcher: C[M,N] = A[M,K] * B[K,N], all row-major with leading dimensions
// K, N and N (no padding); f32 or bf16 storage, fp32 accumulation, C rounded once at the end. Tensors
// may start anywhere (the worker's buffers are cudaMalloc'd and 256-byte aligned, the tests also use
// views one element off): a rung whose fast path needs 16-byte aligned rows checks at run time and
// takes a predicated scalar path otherwise, never a wrong answer.
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <climits>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>

#include "core/cuda/cuda_check.cuh"
#include "core/op.h"

namespace kbench::kernels::gemm {

struct GemmArgs {
  const void* a = nullptr;  // [M, K]
  const void* b = nullptr;  // [K, N]
  void* c = nullptr;        // [M, N]
  int64_t m = 0, n = 0, k = 0;
  Dtype dtype = Dtype::kUnspecified;
};

inline GemmArgs ArgsOf(const Problem& p, std::span<const Tensor> t) {
  return GemmArgs{t[0].data, t[1].data, t[2].data, p.dim("M"), p.dim("N"), p.dim("K"), p.dtype};
}

// Shapes with nothing to multiply: M or N = 0 writes nothing; K = 0 makes every C element an empty
// sum, i.e. zero (all-zero bytes are +0 in f32 and bf16). Returns true, with *rc set, when handled.
inline bool HandleDegenerate(const GemmArgs& g, cudaStream_t s, int* rc) {
  if (g.m <= 0 || g.n <= 0) {
    *rc = 0;
    return true;
  }
  if (g.k <= 0) {
    *rc = static_cast<int>(cudaMemsetAsync(g.c, 0, static_cast<size_t>(g.m * g.n * DtypeBytes(g.dtype)), s));
    return true;
  }
  return false;
}

inline bool Aligned(const void* p, uintptr_t bytes) { return (reinterpret_cast<uintptr_t>(p) & (bytes - 1)) == 0; }

// "" when the problem's dtype is one of `dtypes`; otherwise the reason, naming what the rung supports.
inline std::string DtypeSkip(const Problem& p, std::initializer_list<Dtype> dtypes) {
  std::string names;
  for (Dtype d : dtypes) {
    if (d == p.dtype) return "";
    names += (names.empty() ? "" : " or ") + DtypeName(d);
  }
  return "this rung computes " + names + " only, not " + DtypeName(p.dtype);
}

// Rungs that index with 32-bit ints (tensor-core tiles, TMA coordinates) refuse larger dims.
inline std::string Int32DimsSkip(const Problem& p) {
  for (const char* d : {"M", "N", "K"})
    if (p.dim(d) > INT_MAX) return std::string(d) + " = " + std::to_string(p.dim(d)) + " exceeds 2^31-1 (32-bit tile indexing)";
  return "";
}

// One block row per `rows_per_block` rows of C goes in gridDim.y (at most 65535).
inline std::string GridYSkip(const Problem& p, int64_t rows_per_block) {
  const int64_t blocks = cuda::CeilDiv(p.dim("M"), rows_per_block);
  if (blocks <= 65535) return "";
  return "M = " + std::to_string(p.dim("M")) + " needs " + std::to_string(blocks) +
         " block rows, over gridDim.y's limit of 65535";
}

// Compute capability (major * 10 + minor) of the current device, cached per device; 0 with *why set
// when there is no usable device. Skip reasons use it for code that exists only as sm_90a machine code.
inline int CurrentComputeCapability(std::string* why) {
  constexpr int kMaxDevices = 64;
  static std::atomic<int> cache[kMaxDevices] = {};
  int device = 0;
  if (const cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) {
    cudaGetLastError();  // not sticky; leave no error behind for the next caller
    if (why) *why = std::string("no usable CUDA device (") + cudaGetErrorName(e) + ")";
    return 0;
  }
  if (device >= 0 && device < kMaxDevices)
    if (const int cc = cache[device].load(std::memory_order_relaxed); cc > 0) return cc;
  int major = 0, minor = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
    cudaGetLastError();
    if (why) *why = "cannot read the device's compute capability";
    return 0;
  }
  const int cc = major * 10 + minor;
  if (device >= 0 && device < kMaxDevices) cache[device].store(cc, std::memory_order_relaxed);
  return cc;
}

// Registration of each file's rungs (ladder order is AddGemmCudaVariants').
void AddGemmSimtVariants(OpDef& op);         // gemm_simt.cu: cuda_v1_naive .. cuda_v5_cp_async (fp32 SIMT)
void AddGemmCublasFp32Variants(OpDef& op);   // gemm_cublas.cu: cublas_sgemm, cublas_tf32
void AddGemmGemvVariant(OpDef& op);          // gemm_gemv.cu: cuda_gemv (decode, M <= 64)
void AddGemmTensorCoreVariants(OpDef& op);   // gemm_tensorcore.cu: cuda_wmma, cuda_mma_sync
void AddGemmWgmmaVariant(OpDef& op);         // gemm_wgmma.cu: cuda_wgmma_tma (sm_90a)
void AddGemmCublasBf16Variants(OpDef& op);   // gemm_cublas.cu: cublas_bf16, cublaslt_bf16

// The mma.sync rung's launcher (bf16): the wgmma rung runs it for tensors TMA cannot address (a
// start that is not 16-byte aligned; only offset views in the tests do that).
int LaunchMmaSyncBf16(const GemmArgs& g, cudaStream_t stream);

}  // namespace kbench::kernels::gemm
