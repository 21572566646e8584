#include "core/random.h"

#include <cmath>
#include <limits>

namespace kbench::kernels {

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

void FillUniform(const Tensor& t, uint64_t seed, uint64_t stream, double lo, double hi) {
  const uint64_t base = SplitMix64(seed * 0x100000001b3ull ^ SplitMix64(stream));
  for (int64_t i = 0; i < t.numel; ++i) {
    const double u = static_cast<double>(SplitMix64(base + static_cast<uint64_t>(i)) >> 11) * 0x1.0p-53;
    double v = lo + (hi - lo) * u;
    if (v == 0.0) v = (hi - lo) * 1e-3 + lo * 0 + 1e-3;  // never an exact zero
    StoreFromDouble(t.data, t.dtype, i, v);
  }
}

void FillInput(const TensorSpec& spec, const Problem& p, const Tensor& t, uint64_t seed, uint64_t stream) {
  if (spec.fill) {
    spec.fill(p, t, seed, stream);
  } else {
    FillUniform(t, seed, stream, spec.init_lo, spec.init_hi);
  }
}

void Poison(const Tensor& t) {
  for (int64_t i = 0; i < t.numel; ++i) StoreFromDouble(t.data, t.dtype, i, std::numeric_limits<double>::quiet_NaN());
}

}  // namespace kbench::kernels
