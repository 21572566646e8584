// The rope op's functions, each defined in this folder. The suite lists MakeRopeOp
// (kernels/suite.h); the others are its parts, for tests that build the op from them.
#pragma once

#include "core/op.h"

namespace kbench::kernels {

OpDef MakeRopeOp();                   // rope_op.cc: the op with every rung of this build
OpDef RopeDefinition();               // rope_op.cc: the definition alone, no rungs
void AddRopeCpuVariants(OpDef& op);   // rope_cpu.cc
void AddRopeCudaVariants(OpDef& op);  // rope.cu; compiled only with CUDA

// rope_ref.cc: q and k rotated in double with the cache's cos and sin at each token's position.
// inputs: q[tokens,q_heads,head_dim], k[tokens,kv_heads,head_dim], positions[tokens],
// cos_sin_cache[tokens,head_dim]; outputs: q_out, k_out.
void RopeReference(const Problem& p, std::span<const Tensor> inputs, std::vector<std::vector<double>>& outputs);

}  // namespace kbench::kernels
