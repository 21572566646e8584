// Constructors and CPU variants of the rest of the memory-bound suite (silu_mul_bias, reduce_sum,
// layernorm, add_rmsnorm); AddMemoryBoundOps (core/builtin_ops.h) registers them.
#pragma once

#include "core/op.h"

namespace kbench::kernels {

OpDef MakeSiluMulBiasOp();  // elementwise/silu_mul_bias/silu_mul_bias_op.cc
OpDef MakeReduceSumOp();    // reduction/reduce_sum/reduce_sum_op.cc
OpDef MakeLayernormOp();    // reduction/layernorm/layernorm_op.cc
OpDef MakeAddRmsnormOp();   // reduction/add_rmsnorm/add_rmsnorm_op.cc

void AddSiluMulBiasCpuVariants(OpDef& op);  // silu_mul_bias/silu_mul_bias_cpu.cc
void AddReduceSumCpuVariants(OpDef& op);    // reduce_sum/reduce_sum_cpu.cc
void AddLayernormCpuVariants(OpDef& op);    // layernorm/layernorm_cpu.cc
void AddAddRmsnormCpuVariants(OpDef& op);   // add_rmsnorm/add_rmsnorm_cpu.cc

}  // namespace kbench::kernels
