// The reduce_sum op's functions, each defined in this folder. The suite lists MakeReduceSumOp
// (kernels/suite.h); the others are its parts, for tests that build the op from them.
#pragma once

#include "core/op.h"

namespace kbench::kernels {

OpDef MakeReduceSumOp();                   // reduce_sum_op.cc: the op with every rung of this build
OpDef ReduceSumDefinition();               // reduce_sum_op.cc: the definition alone, no rungs
void AddReduceSumCpuVariants(OpDef& op);   // reduce_sum_cpu.cc
void AddReduceSumCudaVariants(OpDef& op);  // reduce_sum.cu; compiled only with CUDA

}  // namespace kbench::kernels
