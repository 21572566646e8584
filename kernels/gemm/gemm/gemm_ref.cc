// CPU reference of gemm (see gemm_ref.h). Widens B to double once and runs i-k-j so the inner loop
// streams rows of B and C: O(MNK) either way, but fast enough to check the edge and small presets.
#include "gemm/gemm/gemm_ref.h"

namespace kbench::kernels {

void GemmReference(const Problem& p, std::span<const Tensor> inputs, std::vector<std::vector<double>>& outputs) {
  const int64_t m = p.dim("M"), n = p.dim("N"), k = p.dim("K");
  const Tensor& a = inputs[0];
  const Tensor& b = inputs[1];
  outputs.resize(1);
  std::vector<double>& c = outputs[0];
  c.assign(static_cast<size_t>(m * n), 0.0);
  if (m == 0 || n == 0 || k == 0) return;
  std::vector<double> bd(static_cast<size_t>(k * n));
  for (int64_t i = 0; i < k * n; ++i) bd[i] = LoadAsDouble(b.data, b.dtype, i);
  for (int64_t i = 0; i < m; ++i) {
    double* ci = c.data() + i * n;
    for (int64_t kk = 0; kk < k; ++kk) {
      const double aik = LoadAsDouble(a.data, a.dtype, i * k + kk);
      const double* bk = bd.data() + kk * n;
      for (int64_t j = 0; j < n; ++j) ci[j] += aik * bk[j];
    }
  }
}

}  // namespace kbench::kernels
