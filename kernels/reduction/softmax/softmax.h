// The softmax op's functions, each defined in this folder. The suite lists MakeSoftmaxOp
// (kernels/suite.h); the others are its parts, for tests that build the op from them.
#pragma once

#include "core/op.h"

namespace kbench::kernels {

OpDef MakeSoftmaxOp();                   // softmax_op.cc: the op with every rung of this build
OpDef SoftmaxDefinition();               // softmax_op.cc: the definition alone, no rungs
void AddSoftmaxCpuVariants(OpDef& op);   // softmax_cpu.cc
void AddSoftmaxCudaVariants(OpDef& op);  // softmax.cu; compiled only with CUDA

}  // namespace kbench::kernels
