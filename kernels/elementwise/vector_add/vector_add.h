// The vector_add op's functions, each defined in this folder. The suite lists MakeVectorAddOp
// (kernels/suite.h); the others are its parts, for tests that build the op from them.
#pragma once

#include "core/op.h"

namespace kbench::kernels {

OpDef MakeVectorAddOp();                   // vector_add_op.cc: the op with every rung of this build
OpDef VectorAddDefinition();               // vector_add_op.cc: the definition alone, no rungs
void AddVectorAddCpuVariants(OpDef& op);   // vector_add_cpu.cc
void AddVectorAddCudaVariants(OpDef& op);  // vector_add.cu; compiled only with CUDA

}  // namespace kbench::kernels
