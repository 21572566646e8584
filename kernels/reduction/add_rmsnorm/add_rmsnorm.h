// The add_rmsnorm op's functions, each defined in this folder. The suite lists MakeAddRmsnormOp
// (kernels/suite.h); the others are its parts, for tests that build the op from them.
#pragma once

#include "core/op.h"

namespace kbench::kernels {

OpDef MakeAddRmsnormOp();                   // add_rmsnorm_op.cc: the op with every rung of this build
OpDef AddRmsnormDefinition();               // add_rmsnorm_op.cc: the definition alone, no rungs
void AddAddRmsnormCpuVariants(OpDef& op);   // add_rmsnorm_cpu.cc
void AddAddRmsnormCudaVariants(OpDef& op);  // add_rmsnorm.cu; compiled only with CUDA

}  // namespace kbench::kernels
