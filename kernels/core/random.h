// Seeded input generation: uniform values in [lo, hi], rounded to the tensor's dtype. Never zeros.
#pragma once

#include <cstdint>

#include "core/op.h"

namespace kbench::kernels {

// SplitMix64's mixing step: fast, seedable, and the same on every platform (std distributions are
// not). The generator under every fill, for ops whose inputs have structure of their own too.
uint64_t SplitMix64(uint64_t x);

// Fills a host tensor. The same (seed, stream) always gives the same values.
void FillUniform(const Tensor& t, uint64_t seed, uint64_t stream, double lo, double hi);

// Fills input `stream` of a problem: the spec's own fill when it has one, else uniform in its range.
void FillInput(const TensorSpec& spec, const Problem& p, const Tensor& t, uint64_t seed, uint64_t stream);

// Poisons a host tensor with NaN (floating types), so an unwritten element fails the check.
void Poison(const Tensor& t);

}  // namespace kbench::kernels
