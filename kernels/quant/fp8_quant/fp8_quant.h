// The fp8_quant op's functions, each defined in this folder. The suite lists MakeFp8QuantOp
// (kernels/suite.h); the others are its parts, for tests that build the op from them.
#pragma once

#include "core/op.h"

namespace kbench::kernels {

OpDef MakeFp8QuantOp();                   // fp8_quant_op.cc: the op with every rung of this build
OpDef Fp8QuantDefinition();               // fp8_quant_op.cc: the definition alone, no rungs
void AddFp8QuantCpuVariants(OpDef& op);   // fp8_quant_cpu.cc
void AddFp8QuantCudaVariants(OpDef& op);  // fp8_quant.cu; compiled only with CUDA

// fp8_quant_ref.cc: q (unrounded, see core/compare.h) and scales in double on the inputs as stored.
// inputs: x[rows,cols], scale[1]; outputs: q[rows*cols], scales[rows].
void Fp8QuantReference(const Problem& p, std::span<const Tensor> inputs, std::vector<std::vector<double>>& outputs);

}  // namespace kbench::kernels
