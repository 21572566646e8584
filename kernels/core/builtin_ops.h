// Constructors of the built-in ops and the functions that add their CPU and CUDA variants.
// One op per family file; BuiltinRegistry() (registry.cc) calls them in this order.
#pragma once

#include "core/op.h"

namespace kbench::kernels {

class Registry;

OpDef MakeVectorAddOp();     // elementwise/vector_add/vector_add_op.cc
OpDef MakeRmsnormOp();       // reduction/rmsnorm/rmsnorm_op.cc
OpDef MakeSoftmaxOp();       // reduction/softmax/softmax_op.cc
OpDef MakeGemmOp();          // gemm/gemm/gemm_op.cc

void AddVectorAddCpuVariants(OpDef& op);  // vector_add/vector_add_cpu.cc
void AddRmsnormCpuVariants(OpDef& op);    // rmsnorm/rmsnorm_cpu.cc
void AddSoftmaxCpuVariants(OpDef& op);    // softmax/softmax_cpu.cc
void AddGemmCpuVariants(OpDef& op);       // gemm/gemm_cpu.cc

// The rest of the memory-bound suite (silu_mul_bias, reduce_sum, layernorm, add_rmsnorm), each with
// its CPU variants: reduction/memory_bound_ops.cc.
void AddMemoryBoundOps(Registry& registry);

// CUDA variants of every op (and CUDA-only ops): core/cuda_variants.cc, built only with CUDA.
void AddCudaVariants(Registry& registry);

}  // namespace kbench::kernels
