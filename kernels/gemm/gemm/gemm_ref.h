// CPU reference of gemm: C[M,N] = A[M,K] * B[K,N], all row-major, in double on the inputs as stored.
#pragma once

#include <span>
#include <vector>

#include "core/op.h"

namespace kbench::kernels {

// inputs: A[M,K], B[K,N]; outputs: resized to one vector of M*N values (zeros when K = 0).
void GemmReference(const Problem& p, std::span<const Tensor> inputs, std::vector<std::vector<double>>& outputs);

}  // namespace kbench::kernels
