// Shared pieces of the w4a16_gemm CUDA rungs: the problem as the launchers see it, the cuBLAS call
// of the rungs that end in cuBLAS (v1 and the baseline), and each file's registration function.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <span>
#include <string>

#include "core/cuda/cuda_check.cuh"
#include "core/op.h"

namespace kbench::kernels::w4a16 {

struct W4Args {
  const void* a = nullptr;       // bf16 [M, K]
  const uint32_t* w = nullptr;   // [N, K/8] packed codes
  const void* scales = nullptr;  // bf16 [N, groups]
  const void* zeros = nullptr;   // bf16 [N, groups]
  const void* w_bf16 = nullptr;  // bf16 [N, K] (the baseline's)
  const uint32_t* w_tiled = nullptr;  // W's words in the streaming order (W4TiledWord)
  void* c = nullptr;             // bf16 [M, N]
  int64_t m = 0, n = 0, k = 0;
};

inline W4Args ArgsOf(const Problem& p, std::span<const Tensor> t) {
  return W4Args{.a = t[0].data,
                .w = static_cast<const uint32_t*>(t[1].data),
                .scales = t[2].data,
                .zeros = t[3].data,
                .w_bf16 = t[4].data,
                .w_tiled = static_cast<const uint32_t*>(t[5].data),
                .c = t[6].data,
                .m = p.dim("M"),
                .n = p.dim("N"),
                .k = p.dim("K")};
}

// M or N = 0: nothing to write; K = 0: C is all zeros. Returns true, with *rc set, when handled.
inline bool HandleDegenerate(const W4Args& g, cudaStream_t s, int* rc) {
  if (g.m <= 0 || g.n <= 0) {
    *rc = 0;
    return true;
  }
  if (g.k <= 0) {
    *rc = static_cast<int>(cudaMemsetAsync(g.c, 0, static_cast<size_t>(g.m * g.n * 2), s));
    return true;
  }
  return false;
}

// C[M,N] = A[M,K] * B[N,K]^T in bf16 with fp32 compute and fp32 split-K reductions (the GEMM family's
// strict cuBLAS settings), B a bf16 [N, K] row-major matrix. Returns a cudaError_t as int.
int CublasBf16Nt(const void* a, const void* b, void* c, int64_t m, int64_t n, int64_t k, cudaStream_t s);

// The GEMV launchers (w4a16_gemv.cu): v2 for M <= 16, v3 for M <= 8 (v2's path where its 16-byte
// loads cannot be used).
int LaunchW4GemvDequant(const W4Args& g, cudaStream_t s);
int LaunchW4GemvMagic(const W4Args& g, cudaStream_t s);
// cuda_v1's launcher (w4a16_gemm_cuda.cu): any M, any alignment.
int LaunchW4DequantThenGemm(const W4Args& g, cudaStream_t s);

void AddW4a16DequantVariants(OpDef& op);   // w4a16_gemm_cuda.cu: cuda_v1_dequant_then_gemm
void AddW4a16GemvVariants(OpDef& op);      // w4a16_gemv.cu: cuda_v2_gemv_dequant, cuda_v3_gemv_magic
void AddW4a16MmaGemvVariant(OpDef& op);    // w4a16_mma_gemv.cu: cuda_v4_mma_gemv
void AddW4a16MarlinVariant(OpDef& op);     // w4a16_mma_marlin.cu: cuda_v4_mma_marlin
void AddW4a16WgmmaVariant(OpDef& op);      // w4a16_wgmma.cu: cuda_v5_wgmma_mixed
void AddW4a16BaselineVariants(OpDef& op);  // w4a16_gemm_cuda.cu: cublas_bf16

}  // namespace kbench::kernels::w4a16
