// The silu_mul_bias op's functions, each defined in this folder. The suite lists MakeSiluMulBiasOp
// (kernels/suite.h); the others are its parts, for tests that build the op from them.
#pragma once

#include "core/op.h"

namespace kbench::kernels {

OpDef MakeSiluMulBiasOp();                   // silu_mul_bias_op.cc: the op with every rung of this build
OpDef SiluMulBiasDefinition();               // silu_mul_bias_op.cc: the definition alone, no rungs
void AddSiluMulBiasCpuVariants(OpDef& op);   // silu_mul_bias_cpu.cc
void AddSiluMulBiasCudaVariants(OpDef& op);  // silu_mul_bias.cu; compiled only with CUDA

}  // namespace kbench::kernels
