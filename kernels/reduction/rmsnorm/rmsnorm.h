// The rmsnorm op's functions, each defined in this folder. The suite lists MakeRmsnormOp
// (kernels/suite.h); the others are its parts, for tests that build the op from them.
#pragma once

#include "core/op.h"

namespace kbench::kernels {

OpDef MakeRmsnormOp();                   // rmsnorm_op.cc: the op with every rung of this build
OpDef RmsnormDefinition();               // rmsnorm_op.cc: the definition alone, no rungs
void AddRmsnormCpuVariants(OpDef& op);   // rmsnorm_cpu.cc
void AddRmsnormCudaVariants(OpDef& op);  // rmsnorm.cu; compiled only with CUDA

}  // namespace kbench::kernels
