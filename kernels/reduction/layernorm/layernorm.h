// The layernorm op's functions, each defined in this folder. The suite lists MakeLayernormOp
// (kernels/suite.h); the others are its parts, for tests that build the op from them.
#pragma once

#include "core/op.h"

namespace kbench::kernels {

OpDef MakeLayernormOp();                   // layernorm_op.cc: the op with every rung of this build
OpDef LayernormDefinition();               // layernorm_op.cc: the definition alone, no rungs
void AddLayernormCpuVariants(OpDef& op);   // layernorm_cpu.cc
void AddLayernormCudaVariants(OpDef& op);  // layernorm.cu; compiled only with CUDA

}  // namespace kbench::kernels
