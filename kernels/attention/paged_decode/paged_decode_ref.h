// The fp64 CPU reference of paged_decode and its tolerance (see paged_decode_op.cc for the math).
#pragma once

#include <span>
#include <vector>

#include "core/op.h"

namespace kbench::kernels {

// inputs: q, k_cache, v_cache, block_table, context_lens as the op orders them; reads the pages
// through the block table and the lengths from context_lens, in double. outputs: one vector (out).
void PagedDecodeReference(const Problem& p, std::span<const Tensor> inputs, std::vector<std::vector<double>>& outputs);

// Per dtype, in FlashAttention's style: twice the worst error of the plain same-precision
// implementation (cpu_naive: bf16 inputs, float arithmetic, out rounded to bf16) plus a small
// absolute floor; measured in tests/unit/kernels/paged_decode_tolerance_test.cc.
Tolerance PagedDecodeTolerance(Dtype d);

}  // namespace kbench::kernels
