// The attention op's functions, each defined in this folder. The suite lists MakeAttentionOp
// (kernels/suite.h); the others are its parts, for tests that build the op from them.
#pragma once

#include "core/op.h"

namespace kbench::kernels {

OpDef MakeAttentionOp();                   // attention_op.cc: the op with every rung of this build
OpDef AttentionDefinition();               // attention_op.cc: the definition alone, no rungs
void AddAttentionCpuVariants(OpDef& op);   // attention_cpu.cc
void AddAttentionCudaVariants(OpDef& op);  // attention_reference.cu (the attention_*.cu ladder); CUDA only

// The tolerance of a dtype (see attention_op.cc for where its numbers come from).
Tolerance AttentionTolerance(Dtype d);

}  // namespace kbench::kernels
