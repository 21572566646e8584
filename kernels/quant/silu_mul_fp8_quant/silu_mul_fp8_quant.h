// The silu_mul_fp8_quant op's functions, each defined in this folder. The suite lists
// MakeSiluMulFp8QuantOp (kernels/suite.h); the others are its parts, for tests that build the op
// from them.
#pragma once

#include "core/op.h"

namespace kbench::kernels {

OpDef MakeSiluMulFp8QuantOp();                   // silu_mul_fp8_quant_op.cc: the op with every rung
OpDef SiluMulFp8QuantDefinition();               // silu_mul_fp8_quant_op.cc: the definition alone
void AddSiluMulFp8QuantCpuVariants(OpDef& op);   // silu_mul_fp8_quant_cpu.cc
void AddSiluMulFp8QuantCudaVariants(OpDef& op);  // silu_mul_fp8_quant.cu; compiled only with CUDA

// silu_mul_fp8_quant_ref.cc: h = silu(x[r,0,:]) * x[r,1,:] in double, then the per-token
// quantization of h (q unrounded, see core/compare.h). inputs: x[rows,2,d]; outputs: q[rows*d],
// scales[rows].
void SiluMulFp8QuantReference(const Problem& p, std::span<const Tensor> inputs,
                              std::vector<std::vector<double>>& outputs);

}  // namespace kbench::kernels
