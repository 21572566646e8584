// CPU reference of rope (see rope.h): for each token t at position p = positions[t], each head, and
// each rotated pair (a, b) of a head, with c = cache[p, i] and s = cache[p, d/2 + i]:
// a' = a c - b s, b' = b c + a s. NeoX pairs (i, i + d/2); GPT-J (flag gptj) pairs (2i, 2i + 1).
#include <vector>

#include "elementwise/rope/rope.h"

namespace kbench::kernels {

void RopeReference(const Problem& p, std::span<const Tensor> inputs, std::vector<std::vector<double>>& outputs) {
  const int64_t tokens = p.dim("tokens"), d = p.dim("head_dim"), half = d / 2;
  const bool gptj = p.has_flag("gptj");
  const Tensor& positions = inputs[2];
  const Tensor& cache = inputs[3];
  outputs.resize(2);
  for (int which = 0; which < 2; ++which) {
    const Tensor& x = inputs[which];
    const int64_t heads = p.dim(which == 0 ? "q_heads" : "kv_heads");
    std::vector<double>& out = outputs[which];
    out.assign(static_cast<size_t>(tokens * heads * d), 0.0);
    for (int64_t t = 0; t < tokens; ++t) {
      const auto pos = static_cast<int64_t>(LoadAsDouble(positions.data, positions.dtype, t));
      for (int64_t h = 0; h < heads; ++h) {
        const int64_t base = (t * heads + h) * d;
        for (int64_t i = 0; i < half; ++i) {
          const double c = LoadAsDouble(cache.data, cache.dtype, pos * d + i);
          const double s = LoadAsDouble(cache.data, cache.dtype, pos * d + half + i);
          const int64_t ia = gptj ? 2 * i : i, ib = gptj ? 2 * i + 1 : i + half;
          const double a = LoadAsDouble(x.data, x.dtype, base + ia), b = LoadAsDouble(x.data, x.dtype, base + ib);
          out[base + ia] = a * c - b * s;
          out[base + ib] = b * c + a * s;
        }
      }
    }
  }
}

}  // namespace kbench::kernels
