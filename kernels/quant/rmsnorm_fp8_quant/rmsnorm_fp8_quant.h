// The rmsnorm_fp8_quant op's functions, each defined in this folder. The suite lists
// MakeRmsnormFp8QuantOp (kernels/suite.h); the others are its parts, for tests that build the op
// from them.
#pragma once

#include "core/op.h"

namespace kbench::kernels {

OpDef MakeRmsnormFp8QuantOp();                   // rmsnorm_fp8_quant_op.cc: the op with every rung
OpDef RmsnormFp8QuantDefinition();               // rmsnorm_fp8_quant_op.cc: the definition alone
void AddRmsnormFp8QuantCpuVariants(OpDef& op);   // rmsnorm_fp8_quant_cpu.cc
void AddRmsnormFp8QuantCudaVariants(OpDef& op);  // rmsnorm_fp8_quant.cu; compiled only with CUDA

// rmsnorm_fp8_quant_ref.cc: y = rmsnorm(x) * weight in double (eps kRmsnormEps), then the per-token
// quantization of y (q unrounded, see core/compare.h). inputs: x[rows,cols], weight[cols]; outputs:
// q[rows*cols], scales[rows].
void RmsnormFp8QuantReference(const Problem& p, std::span<const Tensor> inputs,
                              std::vector<std::vector<double>>& outputs);

}  // namespace kbench::kernels
