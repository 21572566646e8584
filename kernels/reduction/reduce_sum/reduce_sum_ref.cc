// CPU reference of reduce_sum (see reduce_sum_ref.h).
#include "reduction/reduce_sum/reduce_sum_ref.h"

#include <algorithm>

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
  // Variants accumulate in float32 (bf16 inputs are widened exactly), in an order of their own:
  // sequential atomics (cuda_v1_atomic, cpu_naive) are the worst case. Each partial sum s_k is rounded
  // with an error uniform in +-ulp(s_k)/2 <= 2^-24 |s_k|, and for inputs uniform in [-1, 1] (mean 0,
  // variance 1/3) |s_k| ~ sqrt(k/3): the errors add as a random walk with
  // sigma^2 = sum_k 2^-48 (k/3) / 3 = 2^-48 N^2 / 18, sigma ~ 0.12 * 2^-23 * N. atol = 2^-23 * N is
  // about 8.5 sigma of that worst order, far above a tree order's error (~2^-24 sqrt(N log N)), and
  // still catches a dropped or doubled element on small and edge sizes (N <= 2^20: atol <= 0.125).
  // The classic bound (N-1) * u * sum|x_i| would be ~N^2/2^25, useless. 1e-5 floors atol for tiny N.
  const double n = static_cast<double>(std::max<int64_t>(p.dim("N"), 0));
  return Tolerance{.rtol = 1e-5, .atol = 1e-5 + n * 0x1.0p-23};
}

}  // namespace kbench::kernels
