// The tiny_scale op's functions, each defined in this folder. A test-only op, laid out as an op of the
// suite is (kernels/<family>/<op>/): new_op_test.cc lists MakeTinyScaleOp in one line.
#pragma once

#include "core/op.h"

namespace kbench::kernels {

OpDef MakeTinyScaleOp();                   // tiny_scale_op.cc: the op with every rung of this build
OpDef TinyScaleDefinition();               // tiny_scale_op.cc: the definition alone, no rungs
void AddTinyScaleCpuVariants(OpDef& op);   // tiny_scale_cpu.cc
void AddTinyScaleCudaVariants(OpDef& op);  // tiny_scale.cu; compiled only with CUDA

}  // namespace kbench::kernels
