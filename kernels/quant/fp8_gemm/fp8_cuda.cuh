// Shared pieces of the fp8_gemm CUDA rungs: the problem as the launchers see it and each file's
// registration function (AddFp8GemmCudaVariants in fp8_gemm_cuda.cu calls them in ladder order).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <span>

#include "core/op.h"

namespace kbench::kernels::fp8 {

struct Fp8Args {
  const uint8_t* a = nullptr;      // E4M3 [M, K]
  const uint8_t* b = nullptr;      // E4M3 [N, K]
  const float* scale_a = nullptr;  // device scalars
  const float* scale_b = nullptr;
  void* c = nullptr;  // bf16 [M, N]
  int64_t m = 0, n = 0, k = 0;
  // 0: per-tensor scales (scalars). > 0 (fp8_gemm_block): ceil(K/128) blocks of k, scale_a [k_blocks, M]
  // (one scale per token and 128 k, M contiguous) and scale_b [ceil(N/128), k_blocks] (one per 128x128).
  int64_t k_blocks = 0;
};

inline Fp8Args ArgsOf(const Problem& p, std::span<const Tensor> t) {
  return Fp8Args{static_cast<const uint8_t*>(t[0].data),
                 static_cast<const uint8_t*>(t[1].data),
                 static_cast<const float*>(t[2].data),
                 static_cast<const float*>(t[3].data),
                 t[4].data,
                 p.dim("M"),
                 p.dim("N"),
                 p.dim("K"),
                 std::max<int64_t>(p.dim("K_blocks"), 0)};
}

// M or N = 0: nothing to write; K = 0: C is all zeros. Returns true, with *rc set, when handled.
inline bool HandleDegenerate(const Fp8Args& g, cudaStream_t s, int* rc) {
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

// The SIMT rung's launcher: every shape and alignment; the wgmma rung runs it for what TMA cannot
// address (offset views).
int LaunchFp8Simt(const Fp8Args& g, cudaStream_t s);

// Each registers its rung on fp8_gemm or fp8_gemm_block (block = true): the same kernels, which read
// Fp8Args::k_blocks.
void AddFp8SimtVariant(OpDef& op);                  // fp8_gemm_cuda.cu: cuda_v1_simt
void AddFp8WgmmaVariant(OpDef& op);                 // fp8_gemm_wgmma.cu: cuda_wgmma_fp8 (sm_90a)
void AddFp8CublasLtVariant(OpDef& op, bool block);  // fp8_gemm_cublaslt.cu: cublaslt_fp8 / cublaslt_fp8_block
int RunFp8ReferenceF64(const Problem& p, std::span<const Tensor> in, std::span<double* const> out, void* stream);

}  // namespace kbench::kernels::fp8
