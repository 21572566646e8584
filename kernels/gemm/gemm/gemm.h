// The gemm op's functions, each defined in this folder. The suite lists MakeGemmOp
// (kernels/suite.h); the others are its parts, for tests that build the op from them.
#pragma once

#include "core/op.h"

namespace kbench::kernels {

OpDef MakeGemmOp();                   // gemm_op.cc: the op with every rung of this build
OpDef GemmDefinition();               // gemm_op.cc: the definition alone, no rungs
void AddGemmCpuVariants(OpDef& op);   // gemm_cpu.cc
void AddGemmCudaVariants(OpDef& op);  // gemm_reference.cu (the gemm_*.cu ladder); compiled only with CUDA

}  // namespace kbench::kernels
