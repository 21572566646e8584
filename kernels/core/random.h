// Seeded input generation: uniform values in [lo, hi], rounded to the tensor's dtype. Never zeros.
#pragma once

#include <cstdint>

#include "core/op.h"

namespace kbench::kernels {

// Fills a host tensor. The same (seed, stream) always gives the same values.
void FillUniform(const Tensor& t, uint64_t seed, uint64_t stream, double lo, double hi);

// Fills input `stream` of a problem: the spec's own fill when it has one, else uniform in its range.
void FillInput(const TensorSpec& spec, const Problem& p, const Tensor& t, uint64_t seed, uint64_t stream);

// Poisons a host tensor with NaN (floating types), so an unwritten element fails the check.
void Poison(const Tensor& t);

}  // namespace kbench::kernels
