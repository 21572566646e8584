// The fp8_gemm op's functions, each defined in this folder. The suite lists MakeFp8GemmOp
// (kernels/suite.h); the others are its parts, for tests that build the op from them.
#pragma once

#include "core/op.h"

namespace kbench::kernels {

OpDef MakeFp8GemmOp();                   // fp8_gemm_op.cc: the op with every rung of this build
OpDef Fp8GemmDefinition();               // fp8_gemm_op.cc: the definition alone, no rungs
void AddFp8GemmCpuVariants(OpDef& op);   // fp8_gemm_op.cc
void AddFp8GemmCudaVariants(OpDef& op);  // fp8_gemm_cuda.cu; compiled only with CUDA

}  // namespace kbench::kernels
