// The per-op functions that add CUDA variants to an OpDef, one per op file (*.cu). Called from
// AddCudaVariants (cuda_variants.cc); built only with CUDA.
#pragma once

#include "core/op.h"

namespace kbench::kernels {

void AddVectorAddCudaVariants(OpDef& op);     // elementwise/vector_add/vector_add.cu
void AddSiluMulBiasCudaVariants(OpDef& op);   // elementwise/silu_mul_bias/silu_mul_bias.cu
void AddReduceSumCudaVariants(OpDef& op);     // reduction/reduce_sum/reduce_sum.cu
void AddRmsnormCudaVariants(OpDef& op);       // reduction/rmsnorm/rmsnorm.cu
void AddSoftmaxCudaVariants(OpDef& op);       // reduction/softmax/softmax.cu
void AddLayernormCudaVariants(OpDef& op);     // reduction/layernorm/layernorm.cu
void AddAddRmsnormCudaVariants(OpDef& op);    // reduction/add_rmsnorm/add_rmsnorm.cu
void AddGemmCudaVariants(OpDef& op);          // gemm/gemm/gemm_reference.cu (the gemm_*.cu ladder)

}  // namespace kbench::kernels
