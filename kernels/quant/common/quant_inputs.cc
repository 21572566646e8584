// Shared inputs and the reference quantization rule of the quant family (see quant_inputs.h).
#include "quant/common/quant_inputs.h"

#include <cmath>

#include "core/random.h"

namespace kbench::kernels::quant {

void FillQuantInput(const Problem& p, const Tensor& t, uint64_t seed, uint64_t stream, int64_t row_len, double lo,
                    double hi) {
  FillUniform(t, seed, stream, lo, hi);
  const bool zero_rows = p.has_flag(kZeroRowsFlag), outliers = p.has_flag(kOutliersFlag);
  if ((!zero_rows && !outliers) || row_len <= 0) return;
  for (int64_t i = 0; i < t.numel; ++i) {
    if (zero_rows && (i / row_len) % 4 == 1) {
      StoreFromDouble(t.data, t.dtype, i, 0.0);
    } else if (outliers && i % 16 == 5) {
      StoreFromDouble(t.data, t.dtype, i, 512.0 * LoadAsDouble(t.data, t.dtype, i));
    }
  }
}

void FillStaticScale(const Problem&, const Tensor& t, uint64_t, uint64_t) {
  for (int64_t i = 0; i < t.numel; ++i) StoreFromDouble(t.data, t.dtype, i, kStaticScale);
}

void QuantizeRowReference(const double* y, int64_t n, double* v, double* scale) {
  double absmax = 0;
  for (int64_t i = 0; i < n; ++i) absmax = std::fmax(absmax, std::fabs(y[i]));
  *scale = absmax / kFp8Max;
  const double inv = absmax > 0 ? kFp8Max / absmax : 0.0;
  for (int64_t i = 0; i < n; ++i) v[i] = y[i] * inv;
}

}  // namespace kbench::kernels::quant
