// CPU reference of reduce_sum (see reduce_sum_ref.h).
#include "reduction/reduce_sum/reduce_sum_ref.h"

#include <algorithm>
#include <cmath>

namespace kbench::kernels {

void ReduceSumReference(const Problem& p, std::span<const Tensor> inputs, std::vector<std::vector<double>>& outputs) {
  const int64_t n = p.dim("N");
  const Tensor& x = inputs[0];
  double sum = 0;  // 53 bits: exact enough for 2^31 terms of 8 significant bits (bf16) or 24 (f32)
  for (int64_t i = 0; i < n; ++i) sum += LoadAsDouble(x.data, x.dtype, i);
  outputs.resize(1);
  outputs[0].assign(1, sum);
}

Tolerance ReduceSumTolerance(const Problem& p) {
  // Variants accumulate in float32 (bf16 inputs are widened exactly). A chain of L additions into one
  // accumulator rounds each partial sum s_k with an error uniform in +-ulp(s_k)/2 <= 2^-24 |s_k|, and
  // for inputs uniform in [-1, 1] (mean 0, variance 1/3) |s_k| ~ sqrt(k/3): the errors add as a random
  // walk with sigma ~ 0.12 * 2^-23 * L. N/L such chains are independent: sigma ~ 0.12 * 2^-23 *
  // sqrt(N L), and combining the chains' sums (a tree, or one more accumulator) adds far less. atol =
  // 2^-23 sqrt(N min(N, L)) is about 8.5 sigma of that. The signal it must see is dropped work: k
  // dropped elements change the sum by ~sqrt(k/3). With one chain of all N (the old rule, atol =
  // 2^-23 N, 32 at 2^28) the rounding allowance grows like N and swamps it: dropping a few hundred
  // elements passed at 2^28. Bounding the chain at L = 2^16 gives atol 0.5 at 2^28, where 8 dropped
  // elements (sigma 1.6) fail the check's trials. A kernel summing one long float chain (an atomic
  // per element, one CPU accumulator) is that much less accurate beyond L, and is held to it. The
  // usual worst-case bound, (N-1) u sum|x_i| ~ 2^-25 N^2, says nothing at these sizes. 1e-5 floors
  // atol for tiny N; rtol 2^-22 covers rounding the f32 output.
  const double n = static_cast<double>(std::max<int64_t>(p.dim("N"), 0));
  const double chain = std::min(n, static_cast<double>(kReduceSumMaxChain));
  return Tolerance{.rtol = 0x1.0p-22, .atol = 1e-5 + 0x1.0p-23 * std::sqrt(n * chain)};
}

}  // namespace kbench::kernels
