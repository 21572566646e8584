// The fp8_gemm and fp8_gemm_block ops' functions, each defined in this folder. The suite lists MakeFp8GemmOp
// (kernels/suite.h); the others are its parts, for tests that build the op from them.
#pragma once

#include "core/op.h"

namespace kbench::kernels {

OpDef MakeFp8GemmOp();                   // fp8_gemm_op.cc: the op with every rung of this build
OpDef Fp8GemmDefinition();               // fp8_gemm_op.cc: the definition alone, no rungs
void AddFp8GemmCpuVariants(OpDef& op);   // fp8_gemm_op.cc
void AddFp8GemmCudaVariants(OpDef& op);  // fp8_gemm_cuda.cu; compiled only with CUDA

// fp8_gemm_block, the DeepSeek-V3 block-scaled form of the same product (fp8_gemm_block_op.cc): its
// rungs are fp8_gemm's kernels reading block scales.
OpDef MakeFp8GemmBlockOp();
OpDef Fp8GemmBlockDefinition();
void AddFp8GemmBlockCudaVariants(OpDef& op);  // fp8_gemm_cuda.cu

}  // namespace kbench::kernels
