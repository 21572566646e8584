// The silu_and_mul op's functions, each defined in this folder. The suite lists MakeSiluAndMulOp
// (kernels/suite.h); the others are its parts, for tests that build the op from them.
#pragma once

#include "core/op.h"

namespace kbench::kernels {

OpDef MakeSiluAndMulOp();                   // silu_and_mul_op.cc: the op with every rung of this build
OpDef SiluAndMulDefinition();               // silu_and_mul_op.cc: the definition alone, no rungs
void AddSiluAndMulCpuVariants(OpDef& op);   // silu_and_mul_cpu.cc
void AddSiluAndMulCudaVariants(OpDef& op);  // silu_and_mul.cu; compiled only with CUDA

// silu_and_mul_ref.cc: out[r,c] = silu(x[r,0,c]) * x[r,1,c] in double on the inputs as stored.
// inputs: x[rows,2,d]; outputs: out[rows*d].
void SiluAndMulReference(const Problem& p, std::span<const Tensor> inputs, std::vector<std::vector<double>>& outputs);

}  // namespace kbench::kernels
